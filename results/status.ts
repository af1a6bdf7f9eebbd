// `reprobench status`: the state of a running (or ended) Harbor job and of the model servers, from what
// results/remote/status-probe.sh read on the hosts. Pure: probes in, a StatusReport out (schema below and
// in results/STATUS.md), and its one-screen text rendering.
import { z } from "zod";
import { estimateRemaining } from "./eta";
import { duration } from "./format";
import { asRecord, HARBOR_DEFAULTS, interruptedWithoutRecord, maskText, parseTime, secondsBetween, type TrialResult } from "./harbor";
import { getLoadRankLoads, parsePrometheus, type RankLoad, routerWorkers, type RouterWorker, sglangRankLoads } from "./prometheus";

export const STATUS_SCHEMA_VERSION = 1;

// ---------------------------------------------------------------------------------------------------------
// What the probe prints (lenient: any field may be missing)

const nullableNumber = z.number().nullable().optional();

export const JobProbeSchema = z.object({
  jobName: z.string(),
  dir: z.string(),
  exists: z.boolean(),
  fromCurrentFile: z.boolean().optional(),
  log: z.string().optional(),
  unit: z.object({ name: z.string(), activeState: z.string(), subState: z.string().optional(), result: z.string().optional(), mainPid: z.number() }),
  config: z.record(z.unknown()).nullable(),
  result: z.record(z.unknown()).nullable(),
  trials: z.array(z.object({ dir: z.string(), configTime: z.number() })),
  results: z.array(z.object({ dir: z.string(), result: z.record(z.unknown()) })),
  timeouts: z.array(
    z.object({
      dir: z.string(),
      taskTimeoutSec: nullableNumber,
      verifierTimeoutSec: nullableNumber,
      overrideTimeoutSec: nullableNumber,
      maxTimeoutSec: nullableNumber,
      agentTimeoutMultiplier: nullableNumber,
      verifierTimeoutMultiplier: nullableNumber,
      timeoutMultiplier: nullableNumber,
    }),
  ),
  /** Every task of the job's local datasets with its task.toml timeouts (an older probe sends none). */
  tasks: z.array(z.object({ task: z.string(), agentTimeoutSec: nullableNumber, verifierTimeoutSec: nullableNumber })).optional(),
  /** Other jobs beside it with the same agents, model and datasets, newest first (an older probe sends none). */
  earlier: z.array(z.object({ jobName: z.string(), config: z.record(z.unknown()).nullable(), trials: z.array(z.object({ dir: z.string(), result: z.record(z.unknown()) })) })).optional(),
  logTail: z.array(z.string()),
});
export type JobProbe = z.infer<typeof JobProbeSchema>;

export const WorkerProbeSchema = z.object({
  url: z.string(),
  source: z.enum(["metrics", "get_load", "unavailable"]),
  metrics: z.string().optional(),
  load: z.unknown().optional(),
  metricsStatus: z.string().optional(),
  loadStatus: z.string().optional(),
});
export type WorkerProbe = z.infer<typeof WorkerProbeSchema>;

export const RouterProbeSchema = z.object({ url: z.string(), source: z.enum(["metrics", "unavailable"]), metrics: z.string().optional(), metricsStatus: z.string().optional() });
export type RouterProbe = z.infer<typeof RouterProbeSchema>;

export const ProbeSchema = z.object({
  now: z.number(),
  job: JobProbeSchema.nullable(),
  worker: WorkerProbeSchema.nullable(),
  router: RouterProbeSchema.nullable(),
});
export type Probe = z.infer<typeof ProbeSchema>;

// ---------------------------------------------------------------------------------------------------------
// The report (`status --json`; documented in results/STATUS.md)

const RankSchema = z.object({ dpRank: z.number().int(), running: z.number().nullable(), queued: z.number().nullable(), genThroughput: z.number().nullable() });

