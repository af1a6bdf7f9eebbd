// What components/scripts/preflight-host.sh reports about one host (its one JSON line), and the parsers of
// the real tools' outputs it carries verbatim: nvidia-smi's CSV queries (`--format=csv,noheader,nounits`),
// `nvidia-smi -L`, `nvidia-smi -q` lines, `ss -Hltnp` and /proc/<pid>/cgroup. Pure: no I/O.

/** One command's outcome as the script captured it. */
export interface Captured {
  rc: number;
  out: string;
  err: string;
}

/** The weights directory as preflight-weights.py reads it. */
export interface WeightsFacts {
  path: string;
  /** The script itself failed (python3 missing, an exception). */
  error?: string;
  exists?: boolean;
  isDir?: boolean;
  realpath?: string;
  parentExists?: boolean;
  siblings?: string[];
  hfCache?: { repo: string | null; revision: string | null; linksToBlobs: number } | null;
  entries?: string[];
  entryCount?: number;
  fileCount?: number;
  incomplete?: string[];
  linksOutside?: { file: string; target: string; resolves: boolean }[];
  linksOutsideCount?: number;
  config?: { present: boolean; error: string | null; geometry: ModelGeometry | null };
  index?: { present: boolean; file: string | null; error: string | null; totalSize: number | null; shardCount: number };
  singleFile?: boolean;
  shards?: ShardFacts[];
  otherSafetensors?: string[];
  unreadable?: { count: number; files: { file: string; mode: string | null; uid: number | null; gid: number | null }[] } | null;
  readCheckError?: string | null;
  readAs?: string;
  sha256?: { file: string; expected: string; actual: string | null; error: string | null }[];
}

export interface ShardFacts {
  file: string;
  exists: boolean;
  size: number | null;
  /** 8 + N + max(data_offsets end): the size the header implies. */
  expected: number | null;
  /** Sum of the tensors' byte lengths. */
  dataBytes: number | null;
  tensors: number | null;
  /** "missing", "broken symlink -> …", a header fault, an OS error. */
  error: string | null;
}

/** The config.json fields the memory estimate uses (a multimodal model's text_config). */
export interface ModelGeometry {
  model_type?: string;
  architectures?: string[];
  num_hidden_layers?: number;
  num_attention_heads?: number;
  num_key_value_heads?: number;
  head_dim?: number;
  hidden_size?: number;
  v_head_dim?: number;
  kv_lora_rank?: number;
  qk_rope_head_dim?: number;
  layer_types?: string[];
  full_attention_interval?: number;
  torch_dtype?: string;
  dtype?: string;
  max_position_embeddings?: number;
  quantization_config?: { quant_method?: string; bits?: number };
}

/** The host's GPUs as its own nvidia-smi reports them, raw. */
export interface GpuFactsRaw {
  /** Path of nvidia-smi, "" when there is none. */
  nvidiaSmi: string;
  query: Captured;
  apps: Captured;
  /** Compute app pid → its /proc/<pid>/cgroup, read right after the apps query (a pid gone by then has none).
   * Absent in a report of a script before it: the apps are then told apart by own.pids alone. */
  cgroups?: Record<string, string>;
  /** `nvidia-smi -q` lines: CUDA Version, Driver Version, the Fabric section's State/Status. */
  report: string;
  /** `systemctl is-active nvidia-fabricmanager` (active, inactive, failed, …), "not-installed", or "" (no systemd). */
  fabricManager: string;
  /** nvidia-container-runtime-hook / nvidia-cdi-hook / nvidia-ctk found on root's PATH. */
  hooks: string[];
}

/** The decisive check: the server image run with the server's --gpus, `nvidia-smi -L`. */
export type ToolkitFactsRaw = { ran: true; image: string; rc: number; out: string; err: string } | { ran: false; image: string; reason: string };

