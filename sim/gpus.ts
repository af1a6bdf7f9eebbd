// Simulated GPUs on the sim hosts: the inventory file every GPU stand-in reads (the host's nvidia-smi, the
// container toolkit's hook, the in-container nvidia-smi and the SGLang/vLLM doubles), its defaults, the pure
// changes behind `reprobench sim gpus`, and the run-time command that applies them on a host.
//
// Contract (sim/README.md, "GPUs"):
//   host inventory        /etc/reprobench-sim/gpu-inventory.json   (HOST_GPU_INVENTORY; GpuInventory below)
//   container inventory   /run/reprobench-sim/gpu-inventory.json   (written by the hook into the container's
//                          root for `--gpus`: the requested GPUs renumbered 0..k-1, scope "container",
//                          `requested` = NVIDIA_VISIBLE_DEVICES; foreign memory folded into memoryUsedMiB)
//   in-container tool     /usr/bin/nvidia-smi (copied in by the hook)
//   host tools            /usr/local/bin/nvidia-smi, /usr/local/bin/nvidia-container-runtime-hook (the toolkit;
//                          absent = toolkit not installed), /usr/local/sbin/reprobench-sim-gpu (sim side)
//   tests only            REPROBENCH_SIM_GPU_INVENTORY (points the tools and the doubles at another file)
import { createHash } from "node:crypto";
import { existingHosts, tryDocker } from "./docker";
import { mustRun } from "./exec";
import { DEFAULT_INSTANCE, MAX_HOSTS, planCluster, type HostPlan, type SimInstance } from "./layout";
import type { Log } from "./log";

export const HOST_GPU_INVENTORY = "/etc/reprobench-sim/gpu-inventory.json";
export const CONTAINER_GPU_INVENTORY = "/run/reprobench-sim/gpu-inventory.json";
export const GPU_INVENTORY_ENV = "REPROBENCH_SIM_GPU_INVENTORY";
export const GPU_HELPER = "/usr/local/sbin/reprobench-sim-gpu";

/** What a fresh sim host has: an HGX A100 40GB with a CUDA 13 driver (the double image needs cuda>=13.0). */
export const GPU_DEFAULTS = {
  count: 8,
  name: "NVIDIA A100-SXM4-40GB",
  memoryMiB: 40960,
  /** memory.reserved of an A100-40GB (driver-reserved; torch sees 40336 MiB = 39.39 GiB total). */
  reservedMiB: 624,
  driver: "580.95.05",
  cuda: "13.0",
} as const;
export const MAX_GPUS = 16;
/** A DGX A100's GPU bus ids, in nvidia-smi's order. */
const DGX_A100_BUSES = ["07", "0F", "47", "4E", "87", "90", "B7", "BD"];

export interface GpuDevice {
  index: number;
  uuid: string;
  name: string;
  pciBusId: string;
  serial: string;
  memoryTotalMiB: number;
  memoryReservedMiB: number;
  /** Used memory not attributed to a listed process (0 on an idle GPU). */
  memoryUsedMiB: number;
  migMode: "Enabled" | "Disabled";
  computeMode: "Default" | "Exclusive_Process" | "Prohibited";
  persistenceMode: "Enabled" | "Disabled";
  computeCap: string;
  brand: string;
}

export interface GpuProcess {
  gpuUuid: string;
  /** A real pid on the host (a `reprobench-sim-gpu busy-start` process); counted while it runs. */
  pid: number;
  name: string;
  usedMiB: number;
  /** The systemd unit that runs it (sim-made processes). */
  unit?: string;
}

export interface GpuInventory {
  version: 1;
  host: string;
  driverVersion: string;
  /** The highest CUDA version the driver supports (nvidia-smi's "CUDA Version"). */
  cudaVersion: string;
  /** NVIDIA container toolkit installed: the hook is on dockerd's PATH. */
  toolkit: boolean;
  fabricManager: "running" | "stopped";
  /** Driver faults for the hook and nvidia-smi (gpus.md §1.3); null normally. */
  fault: null | "driver-not-loaded" | "nvml-missing";
  gpus: GpuDevice[];
  processes: GpuProcess[];
}