export const JOB_STATES = ["running", "stopping", "finished", "stopped", "failed", "not-started"] as const;
export type JobState = (typeof JOB_STATES)[number];

export const StatusReportSchema = z
  .object({
    kind: z.literal("reprobench.status"),
    schemaVersion: z.literal(STATUS_SCHEMA_VERSION),
    generatedAt: z.string(),
    stack: z.string(),
    cluster: z.string().nullable(),
    job: z
      .object({
        name: z.string(),
        dir: z.string(),
        log: z.string().nullable(),
        unit: z.string().nullable(),
        pid: z.number().int().nullable(),
        state: z.enum(JOB_STATES),
        stateReason: z.string(),
        startedAt: z.string().nullable(),
        finishedAt: z.string().nullable(),
        elapsedSec: z.number().nullable(),
        concurrency: z.number().int(),
      })
      .strict()
      .nullable(),
    trials: z
      .object({
        total: z.number().int().nullable(),
        finished: z.number().int(),
        running: z.number().int(),
        pending: z.number().int().nullable(),
        incomplete: z.number().int(),
        passed: z.number().int(),
        failed: z.number().int(),
        errored: z.number().int(),
        cancelled: z.number().int(),
        errorTypes: z.record(z.number().int()),
        meanSoFar: z.number().nullable(),
        progress: z.number().nullable(),
      })
      .strict(),
    running: z.array(
      z.object({ trial: z.string(), task: z.string(), startedAt: z.string(), elapsedSec: z.number(), agentTimeoutSec: z.number().nullable(), overTimeout: z.boolean() }).strict(),
    ),
    eta: z
      .object({
        remainingSec: z.number(),
        finishAt: z.string(),
        lowSec: z.number(),
        highSec: z.number(),
        finishLowAt: z.string(),
        finishHighAt: z.string(),
        meanTrialSec: z.number(),
        basedOnTrials: z.number().int(),
        concurrency: z.number().int(),
        /** The earlier jobs of the same tasks whose trials the estimate used, and how many trials. */
        earlierJobs: z.array(z.string()).optional(),
        earlierTrials: z.number().int().optional(),
      })
      .strict()
      .nullable(),
    servers: z.array(
      z
        .object({
          host: z.string(),
          url: z.string(),
          source: z.enum(["metrics", "get_load", "unavailable", "unreachable"]),
          ranks: z.array(RankSchema.strict()),
          totals: z.object({ running: z.number().nullable(), queued: z.number().nullable(), genThroughput: z.number().nullable() }).strict(),
          note: z.string().nullable(),
        })
        .strict(),
    ),
    router: z
      .object({
        host: z.string(),
        url: z.string(),
        source: z.enum(["metrics", "unavailable", "unreachable"]),
        workers: z.array(z.object({ worker: z.string(), active: z.number().nullable(), healthy: z.boolean().nullable() }).strict()),
        note: z.string().nullable(),
      })
      .strict()
      .nullable(),
    logTail: z.array(z.string()),
    notes: z.array(z.string()),
  })
  .strict();
export type StatusReport = z.infer<typeof StatusReportSchema>;

// ---------------------------------------------------------------------------------------------------------
// Building it

export interface ServerInput {
  host: string;
  url: string;
  /** The probe's worker part, or an error when the host could not be reached. */
  probe: WorkerProbe | { error: string };
}

export interface RouterInput {
  host: string;
  url: string;
  probe: RouterProbe | { error: string };
}

export interface StatusInputs {
  stack: string;
  /** The owning stack when `stack` is a run stack. */
  cluster: string | null;
  /** The runner host's clock (epoch ms) when the job was read: elapsed times use it, not this machine's. */
  now: number;
  job: JobProbe | null;
  /** harborPid as `up` recorded it (the unit is collected once harbor exits). */
  recordedPid?: number | null;
  servers: ServerInput[];
  router: RouterInput | null;
  notes?: string[];
  /** Replaced by "[redacted]" wherever it appears in log lines (the API key). */
  secrets?: string[];
}