/** The host report: preflight-host.sh's JSON line. */
export interface HostFactsReport {
  host: string;
  hostname: string;
  /** uid:gid the server container runs as (the weights are read as it). */
  containerUser: string;
  /** Tool → its path, null when missing. */
  tools: Record<string, string | null>;
  own: { containers: { name: string; id: string; running: boolean }[]; pids: number[] };
  ports: { state: "read" | "no-ss" | "none"; listeners: { port: number; ss: string; cgroups: Record<string, string> }[] };
  gpus: GpuFactsRaw | null;
  toolkit: ToolkitFactsRaw | null;
  cudaProbe: { rc: number; out: string; err: string } | null;
  weights: WeightsFacts | null;
}

/** One GPU from `nvidia-smi --query-gpu=<GPU_QUERY_FIELDS> --format=csv,noheader,nounits`. */
export interface GpuRow {
  index: number;
  uuid: string;
  name: string;
  busId: string;
  memoryTotalMiB: number;
  memoryUsedMiB: number;
  driver: string;
  computeMode: string;
  /** "Enabled", "Disabled", or null for [N/A] (a GPU without MIG). */
  mig: string | null;
  persistence: string;
  /** Uncorrected volatile ECC errors; null for [N/A]. */
  eccUncorrected: number | null;
}

/** The fields preflight-host.sh queries, in its order (reference gpus.md 2a). */
export const GPU_QUERY_FIELDS = [
  "index", "uuid", "name", "pci.bus_id", "memory.total", "memory.used", "driver_version", "compute_mode", "mig.mode.current", "persistence_mode",
  "ecc.errors.uncorrected.volatile.total",
] as const;

/** A compute process from `nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name,used_memory --format=csv,noheader,nounits`. */
export interface ComputeApp {
  gpuUuid: string;
  pid: number;
  name: string;
  /** null for [N/A] (no per-process accounting, e.g. in some VMs). */
  usedMiB: number | null;
}

const NA = /^\[(N\/A|Not Supported|Unknown Error|Insufficient Permissions)\]$|^N\/A$/;
const na = (v: string): boolean => NA.test(v.trim());
const num = (v: string): number | null => (na(v) || !/^-?\d+(\.\d+)?$/.test(v.trim()) ? null : Number(v.trim()));

/** Splits one CSV line of nvidia-smi (", "-separated; names carry no commas in practice, but quoted ones are honoured). */
export function splitCsvLine(line: string): string[] {
  const out: string[] = [];
  let cur = "";
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (ch === '"') quoted = !quoted;
    else if (ch === "," && !quoted) {
      out.push(cur.trim());
      cur = "";
    } else cur += ch;
  }
  out.push(cur.trim());
  return out;
}

/** The GPUs of a `--query-gpu=<GPU_QUERY_FIELDS>` answer; lines that do not fit are reported. */
export function parseGpuQuery(text: string): { gpus: GpuRow[]; bad: string[] } {
  const gpus: GpuRow[] = [];
  const bad: string[] = [];
  for (const line of text.split("\n").map((l) => l.trim()).filter(Boolean)) {
    const f = splitCsvLine(line);
    const index = num(f[0] ?? "");
    const total = num(f[4] ?? "");
    if (f.length !== GPU_QUERY_FIELDS.length || index === null || total === null) {
      bad.push(line);
      continue;
    }
    gpus.push({
      index,
      uuid: f[1],
      name: f[2],
      busId: f[3],
      memoryTotalMiB: total,
      memoryUsedMiB: num(f[5]) ?? 0,
      driver: f[6],
      computeMode: f[7],
      mig: na(f[8]) ? null : f[8],
      persistence: f[9],
      eccUncorrected: num(f[10]),
    });
  }
  return { gpus, bad };
}

/** The processes of a `--query-compute-apps=gpu_uuid,pid,process_name,used_memory` answer ("No running processes found" is none). */
export function parseComputeApps(text: string): ComputeApp[] {
  const apps: ComputeApp[] = [];
  for (const line of text.split("\n").map((l) => l.trim()).filter(Boolean)) {
    if (/^no running (compute )?processes found/i.test(line)) continue;
    const f = splitCsvLine(line);
    const pid = num(f[1] ?? "");
    if (f.length < 4 || pid === null) continue;
    apps.push({ gpuUuid: f[0], pid, name: f.slice(2, f.length - 1).join(","), usedMiB: num(f[f.length - 1]) });
  }
  return apps;
}

