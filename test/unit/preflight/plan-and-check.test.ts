// The preflight's parsers on recorded outputs, a sim stack without GPUs (gpus none, a tokenizer-only
// placeholder) passing, the ports check telling ours from others', and `reprobench check`'s report.
import { mkdirSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { collectCheck, renderCheck, runCheck } from "../../../cli/check";
import { checkStackFile } from "../../../components/config/stack-file";
import { parseComputeApps, parseGpuList, parseGpuQuery, parseSsListeners } from "../../../components/preflight/facts";
import { BRIDGE_UNITS, hostPlan, judgeHost, preflightEnv } from "../../../components/preflight/plan";
import { parseHostReport } from "../../../components/preflight/facts";
import { MODEL_BRIDGE_UNIT } from "../../../components/model-bridge";
import { PROXY_BRIDGE_UNIT } from "../../../components/proxy-bridge";
import { HostDouble } from "./host-double";

const REPO = path.resolve(__dirname, "../../..");
const localWithGpus = checkStackFile(path.join(REPO, "Pulumi.local.yaml")).config!;
// The local stack as it ran before its hosts had simulated GPUs (still a valid sim config): no --gpus.
const local = structuredClone(localWithGpus);
local.modelServer.gpus = "none";

describe("parsers of the real tools' outputs", () => {
  it("nvidia-smi --query-gpu (nounits; [N/A] fields) and --query-compute-apps", () => {
    const { gpus, bad } = parseGpuQuery("0, GPU-aa, NVIDIA A100-SXM4-40GB, 00000000:07:00.0, 40960, 1, 535.183.01, Default, [N/A], Enabled, [N/A]\nNVIDIA-SMI has failed");
    expect(gpus[0]).toMatchObject({ index: 0, memoryTotalMiB: 40960, memoryUsedMiB: 1, driver: "535.183.01", mig: null, eccUncorrected: null });
    expect(bad).toEqual(["NVIDIA-SMI has failed"]);
    expect(parseComputeApps("GPU-aa, 4242, /usr/bin/python3, 10240\nGPU-bb, 17, nv-hostengine, [N/A]")).toEqual([
      { gpuUuid: "GPU-aa", pid: 4242, name: "/usr/bin/python3", usedMiB: 10240 },
      { gpuUuid: "GPU-bb", pid: 17, name: "nv-hostengine", usedMiB: null },
    ]);
    expect(parseComputeApps("No running processes found")).toEqual([]);
  });

  it("nvidia-smi -L, with a GPU's MIG devices listed under it", () => {
    const l = parseGpuList("GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-aa)\nGPU 1: NVIDIA A100-SXM4-40GB (UUID: GPU-bb)\n  MIG 3g.20gb     Device  0: (UUID: MIG-cc)\n");
    expect(l.map((g) => [g.index, g.migDevices])).toEqual([[0, 0], [1, 1]]);
  });

  it("ss -Hltnp", () => {
    expect(parseSsListeners('LISTEN 0      4096   172.31.250.11:30001      0.0.0.0:*    users:(("python3",pid=812,fd=5))\nLISTEN 0 128 [::]:29000 [::]:* users:(("router",pid=9,fd=3))')).toEqual([
      { address: "172.31.250.11", port: 30001, processes: [{ name: "python3", pid: 812 }] },
      { address: "::", port: 29000, processes: [{ name: "router", pid: 9 }] },
    ]);
  });

  it("knows the bridges' units by the names the components give them", () => {
    expect([BRIDGE_UNITS.proxy, BRIDGE_UNITS.model]).toEqual([PROXY_BRIDGE_UNIT, MODEL_BRIDGE_UNIT]);
  });
});

let host: HostDouble;
beforeEach(() => (host = new HostDouble()));
afterEach(() => host.cleanup());

describe("a sim stack without GPUs (modelServer.gpus: none, a tokenizer-only placeholder)", () => {
  it("the tracked local stack asks for every GPU, as a100: the GPU checks run there", () => {
    expect(preflightEnv(hostPlan(localWithGpus, "worker-a")).CHECK_GPUS).toBe("1");
  });

  it("skips the GPU checks and takes the placeholder for one; tools and ports still apply", () => {
    const base = hostPlan(local, "worker-b");
    const dir = path.join(host.dir, "sim-placeholder");
    mkdirSync(dir);
    writeFileSync(path.join(dir, "tokenizer.json"), "{}");
    const plan = { ...base, worker: { ...base.worker!, modelPath: dir } };
    expect(preflightEnv(plan).CHECK_GPUS).toBe("0");
    const v = judgeHost(plan, parseHostReport(host.run(preflightEnv(plan)), "worker-b"));
    expect(v.problems).toEqual([]);
    expect(Object.fromEntries(v.checks.map((c) => [c.check, c.status]))).toMatchObject({ gpus: "skip", weights: "warn", "memory fit": "skip", tools: "ok", ports: "ok" });
    expect(plan.tools.map((t) => t.tool)).toEqual(expect.arrayContaining(["jq", "curl", "python3", "ps", "socat", "skopeo", "tmux", "flock", "git", "ss"]));
    expect(plan.ports.map((p) => p.port)).toEqual([30001, 30000, 29000, 27891]);
  });

  it("names a port another process holds, and passes one our own container or unit holds", () => {
    const plan = hostPlan(local, "worker-b");
    const worker = { ...plan.worker!, modelPath: host.model() };
    host.ss = 'LISTEN 0 4096 0.0.0.0:30000 0.0.0.0:* users:(("nginx",pid=4711,fd=6))';
    const v = judgeHost({ ...plan, worker }, parseHostReport(host.run(preflightEnv({ ...plan, worker })), "worker-b"));
    expect(v.problems.map((p) => `${p.subject}: ${p.message}`)).toEqual([
      "port 30000: the router qwen38-global-router binds 127.0.0.1:30000, and nginx (pid 4711) already listens on 0.0.0.0:30000",
    ]);
  });
});

describe("host tools", () => {
  it("names a missing tool, who runs it and the package that has it", () => {
    const plan = { ...hostPlan(local, "worker-b"), worker: null, ports: [] };
    plan.tools = [...plan.tools, { tool: "no-such-tool-xyz", usedBy: "task-images.sh (task image pre-pull)", pkg: "xyz" }];
    const v = judgeHost(plan, parseHostReport(host.run(preflightEnv(plan)), "worker-b"));
    expect(v.problems.map((p) => `${p.subject}: ${p.message}; ${p.fix}`)).toEqual(["tool no-such-tool-xyz: is not installed; task-images.sh (task image pre-pull) runs it; install it (Debian/Ubuntu: `apt-get install xyz`)"]);
  });
});

/** Recorded answers of the runner's outside checks (check-runner.sh, check-registry.sh), by their inputs; null for other scripts. */
function outside(env: Record<string, string>): string | null {
  if ("DATASET_STATE_SCRIPT" in env) {
    return `${JSON.stringify({
      probes: [{ url: "http://git.sim/", proxy: "127.0.0.1:27890", code: "200", connect: "000", exit: 0, error: "" }],
      dataset: { repo: env.DATASET_REPO, proxy: "127.0.0.1:27890", state: "dataset=missing", lsRemote: 0, lsRemoteError: "", tip: "refs/heads/main", head: env.DATASET_COMMIT, fetch: -1, fetchError: "" },
      taskTomls: null,
    })}\n`;
  }
  if ("HEAD_PRESENT" in env) {
    return `${JSON.stringify({ docker: true, missing: [], registries: [{ registry: "registry.sim:5000", image: env.IMAGES.split("\n")[0], status: "200", limit: "", remaining: "", window: "", error: "", credentials: false }] })}\n`;
  }
  return null;
}

describe("reprobench check", () => {
  it("runs the same scripts on every host, prints a table per host, exits 1 naming what is not ready", async () => {
    const out: string[] = [];
    const dir = path.join(host.dir, "sim-placeholder");
    mkdirSync(dir);
    writeFileSync(path.join(dir, "tokenizer.json"), "{}");
    const config = structuredClone(local);
    config.modelServer.modelPath = dir;
    // Anonymous pulls: the registry password file exists only once the sim ran.
    config.registries = [];
    const conn = (name: string) => ({ name, host: "127.0.0.1", port: 22, user: "root", privateKey: "k", hostKey: "h" });
    const opts = {
      stack: "local",
      resolve: async () => ({ config, connections: new Map([["worker-a", conn("worker-a")], ["worker-b", conn("worker-b")]]), notes: [] }),
      runScript: async (_c: unknown, _script: string, env: Record<string, string>) => {
        if (env.HOST_NAME === "worker-a") throw new Error("127.0.0.1:2201 is unreachable over SSH: Connection refused");
        return outside(env) ?? host.run(env);
      },
      write: (t: string) => void out.push(t),
    };
    expect(await runCheck(opts)).toBe(1);
    const text = out.join("");
    expect(text).toContain("worker-a (worker): NOT READY\n  cannot be checked: 127.0.0.1:2201 is unreachable over SSH: Connection refused");
    expect(text).toMatch(/worker-b \(worker, router, runner\): ready\n {2}gpus +- +modelServer\.gpus: none\n {2}weights +warn +placeholder, 1 entries/);
    expect(text).toContain("stack local: 1 of 2 hosts not ready");
    const report = await collectCheck({ ...opts, runScript: async (_c, _s, env) => outside(env) ?? host.run(env) });
    expect(report.ready).toBe(true);
    expect(renderCheck(report)).toContain("stack local: every host is ready");
    // The runner's outside rows (test/unit/preflight/outside.test.ts runs their scripts for real).
    expect(report.hosts.find((h) => h.host === "worker-b")!.checks.map((c) => [c.check, c.status])).toEqual(expect.arrayContaining([["proxy", "ok"], ["dataset", "ok"], ["registry", "ok"]]));
  });
});
