// Stack swaps: the real program (infra/index.ts) under Pulumi mocks, for a stack that owns seed 000's
// cluster (Pulumi.a100.yaml) and runs the dev smoke job on it (Pulumi.dev.yaml's run section), once with
// agent timeout 3× and once at 6× — only the run-level resources may see different inputs.
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { stackConfigFromYaml } from "../../../components/config/stack-file";
import { CLUSTER_SECRETS, clusterMockState, programMocks} from "../../helpers/program-mocks";

const REPO = path.resolve(__dirname, "../../..");

/** Every registration with its inputs as JSON, to compare two runs' inputs by name. */
const mocks = programMocks({
  stack: "dev",
  mockState: clusterMockState(2),
  secrets: CLUSTER_SECRETS,
  // Each by its name as the cluster's part (registered as `cluster-<part>`: parts are named after their cluster).
  record: (r) => ({ type: r.type, name: r.name.replace(/^cluster-/, ""), inputs: JSON.stringify(r.inputs) }),
});
const program = (config: Record<string, unknown>) => mocks.run(config);

/** Pulumi.a100.yaml (the cluster) with Pulumi.dev.yaml's run at the given agent timeout multiplier. */
function devConfig(agentTimeoutMultiplier: number): Record<string, unknown> {
  const cluster = stackConfigFromYaml(readFileSync(path.join(REPO, "Pulumi.a100.yaml"), "utf8"), "Pulumi.a100.yaml");
  const dev = stackConfigFromYaml(readFileSync(path.join(REPO, "Pulumi.dev.yaml"), "utf8"), "Pulumi.dev.yaml");
  const run = dev.run as Record<string, unknown>;
  return { ...cluster, run: { ...run, agentTimeoutMultiplier, jobNamePrefix: `qwen38-terminus2-tb21-smoke2-c2-a2-agent${agentTimeoutMultiplier}x` } };
}

describe("3× → 6× swap on a cluster-owning stack running the dev job", () => {
  it("changes only the run-level resources", async () => {
    const three = await program(devConfig(3));
    const six = await program(devConfig(6));
    expect(six.map((r) => r.name).sort()).toEqual(three.map((r) => r.name).sort());
    const before = new Map(three.map((r) => [r.name, r.inputs]));
    const changed = six.filter((r) => before.get(r.name) !== r.inputs).map((r) => r.name).sort();
    const unchanged = six.filter((r) => before.get(r.name) === r.inputs).map((r) => r.name).sort();
    // The job gets a new name, its config is preflighted again, the daemon.json hashes are recorded for it, and harbor is launched.
    expect(changed).toEqual(["benchmark-daemon-json-worker-a", "benchmark-daemon-json-worker-b", "benchmark-harbor", "benchmark-job-name", "benchmark-preflight"]);
    // Nothing of the cluster or the runner's Harbor install changes.
    for (const name of [
      "worker-a-facts", "worker-b-facts", "worker-a-engine", "worker-b-engine", "cluster-owner-token", "worker-a-docker-daemon-json",
      "worker-b-docker-daemon-json", "worker-a-sglang-image", "worker-a-sglang-container", "worker-a-sglang-ready", "worker-b-sglang-container",
      "worker-b-sglang-ready", "router-image", "router-container", "router-ready", "tool-bundle-build", "proxy-bridge-unit", "harbor-install",
      "harbor-dataset", "task-images-pull", "sglang-api-key", "cluster-guard-check",
    ]) {
      expect(unchanged).toContain(name);
    }
    expect(unchanged.filter((n) => n.startsWith("benchmark-"))).toEqual([]);
  });

  it("a setting outside the run (the router's policy) is not a run-level change", async () => {
    const base = devConfig(3);
    const other = { ...base, router: { policy: "round_robin" } };
    const a = await program(base);
    const b = await program(other);
    const before = new Map(a.map((r) => [r.name, r.inputs]));
    const changed = b.filter((r) => before.get(r.name) !== r.inputs).map((r) => r.name);
    expect(changed).toContain("router-container");
    expect(changed).not.toContain("harbor-install");
    // No worker restarts, and the job keeps its name (the same job; its manifest records the new config).
    expect(changed.filter((n) => n.startsWith("worker-") || n === "benchmark-job-name")).toEqual([]);
  });
});