/** One line of `nvidia-smi -L`: "GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-…)"; MIG devices are listed under their GPU. */
export interface ListedGpu {
  index: number;
  name: string;
  uuid: string;
  migDevices: number;
}

/** The GPUs `nvidia-smi -L` lists (in a container: the ones it sees). */
export function parseGpuList(text: string): ListedGpu[] {
  const gpus: ListedGpu[] = [];
  for (const line of text.split("\n")) {
    const m = /^GPU (\d+): (.+?) \(UUID: ([^)]+)\)\s*$/.exec(line.trim());
    if (m) gpus.push({ index: Number(m[1]), name: m[2], uuid: m[3], migDevices: 0 });
    else if (/^\s*MIG\s/.test(line) && gpus.length) gpus[gpus.length - 1].migDevices++;
  }
  return gpus;
}

/** "CUDA Version : 13.0" and "Driver Version : 580.95.05" of `nvidia-smi -q`, and the Fabric section's State. */
export function parseSmiReport(text: string): { cuda: string | null; driver: string | null; fabricStates: string[] } {
  const cuda = /CUDA Version\s*:\s*([0-9.]+)/.exec(text)?.[1] ?? null;
  const driver = /Driver Version\s*:\s*([0-9.]+)/.exec(text)?.[1] ?? null;
  const fabricStates: string[] = [];
  const lines = text.split("\n");
  lines.forEach((l, i) => {
    if (/^\s*Fabric\s*$/.test(l)) {
      const state = /State\s*:\s*(.+)$/.exec(lines[i + 1] ?? "")?.[1]?.trim();
      if (state) fabricStates.push(state);
    }
  });
  return { cuda, driver, fabricStates };
}

/** A listener of `ss -Hltnp`: local address and port, and the processes holding it. */
export interface Listener {
  address: string;
  port: number;
  processes: { name: string; pid: number }[];
}

/** `ss -Hltnp` lines ("LISTEN 0 4096 172.31.250.11:30001 0.0.0.0:* users:(("python3",pid=812,fd=5))"). */
export function parseSsListeners(text: string): Listener[] {
  const out: Listener[] = [];
  for (const line of text.split("\n").map((l) => l.trim()).filter(Boolean)) {
    const cols = line.split(/\s+/);
    const local = cols[3];
    if (!local) continue;
    const m = /^(.*):(\d+)$/.exec(local);
    if (!m) continue;
    const processes = [...line.matchAll(/\("([^"]*)",pid=(\d+)/g)].map((p) => ({ name: p[1], pid: Number(p[2]) }));
    out.push({ address: m[1].replace(/^\[|\]$/g, "").replace(/%.*$/, ""), port: Number(m[2]), processes });
  }
  return out;
}

/** Whether a process belongs to one of the stack's containers (its id in the cgroup path) or systemd units. */
export function cgroupOwner(cgroup: string, own: { containerIds: readonly { name: string; id: string }[]; units: readonly string[] }): string | null {
  for (const c of own.containerIds) if (c.id && cgroup.includes(c.id)) return `container ${c.name}`;
  for (const u of own.units) if (cgroup.includes(`/${u}.service`)) return `unit ${u}`;
  return null;
}

/** The report's last JSON line, parsed, or an error naming the host. */
export function parseHostReport(stdout: string, host: string): HostFactsReport {
  const line = stdout.trim().split("\n").pop() ?? "";
  try {
    const r = JSON.parse(line) as HostFactsReport;
    if (typeof r !== "object" || r === null || typeof r.host !== "string") throw new Error("not a report");
    return r;
  } catch {
    throw new Error(`host ${host}: preflight-host.sh printed no report (${JSON.stringify(line.slice(0, 160))})`);
  }
}