/** Driver branch -> the CUDA version its nvidia-smi reports (NVIDIA's CUDA toolkit release notes, table 3). */
const CUDA_BY_BRANCH: Array<[number, string]> = [
  [590, "13.1"], [580, "13.0"], [575, "12.9"], [570, "12.8"], [565, "12.7"], [560, "12.6"], [555, "12.5"],
  [550, "12.4"], [545, "12.3"], [535, "12.2"], [530, "12.1"], [525, "12.0"], [520, "11.8"], [515, "11.7"],
  [510, "11.6"], [495, "11.5"], [470, "11.4"], [465, "11.3"], [460, "11.2"], [455, "11.1"], [450, "11.0"],
];

export function cudaForDriver(driver: string): string {
  const major = Number(driver.split(".")[0]);
  const hit = CUDA_BY_BRANCH.find(([branch]) => major >= branch);
  if (!hit) throw new Error(`--driver: ${driver} is older than R450 (CUDA 11.0); the sim knows R450 and later`);
  return hit[1];
}

function hex(seed: string, n: number): string {
  return createHash("sha256").update(seed).digest("hex").slice(0, n);
}

export function gpuUuid(host: string, index: number): string {
  const h = hex(`reprobench-sim-gpu/${host}/${index}`, 32);
  return `GPU-${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

function busId(index: number): string {
  const bus = index < DGX_A100_BUSES.length ? DGX_A100_BUSES[index] : (0xc0 + 8 * (index - DGX_A100_BUSES.length)).toString(16).toUpperCase();
  return `00000000:${bus}:00.0`;
}

export function defaultGpu(host: string, index: number, name: string = GPU_DEFAULTS.name, memoryMiB: number = GPU_DEFAULTS.memoryMiB): GpuDevice {
  const serial = String(parseInt(hex(`serial/${host}/${index}`, 10), 16)).padStart(13, "0").slice(-9);
  return {
    index,
    uuid: gpuUuid(host, index),
    name,
    pciBusId: busId(index),
    serial: `1324${serial}`,
    memoryTotalMiB: memoryMiB,
    memoryReservedMiB: memoryMiB >= 16384 ? GPU_DEFAULTS.reservedMiB : Math.round(memoryMiB / 64),
    memoryUsedMiB: 0,
    migMode: "Disabled",
    computeMode: "Default",
    persistenceMode: "Enabled",
    computeCap: "8.0",
    brand: "nvidia",
  };
}

export function defaultInventory(host: string): GpuInventory {
  return {
    version: 1,
    host,
    driverVersion: GPU_DEFAULTS.driver,
    cudaVersion: GPU_DEFAULTS.cuda,
    toolkit: true,
    fabricManager: "running",
    fault: null,
    gpus: Array.from({ length: GPU_DEFAULTS.count }, (_, i) => defaultGpu(host, i)),
    processes: [],
  };
}

// --- changes -------------------------------------------------------------------------------------------

export interface BusySpec {
  gpu: number;
  /** 0 removes every process on that GPU. */
  mib: number;
  process: string;
  /** Filled in by simGpus once the process runs (applyGpuChanges needs them for mib > 0). */
  pid?: number;
  unit?: string;
}

export interface GpuChanges {
  reset?: boolean;
  count?: number;
  name?: string;
  memoryMiB?: number;
  driver?: { version: string; cuda: string };
  busy?: BusySpec[];
  mig?: Array<{ gpu: number; enabled: boolean }>;
  toolkit?: boolean;
  fabricManager?: "running" | "stopped";
}

/** The option values of `reprobench sim gpus` as the CLI parser hands them over (strings, repeatable ones as lists). */
export interface SimGpusCliValues {
  count?: string;
  name?: string;
  memoryMib?: string;
  driver?: string;
  busy?: string[];
  mig?: string[];
  toolkit?: string;
  fabricManager?: string;
  reset?: boolean;
}

function positiveInt(option: string, raw: string, max?: number): number {
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < 1 || (max !== undefined && Number(raw) > max)) {
    throw new Error(`${option}: got '${raw}'; expected an integer from 1${max !== undefined ? ` to ${max}` : ""}`);
  }
  return Number(raw);
}

export function parseBusy(raw: string): BusySpec {
  const m = /^(\d+):(\d+)(?::([A-Za-z0-9._+-]{1,64}))?$/.exec(raw.trim());
  if (!m) throw new Error(`--busy: got '${raw}'; expected GPU:MIB[:PROCESS], e.g. 3:10240:python3 (GPU index, MiB used, a process name of letters, digits and ._+-; MIB 0 frees the GPU)`);
  return { gpu: Number(m[1]), mib: Number(m[2]), process: m[3] ?? "python3" };
}

export function parseDriver(raw: string): { version: string; cuda: string } {
  const m = /^(\d{3}(?:\.\d{1,3}){1,2})(?::(\d{2}\.\d))?$/.exec(raw.trim());
  if (!m) throw new Error(`--driver: got '${raw}'; expected a driver version such as 580.95.05 or 570.172.08, optionally :CUDA (e.g. 535.104.05:12.2)`);
  return { version: m[1], cuda: m[2] ?? cudaForDriver(m[1]) };
}

export function parseMig(raw: string): { gpu: number; enabled: boolean } {
  const m = /^(\d+)(?::(on|off))?$/.exec(raw.trim());
  if (!m) throw new Error(`--mig: got '${raw}'; expected a GPU index, optionally :on or :off (e.g. --mig 5, --mig 5:off)`);
  return { gpu: Number(m[1]), enabled: m[2] !== "off" };
}

export function parseGpuOptions(v: SimGpusCliValues): GpuChanges {
  const changes: GpuChanges = {};
  if (v.reset) changes.reset = true;
  if (v.count !== undefined) changes.count = positiveInt("--count", v.count, MAX_GPUS);
  if (v.name !== undefined) {
    if (!/^[\x20-\x7e]{1,96}$/.test(v.name) || v.name.includes(",")) throw new Error(`--name: got '${v.name}'; expected a product name without commas, e.g. "NVIDIA A100-SXM4-80GB"`);
    changes.name = v.name;
  }
  if (v.memoryMib !== undefined) changes.memoryMiB = positiveInt("--memory-mib", v.memoryMib, 1 << 20);
  if (v.driver !== undefined) changes.driver = parseDriver(v.driver);
  if (v.busy?.length) changes.busy = v.busy.map(parseBusy);
  if (v.mig?.length) changes.mig = v.mig.map(parseMig);
  if (v.toolkit !== undefined) {
    if (v.toolkit !== "present" && v.toolkit !== "absent") throw new Error(`--toolkit: got '${v.toolkit}'; expected present or absent`);
    changes.toolkit = v.toolkit === "present";
  }
  if (v.fabricManager !== undefined) {
    if (v.fabricManager !== "running" && v.fabricManager !== "stopped") throw new Error(`--fabric-manager: got '${v.fabricManager}'; expected running or stopped`);
    changes.fabricManager = v.fabricManager;
  }
  return changes;
}

export function gpuUsedMiB(inv: GpuInventory, gpu: GpuDevice): number {
  return gpu.memoryUsedMiB + inv.processes.filter((p) => p.gpuUuid === gpu.uuid).reduce((s, p) => s + p.usedMiB, 0);
}

export function gpuFreeMiB(inv: GpuInventory, gpu: GpuDevice): number {
  return Math.max(0, gpu.memoryTotalMiB - gpu.memoryReservedMiB - gpuUsedMiB(inv, gpu));
}

/**
 * The inventory after `changes` (pure). Order: --reset (the defaults), --count, --name, --memory-mib,
 * --driver, --toolkit, --fabric-manager, --mig, --busy. Throws with the option's name when a change
 * cannot apply (a GPU index out of range, more memory than is free).
 */
export function applyGpuChanges(current: GpuInventory, changes: GpuChanges): GpuInventory {
  const inv: GpuInventory = changes.reset ? defaultInventory(current.host) : structuredClone(current);
  const name = changes.name ?? inv.gpus[0]?.name ?? GPU_DEFAULTS.name;
  const memory = changes.memoryMiB ?? inv.gpus[0]?.memoryTotalMiB ?? GPU_DEFAULTS.memoryMiB;
  if (changes.count !== undefined) {
    inv.gpus = Array.from({ length: changes.count }, (_, i) => inv.gpus[i] ?? defaultGpu(inv.host, i, name, memory));
    const kept = new Set(inv.gpus.map((g) => g.uuid));
    inv.processes = inv.processes.filter((p) => kept.has(p.gpuUuid));
  }
  if (changes.name !== undefined) for (const g of inv.gpus) g.name = changes.name;
  if (changes.memoryMiB !== undefined) {
    for (const g of inv.gpus) {
      g.memoryTotalMiB = changes.memoryMiB;
      g.memoryReservedMiB = defaultGpu(inv.host, g.index, g.name, changes.memoryMiB).memoryReservedMiB;
      if (gpuUsedMiB(inv, g) + g.memoryReservedMiB > g.memoryTotalMiB) {
        throw new Error(`--memory-mib ${changes.memoryMiB}: GPU ${g.index} already has ${gpuUsedMiB(inv, g)} MiB in use`);
      }
    }
  }
  if (changes.driver) {
    inv.driverVersion = changes.driver.version;
    inv.cudaVersion = changes.driver.cuda;
  }
  if (changes.toolkit !== undefined) inv.toolkit = changes.toolkit;
  if (changes.fabricManager !== undefined) inv.fabricManager = changes.fabricManager;
  const gpuAt = (option: string, index: number): GpuDevice => {
    const g = inv.gpus[index];
    if (!g) throw new Error(`${option}: GPU ${index} does not exist on ${inv.host} (it has ${inv.gpus.length}: 0..${inv.gpus.length - 1})`);
    return g;
  };
  for (const m of changes.mig ?? []) gpuAt("--mig", m.gpu).migMode = m.enabled ? "Enabled" : "Disabled";
  for (const b of changes.busy ?? []) {
    const g = gpuAt("--busy", b.gpu);
    if (b.mib === 0) {
      inv.processes = inv.processes.filter((p) => p.gpuUuid !== g.uuid);
      continue;
    }
    const free = gpuFreeMiB(inv, g);
    if (b.mib > free) throw new Error(`--busy ${b.gpu}:${b.mib}: GPU ${b.gpu} has only ${free} MiB free`);
    if (b.pid === undefined) throw new Error(`--busy ${b.gpu}:${b.mib}: no process was started for it`);
    inv.processes.push({ gpuUuid: g.uuid, pid: b.pid, name: b.process, usedMiB: b.mib, ...(b.unit ? { unit: b.unit } : {}) });
  }
  inv.gpus.forEach((g, i) => (g.index = i));
  return inv;
}

/** Checks a JSON value read from a host before it is trusted (a hand-edited file names its problem). */
export function parseInventory(text: string, host: string): GpuInventory {
  let v: GpuInventory;
  try {
    v = JSON.parse(text) as GpuInventory;
  } catch (e) {
    throw new Error(`${host}:${HOST_GPU_INVENTORY} is not JSON (${(e as Error).message}); \`reprobench sim gpus ${host} --reset\` rewrites it`);
  }
  if (!v || !Array.isArray(v.gpus) || !Array.isArray(v.processes) || typeof v.driverVersion !== "string" || typeof v.cudaVersion !== "string") {
    throw new Error(`${host}:${HOST_GPU_INVENTORY} lacks gpus, processes, driverVersion or cudaVersion; \`reprobench sim gpus ${host} --reset\` rewrites it`);
  }
  return { ...defaultInventory(host), ...v, host };
}