const iso = (ms: number): string => new Date(ms).toISOString();
const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

/** Harbor's agent timeout for a trial (trial.py _compute_agent_timeout_sec): min(base, max) × multiplier. */
export function agentTimeoutSec(t: JobProbe["timeouts"][number]): number | null {
  const base = t.overrideTimeoutSec || t.taskTimeoutSec;
  if (!base) return null;
  const capped = Math.min(base, t.maxTimeoutSec || Infinity);
  const multiplier = t.agentTimeoutMultiplier ?? t.timeoutMultiplier ?? 1;
  return capped * multiplier;
}

interface FinishedTrial {
  trial: string;
  task: string;
  reward: number | null;
  exceptionType: string | null;
  durationSec: number | null;
  /** Cut short by a stop: CancelledError, or interrupted with nothing recorded (results/harbor.ts). */
  cancelled: boolean;
}

function finishedTrial(dir: string, r: Record<string, unknown>): FinishedTrial {
  const rewards = asRecord(asRecord(r.verifier_result).rewards);
  const exceptionType = asRecord(r.exception_info).exception_type;
  return {
    trial: dir,
    task: typeof r.task_name === "string" ? r.task_name : dir,
    reward: num(rewards.reward),
    exceptionType: typeof exceptionType === "string" ? exceptionType : null,
    durationSec: secondsBetween(r.started_at as string | undefined, r.finished_at as string | undefined),
    cancelled: exceptionType === "CancelledError" || interruptedWithoutRecord(r as TrialResult),
  };
}

const ACTIVE = new Set(["active", "activating", "reloading"]);

function jobState(job: JobProbe, cancelled: number): { state: JobState; reason: string } {
  const unit = job.unit;
  const finishedAt = job.result?.finished_at;
  if (ACTIVE.has(unit.activeState)) return { state: "running", reason: `unit ${unit.name} is ${unit.activeState}` };
  if (unit.activeState === "deactivating") return { state: "stopping", reason: `unit ${unit.name} is stopping (harbor got SIGTERM and is writing its results)` };
  if (typeof finishedAt === "string" && finishedAt) return { state: "finished", reason: "result.json has finished_at" };
  if (!job.exists) return { state: "not-started", reason: `${job.dir} does not exist` };
  const stats = asRecord(job.result?.stats);
  const interrupted = /KeyboardInterrupt|CancelledError|SIGTERM|harbor-stop/i.test(job.logTail.join("\n"));
  if (cancelled > 0 || (num(stats.n_cancelled_trials) ?? 0) > 0 || interrupted) {
    return { state: "stopped", reason: "harbor is not running and result.json has no finished_at; trials were cancelled (a graceful stop: reprobench down, or SIGTERM)" };
  }
  return { state: "failed", reason: "harbor is not running and result.json has no finished_at, with no sign of a graceful stop: read the log" };
}

/** What a trial may take at most, for the ETA: its agent and verifier timeouts, and an allowance for setup. */
export const ETA_SETUP_ALLOWANCE_SEC = 300;

/**
 * A running trial's budget: its agent timeout, its task's verifier timeout × the verifier multiplier (when
 * the probe read none, one like the task's agent timeout: Terminal-Bench's are mostly equal), and setup.
 */
export function trialBudgetSec(t: JobProbe["timeouts"][number]): number | null {
  const agent = agentTimeoutSec(t);
  const base = t.overrideTimeoutSec || t.taskTimeoutSec;
  if (agent === null || !base) return null;
  const verifier = (t.verifierTimeoutSec || base) * (t.verifierTimeoutMultiplier ?? t.timeoutMultiplier ?? 1);
  return agent + verifier + ETA_SETUP_ALLOWANCE_SEC;
}

/**
 * A not yet started task's budget from its task.toml timeouts and the job's config.json, as Harbor will
 * compute it for its trials (the first agent's overrides, the job's multipliers). Null without an agent
 * timeout.
 */
