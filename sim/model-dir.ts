// The model directories every sim host gets (sim/models/hf_model.py, run on the host so the shards are
// sparse there: copying them in would expand 65 GB of holes): the Hugging Face layout the stacks mount, and
// the same model in Hugging Face cache layout (snapshots/<rev>/* -> ../../blobs/*), which a bind mount of
// the snapshot cannot follow.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { mustRun } from "./exec";
import { MODEL_DIR, type HostPlan } from "./layout";

/** HF layout; Pulumi.a100.yaml's modelServer.modelPath, which the local stack uses too. */
export const SIM_MODEL_DIR = "/var/lib/reprobench/models/Qwen3.8-27B";
/** HF cache root (HF_HUB_CACHE); the model is under models--Qwen--Qwen3.8-27B/snapshots/<rev>. */
export const SIM_HF_CACHE = "/var/lib/reprobench/hf-cache/hub";
export const SIM_MODEL_REPO = "Qwen/Qwen3.8-27B";
/** Qwen3-32B's tensors (sim/models/hf_model.py SPECS): 65 524 246 528 bytes in 17 shards. */
export const SIM_MODEL_SPEC = "qwen3-32b";

export interface ModelDirReport {
  model: { dir: string; total_size: number; shards: number; changed: boolean };
  cache: { repo_dir: string; revision: string; snapshot: string; changed: boolean };
}

/** Argv that writes (or keeps) both copies on a host; the generator goes in on stdin (`python3 -`). */
export function modelDirArgv(container: string): string[] {
  return [
    "docker", "exec", "-i", container, "python3", "-", "write",
    "--out", SIM_MODEL_DIR, "--spec", SIM_MODEL_SPEC, "--tokenizer-dir", MODEL_DIR,
    "--cache-dir", SIM_HF_CACHE, "--repo-id", SIM_MODEL_REPO,
  ];
}

/** Idempotent: a host whose directories match the generator's stamp is left alone (a few ms). */
export async function ensureModelDirs(root: string, host: HostPlan): Promise<ModelDirReport> {
  const script = readFileSync(join(root, "sim", "models", "hf_model.py"));
  const out = await mustRun(modelDirArgv(host.container), { input: script, timeoutMs: 120_000 });
  return JSON.parse(out) as ModelDirReport;
}
