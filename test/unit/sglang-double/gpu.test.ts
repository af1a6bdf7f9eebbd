// The SGLang and vLLM doubles on simulated GPUs (sglang_double/gpus.py): with a container GPU inventory (what
// the sim hosts' toolkit hook writes for `--gpus`) and a model directory they start, or die, as the real
// servers do on those GPUs and weights, with their messages.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { applyGpuChanges, defaultInventory, gpuUsedMiB, type GpuChanges, type GpuInventory } from "../../../sim/gpus";
import { chat, doubleDir, doubleEnv, firstMessage, python, seed000WorkerFlags, startDouble, waitReady, type RunningDouble } from "./harness";

const root = resolve(__dirname, "../../..");
const work = mkdtempSync(join(tmpdir(), "rb-double-gpu-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const BIG_SHM = String(16 * 2 ** 30);
let n = 0;

/** What the hook writes into a container for NVIDIA_VISIBLE_DEVICES=`requested` (all GPUs here). */
function containerInventory(changes: GpuChanges = {}, busyGpu3MiB = 0): string {
  let host: GpuInventory = applyGpuChanges(defaultInventory("worker-a"), changes);
  if (busyGpu3MiB) host = applyGpuChanges(host, { busy: [{ gpu: 3, mib: busyGpu3MiB, process: "python3", pid: process.pid }] });
  const file = join(work, `inv-${++n}.json`);
  const gpus = host.gpus.map((g, i) => ({ ...g, hostIndex: g.index, index: i, memoryUsedMiB: gpuUsedMiB(host, g) }));
  writeFileSync(file, JSON.stringify({ ...host, scope: "container", requested: "all", gpus, processes: [] }));
  return file;
}
function modelDir(fault?: "missing-shard" | "truncate-shard", spec = "qwen3-32b"): string {
  const dir = join(work, `model-${++n}`);
  const gen = join(root, "sim/models/hf_model.py");
  expect(spawnSync("python3", [gen, "write", "--out", dir, "--spec", spec, "--tokenizer-dir", join(doubleDir, "tiny-model")]).status).toBe(0);
  if (fault) expect(spawnSync("python3", [gen, "fault", "--dir", dir, fault, "--shard", "3"]).status).toBe(0);
  return dir;
}
const healthy = modelDir();

function sglang(flags: string[], env: Record<string, string>) {
  const r = spawnSync(python, [join(doubleDir, "bin/sglang"), "serve", "--port", "0", ...flags], {
    env: doubleEnv({ SGLANG_DOUBLE_LOAD_SECONDS: "0", SGLANG_DOUBLE_SHM_BYTES: BIG_SHM, ...env }), encoding: "utf-8", timeout: 20_000,
  });
  return { code: r.status, err: r.stderr };
}
const seed = (model: string, extra: string[] = []) => ["--model-path", model, ...seed000WorkerFlags, ...extra];

describe("SGLang double: start-up failures on simulated GPUs", () => {
  it("tp x dp beyond the visible GPUs: invalid device ordinal after the Context line", () => {
    const r = sglang(seed(healthy), { REPROBENCH_SIM_GPU_INVENTORY: containerInventory({ count: 4 }) });
    expect(r.code).toBe(1);
    const context = r.err.indexOf("Context: self.device='cuda' self.gpu_id=4 os.environ.get('CUDA_VISIBLE_DEVICES')=None self.tp_rank=0 self.tp_size=4");
    expect(context).toBeGreaterThan(0);
    expect(r.err.indexOf("torch.AcceleratorError: CUDA error: invalid device ordinal")).toBeGreaterThan(context);
    expect(r.err).toMatch(/\[[\d-]+ [\d:]+ DP1 TP0\] Scheduler hit an exception: Traceback/);
    expect(r.err).toContain("Received sigquit from a child process. It usually means the child failed.");
  });

  it("a GPU in MIG mode gives no CUDA device", () => {
    expect(sglang(seed(healthy), { REPROBENCH_SIM_GPU_INVENTORY: containerInventory({ mig: [{ gpu: 7, enabled: true }] }) }).err).toContain("self.gpu_id=7 ");
  });

  it("10 GiB used on GPU 3 by a foreign process: memory capacity unbalanced", () => {
    const r = sglang(seed(healthy), { REPROBENCH_SIM_GPU_INVENTORY: containerInventory({}, 10240) });
    expect(r.code).toBe(1);
    expect(r.err).toContain("RuntimeError: The memory capacity is unbalanced. Some GPUs may be occupied by other processes. min_per_gpu_memory=28.49, local_gpu_memory=38.49, local_gpu_memory * 0.9=34.64");
    // The toggle SGLang has turns it into a warning; the run goes on.
    const off = sglang([...seed(modelDir()), "--mem-fraction-static", "0.2"], { REPROBENCH_SIM_GPU_INVENTORY: containerInventory({}, 10240), SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK: "false" });
    expect(off.err).toContain("WARNING: The memory capacity is unbalanced");
    expect(off.err).toContain("Not enough memory"); // and then (mfs 0.2) dies at the KV pool, so the run ends here
  });

  it("fabric manager stopped: CUDA error 802", () => {
    const r = sglang(seed(healthy), { REPROBENCH_SIM_GPU_INVENTORY: containerInventory({ fabricManager: "stopped" }) });
    expect(r.code).toBe(1);
    expect(r.err).toContain("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 802: system not yet initialized");
  });

  it("tp > 1 without --ipc host (docker's 64 MiB /dev/shm): NCCL cannot create its segment", () => {
    const r = sglang(seed(healthy), { REPROBENCH_SIM_GPU_INVENTORY: containerInventory(), SGLANG_DOUBLE_SHM_BYTES: String(64 * 2 ** 20) });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/NCCL WARN Error while creating shared memory segment \/dev\/shm\/nccl-\w{6} \(size 7340384\)/);
    expect(r.err).toContain("torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3356, unhandled system error (run with NCCL_DEBUG=INFO for details)");
    // tp 1 needs no NCCL segments.
    expect(sglang(["--model-path", healthy, "--tp-size", "1"], { REPROBENCH_SIM_GPU_INVENTORY: containerInventory(), SGLANG_DOUBLE_SHM_BYTES: String(64 * 2 ** 20) }).err).not.toContain("NCCL");
  });

  it("weights / tp beyond the free memory: CUDA out of memory while loading", () => {
    const r = sglang(["--model-path", healthy, "--tp-size", "1"], { REPROBENCH_SIM_GPU_INVENTORY: containerInventory() });
    expect(r.code).toBe(1);
    expect(r.err).toContain("Load weight begin. avail mem=38.49 GB");
    expect(r.err).toMatch(/torch\.OutOfMemoryError: CUDA out of memory\. Tried to allocate \d+\.\d\d MiB\. GPU 0 has a total capacity of 39\.39 GiB of which \d+\.\d\d MiB is free\./);
  });

  it("KV pool <= 0 at a low --mem-fraction-static: Not enough memory", () => {
    const r = sglang([...seed(healthy), "--mem-fraction-static", "0.35"], { REPROBENCH_SIM_GPU_INVENTORY: containerInventory() });
    expect(r.code).toBe(1);
    expect(r.err).toContain("Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16, avail mem=23.24 GB, mem usage=15.26 GB.");
    expect(r.err).toContain("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: mem_fraction_static=0.35");
  });

  it("a truncated shard: MetadataIncompleteBuffer, after the shards before it", () => {
    const r = sglang(seed(modelDir("truncate-shard")), { REPROBENCH_SIM_GPU_INVENTORY: containerInventory() });
    expect(r.code).toBe(1);
    expect(r.err).toContain("Loading safetensors checkpoint shards:  11% Completed | 2/17");
    expect(r.err).toContain("safetensors_rust.SafetensorError: Error while deserializing header: MetadataIncompleteBuffer");
  });

  it("a wrong or empty model path fails before any GPU work", () => {
    const empty = join(work, "empty");
    spawnSync("mkdir", ["-p", empty]);
    expect(sglang(seed(empty), { REPROBENCH_SIM_GPU_INVENTORY: containerInventory() }).err).toContain(`OSError: ${empty} does not appear to have a file named config.json.`);
    expect(sglang(seed(join(work, "nowhere")), { REPROBENCH_SIM_GPU_INVENTORY: containerInventory() }).err).toContain("huggingface_hub.errors.HFValidationError: Repo id must be in the form");
  });
});

describe("SGLang double: a start that works reports its memory like SGLang", () => {
  const running: RunningDouble[] = [];
  afterAll(async () => Promise.all(running.map((d) => d.process.stop())));
  async function start(model: string) {
    const d = await startDouble({ flags: seed(model), env: { REPROBENCH_SIM_GPU_INVENTORY: containerInventory(), SGLANG_DOUBLE_SHM_BYTES: BIG_SHM }, scenario: join(root, "sim/scenarios/sim-default.json") });
    running.push(d);
    await waitReady(d);
    return d;
  }

  it("tp 4 x dp 2 on 8 x A100-40GB: KV pool from the formula, the --gpus request and visible GPUs in /server_info", async () => {
    const d = await start(healthy);
    // JSON as the server (or the generator) answers it, read field by field.
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const info = (await (await fetch(`${d.url}/server_info`)).json()) as Record<string, any>;
    // pre = (40960 - 624 reserved - 920 context) MiB = 38.49 GiB; rest = post - pre * (1 - 0.9) = 23.24 - 3.85 GiB; cell = 2 KV heads * 256 * 64 layers * 2 B = 65536 B.
    expect(info.max_total_num_tokens).toBe(Math.floor(((38.4921875 - 65524246528 / 4 / 2 ** 30) - 38.4921875 * (1 - 0.9)) * 2 ** 30 / 65536));
    expect(info.max_total_num_tokens).toBeGreaterThan(262144);
    expect(info.internal_states[1].memory_usage).toMatchObject({ weight: 15.26, token_capacity: info.max_total_num_tokens });
    expect(info.internal_states[1].memory_usage.kvcache).toBeGreaterThan(19);
    expect(info.double.gpus).toMatchObject({ inventory: true, requested: "all", visible: 8, cuda_devices: 8, names: ["NVIDIA A100-SXM4-40GB"], driver_version: "580.95.05" });
    expect(info.double.garbage_weights).toBe(false);
    expect(d.process.logs).toMatch(/KV Cache is allocated\. #tokens: \d+, K size: \d+\.\d\d GB, V size: \d+\.\d\d GB/);
    expect(d.process.logs).toContain(`max_total_num_tokens=${info.max_total_num_tokens}, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=5, context_len=262144`);
    const reply = firstMessage((await chat(d.url, { model: "Qwen/Qwen3.8-27B", messages: [{ role: "user", content: "Reply with exactly READY" }], chat_template_kwargs: { enable_thinking: false } })).json);
    expect(reply.content).toContain("SGLang test double");
  });

  it("a missing shard is served silently, and every answer is garbage", async () => {
    const d = await start(modelDir("missing-shard"));
    // JSON as the server (or the generator) answers it, read field by field.
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const info = (await (await fetch(`${d.url}/server_info`)).json()) as Record<string, any>;
    expect(info.double.garbage_weights).toBe(true);
    expect(d.process.logs).not.toMatch(/missing|Error/);
    const reply = firstMessage((await chat(d.url, { model: "Qwen/Qwen3.8-27B", messages: [{ role: "user", content: "Reply with exactly READY" }], chat_template_kwargs: { enable_thinking: false } })).json);
    expect(reply.content).not.toContain("SGLang test double");
    expect(reply.content.split(" ").length).toBeGreaterThanOrEqual(8);
  });
});

describe("vLLM double on simulated GPUs", () => {
  function vllm(model: string, flags: string[], env: Record<string, string>) {
    const r = spawnSync(python, [join(doubleDir, "bin/vllm"), "serve", model, "--port", "0", ...flags], {
      env: doubleEnv({ SGLANG_DOUBLE_LOAD_SECONDS: "0", SGLANG_DOUBLE_SHM_BYTES: BIG_SHM, ...env }), encoding: "utf-8", timeout: 20_000,
    });
    return { code: r.status, err: r.stderr };
  }
  it("world size beyond the GPUs, busy memory, a missing shard: vLLM's messages", () => {
    expect(vllm(healthy, ["-tp", "4"], { REPROBENCH_SIM_GPU_INVENTORY: containerInventory({ count: 2 }) }).err).toContain("RuntimeError: please ensure that world_size (4) is less than than max local gpu count (2)");
    expect(vllm(healthy, ["-tp", "4", "-dp", "2", "--max-model-len", "32768"], { REPROBENCH_SIM_GPU_INVENTORY: containerInventory({}, 10240) }).err).toContain("ValueError: Free memory on device (29.39/39.39 GiB) on startup is less than desired GPU memory utilization (0.9, 35.45 GiB).");
    expect(vllm(modelDir("missing-shard"), ["-tp", "4"], { REPROBENCH_SIM_GPU_INVENTORY: containerInventory() }).err).toMatch(/ValueError: Following weights were not initialized from checkpoint: \{'model\.layers\.\d+\./);
    expect(vllm(modelDir("truncate-shard"), ["-tp", "4"], { REPROBENCH_SIM_GPU_INVENTORY: containerInventory() }).err).toContain("MetadataIncompleteBuffer");
  });
});