/** The table `reprobench sim gpus` prints for one host. */
export function formatInventory(inv: GpuInventory): string {
  const model = [...new Set(inv.gpus.map((g) => g.name))].join(" + ") || "no GPUs";
  const lines = [
    `${inv.host}: ${inv.gpus.length} x ${model}, driver ${inv.driverVersion} (CUDA ${inv.cudaVersion}), toolkit ${inv.toolkit ? "present" : "absent"}, fabric manager ${inv.fabricManager}${inv.fault ? `, fault ${inv.fault}` : ""}`,
  ];
  const header = ["GPU", "UUID", "BUS-ID", "USED/TOTAL MiB", "FREE MiB", "MIG", "PROCESSES"];
  const rows = inv.gpus.map((g) => [
    String(g.index),
    g.uuid,
    g.pciBusId,
    `${gpuUsedMiB(inv, g)}/${g.memoryTotalMiB}`,
    String(gpuFreeMiB(inv, g)),
    g.migMode,
    inv.processes.filter((p) => p.gpuUuid === g.uuid).map((p) => `${p.pid} ${p.name} ${p.usedMiB} MiB`).join("; ") || "-",
  ]);
  const widths = header.map((_, i) => Math.max(header[i].length, ...rows.map((r) => r[i].length)));
  for (const row of [header, ...rows]) lines.push(row.map((c, i) => c.padEnd(widths[i])).join("  ").trimEnd());
  return lines.join("\n");
}

