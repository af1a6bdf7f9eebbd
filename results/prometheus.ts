// Prometheus text exposition (format 0.0.4) as SGLang's /metrics and sglang-router's Prometheus listener
// serve it, and the few series `reprobench status` reads from them. Pure: the text comes in, numbers go out.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses `name{label="v",…} value [timestamp]` lines; comments, blank and malformed lines are skipped. */
export function parsePrometheus(text: string): Sample[] {
  const out: Sample[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line || line.startsWith("#")) continue;
    const m = /^([A-Za-z_:][A-Za-z0-9_:]*)(\{.*\})?\s+(\S+)(?:\s+-?\d+)?$/.exec(line);
    if (!m) continue;
    const labels = m[2] ? parseLabels(m[2].slice(1, -1)) : {};
    if (labels === null) continue;
    const value = parseValue(m[3]);
    if (value === null) continue;
    out.push({ name: m[1], labels, value });
  }
  return out;
}

function parseValue(text: string): number | null {
  if (text === "+Inf") return Infinity;
  if (text === "-Inf") return -Infinity;
  if (text === "NaN") return NaN;
  const n = Number(text);
  return Number.isNaN(n) ? null : n;
}

/** `a="x",b="y\"z"` → {a: "x", b: 'y"z'}; null when malformed. */
function parseLabels(body: string): Record<string, string> | null {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < body.length) {
    while (body[i] === " " || body[i] === ",") i++;
    if (i >= body.length) break;
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(body.slice(i));
    if (!name) return null;
    i += name[0].length;
    if (body[i] !== "=" || body[i + 1] !== '"') return null;
    i += 2;
    let value = "";
    for (; i < body.length && body[i] !== '"'; i++) {
      if (body[i] === "\\" && i + 1 < body.length) {
        i++;
        value += body[i] === "n" ? "\n" : body[i];
      } else value += body[i];
    }
    if (body[i] !== '"') return null;
    i++;
    labels[name[0]] = value;
  }
  return labels;
}

/** One DP rank of a model server as `status` shows it. */
export interface RankLoad {
  dpRank: number;
  /** Requests being decoded/prefilled now. */
  running: number | null;
  /** Requests waiting in the scheduler's queue. */
  queued: number | null;
  /** Generation throughput, tokens/s (SGLang's last decode-log interval). */
  genThroughput: number | null;
}

/**
 * Per-DP-rank load from SGLang's scheduler metrics. Names and labels as SGLang defines them: the gauges
 * `sglang:num_running_reqs`, `sglang:num_queue_reqs` and `sglang:gen_throughput` of
 * SchedulerMetricsCollector (sgl-project/sglang python/sglang/srt/metrics/collector.py), labelled
 * model_name, engine_type, tp_rank, pp_rank and — with DP — dp_rank (scheduler_metrics_mixin.py
 * init_metrics). Only TP rank 0 reports unless --enable-metrics-for-all-schedulers; when several TP ranks
 * report, rank 0's value is kept. A server without DP has no dp_rank label: it is rank 0.
 */
export function sglangRankLoads(samples: readonly Sample[]): RankLoad[] {
  const byRank = new Map<number, RankLoad & { tp: Record<string, number> }>();
  const fields: [string, "running" | "queued" | "genThroughput"][] = [
    ["sglang:num_running_reqs", "running"],
    ["sglang:num_queue_reqs", "queued"],
    ["sglang:gen_throughput", "genThroughput"],
  ];
  for (const s of samples) {
    const field = fields.find(([name]) => name === s.name)?.[1];
    if (!field) continue;
    const rank = s.labels.dp_rank === undefined ? 0 : Number(s.labels.dp_rank);
    if (!Number.isInteger(rank)) continue;
    const tp = s.labels.tp_rank === undefined ? 0 : Number(s.labels.tp_rank);
    const entry = byRank.get(rank) ?? { dpRank: rank, running: null, queued: null, genThroughput: null, tp: {} };
    // Keep the lowest TP rank's value for each field.
    if (entry[field] === null || tp < (entry.tp[field] ?? Infinity)) {
      entry[field] = s.value;
      entry.tp[field] = tp;
    }
    byRank.set(rank, entry);
  }
  return [...byRank.values()].sort((a, b) => a.dpRank - b.dpRank).map(({ dpRank, running, queued, genThroughput }) => ({ dpRank, running, queued, genThroughput }));
}

/**
 * Per-rank load from SGLang's `GET /get_load` (always served, no --enable-metrics needed): a list of
 * {dp_rank, num_reqs, num_waiting_reqs, num_tokens}, where num_reqs counts running and waiting requests.
 * No throughput there.
 */
export function getLoadRankLoads(body: unknown): RankLoad[] {
  if (!Array.isArray(body)) return [];
  const out: RankLoad[] = [];
  for (const item of body) {
    if (item === null || typeof item !== "object") continue;
    const r = item as Record<string, unknown>;
    const rank = typeof r.dp_rank === "number" ? r.dp_rank : out.length;
    const total = typeof r.num_reqs === "number" ? r.num_reqs : null;
    const waiting = typeof r.num_waiting_reqs === "number" ? r.num_waiting_reqs : null;
    out.push({ dpRank: rank, running: total === null ? null : Math.max(0, total - (waiting ?? 0)), queued: waiting, genThroughput: null });
  }
  return out.sort((a, b) => a.dpRank - b.dpRank);
}

/** One worker (URL, `@rank` with --dp-aware) as the router sees it. */
export interface RouterWorker {
  worker: string;
  /** Requests the router has in flight to it. */
  active: number | null;
  /** 1 healthy, 0 not (the router's health checks). */
  healthy: boolean | null;
}

/**
 * The router's per-worker gauges. sglang-router 0.3.2 as built in lightseekorg/smg exports
 * `smg_worker_requests_active{worker}` and `smg_worker_health{worker}` (read off its Prometheus listener
 * on the simulated cluster); older sgl-router builds name them `sgl_router_running_requests` and
 * `sgl_router_worker_health`. Both spellings are read.
 */
export function routerWorkers(samples: readonly Sample[]): RouterWorker[] {
  const byWorker = new Map<string, RouterWorker>();
  const get = (w: string) => byWorker.get(w) ?? { worker: w, active: null, healthy: null };
  for (const s of samples) {
    const w = s.labels.worker;
    if (!w) continue;
    if (s.name === "smg_worker_requests_active" || s.name === "sgl_router_running_requests") byWorker.set(w, { ...get(w), active: s.value });
    else if (s.name === "smg_worker_health" || s.name === "sgl_router_worker_health") byWorker.set(w, { ...get(w), healthy: s.value >= 1 });
  }
  return [...byWorker.values()].sort((a, b) => a.worker.localeCompare(b.worker));
}