export function taskBudgetSec(task: NonNullable<JobProbe["tasks"]>[number], config: Record<string, unknown> | null): number | null {
  const agent = asRecord(Array.isArray(config?.agents) ? config.agents[0] : undefined);
  const verifier = asRecord(config?.verifier);
  return trialBudgetSec({
    dir: task.task,
    taskTimeoutSec: task.agentTimeoutSec,
    verifierTimeoutSec: num(verifier.override_timeout_sec) ?? (task.verifierTimeoutSec && num(verifier.max_timeout_sec) ? Math.min(task.verifierTimeoutSec, num(verifier.max_timeout_sec)!) : task.verifierTimeoutSec),
    overrideTimeoutSec: num(agent.override_timeout_sec),
    maxTimeoutSec: num(agent.max_timeout_sec),
    agentTimeoutMultiplier: num(config?.agent_timeout_multiplier),
    verifierTimeoutMultiplier: num(config?.verifier_timeout_multiplier),
    timeoutMultiplier: num(config?.timeout_multiplier),
  });
}

/**
 * The pending trials in the order Harbor starts them: attempt by attempt over the tasks (the dataset's
 * listing in its directory order, as the probe gives it, then tasks seen only in trial dirs), each task's attempts after the ones already started; the
 * first `pending` of them, padded with trials of unknown task and budget when the listing is short.
 */
export function pendingTrials(order: readonly string[], started: ReadonlyMap<string, number>, attempts: number, pending: number, budget: (task: string) => number | null): { task?: string; budgetSec: number | null }[] {
  const tasks = [...new Set([...order, ...started.keys()])];
  const out: { task?: string; budgetSec: number | null }[] = [];
  for (let round = 0; round < attempts && out.length < pending; round++) {
    for (const task of tasks) if ((started.get(task) ?? 0) <= round && out.length < pending) out.push({ task, budgetSec: budget(task) });
  }
  while (out.length < pending) out.push({ budgetSec: null });
  return out;
}

/** The task part of a trial dir name (Harbor: "<task, at most 32 characters>__<id>"). */
const taskOfDir = (dir: string): string => dir.replace(/__[^_]+$/, "");

/**
 * Before issue 33, and kept for comparison (test/unit/sim/rehearsal-eta.test.ts): the ETA
 * from the finished trials' mean duration and the job's concurrency: the work left is the pending
 * trials at the mean duration plus what the running ones still need (mean − elapsed, at least 0), spread
 * over min(concurrency, trials left) slots, and never less than the longest remaining running trial (or one
 * mean trial while any is pending). Cancelled trials do not count as a duration sample. Null until a
 * trial has finished.
 */
export function estimateEta(o: { meanTrialSec: number | null; concurrency: number; pending: number; runningElapsedSec: number[] }): number | null {
  const d = o.meanTrialSec;
  if (d === null || !Number.isFinite(d)) return null;
  const left = o.pending + o.runningElapsedSec.length;
  if (left === 0) return 0;
  const runningRemaining = o.runningElapsedSec.map((e) => Math.max(0, d - e));
  const work = runningRemaining.reduce((a, b) => a + b, 0) + o.pending * d;
  const slots = Math.max(1, Math.min(o.concurrency, left));
  return Math.max(work / slots, ...runningRemaining, o.pending > 0 ? d : 0);
}

function redact(line: string, secrets: readonly string[]): string {
  // Control characters (Rich's progress redraws, colours) would garble a terminal: drop them.
  // eslint-disable-next-line no-control-regex
  const out = line.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "").replace(/[\x00-\x08\x0b-\x1f\x7f]/g, "");
  // By value (the stack's API key), by the servers' argument names, URL credentials: never by a word in the line.
  return maskText(out, secrets);
}

function sumOrNull(values: (number | null)[]): number | null {
  const v = values.filter((x): x is number => x !== null);
  return v.length ? v.reduce((a, b) => a + b, 0) : null;
}