// --- on the hosts --------------------------------------------------------------------------------------

/** Runs the host-side helper (sim/images/sim-host/files/gpu/reprobench-sim-gpu) as root in a host container. */
async function helper(host: HostPlan, args: string[], input?: string, timeoutMs = 60_000): Promise<string> {
  return mustRun(["docker", "exec", "-i", host.container, GPU_HELPER, ...args], { input, timeoutMs });
}

async function hasHelper(host: HostPlan): Promise<boolean> {
  return (await tryDocker(["exec", host.container, "test", "-x", GPU_HELPER], 20_000)).code === 0;
}

/** The host's inventory (its defaults when it has none), processes whose pid is gone dropped. */
export async function readHostInventory(host: HostPlan): Promise<{ inventory: GpuInventory; existed: boolean }> {
  const text = (await helper(host, ["read"])).trim();
  if (!text) return { inventory: defaultInventory(host.name), existed: false };
  const inventory = parseInventory(text, host.name);
  if (inventory.processes.length) {
    const alive = new Set((await helper(host, ["alive", ...inventory.processes.map((p) => String(p.pid))])).split(/\s+/).filter(Boolean).map(Number));
    inventory.processes = inventory.processes.filter((p) => alive.has(p.pid));
  }
  return { inventory, existed: true };
}

