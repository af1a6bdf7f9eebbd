// modelServer.download in the real program (infra/index.ts) under Pulumi mocks, for seed 000's cluster
// (Pulumi.a100.yaml): absent, nothing new is registered; set, each worker gets a WeightsDownload
// (reprobench:cluster:WeightsDownload) whose step runs the download script, and that worker's preflight
// waits for it.
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { stackConfigFromYaml } from "../../../components/config/stack-file";
import { WEIGHTS_COMMIT_LABEL } from "../../../components/container-spec";
import { CLUSTER_SECRETS, clusterMockState, programMocks, type Registration } from "../../helpers/program-mocks";

const REPO = path.resolve(__dirname, "../../..");
const base = clusterMockState(1);
/** The commit the mock hub gives a revision: "v2" another than every other. */
const commitOf = (create: string) => (create.includes("export REVISION=v2\n") ? "d" : "c").repeat(40);
const mocks = programMocks({
  stack: "a100",
  // What weights-download.sh prints last, for the download steps (the shared mock state has none).
  mockState: (type, name, inputs) =>
    name.endsWith("-weights-fetch")
      ? { ...inputs, stdout: JSON.stringify({ repo: "Qwen/Qwen3-32B", revision: "main", commit: commitOf(String(inputs.create)), modelPath: "/m", files: 1, bytes: 1, changed: true }), observed: "ok" }
      : base(type, name, inputs),
  secrets: { ...CLUSTER_SECRETS, hfToken: "hf_programTestToken" },
  rootDirectory: REPO,
});

function cluster(download?: Record<string, unknown>): Record<string, unknown> {
  const c = stackConfigFromYaml(readFileSync(path.join(REPO, "Pulumi.a100.yaml"), "utf8"), "Pulumi.a100.yaml");
  const modelServer = { ...(c.modelServer as Record<string, unknown> | undefined), ...(download ? { download } : {}) };
  return { ...c, modelServer };
}
/** The cluster's part `name` (registered as `cluster-<name>`: parts are named after their cluster). */
const named = (rs: Registration[], name: string) => {
  const r = rs.find((x) => x.name === `cluster-${name}`);
  if (!r) throw new Error(`cluster-${name} is not registered`);
  return r;
};

describe("modelServer.download in the program", () => {
  it("absent: nothing of the download is registered", async () => {
    const rs = await mocks.run(cluster());
    expect(rs.filter((r) => r.type === "reprobench:cluster:WeightsDownload" || r.name.includes("-weights"))).toEqual([]);
  });

  it("set: one WeightsDownload per worker, its step before that worker's preflight, the token never in its inputs", async () => {
    const rs = await mocks.run(cluster({ repo: "Qwen/Qwen3-32B", revision: "main" }));
    const downloads = rs.filter((r) => r.type === "reprobench:cluster:WeightsDownload");
    expect(downloads.map((r) => r.name).sort()).toEqual(["cluster-worker-a-weights", "cluster-worker-b-weights"]);
    for (const host of ["worker-a", "worker-b"]) {
      const component = named(rs, `${host}-weights`);
      expect(component.urn).toBe(`urn:pulumi:a100::reprobench::reprobench:cluster:BenchCluster$reprobench:cluster:WeightsDownload::cluster-${host}-weights`);
      const fetch = named(rs, `${host}-weights-fetch`);
      expect(fetch.parent).toBe(component.urn);
      // Claimed first (the host's HostAccess), nothing else.
      expect(fetch.dependencies.some((d) => d.endsWith(`::cluster-${host}-facts`) || d.endsWith(`HostAccess::cluster-${host}`))).toBe(true);
      const create = String(fetch.inputs.create);
      expect(create).toContain("export REPO=Qwen/Qwen3-32B\n");
      expect(create).toContain("export MODEL_PATH=/var/lib/reprobench/models/Qwen3.8-27B\n");
      expect(create).toContain("huggingface_hub==1.17.0 --hash=sha256:");
      // The token travels in the step's secret environment only, never in its script, check or summary.
      const { environment, ...rest } = fetch.inputs;
      expect(JSON.stringify(rest)).not.toContain("hf_programTestToken");
      expect(JSON.stringify(environment)).toContain("hf_programTestToken");
      // The preflight's record step (and so the gate in its hook) waits for the download.
      const facts = named(rs, `${host}-sglang-preflight-facts`);
      expect(facts.dependencies.some((d) => d === fetch.urn || d === component.urn)).toBe(true);
    }
  });

  it("the server carries the downloaded commit: a new one re-runs the preflight and replaces (restarts) the container", async () => {
    const labelOf = (rs: Registration[], host: string) =>
      (named(rs, `${host}-sglang-container`).inputs.labels as { label: string; value: string }[]).find((l) => l.label === WEIGHTS_COMMIT_LABEL)?.value;
    const triggerOf = (rs: Registration[], host: string) => String(named(rs, `${host}-sglang-preflight-facts`).inputs.spec);
    const without = await mocks.run(cluster());

    const withDownload = await mocks.run(cluster({ repo: "Qwen/Qwen3-32B", revision: "main" }));
    const otherCommit = await mocks.run(cluster({ repo: "Qwen/Qwen3-32B", revision: "v2" }));
    for (const host of ["worker-a", "worker-b"]) {
      expect(labelOf(without, host)).toBeUndefined();
      expect(labelOf(withDownload, host)).toBe("c".repeat(40));
      expect(labelOf(otherCommit, host)).toBe("d".repeat(40));
      expect(triggerOf(withDownload, host)).not.toBe(triggerOf(otherCommit, host));
    }
  });
});
