// Stack swaps: the real program (infra/index.ts) under Pulumi mocks, for a stack that owns seed 000's
// cluster (Pulumi.a100.yaml) and runs the dev smoke job on it (Pulumi.dev.yaml's run section), once with
// agent timeout 3× and once at 6× — only the run-level resources may see different inputs.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { stackConfigFromYaml } from "../../../infra/config-stackfile";

const REPO = path.resolve(__dirname, "../../..");

interface Registered {
  type: string;
  name: string;
  inputs: string;
}

/** Plausible host-script output for the resources whose stdout later resources parse. */
function mockState(type: string, name: string, inputs: Record<string, unknown>): Record<string, unknown> {
  if (type === "random:index/randomPassword:RandomPassword") return { ...inputs, result: "mock-api-key" };
  if (type === "random:index/randomId:RandomId") return { ...inputs, hex: "0123456789abcdef01234567" };
  if (type === "docker:index/remoteImage:RemoteImage") return { ...inputs, imageId: `sha256:${name}`, repoDigest: `${String(inputs.name)}@sha256:${name}` };
  if (type === "pulumi-nodejs:dynamic:Resource" && name.endsWith("-job-name")) return { ...inputs, name: `${String(inputs.prefix)}-${String(inputs.spec)}` };
  const stdout: Record<string, string> = {
    "-install": JSON.stringify({ version: "0.21.0", wheelSha256: "c77d", python: "3.13.5", venv: "/v", freeze: "/f" }),
    "-dataset": JSON.stringify({ identity: "7131e43", count: 2, tasksDir: "/t", taskTomls: { "a/task.toml": '[environment]\ndocker_image = "x/a:1"\n' } }),
    "-pull": JSON.stringify({ ready: 1, total: 1, images: { "x/a:1": "sha256:1" } }),
    "-harbor": JSON.stringify({ jobName: "j", jobDir: "/d", log: "/l", unit: "u", pid: 1, state: "running", result: null }),
    "-facts": JSON.stringify({ user: "root", uid: 0, gid: 0, hostname: name, dockerEngine: "27.5.1", owner: null }),
    "-sglang-ready": '{"served_model_name":"Qwen/Qwen3.8-27B"}',
  };
  const suffix = Object.keys(stdout).find((s) => name.endsWith(s));
  return { ...inputs, stdout: suffix ? stdout[suffix] : "", observed: "ok" };
}

// One mock monitor for every run: a component's late registerResourceOutputs must find its URN.
let registered: Registered[] = [];
// HostAccess writes the docker provider's key files: keep them out of the home directory.
const sshDir = mkdtempSync(path.join(tmpdir(), "rb-swap-ssh-"));
const savedSshDir = process.env.REPROBENCH_SSH_DIR;
beforeAll(() => {
  process.env.REPROBENCH_SSH_DIR = sshDir;
  pulumi.runtime.setMocks(
    {
      newResource: (a) => {
        registered.push({ type: a.type, name: a.name, inputs: JSON.stringify(a.inputs) });
        return { id: `${a.name}-id`, state: mockState(a.type, a.name, a.inputs) };
      },
      call: (a) => a.inputs,
    },
    "reprobench",
    "dev",
    true,
  );
});
afterAll(() => {
  pulumi.runtime.setAllConfig({});
  if (savedSshDir === undefined) delete process.env.REPROBENCH_SSH_DIR;
  else process.env.REPROBENCH_SSH_DIR = savedSshDir;
  rmSync(sshDir, { recursive: true, force: true });
});

/** Runs infra/index.ts for a stack config and returns every custom resource with its resolved inputs. */
async function program(config: Record<string, unknown>): Promise<Registered[]> {
  registered = [];
  const mine = registered;
  const secrets = { sshPrivateKeys: { default: "-----BEGIN OPENSSH PRIVATE KEY-----\nmock\n-----END OPENSSH PRIVATE KEY-----\n" }, proxyUpstream: "http://127.0.0.1:27890" };
  const all = { ...config, ...secrets };
  pulumi.runtime.setAllConfig(
    Object.fromEntries(Object.entries(all).map(([k, v]) => [`reprobench:${k}`, typeof v === "string" ? v : JSON.stringify(v)])),
    Object.keys(secrets).map((k) => `reprobench:${k}`),
  );
  vi.resetModules();
  const mod = (await import("../../../infra/index")) as { default: () => Promise<Record<string, unknown>> };
  const outputs = await mod.default();
  // Every resource is registered once the outputs the program returns resolve.
  await new Promise<void>((resolve) => pulumi.all(Object.values(outputs).filter(pulumi.Output.isInstance)).apply(() => resolve()));
  return [...mine];
}

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
