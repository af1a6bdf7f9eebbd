// Issue 30 in a cluster-owning stack: the real program (infra/index.ts) under Pulumi mocks, seed 000's
// cluster (Pulumi.a100.yaml) running Pulumi.dev.yaml's job itself. What each worker's preflight found
// (WorkerPreflight.facts: GPUs, driver, weights size) reaches the job's run manifest, which rides in the
// launch step's `recorded` inputs only, and the `workerPreflightByHost` stack output run stacks read.
import { readFileSync } from "node:fs";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { checkedCommandDiff } from "../../../components/checked-command";
import { stackConfigFromYaml } from "../../../components/config/stack-file";
import type { PreflightFacts } from "../../../components/preflight/plan";
import { CLUSTER_SECRETS, clusterMockState, programMocks, type Registration, withoutSecretWrappers } from "../../helpers/program-mocks";
import { DEFAULT_GPUS, smiAnswers } from "../preflight/host-double";

const REPO = path.resolve(__dirname, "../../..");
const MODEL = "/var/lib/reprobench/models/Qwen3.8-27B";
const TOTAL_SIZE = 54_893_092_864;
/** Each worker's driver as its nvidia-smi reports it: a test's run may change one. */
let drivers: Record<string, string> = {};

/** preflight-host.sh's report for a worker: 8×A100-40GB at its driver, the 27B checkpoint in one shard. */
function preflightReport(host: string): string {
  const smi = smiAnswers({ ...DEFAULT_GPUS, driver: drivers[host] ?? DEFAULT_GPUS.driver });
  const captured = (out: string) => ({ rc: 0, out, err: "" });
  const shard = { file: "model-00001-of-00001.safetensors", exists: true, size: TOTAL_SIZE + 4096, expected: TOTAL_SIZE + 4096, dataBytes: TOTAL_SIZE, tensors: 851, error: null };
  return JSON.stringify({
    host, hostname: `gpu-node-${host}`, containerUser: "1000:1000", tools: {}, own: { containers: [], pids: [] }, ports: { state: "read", listeners: [] },
    gpus: { nvidiaSmi: "/usr/bin/nvidia-smi", query: captured(smi.query), apps: captured(smi.apps), report: smi.report, fabricManager: "active", hooks: ["nvidia-container-runtime-hook"] },
    toolkit: { ran: true, image: "sha256:x", rc: 0, out: smi.list, err: "" },
    cudaProbe: null,
    weights: {
      path: MODEL, exists: true, isDir: true, entryCount: 4, fileCount: 4, incomplete: [], linksOutsideCount: 0, hfCache: null,
      config: { present: true, error: null, geometry: { model_type: "qwen3", num_hidden_layers: 64, num_attention_heads: 64, num_key_value_heads: 8, head_dim: 128 } },
      index: { present: true, file: "model.safetensors.index.json", error: null, totalSize: TOTAL_SIZE, shardCount: 1 },
      shards: [shard], otherSafetensors: [], unreadable: { count: 0, files: [] }, readCheckError: null, readAs: "1000:1000",
    },
  });
}

const base = clusterMockState(1);
const mocks = programMocks({
  stack: "a100",
  mockState: (type, name, inputs) => {
    const host = /^cluster-(.+)-sglang-preflight-facts$/.exec(name)?.[1];
    return host ? { ...inputs, stdout: preflightReport(host), observed: "ok" } : base(type, name, inputs);
  },
  secrets: CLUSTER_SECRETS,
  rootDirectory: REPO,
});

/** Pulumi.a100.yaml (seed 000's cluster) running Pulumi.dev.yaml's job as its own. */
function clusterWithJob(): Record<string, unknown> {
  const cluster = stackConfigFromYaml(readFileSync(path.join(REPO, "Pulumi.a100.yaml"), "utf8"), "Pulumi.a100.yaml");
  const dev = stackConfigFromYaml(readFileSync(path.join(REPO, "Pulumi.dev.yaml"), "utf8"), "Pulumi.dev.yaml");
  return { ...cluster, run: dev.run };
}

async function program(driversNow: Record<string, string> = {}): Promise<Registration[]> {
  drivers = driversNow;
  return mocks.run(clusterWithJob());
}

const plain = withoutSecretWrappers;

/** The cluster's part `name` (registered as `cluster-<name>`: parts are named after their cluster). */
const named = (rs: Registration[], name: string): Registration => {
  const found = rs.find((r) => r.name === `cluster-${name}` && (r.type.startsWith("reprobench:index:") || r.type.startsWith("command:")));
  if (!found) throw new Error(`cluster-${name} is not registered`);
  return found;
};
const launch = (rs: Registration[]) => plain(named(rs, "benchmark-harbor").inputs) as Record<string, unknown>;
const manifestOf = (rs: Registration[]) => JSON.parse((launch(rs).recorded as Record<string, string>).MANIFEST_JSON) as { preflight: Record<string, PreflightFacts> };
const resolved = <T>(o: unknown) => new Promise<T>((resolve) => void (o as pulumi.Output<T>).apply(resolve));

describe("the workers' preflight facts in a cluster-owning stack", () => {
  it("are recorded, by worker host, in its job's run manifest", async () => {
    const rs = await program({ "worker-b": "580.82.07" });
    const { preflight } = manifestOf(rs);
    expect(Object.keys(preflight).sort()).toEqual(["worker-a", "worker-b"]);
    expect(preflight["worker-a"]).toMatchObject({
      host: "worker-a", hostname: "gpu-node-worker-a", containerUser: "1000:1000",
      gpus: { count: 8, names: ["NVIDIA A100-SXM4-40GB"], driver: "580.95.05", cuda: "13.0", fabricManager: "active" },
      weights: { path: MODEL, kind: "safetensors", shards: 1, totalSize: TOTAL_SIZE },
    });
    expect(preflight["worker-b"].gpus?.driver).toBe("580.82.07");
    expect(preflight["worker-a"].fit?.weightsPerGpu).toBeGreaterThan(0);
    // The manifest still carries no secret (the API key, the SSH key, the upstream proxy).
    const text = (launch(rs).recorded as Record<string, string>).MANIFEST_JSON;
    for (const secret of ["mock-api-key", "PRIVATE KEY", "127.0.0.1:27890"]) expect(text).not.toContain(secret);
  });

  it("are a stack output, workerPreflightByHost, the same as the manifest's", async () => {
    const rs = await program();
    const output = await resolved<Record<string, PreflightFacts>>(mocks.outputs().workerPreflightByHost);
    expect(output).toEqual(manifestOf(rs).preflight);
    expect(output["worker-b"].gpus?.driver).toBe("580.95.05");
  });

  it("enter the job only through its manifest: other facts change no input the job's diff compares", async () => {
    const before = await program();
    const after = await program({ "worker-a": "590.10.01", "worker-b": "590.10.01" });
    expect(manifestOf(after).preflight["worker-a"].gpus?.driver).toBe("590.10.01");
    for (const rs of [before, after]) {
      const { recorded: _manifest, ...compared } = launch(rs);
      expect(JSON.stringify(compared)).not.toMatch(/58\d\.\d+\.\d+|590\.10\.01|gpu-node-/);
    }
    // A running job sees neither an update nor a new job name.
    const state = (rs: Registration[]) => ({ ...launch(rs), observed: "ok", expected: "ok" }) as unknown as Parameters<typeof checkedCommandDiff>[0];
    expect(checkedCommandDiff(state(before), state(after)).changes).toBe(false);
    expect(plain(named(after, "benchmark-job-name").inputs)).toEqual(plain(named(before, "benchmark-job-name").inputs));
  });
});
