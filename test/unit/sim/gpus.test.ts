// Simulated GPUs (sim/gpus.ts, sim/images/sim-host/files/gpu/sim-gpu.py): the inventory changes behind
// `reprobench sim gpus`, the nvidia-smi stand-in's output in the real tool's formats, and the toolkit hook's
// decisions on a fake OCI bundle (no docker: the OCI state goes in on stdin).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { applyGpuChanges, cudaForDriver, defaultInventory, formatInventory, GPU_DEFAULTS, parseBusy, parseGpuOptions, parseInventory, type GpuInventory } from "../../../sim/gpus";

const root = resolve(__dirname, "../../..");
const tool = join(root, "sim/images/sim-host/files/gpu/sim-gpu.py");
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), "rb-gpus-"));
  dirs.push(d);
  return d;
}
function withInventory(inv: GpuInventory): string {
  const file = join(tmp(), "gpu-inventory.json");
  writeFileSync(file, JSON.stringify(inv));
  return file;
}
function smi(inv: GpuInventory | string, args: string[]) {
  const file = typeof inv === "string" ? inv : withInventory(inv);
  const r = spawnSync("python3", [tool, "nvidia-smi", ...args], { encoding: "utf8", env: { ...process.env, REPROBENCH_SIM_GPU_INVENTORY: file } });
  return { code: r.status, out: r.stdout, err: r.stderr };
}
/** A live pid for foreign processes: this test process. */
const livePid = process.pid;
const busy = (inv: GpuInventory, gpu: number, mib: number, name = "python3") => applyGpuChanges(inv, { busy: [{ gpu, mib, process: name, pid: livePid }] });

