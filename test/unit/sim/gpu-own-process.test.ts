// The model server as a compute process of the simulated host (sim/images/sim-host/files/gpu/sim-gpu.py): the
// toolkit hook records a SGLang/vLLM container's init pid on the GPUs the server uses, and the host's
// nvidia-smi lists it and counts its memory while that pid lives. Runs the script for real on a fake OCI bundle,
// with live `sleep` processes standing in for the containers' init processes.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { applyGpuChanges, defaultInventory, type GpuInventory } from "../../../sim/gpus";

const tool = join(resolve(__dirname, "../../.."), "sim/images/sim-host/files/gpu/sim-gpu.py");
const dirs: string[] = [];
const sleepers: ChildProcess[] = [];
afterAll(() => {
  sleepers.forEach((c) => c.kill("SIGKILL"));
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), "rb-gpu-own-"));
  dirs.push(d);
  return d;
}

/** A live process to be a container's init pid. */
function sleeper(): ChildProcess & { pid: number } {
  const c = spawn("sleep", ["600"], { stdio: "ignore" });
  sleepers.push(c);
  return c as ChildProcess & { pid: number };
}
/** Kills it and waits until it is reaped (a zombie still has a /proc entry). */
async function stop(c: ChildProcess): Promise<void> {
  const gone = new Promise((done) => c.once("exit", done));
  c.kill("SIGKILL");
  await gone;
}

/** The host: an inventory file in a directory of its own (the hook's record goes next to it). */
function host(inv: GpuInventory = defaultInventory("worker-a")): string {
  const file = join(tmp(), "gpu-inventory.json");
  writeFileSync(file, JSON.stringify(inv));
  return file;
}
const env = (inventory: string, log: string) => ({ ...process.env, REPROBENCH_SIM_GPU_INVENTORY: inventory, REPROBENCH_SIM_GPU_HOOK_LOG: log });

/** reprobench's --api-key entrypoint (components/container-spec.ts apiKeyEntrypoint) before the server's command. */
const wrapped = (cmd: string[]) => ["/bin/sh", "-c", 'exec "$@" --api-key "$REPROBENCH_API_KEY"', "reprobench-api-key", ...cmd];
const IMAGE_ENV = ["PATH=/usr/bin", "CUDA_VERSION=13.0.1", "NVIDIA_REQUIRE_CUDA=cuda>=13.0", "NVIDIA_VISIBLE_DEVICES=all"];

function bundle(args: string[], extraEnv: string[] = []): string {
  const dir = tmp();
  mkdirSync(join(dir, "rootfs", "usr", "bin"), { recursive: true });
  writeFileSync(join(dir, "config.json"), JSON.stringify({ ociVersion: "1.0.2", root: { path: "rootfs" }, process: { args, env: [...IMAGE_ENV, ...extraEnv] } }));
  return dir;
}
function stateOf(dir: string, id: string, pid: number): string {
  return JSON.stringify({ ociVersion: "1.0.2", id, status: "creating", pid, bundle: dir });
}
function containerInventory(dir: string): GpuInventory & { scope: string } {
  return JSON.parse(readFileSync(join(dir, "rootfs", "run", "reprobench-sim", "gpu-inventory.json"), "utf8"));
}

/** One prestart call; returns the exit code, stderr and the bundle. */
function hook(inventory: string, args: string[], o: { id?: string; pid?: number; env?: string[] } = {}) {
  const dir = bundle(args, o.env);
  const r = spawnSync("python3", [tool, "nvidia-container-runtime-hook", "prestart"], { input: stateOf(dir, o.id ?? "c0ffee", o.pid ?? 0), encoding: "utf8", env: env(inventory, join(dir, "hook.log")) });
  return { code: r.status, err: r.stderr, dir, log: existsSync(join(dir, "hook.log")) ? readFileSync(join(dir, "hook.log"), "utf8") : "" };
}
/** The same, as a child process (hooks of containers started together run at once). */
function hookAsync(inventory: string, args: string[], o: { id: string; pid: number; env?: string[] }): Promise<number | null> {
  const dir = bundle(args, o.env);
  return new Promise((done) => {
    const c = spawn("python3", [tool, "nvidia-container-runtime-hook", "prestart"], { env: env(inventory, join(dir, "hook.log")), stdio: ["pipe", "ignore", "ignore"] });
    c.on("exit", (code) => done(code));
    c.stdin.end(stateOf(dir, o.id, o.pid));
  });
}