export async function writeHostInventory(host: HostPlan, inventory: GpuInventory): Promise<void> {
  await helper(host, ["write"], `${JSON.stringify(inventory, null, 1)}\n`);
}

/** `sim up`: a host without an inventory gets the defaults; one with an inventory keeps what `sim gpus` set. */
export async function ensureHostGpus(host: HostPlan, log: Log): Promise<void> {
  if (!(await hasHelper(host))) {
    log(`note: ${host.name} runs a host image without simulated GPUs; \`sim down\` + \`sim up\` recreates it`);
    return;
  }
  const { inventory, existed } = await readHostInventory(host);
  if (!existed) await writeHostInventory(host, inventory);
  // The unit and the hook link follow the inventory (a restarted host container starts them as built).
  await helper(host, ["fabric-manager", inventory.fabricManager]);
  await helper(host, ["toolkit", inventory.toolkit ? "present" : "absent"], undefined, 180_000);
}

export interface SimGpusOptions {
  root: string;
  instance?: SimInstance;
  /** One host (e.g. "worker-a"); every host of the instance when absent. */
  host?: string;
  /** From parseGpuOptions; none = just print. */
  changes?: GpuChanges;
  /** The CLI's --json: `text` is the JSON of the inventories instead of the tables. */
  json?: boolean;
  log?: Log;
}

export interface SimGpusReport {
  hosts: Array<{ host: string; inventory: GpuInventory; actions: string[] }>;
  /** What `reprobench sim gpus` prints. */
  text: string;
}