function serverReport(s: ServerInput): StatusReport["servers"][number] {
  if ("error" in s.probe) return { host: s.host, url: s.url, source: "unreachable", ranks: [], totals: { running: null, queued: null, genThroughput: null }, note: s.probe.error };
  const p = s.probe;
  let ranks: RankLoad[] = [];
  let note: string | null = null;
  if (p.source === "metrics") {
    ranks = sglangRankLoads(parsePrometheus(p.metrics ?? ""));
    if (ranks.length === 0) note = "/metrics has no sglang:num_running_reqs yet (SGLang fills it after the first batch)";
  } else if (p.source === "get_load") {
    ranks = getLoadRankLoads(p.load);
    note = "no Prometheus /metrics (start SGLang with --enable-metrics: modelServer.extraArgs); running/queued from /get_load, no throughput";
  } else {
    const http = (code: string | undefined) => (!code || code === "000" ? "no answer" : `HTTP ${code}`);
    note = `neither /metrics (${http(p.metricsStatus)}) nor /get_load (${http(p.loadStatus)}) answered: is the server up?`;
  }
  return {
    host: s.host,
    url: s.url,
    source: p.source,
    ranks,
    totals: { running: sumOrNull(ranks.map((r) => r.running)), queued: sumOrNull(ranks.map((r) => r.queued)), genThroughput: sumOrNull(ranks.map((r) => r.genThroughput)) },
    note,
  };
}

function routerReport(r: RouterInput): NonNullable<StatusReport["router"]> {
  if ("error" in r.probe) return { host: r.host, url: r.url, source: "unreachable", workers: [], note: r.probe.error };
  const p = r.probe;
  if (p.source !== "metrics") {
    const answer = !p.metricsStatus || p.metricsStatus === "000" ? "no answer" : `HTTP ${p.metricsStatus}`;
    return { host: r.host, url: r.url, source: "unavailable", workers: [], note: `the router's Prometheus listener did not answer (${answer}): is the router up?` };
  }
  const workers: RouterWorker[] = routerWorkers(parsePrometheus(p.metrics ?? ""));
  return { host: r.host, url: r.url, source: "metrics", workers, note: workers.length ? null : "no per-worker series yet" };
}

/**
 * The ETA's inputs from what the probe read: a task's budget from the running trial's timeouts, else from
 * its task.toml and the job's config (the probe lists every task of the job); pending trials in Harbor's
 * order (pendingTrials).
 */
function etaTrials(job: JobProbe, genuine: readonly FinishedTrial[], running: readonly { trial: string; elapsedSec: number }[], pending: number) {
  const budgetOfTask = new Map<string, number>();
  // Keyed like trial dirs: Harbor names them after the first 32 characters of the task, trailing - and _ dropped.
  const listed = (job.tasks ?? []).map((t) => ({ ...t, task: t.task.slice(0, 32).replace(/[-_]+$/, "") }));
  for (const t of listed) {
    const b = taskBudgetSec(t, job.config);
    if (b !== null) budgetOfTask.set(t.task, b);
  }
  for (const t of job.timeouts) {
    const b = trialBudgetSec(t);
    if (b !== null) budgetOfTask.set(taskOfDir(t.dir), b);
  }
  const budget = (task: string) => budgetOfTask.get(task) ?? null;
  const started = new Map<string, number>();
  for (const t of job.trials) started.set(taskOfDir(t.dir), (started.get(taskOfDir(t.dir)) ?? 0) + 1);
  const k = Math.max(1, num(job.config?.n_attempts) ?? HARBOR_DEFAULTS.n_attempts);
  // Earlier jobs' trials of these tasks, each with its budget under that job's timeouts and multipliers.
  const listedByTask = new Map(listed.map((t) => [t.task, t]));
  const earlierJobs = new Set<string>();
  const earlier = (job.earlier ?? []).flatMap((e) =>
    e.trials
      .map((t) => finishedTrial(t.dir, t.result))
      .filter((f) => !f.cancelled && f.durationSec !== null && listedByTask.has(taskOfDir(f.trial)))
      .map((f) => {
        earlierJobs.add(e.jobName);
        return { task: taskOfDir(f.trial), durationSec: f.durationSec!, budgetSec: taskBudgetSec(listedByTask.get(taskOfDir(f.trial))!, e.config), timedOut: f.exceptionType === "AgentTimeoutError" };
      }),
  );
  return {
    earlier,
    earlierJobs: [...earlierJobs],
    finished: genuine
      .filter((f) => f.durationSec !== null)
      .map((f) => ({ task: taskOfDir(f.trial), durationSec: f.durationSec!, budgetSec: budget(taskOfDir(f.trial)), timedOut: f.exceptionType === "AgentTimeoutError" })),
    running: running.map((r) => ({ task: taskOfDir(r.trial), elapsedSec: r.elapsedSec, budgetSec: budget(taskOfDir(r.trial)) })),
    pending: pendingTrials(listed.map((t) => t.task), started, k, pending, budget),
  };
}