describe("inventory changes", () => {
  const base = defaultInventory("worker-a");

  it("defaults to an HGX A100 40GB with a CUDA 13 driver and the toolkit", () => {
    expect(base.gpus).toHaveLength(8);
    expect(base.gpus[0]).toMatchObject({ index: 0, name: "NVIDIA A100-SXM4-40GB", memoryTotalMiB: 40960, pciBusId: "00000000:07:00.0", migMode: "Disabled" });
    expect(base.gpus[7].pciBusId).toBe("00000000:BD:00.0");
    expect(base).toMatchObject({ driverVersion: GPU_DEFAULTS.driver, cudaVersion: "13.0", toolkit: true, fabricManager: "running", processes: [] });
    expect(base.gpus[0].uuid).toMatch(/^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(new Set(base.gpus.map((g) => g.uuid)).size).toBe(8);
    expect(defaultInventory("worker-b").gpus[0].uuid).not.toBe(base.gpus[0].uuid);
    expect(defaultInventory("worker-a")).toEqual(base);
  });

  it("maps drivers to the CUDA version they support", () => {
    expect(cudaForDriver("580.95.05")).toBe("13.0");
    expect(cudaForDriver("570.172.08")).toBe("12.8");
    expect(cudaForDriver("535.104.05")).toBe("12.2");
    expect(() => cudaForDriver("440.33")).toThrow(/older than R450/);
  });

  it("parses the CLI's values and names the option in every error", () => {
    expect(parseGpuOptions({ count: "4", driver: "570.172.08", busy: ["3:10240", "5:2048:java"], mig: ["2", "4:off"], toolkit: "absent", fabricManager: "stopped", reset: true })).toEqual({
      reset: true,
      count: 4,
      driver: { version: "570.172.08", cuda: "12.8" },
      busy: [{ gpu: 3, mib: 10240, process: "python3" }, { gpu: 5, mib: 2048, process: "java" }],
      mig: [{ gpu: 2, enabled: true }, { gpu: 4, enabled: false }],
      toolkit: false,
      fabricManager: "stopped",
    });
    expect(parseGpuOptions({ driver: "535.104.05:12.4" }).driver).toEqual({ version: "535.104.05", cuda: "12.4" });
    expect(() => parseGpuOptions({ count: "0" })).toThrow(/^--count: got '0'/);
    expect(() => parseGpuOptions({ count: "17" })).toThrow(/--count.*1 to 16/);
    expect(() => parseGpuOptions({ memoryMib: "lots" })).toThrow(/^--memory-mib/);
    expect(() => parseGpuOptions({ driver: "latest" })).toThrow(/^--driver: got 'latest'/);
    expect(() => parseBusy("3")).toThrow(/^--busy: got '3'; expected GPU:MIB\[:PROCESS\]/);
    expect(() => parseBusy("3:10:rm -rf")).toThrow(/^--busy/);
    expect(() => parseGpuOptions({ mig: ["x"] })).toThrow(/^--mig/);
    expect(() => parseGpuOptions({ toolkit: "yes" })).toThrow(/^--toolkit: got 'yes'; expected present or absent/);
    expect(() => parseGpuOptions({ fabricManager: "up" })).toThrow(/^--fabric-manager/);
    expect(() => parseGpuOptions({ name: "A,B" })).toThrow(/^--name/);
  });

  it("applies count, name, memory, driver, MIG and foreign processes", () => {
    const four = applyGpuChanges(base, { count: 4 });
    expect(four.gpus.map((g) => g.uuid)).toEqual(base.gpus.slice(0, 4).map((g) => g.uuid));
    const twelve = applyGpuChanges(base, { count: 12, name: "NVIDIA A100-SXM4-80GB", memoryMiB: 81920 });
    expect(twelve.gpus).toHaveLength(12);
    expect(new Set(twelve.gpus.map((g) => `${g.name}/${g.memoryTotalMiB}`))).toEqual(new Set(["NVIDIA A100-SXM4-80GB/81920"]));
    expect(applyGpuChanges(base, { driver: { version: "570.172.08", cuda: "12.8" } })).toMatchObject({ driverVersion: "570.172.08", cudaVersion: "12.8" });
    expect(applyGpuChanges(base, { mig: [{ gpu: 5, enabled: true }] }).gpus[5].migMode).toBe("Enabled");
    const used = busy(base, 3, 10240);
    expect(used.processes).toEqual([{ gpuUuid: base.gpus[3].uuid, pid: livePid, name: "python3", usedMiB: 10240 }]);
    expect(applyGpuChanges(used, { busy: [{ gpu: 3, mib: 0, process: "python3" }] }).processes).toEqual([]);
    expect(applyGpuChanges(used, { count: 2 }).processes).toEqual([]);
    expect(applyGpuChanges(used, { toolkit: false, fabricManager: "stopped" })).toMatchObject({ toolkit: false, fabricManager: "stopped" });
    expect(applyGpuChanges(applyGpuChanges(used, { toolkit: false, count: 2, mig: [{ gpu: 1, enabled: true }] }), { reset: true })).toEqual(base);
    expect(base.processes).toEqual([]); // pure: the input is untouched
  });

  it("refuses changes that cannot apply", () => {
    expect(() => applyGpuChanges(base, { busy: [{ gpu: 8, mib: 1, process: "x", pid: 1 }] })).toThrow("--busy: GPU 8 does not exist on worker-a (it has 8: 0..7)");
    expect(() => applyGpuChanges(base, { count: 4, mig: [{ gpu: 6, enabled: true }] })).toThrow(/^--mig: GPU 6 does not exist/);
    expect(() => applyGpuChanges(base, { busy: [{ gpu: 0, mib: 40337, process: "x", pid: 1 }] })).toThrow("--busy 0:40337: GPU 0 has only 40336 MiB free");
    expect(() => applyGpuChanges(base, { busy: [{ gpu: 0, mib: 1, process: "x" }] })).toThrow(/no process was started/);
    expect(() => applyGpuChanges(busy(base, 0, 30000), { memoryMiB: 16384 })).toThrow(/GPU 0 already has 30000 MiB in use/);
  });

  it("prints a table per host and validates what it reads", () => {
    const text = formatInventory(busy(applyGpuChanges(base, { toolkit: false }), 3, 10240));
    expect(text.split("\n")[0]).toBe("worker-a: 8 x NVIDIA A100-SXM4-40GB, driver 580.95.05 (CUDA 13.0), toolkit absent, fabric manager running");
    expect(text).toMatch(/^GPU\s+UUID\s+BUS-ID\s+USED\/TOTAL MiB\s+FREE MiB\s+MIG\s+PROCESSES$/m);
    expect(text).toContain(`00000000:4E:00.0  10240/40960     30096     Disabled  ${livePid} python3 10240 MiB`);
    expect(() => parseInventory("{", "worker-a")).toThrow(/is not JSON.*--reset/);
    expect(() => parseInventory("{}", "worker-a")).toThrow(/lacks gpus/);
    expect(parseInventory(JSON.stringify(base), "worker-a")).toEqual(base);
  });
});

describe("nvidia-smi stand-in (the real tool's formats)", () => {
  const inv = busy(defaultInventory("worker-a"), 3, 10240);
  const g = inv.gpus;

  it("-L", () => {
    const r = smi(inv, ["-L"]);
    expect(r.code).toBe(0);
    expect(r.out.split("\n")[0]).toBe(`GPU 0: NVIDIA A100-SXM4-40GB (UUID: ${g[0].uuid})`);
    expect(r.out.trimEnd().split("\n")).toHaveLength(8);
  });

  it("--query-gpu with and without header and units", () => {
    const fields = "index,uuid,name,pci.bus_id,memory.total,memory.used,memory.free,driver_version,mig.mode.current,compute_mode";
    const full = smi(inv, [`--query-gpu=${fields}`, "--format=csv"]).out.split("\n");
    expect(full[0]).toBe("index, uuid, name, pci.bus_id, memory.total [MiB], memory.used [MiB], memory.free [MiB], driver_version, mig.mode.current, compute_mode");
    expect(full[1]).toBe(`0, ${g[0].uuid}, NVIDIA A100-SXM4-40GB, 00000000:07:00.0, 40960 MiB, 0 MiB, 40336 MiB, 580.95.05, Disabled, Default`);
    expect(full[4]).toBe(`3, ${g[3].uuid}, NVIDIA A100-SXM4-40GB, 00000000:4E:00.0, 40960 MiB, 10240 MiB, 30096 MiB, 580.95.05, Disabled, Default`);
    const bare = smi(inv, ["--query-gpu", "index,memory.total,memory.used", "--format=csv,noheader,nounits"]).out;
    expect(bare.split("\n").slice(2, 4)).toEqual(["2, 40960, 0", "3, 40960, 10240"]);
    expect(smi(inv, ["--query-gpu=memory.used", "--format=csv,nounits"]).out.split("\n")[0]).toBe("memory.used [MiB]");
    expect(smi(inv, ["--query-gpu=count,name", "--format=csv,noheader", "-i", "5"]).out).toBe("8, NVIDIA A100-SXM4-40GB\n");
    expect(smi(applyGpuChanges(inv, { mig: [{ gpu: 1, enabled: true }] }), ["--query-gpu=index,mig.mode.current", "--format=csv,noheader"]).out.split("\n")[1]).toBe("1, Enabled");
    const bad = smi(inv, ["--query-gpu=index,bogus", "--format=csv"]);
    expect([bad.code, bad.out]).toEqual([2, 'Field "bogus" is not a valid field to query.\n\n']);
  });

  it("--query-compute-apps lists live foreign processes only", () => {
    const r = smi(inv, ["--query-compute-apps=gpu_uuid,pid,process_name,used_memory", "--format=csv"]);
    expect(r.out).toBe(`gpu_uuid, pid, process_name, used_gpu_memory [MiB]\n${g[3].uuid}, ${livePid}, python3, 10240 MiB\n`);
    expect(smi(inv, ["--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"]).out).toBe(`${livePid}, 10240\n`);
    // A process that has ended frees its memory, as on a real GPU.
    const dead = applyGpuChanges(defaultInventory("worker-a"), { busy: [{ gpu: 3, mib: 10240, process: "python3", pid: 999_999_999 }] });
    expect(smi(dead, ["--query-compute-apps=pid", "--format=csv,noheader"]).out).toBe("");
    expect(smi(dead, ["--query-gpu=memory.used", "--format=csv,noheader", "-i", "3"]).out).toBe("0 MiB\n");
  });

  it("-q has the driver, the CUDA version and the fabric state", () => {
    const q = smi(inv, ["-q"]).out;
    expect(q).toContain("\nDriver Version                            : 580.95.05\nCUDA Version                              : 13.0\n");
    expect(q).toContain("Attached GPUs                             : 8\nGPU 00000000:07:00.0\n    Product Name                          : NVIDIA A100-SXM4-40GB\n");
    expect(q).toContain("    Fabric\n        State                             : Completed\n        Status                            : Success\n");
    expect(q).toContain(`        Process ID                        : ${livePid}\n            Type                          : C\n            Name                          : python3\n            Used GPU Memory               : 10240 MiB\n`);
    expect(smi(applyGpuChanges(inv, { fabricManager: "stopped" }), ["-q"]).out).toContain("        State                             : Not Started\n");
  });

  it("the default screen, no driver, bad arguments", () => {
    const table = smi(inv, []).out;
    expect(table).toMatch(/\| NVIDIA-SMI 580\.95\.05 +Driver Version: 580\.95\.05 +CUDA Version: 13\.0 +\|/);
    expect(table).toContain("10240MiB /  40960MiB");
    const none = smi(join(tmp(), "absent.json"), ["-L"]);
    expect([none.code, none.out]).toEqual([9, "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n\n"]);
    expect(smi(inv, ["--bogus"]).err).toBe("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n");
    expect(smi(applyGpuChanges(inv, { count: 1 }), ["-L", "-i", "3"])).toMatchObject({ code: 6, out: "No devices were found\n" });
  });
});

describe("nvidia-container-runtime-hook stand-in (fake OCI bundle)", () => {
  const inv = busy(defaultInventory("worker-a"), 3, 10240);
  function bundle(env: string[]): string {
    const dir = tmp();
    mkdirSync(join(dir, "rootfs", "usr", "bin"), { recursive: true });
    writeFileSync(join(dir, "config.json"), JSON.stringify({ ociVersion: "1.0.2", root: { path: "rootfs" }, process: { env: ["PATH=/usr/bin", ...env] } }));
    return dir;
  }
  function hook(dir: string, hostInv: GpuInventory | null = inv, command = "prestart") {
    const file = hostInv ? withInventory(hostInv) : join(tmp(), "none.json");
    const state = JSON.stringify({ ociVersion: "1.0.2", id: "0123456789abcdef", status: "creating", pid: 0, bundle: dir });
    const r = spawnSync("python3", [tool, "nvidia-container-runtime-hook", command], { input: state, encoding: "utf8", env: { ...process.env, REPROBENCH_SIM_GPU_INVENTORY: file, REPROBENCH_SIM_GPU_HOOK_LOG: join(dir, "hook.log") } });
    const written = join(dir, "rootfs", "run", "reprobench-sim", "gpu-inventory.json");
    return { code: r.status, err: r.stderr, seen: existsSync(written) ? (JSON.parse(readFileSync(written, "utf8")) as GpuInventory & { requested: string; scope: string }) : undefined };
  }
  const image = ["CUDA_VERSION=13.0.1", "NVIDIA_REQUIRE_CUDA=cuda>=13.0", "NVIDIA_VISIBLE_DEVICES=all"];

  it("--gpus all: every GPU, foreign memory folded in, an nvidia-smi in the container", () => {
    const dir = bundle([...image, "NVIDIA_VISIBLE_DEVICES=all"]);
    const r = hook(dir);
    expect(r.code).toBe(0);
    expect(r.err).toBe("Auto-detected mode as 'legacy'\n");
    expect(r.seen).toMatchObject({ scope: "container", requested: "all", driverVersion: "580.95.05", processes: [] });
    expect(r.seen?.gpus).toHaveLength(8);
    expect(r.seen?.gpus[3].memoryUsedMiB).toBe(10240);
    const nvsmi = join(dir, "rootfs", "usr", "bin", "nvidia-smi");
    expect(statSync(nvsmi).mode & 0o777).toBe(0o755);
    expect(smi(join(dir, "rootfs", "run", "reprobench-sim", "gpu-inventory.json"), ["--query-gpu=index,memory.used", "--format=csv,noheader,nounits", "-i", "3"]).out).toBe("3, 10240\n");
  });

  it("a device list: renumbered from 0 (the later NVIDIA_VISIBLE_DEVICES wins, as docker appends it)", () => {
    const r = hook(bundle([...image, `NVIDIA_VISIBLE_DEVICES=2,${inv.gpus[5].uuid}`]));
    expect(r.code).toBe(0);
    expect(r.seen?.gpus.map((g) => [g.index, (g as unknown as { hostIndex: number }).hostIndex])).toEqual([[0, 2], [1, 5]]);
    expect(r.seen?.requested).toBe(`2,${inv.gpus[5].uuid}`);
  });

  it("an unknown device, an old driver, no driver: the real messages, exit 1", () => {
    expect(hook(bundle([...image, "NVIDIA_VISIBLE_DEVICES=0,9"]))).toMatchObject({ code: 1, err: "Auto-detected mode as 'legacy'\nnvidia-container-cli: device error: 9: unknown device\n", seen: undefined });
    const old = applyGpuChanges(inv, { driver: { version: "570.172.08", cuda: "12.8" } });
    expect(hook(bundle(image), old)).toMatchObject({ code: 1, err: "Auto-detected mode as 'legacy'\nnvidia-container-cli: requirement error: unsatisfied condition: cuda>=13.0, please update your driver to a newer version, or use an earlier cuda container\n" });
    expect(hook(bundle([...image, "NVIDIA_DISABLE_REQUIRE=true"]), old).code).toBe(0);
    // Legacy image (CUDA_VERSION, no NVIDIA_REQUIRE_CUDA) requires its own major.minor.
    expect(hook(bundle(["CUDA_VERSION=12.9.1", "NVIDIA_VISIBLE_DEVICES=all"]), old).err).toContain("unsatisfied condition: cuda>=12.9,");
    // Alternatives (space) are ORed, conditions (comma) ANDed: the forward-compat clause of nvidia/cuda images.
    expect(hook(bundle(["NVIDIA_REQUIRE_CUDA=cuda>=13.0 brand=nvidia,driver>=570,driver<571", "NVIDIA_VISIBLE_DEVICES=all"]), old).code).toBe(0);
    expect(hook(bundle(image), null)).toMatchObject({ code: 1, err: "Auto-detected mode as 'legacy'\nnvidia-container-cli: initialization error: nvml error: driver not loaded\n" });
  });

  it("no request, void, none; poststart/poststop", () => {
    expect(hook(bundle(["CUDA_VERSION=13.0.1"]))).toMatchObject({ code: 0, seen: undefined });
    expect(hook(bundle([...image, "NVIDIA_VISIBLE_DEVICES=void"]))).toMatchObject({ code: 0, seen: undefined });
    const none = hook(bundle([...image, "NVIDIA_VISIBLE_DEVICES=none"]));
    expect(none.code).toBe(0);
    expect(none.seen?.gpus).toEqual([]);
    expect(hook(bundle(image), inv, "poststop")).toMatchObject({ code: 0, err: "" });
  });
});