async function simHosts(root: string, instance: SimInstance, only?: string): Promise<HostPlan[]> {
  const names = new Set((await existingHosts(instance)).values());
  if (names.size === 0) throw new Error("no sim hosts (run `reprobench sim up`)");
  const hosts = planCluster(root, MAX_HOSTS, instance).hosts.filter((h) => names.has(h.name));
  if (only === undefined) return hosts;
  const one = hosts.find((h) => h.name === only);
  if (!one) throw new Error(`sim gpus: no host '${only}' (hosts: ${hosts.map((h) => h.name).join(", ")})`);
  return [one];
}

/**
 * `reprobench sim gpus [HOST] [changes…] [--json]`: applies `changes` to each host's inventory and prints
 * it. New containers and the host's nvidia-smi see a change at once; `--toolkit` restarts the host's
 * dockerd (as installing or removing the toolkit needs on a real host: every running container stops, those
 * with a restart policy come back). `--busy` starts a real process on the host (pid in the inventory).
 */
export async function simGpus(options: SimGpusOptions): Promise<SimGpusReport> {
  const hosts = await simHosts(options.root, options.instance ?? DEFAULT_INSTANCE, options.host);
  const changes = options.changes ?? {};
  const report: SimGpusReport = { hosts: [], text: "" };
  for (const host of hosts) {
    if (!(await hasHelper(host))) throw new Error(`${host.name} runs a host image without simulated GPUs; run \`reprobench sim down\` and \`reprobench sim up\``);
    const { inventory: before } = await readHostInventory(host);
    // Dry run first (placeholder pids): a bad index or too much memory fails before anything starts.
    applyGpuChanges(before, { ...changes, busy: changes.busy?.map((b) => ({ ...b, pid: b.pid ?? 1 })) });
    const actions: string[] = [];
    const busy: BusySpec[] = [];
    for (const b of changes.busy ?? []) {
      if (b.mib === 0) {
        busy.push(b);
        continue;
      }
      const [pid, unit] = (await helper(host, ["busy-start", b.process])).trim().split(/\s+/);
      busy.push({ ...b, pid: Number(pid), unit });
      actions.push(`started ${b.process} (pid ${pid}, ${unit}) holding ${b.mib} MiB on GPU ${b.gpu}`);
    }
    const after = applyGpuChanges(before, { ...changes, busy });
    // Processes that the change dropped (--reset, --count, GPU:0) stop, as a killed job frees its GPU.
    const kept = new Set(after.processes.map((p) => p.pid));
    const dropped = before.processes.filter((p) => !kept.has(p.pid));
    const units = dropped.map((p) => p.unit).filter((u): u is string => Boolean(u));
    if (units.length) {
      await helper(host, ["busy-stop", ...units]);
      actions.push(`stopped ${dropped.map((p) => `${p.name} (pid ${p.pid})`).join(", ")}`);
    }
    if (changes.reset) await helper(host, ["busy-stop"]);
    await writeHostInventory(host, after);
    if (after.fabricManager !== before.fabricManager || changes.reset) {
      await helper(host, ["fabric-manager", after.fabricManager]);
      if (after.fabricManager !== before.fabricManager) actions.push(`nvidia-fabricmanager ${after.fabricManager === "running" ? "started" : "stopped"}`);
    }
    if (after.toolkit !== before.toolkit || changes.reset || changes.toolkit !== undefined) {
      const r = (await helper(host, ["toolkit", after.toolkit ? "present" : "absent"], undefined, 180_000)).trim();
      if (r === "restarted-docker") actions.push(`container toolkit ${after.toolkit ? "installed" : "removed"}; dockerd restarted (running containers were stopped; those with a restart policy came back)`);
    }
    for (const a of actions) options.log?.(`${host.name}: ${a}`);
    report.hosts.push({ host: host.name, inventory: after, actions });
  }
  report.text = options.json
    ? JSON.stringify(report.hosts.map((h) => h.inventory), null, 2)
    : report.hosts.map((h) => [...h.actions.map((a) => `${h.host}: ${a}`), formatInventory(h.inventory)].join("\n")).join("\n\n");
  return report;
}