/** The status report from the probes. */
export function buildStatus(input: StatusInputs, generatedAt = new Date()): StatusReport {
  const notes = [...(input.notes ?? [])];
  const job = input.job;
  const finished: FinishedTrial[] = (job?.results ?? []).map((r) => finishedTrial(r.dir, r.result));
  const finishedDirs = new Set(finished.map((f) => f.trial));
  const cancelled = finished.filter((f) => f.cancelled).length;
  const genuine = finished.filter((f) => !f.cancelled);
  const passed = genuine.filter((f) => f.reward !== null && f.reward >= 1).length;
  const failed = genuine.filter((f) => f.reward !== null && f.reward < 1).length;
  const errored = genuine.filter((f) => f.reward === null).length;
  const errorTypes: Record<string, number> = {};
  for (const f of finished) if (f.exceptionType) errorTypes[f.exceptionType] = (errorTypes[f.exceptionType] ?? 0) + 1;
  const meanSoFar = genuine.length ? genuine.reduce((s, f) => s + (f.reward ?? 0), 0) / genuine.length : null;

  const state = job ? jobState(job, cancelled) : null;
  const live = state?.state === "running" || state?.state === "stopping";
  const open = (job?.trials ?? []).filter((t) => !finishedDirs.has(t.dir));
  const timeouts = new Map((job?.timeouts ?? []).map((t) => [t.dir, agentTimeoutSec(t)]));
  const running = live
    ? open
        .map((t) => {
          const elapsedSec = Math.max(0, (input.now - t.configTime) / 1000);
          const timeout = timeouts.get(t.dir) ?? null;
          return { trial: t.dir, task: t.dir.replace(/__[^_]+$/, ""), startedAt: iso(t.configTime), elapsedSec, agentTimeoutSec: timeout, overTimeout: timeout !== null && elapsedSec > timeout };
        })
        .sort((a, b) => b.elapsedSec - a.elapsedSec)
    : [];
  const incomplete = live ? 0 : open.length;

  const total = num(job?.result?.n_total_trials) ?? null;
  const accounted = finished.length + running.length;
  const pending = total === null ? null : Math.max(0, total - accounted - incomplete);
  const concurrency = num(job?.config?.n_concurrent_trials) ?? HARBOR_DEFAULTS.n_concurrent_trials;
  const durations = genuine.map((f) => f.durationSec).filter((x): x is number => x !== null);
  const meanTrialSec = durations.length ? durations.reduce((a, b) => a + b, 0) / durations.length : null;
  let eta: StatusReport["eta"] = null;
  if (live && pending !== null && meanTrialSec !== null) {
    const { earlierJobs, ...trials } = etaTrials(job!, genuine, running, pending);
    const estimate = estimateRemaining({ concurrency, ...trials });
    if (estimate) {
      const at = (sec: number) => iso(input.now + sec * 1000);
      eta = {
        remainingSec: estimate.remainingSec,
        finishAt: at(estimate.remainingSec),
        lowSec: estimate.lowSec,
        highSec: estimate.highSec,
        finishLowAt: at(estimate.lowSec),
        finishHighAt: at(estimate.highSec),
        meanTrialSec,
        basedOnTrials: durations.length,
        concurrency,
        ...(earlierJobs.length ? { earlierJobs, earlierTrials: trials.earlier.length } : {}),
      };
    }
  }

  const startedAt = typeof job?.result?.started_at === "string" ? job.result.started_at : null;
  const finishedAt = typeof job?.result?.finished_at === "string" ? job.result.finished_at : null;
  const startMs = parseTime(startedAt);
  // A job that ended without finished_at ended when Harbor last wrote its result.json.
  const endMs = parseTime(finishedAt) ?? (live ? null : parseTime(typeof job?.result?.updated_at === "string" ? job.result.updated_at : null));
  const elapsedSec = startMs === null ? null : Math.max(0, ((endMs ?? input.now) - startMs) / 1000);
  const pid = job && job.unit.mainPid > 0 ? job.unit.mainPid : (input.recordedPid ?? null);
  if (job?.fromCurrentFile) notes.push(`stack ${input.stack} has no job in its outputs (destroyed, or up did not finish): showing its last job on the runner, ${job.jobName}`);
  if (job && !job.exists && state?.state !== "running") notes.push(`the job directory ${job.dir} does not exist on the runner`);

  return {
    kind: "reprobench.status",
    schemaVersion: STATUS_SCHEMA_VERSION,
    generatedAt: generatedAt.toISOString(),
    stack: input.stack,
    cluster: input.cluster,
    job: job
      ? {
          name: job.jobName,
          dir: job.dir,
          log: job.log || null,
          unit: job.unit.name || null,
          pid,
          state: state!.state,
          stateReason: state!.reason,
          startedAt,
          finishedAt,
          elapsedSec,
          concurrency,
        }
      : null,
    trials: {
      total,
      finished: finished.length,
      running: running.length,
      pending,
      incomplete,
      passed,
      failed,
      errored,
      cancelled,
      errorTypes,
      meanSoFar,
      progress: total ? finished.length / total : null,
    },
    running,
    eta,
    servers: input.servers.map(serverReport),
    router: input.router ? routerReport(input.router) : null,
    logTail: (job?.logTail ?? []).map((l) => redact(l, input.secrets ?? [])),
    notes,
  };
}