function smi(inventory: string, args: string[]): string {
  const r = spawnSync("python3", [tool, "nvidia-smi", ...args], { encoding: "utf8", env: env(inventory, "/dev/null") });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
}
/** The host's compute apps, as preflight-host.sh asks for them. */
function apps(inventory: string): string[] {
  return smi(inventory, ["--query-compute-apps=gpu_uuid,pid,process_name,used_memory", "--format=csv,noheader,nounits"]).split("\n").filter(Boolean);
}
function used(inventory: string): number[] {
  return smi(inventory, ["--query-gpu=memory.used", "--format=csv,noheader,nounits"]).trim().split("\n").map(Number);
}
function record(inventory: string): { processes: { pid: number; gpuUuid: string; containerId: string }[] } {
  return JSON.parse(readFileSync(join(inventory, "..", "gpu-processes.json"), "utf8"));
}

const inv = defaultInventory("worker-a");
const uuid = (i: number) => inv.gpus[i].uuid;
const mib = (fraction: number) => Math.round(fraction * 40960);

describe("the model server in the host's nvidia-smi", () => {
  it("SGLang (TP 4 × DP 2, --mem-fraction-static 0.85) behind the --api-key entrypoint: its pid on all 8 GPUs", () => {
    const file = host();
    expect(used(file)).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    const init = sleeper();
    const r = hook(file, wrapped(["sglang", "serve", "--model-path", "/models/m", "--tp-size", "4", "--dp-size", "2", "--mem-fraction-static", "0.85"]), { pid: init.pid });
    expect([r.code, r.err]).toEqual([0, "Auto-detected mode as 'legacy'\n"]);
    expect(apps(file)).toEqual(inv.gpus.map((g) => `${g.uuid}, ${init.pid}, python3, ${mib(0.85)}`));
    expect(used(file)).toEqual(Array(8).fill(mib(0.85)));
    expect(smi(file, ["--query-gpu=memory.free", "--format=csv,noheader,nounits", "-i", "0"])).toBe(`${40960 - 624 - mib(0.85)}\n`);
    // The table and -q show it as the real tool does.
    expect(smi(file, [])).toMatch(new RegExp(`\\|\\s+7\\s+N/A\\s+N/A\\s+${init.pid}\\s+C\\s+python3\\s+${mib(0.85)}MiB \\|`));
    expect(smi(file, ["-q", "-i", "3"])).toContain(`Process ID                        : ${init.pid}\n`);
    expect(r.log).toContain(`pid ${init.pid} (sglang) recorded on host GPU(s) 0,1,2,3,4,5,6,7`);
    // The container itself: no host processes, and its inventory was written before its own claim.
    const seen = containerInventory(r.dir);
    expect(seen.processes).toEqual([]);
    expect(seen.gpus.map((g) => g.memoryUsedMiB)).toEqual(Array(8).fill(0));
    expect(smi(join(r.dir, "rootfs", "run", "reprobench-sim", "gpu-inventory.json"), ["--query-compute-apps=pid", "--format=csv,noheader"])).toBe("");
  });

  it("the default fraction, and only the GPUs the server uses: `python3 -m sglang.launch_server` (TP 1) on devices 2,5", () => {
    const file = host();
    const init = sleeper();
    expect(hook(file, ["python3", "-m", "sglang.launch_server", "--model-path", "/models/m"], { pid: init.pid, env: ["NVIDIA_VISIBLE_DEVICES=2,5"] }).code).toBe(0);
    // 0.836: SGLang's resolved mem_fraction_static as the double reports it (no fixed upstream default).
    expect(apps(file)).toEqual([`${uuid(2)}, ${init.pid}, python3, ${mib(0.836)}`]);
    expect(used(file)).toEqual([0, 0, mib(0.836), 0, 0, 0, 0, 0]);
  });

  it("vLLM: --gpu-memory-utilization, --tensor-parallel-size, and its default 0.9", () => {
    const file = host();
    const a = sleeper();
    const b = sleeper();
    expect(hook(file, wrapped(["vllm", "serve", "openai/gpt-oss-20b", "--tensor-parallel-size", "2", "--gpu-memory-utilization=0.7"]), { id: "a", pid: a.pid, env: ["NVIDIA_VISIBLE_DEVICES=0,1"] }).code).toBe(0);
    expect(hook(file, ["python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "m"], { id: "b", pid: b.pid, env: ["NVIDIA_VISIBLE_DEVICES=4"] }).code).toBe(0);
    expect(apps(file)).toEqual([`${uuid(0)}, ${a.pid}, python3, ${mib(0.7)}`, `${uuid(1)}, ${a.pid}, python3, ${mib(0.7)}`, `${uuid(4)}, ${b.pid}, python3, ${mib(0.9)}`]);
    expect(used(file)).toEqual([mib(0.7), mib(0.7), 0, 0, mib(0.9), 0, 0, 0]);
  });

  it("records nothing for a container without GPUs, without a live pid, or that runs no model server", () => {
    const file = host();
    const init = sleeper();
    const server = wrapped(["sglang", "serve", "--model-path", "/models/m", "--mem-fraction-static", "0.9"]);
    expect(hook(file, server, { pid: init.pid, env: ["NVIDIA_VISIBLE_DEVICES=none"] }).code).toBe(0);
    expect(hook(file, server, { pid: init.pid, env: ["NVIDIA_VISIBLE_DEVICES=void"] }).code).toBe(0);
    expect(hook(file, server, { pid: 0 }).code).toBe(0);
    // The preflight's own checks with --gpus: `nvidia-smi -L` and the CUDA probe hold no server memory.
    expect(hook(file, ["nvidia-smi", "-L"], { pid: init.pid }).code).toBe(0);
    expect(hook(file, ["python3", "-c", "import torch"], { pid: init.pid }).code).toBe(0);
    expect(apps(file)).toEqual([]);
    expect(used(file)).toEqual(Array(8).fill(0));
    expect(existsSync(join(file, "..", "gpu-processes.json"))).toBe(false);
    // The same host with the server given GPUs: recorded (so the cases above were not empty by accident).
    expect(hook(file, server, { pid: init.pid }).code).toBe(0);
    expect(apps(file)).toHaveLength(1);
  });

  it("the entry goes with the pid, and the next hook prunes it from the record", async () => {
    const file = host();
    const first = sleeper();
    expect(hook(file, wrapped(["sglang", "serve", "--model-path", "/m", "--tp-size", "2"]), { id: "first", pid: first.pid }).code).toBe(0);
    expect(apps(file)).toHaveLength(2);
    await stop(first);
    expect(apps(file)).toEqual([]);
    expect(used(file)).toEqual(Array(8).fill(0));
    expect(record(file).processes.map((p) => p.pid)).toEqual([first.pid, first.pid]);
    // A zombie (dead, not yet reaped: spawnSync keeps this loop from reaping) holds no GPU memory either.
    const dying = sleeper();
    expect(hook(file, wrapped(["sglang", "serve", "--model-path", "/m"]), { id: "dying", pid: dying.pid }).code).toBe(0);
    expect(apps(file)).toEqual([`${uuid(0)}, ${dying.pid}, python3, ${mib(0.836)}`]);
    dying.kill("SIGKILL");
    expect(apps(file)).toEqual([]);
    expect(readFileSync(`/proc/${dying.pid}/stat`, "utf8").split(") ")[1][0]).toBe("Z");
    const second = sleeper();
    expect(hook(file, wrapped(["sglang", "serve", "--model-path", "/m"]), { id: "second", pid: second.pid }).code).toBe(0);
    expect(record(file).processes.map((p) => [p.containerId, p.pid])).toEqual([["second", second.pid]]);
    await new Promise((done) => (dying.exitCode !== null || dying.signalCode !== null ? done(null) : dying.once("exit", done)));
  });

  it("a restarted container replaces its entries; two containers on the same GPU both count, the second sees the first", () => {
    const file = host();
    const [a1, a2, b] = [sleeper(), sleeper(), sleeper()];
    const small = (f: string) => ["python3", "-m", "sglang.launch_server", "--model-path", "/m", "--mem-fraction-static", f];
    expect(hook(file, small("0.3"), { id: "a", pid: a1.pid }).code).toBe(0);
    expect(hook(file, small("0.3"), { id: "a", pid: a2.pid }).code).toBe(0);
    expect(record(file).processes.map((p) => p.pid)).toEqual([a2.pid]);
    const r = hook(file, small("0.4"), { id: "b", pid: b.pid });
    expect(r.code).toBe(0);
    expect(apps(file)).toEqual([`${uuid(0)}, ${a2.pid}, python3, ${mib(0.3)}`, `${uuid(0)}, ${b.pid}, python3, ${mib(0.4)}`]);
    expect(used(file)[0]).toBe(mib(0.3) + mib(0.4));
    expect(containerInventory(r.dir).gpus[0].memoryUsedMiB).toBe(mib(0.3));
  });

  it("a server claims no more than is free (a foreign process holds the rest)", () => {
    const file = host(applyGpuChanges(inv, { busy: [{ gpu: 0, mib: 10240, process: "java", pid: process.pid }] }));
    const init = sleeper();
    expect(hook(file, ["sglang", "serve", "--model-path", "/m", "--mem-fraction-static", "0.9"], { pid: init.pid }).code).toBe(0);
    expect(apps(file)).toEqual([`${uuid(0)}, ${process.pid}, java, 10240`, `${uuid(0)}, ${init.pid}, python3, ${40960 - 624 - 10240}`]);
  });

  it("a hook waits for another's read-modify-write of the record and keeps its entry (the lock)", async () => {
    const file = host();
    const recordFile = join(file, "..", "gpu-processes.json");
    const other = sleeper();
    // Another hook in the middle of its update: it holds the lock, has read the record, writes when told.
    const holder = spawn("python3", ["-c", [
      "import fcntl, json, os, sys",
      "path, entry = sys.argv[1], json.loads(sys.argv[2])",
      "lock = open(path + '.lock', 'a'); fcntl.flock(lock, fcntl.LOCK_EX)",
      "procs = json.load(open(path))['processes'] if os.path.exists(path) else []",
      "print('locked', flush=True); sys.stdin.readline()",
      "open(path + '.h', 'w').write(json.dumps({'version': 1, 'processes': procs + [entry]})); os.replace(path + '.h', path)",
    ].join("\n"), recordFile, JSON.stringify({ gpuUuid: uuid(1), pid: other.pid, name: "python3", usedMiB: 1000, containerId: "other" })], { stdio: ["pipe", "pipe", "inherit"] });
    sleepers.push(holder);
    await new Promise((done) => holder.stdout.once("data", done));
    const init = sleeper();
    let finished = false;
    const code = hookAsync(file, ["sglang", "serve", "--model-path", "/m"], { id: "mine", pid: init.pid, env: ["NVIDIA_VISIBLE_DEVICES=0"] }).then((c) => ((finished = true), c));
    await new Promise((done) => setTimeout(done, 2000));
    expect(finished).toBe(false);
    const released = new Promise((done) => holder.once("exit", done));
    holder.stdin.end("\n");
    await released;
    expect(await code).toBe(0);
    // The other's entry first: this hook read the record after the other had written it.
    expect(apps(file)).toEqual([`${uuid(1)}, ${other.pid}, python3, 1000`, `${uuid(0)}, ${init.pid}, python3, ${mib(0.836)}`]);
  });
});