// ---------------------------------------------------------------------------------------------------------
// Text

/** `[██████░░░░] 60%` */
export function progressBar(fraction: number | null, width = 30): string {
  if (fraction === null) return `[${"?".repeat(width)}]`;
  const f = Math.min(1, Math.max(0, fraction));
  const full = Math.round(f * width);
  return `[${"█".repeat(full)}${"░".repeat(width - full)}] ${Math.round(f * 100)}%`;
}

const fmt = (v: number | null, digits = 0): string => (v === null ? "?" : v.toFixed(digits));

/** One screen: job, trials, ETA, running trials, servers, router, log tail. */
export function renderStatus(r: StatusReport, opts: { maxRunning?: number } = {}): string {
  const out: string[] = [];
  const j = r.job;
  const head = `stack ${r.stack}${r.cluster ? ` (on the cluster of stack ${r.cluster})` : ""}`;
  if (!j) {
    out.push(head, "job: none yet (this stack has run no job: run.enabled, then reprobench up)");
  } else {
    const pid = j.pid ? `harbor pid ${j.pid}` : "no harbor process";
    out.push(`${head} · job ${j.name}`);
    const took = j.state === "finished" ? "took" : j.state === "running" || j.state === "stopping" ? "running for" : "ran for";
    out.push(`state    ${j.state.toUpperCase()} (${pid}${j.unit ? `, unit ${j.unit}` : ""})${j.elapsedSec !== null ? ` · ${took} ${duration(j.elapsedSec)}` : ""}`);
    if (j.state !== "running" && j.state !== "finished") out.push(`         ${j.stateReason}`);
    const t = r.trials;
    out.push(`trials   ${progressBar(t.progress)} ${t.finished}/${t.total ?? "?"} finished · ${t.running} running · ${t.pending ?? "?"} pending${t.incomplete ? ` · ${t.incomplete} without result.json` : ""}`);
    out.push(`results  ${t.passed} passed · ${t.failed} failed · ${t.errored} errored${t.cancelled ? ` · ${t.cancelled} cancelled` : ""} · mean so far ${t.meanSoFar === null ? "n/a" : t.meanSoFar.toFixed(4)}`);
    const types = Object.entries(t.errorTypes).sort((a, b) => b[1] - a[1]);
    if (types.length) out.push(`errors   ${types.map(([k, v]) => `${k} ×${v}`).join(", ")}`);
    if (r.eta) {
      const z = (t: string) => t.replace(/\.\d+Z$/, "Z");
      const earlier = r.eta.earlierJobs?.length ? `, and ${r.eta.earlierTrials} trials of the same tasks in ${r.eta.earlierJobs.length === 1 ? `an earlier job (${r.eta.earlierJobs[0]})` : `${r.eta.earlierJobs.length} earlier jobs (${r.eta.earlierJobs.join(", ")})`}` : "";
      out.push(`ETA      ${duration(r.eta.remainingSec)}, likely ${duration(r.eta.lowSec)}–${duration(r.eta.highSec)} (≈ ${z(r.eta.finishAt)}; from ${r.eta.basedOnTrials} finished and ${r.running.length} running trials against their timeouts${earlier}, ${r.eta.concurrency} concurrent)`);
    }
    else if (j.state === "running") out.push("ETA      after the first trial finishes");
    if (r.running.length) {
      out.push(`running  (elapsed / agent timeout)`);
      const max = opts.maxRunning ?? 12;
      for (const x of r.running.slice(0, max)) {
        out.push(`  ${x.trial.padEnd(40)} ${duration(x.elapsedSec).padStart(7)} / ${x.agentTimeoutSec === null ? "none" : duration(x.agentTimeoutSec)}${x.overTimeout ? "  OVER (agent timeout passed; setup and verifier add to it)" : ""}`);
      }
      if (r.running.length > max) out.push(`  … and ${r.running.length - max} more`);
    }
  }
  if (r.servers.length) {
    out.push("servers  (per DP rank: running / queued / generation tok/s)");
    for (const s of r.servers) {
      const ranks = s.ranks.map((k) => `rank ${k.dpRank}: ${fmt(k.running)} / ${fmt(k.queued)} / ${fmt(k.genThroughput, 1)}`).join(" · ");
      out.push(`  ${s.host.padEnd(10)} ${s.source === "metrics" || s.source === "get_load" ? ranks || "no ranks reported" : s.source}${s.note ? `  (${s.note})` : ""}`);
    }
  }
  if (r.router) {
    const w = r.router.workers.map((x) => `${x.worker.replace(/^https?:\/\//, "")} ${x.active === null ? "-" : x.active}${x.healthy === false ? " UNHEALTHY" : ""}`).join(" · ");
    out.push(`router   ${r.router.host}: ${r.router.source === "metrics" ? `in flight per worker: ${w || "none yet"}` : r.router.source}${r.router.note ? `  (${r.router.note})` : ""}`);
  }
  if (r.logTail.length) {
    out.push(`log      ${j?.log ?? ""}`);
    for (const l of r.logTail) out.push(`  | ${l.length > 160 ? `${l.slice(0, 157)}...` : l}`);
  }
  for (const n of r.notes) out.push(`note: ${n}`);
  return `${out.join("\n")}\n`;
}
