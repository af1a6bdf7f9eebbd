// What a rehearsal measures, from the trials' result.json (pure): throughput, the makespan against its
// lower bound, the time each trial spends outside its agent and verifier, status's ETA error, and the
// audit held against the ground truth task by task.
import type { AuditReport } from "../../results/schema";
import { estimateEta, type StatusReport } from "../../results/status";
import type { TrialInput } from "../../results/audit";
import { quantileSorted } from "../../results/compare";
import { parseTime } from "../../results/harbor";

const ms = (iso: string | null): number | null => (iso ? Date.parse(iso) : null);

export interface Throughput {
  trials: number;
  /** First trial start to last trial end, seconds. */
  makespanSec: number;
  /** max(longest trial, Σ trial durations / concurrency): no schedule on `concurrency` slots is shorter. */
  lowerBoundSec: number;
  longestTrialSec: number;
  trialsPerMinute: number;
}

/** Makespan and its lower bound over trials that ran (started and finished). */
export function throughput(trials: readonly TrialInput[], concurrency: number): Throughput {
  const ran = trials.filter((t) => ms(t.startedAt) !== null && ms(t.finishedAt) !== null);
  if (ran.length === 0) return { trials: 0, makespanSec: 0, lowerBoundSec: 0, longestTrialSec: 0, trialsPerMinute: 0 };
  const start = Math.min(...ran.map((t) => ms(t.startedAt)!));
  const end = Math.max(...ran.map((t) => ms(t.finishedAt)!));
  const durations = ran.map((t) => (ms(t.finishedAt)! - ms(t.startedAt)!) / 1000);
  const longest = Math.max(...durations);
  const makespanSec = (end - start) / 1000;
  return {
    trials: ran.length,
    makespanSec,
    lowerBoundSec: Math.max(longest, durations.reduce((a, b) => a + b, 0) / concurrency),
    longestTrialSec: longest,
    trialsPerMinute: makespanSec > 0 ? ran.length / (makespanSec / 60) : 0,
  };
}

export interface Overhead {
  trials: number;
  meanSec: number;
  p50Sec: number;
  maxSec: number;
}

/** Per trial: its duration minus agent execution and verifier time (environment start, agent setup, teardown). */
export function overheadOutsideAgentAndVerifier(trials: readonly TrialInput[]): Overhead {
  const values = trials
    .filter((t) => t.durationSec !== null && t.phases.agentExecution !== null)
    .map((t) => t.durationSec! - (t.phases.agentExecution ?? 0) - (t.phases.verifier ?? 0))
    .sort((a, b) => a - b);
  if (values.length === 0) return { trials: 0, meanSec: 0, p50Sec: 0, maxSec: 0 };
  return {
    trials: values.length,
    meanSec: values.reduce((a, b) => a + b, 0) / values.length,
    p50Sec: values[Math.floor((values.length - 1) / 2)],
    maxSec: values[values.length - 1],
  };
}

export interface EtaSample {
  /** The fraction of trials finished when status was read. */
  fraction: number;
  takenAt: string;
  /** status's ETA (finishAt); null when it gave none. */
  finishAt: string | null;
}

/** The ETA's error against when the job really finished: positive = status was optimistic. */
export function etaErrors(samples: readonly EtaSample[], actualEnd: string): { fraction: number; errorSec: number | null; errorOfRemaining: number | null }[] {
  const end = Date.parse(actualEnd);
  return samples.map((s) => {
    if (!s.finishAt) return { fraction: s.fraction, errorSec: null, errorOfRemaining: null };
    const errorSec = (end - Date.parse(s.finishAt)) / 1000;
    const remaining = (end - Date.parse(s.takenAt)) / 1000;
    return { fraction: s.fraction, errorSec, errorOfRemaining: remaining > 0 ? errorSec / remaining : null };
  });
}

/** A trial the stop cut short, read before the resume deleted it. */
export interface CutTrial {
  task: string;
  startedAt: string;
  /** When its agent began (null: still in setup at the stop). */
  agentStartedAt?: string | null;
}

const median = (xs: readonly number[]): number | null => (xs.length ? quantileSorted([...xs].sort((a, b) => a - b), 0.5) : null);

/**
 * When the job would have ended had the stop not happened (what an ETA read before the stop is held to):
 * a trial that ended before the stop ended then; a trial not started by the stop is moved back by the idle
 * time between the stop and the resume. A trial the stop cut short (Harbor's resume deletes it and runs the
 * task again from nothing, in an emptier job, so faster) would have run at least until the stop:
 * - one whose task runs into its agent timeout (`agentTimeoutSec`, the ground truth's) would have ended
 *   that long after its agent began, plus what the job's finished agent timeouts took after theirs
 *   (verifier, teardown; their median);
 * - any other ends with its rerun's duration from its own start, or at the stop if that is later.
 * `stoppedAt` is when the stop began (harbor got SIGTERM). Null without trials.
 */
export function endWithoutStop(
  trials: readonly (Pick<TrialInput, "task" | "startedAt" | "finishedAt"> & Partial<Pick<TrialInput, "exceptionType" | "durationSec" | "phases">>)[],
  o: { stoppedAt: string; idleMs: number; cut: readonly CutTrial[]; agentTimeoutSec?: (task: string) => number | null },
): string | null {
  const stop = parseTime(o.stoppedAt)!;
  const phased = trials.filter((t) => t.phases && t.durationSec != null && t.phases.environmentSetup !== null && t.phases.agentSetup !== null && t.phases.agentExecution !== null);
  const beforeAgent = median(phased.map((t) => t.phases!.environmentSetup! + t.phases!.agentSetup!));
  const afterTimeout = median(phased.filter((t) => t.exceptionType === "AgentTimeoutError").map((t) => t.durationSec! - t.phases!.environmentSetup! - t.phases!.agentSetup! - t.phases!.agentExecution!));
  const cutOf = new Map<string, CutTrial[]>();
  for (const c of [...o.cut].sort((a, b) => (parseTime(a.startedAt) ?? 0) - (parseTime(b.startedAt) ?? 0))) cutOf.set(c.task, [...(cutOf.get(c.task) ?? []), c]);
  /** A cut trial's natural end when it runs into its agent timeout; null when that cannot be said. */
  const timeoutEnd = (c: CutTrial): number | null => {
    const agentSec = o.agentTimeoutSec?.(c.task) ?? null;
    if (agentSec === null || afterTimeout === null) return null;
    const agentStart = c.agentStartedAt ? parseTime(c.agentStartedAt) : beforeAgent === null ? null : parseTime(c.startedAt)! + beforeAgent * 1000;
    return agentStart === null || agentStart === undefined ? null : agentStart + (agentSec + afterTimeout) * 1000;
  };
  let end: number | null = null;
  for (const t of [...trials].sort((a, b) => (parseTime(a.startedAt) ?? 0) - (parseTime(b.startedAt) ?? 0))) {
    const start = parseTime(t.startedAt);
    const finish = parseTime(t.finishedAt);
    if (start === null || finish === null) continue;
    let at: number;
    if (start <= stop) at = finish;
    else {
      const c = cutOf.get(t.task)?.shift();
      if (c === undefined) at = finish - Math.max(0, o.idleMs);
      else at = Math.max(stop, timeoutEnd(c) ?? parseTime(c.startedAt)! + (finish - start));
    }
    end = Math.max(end ?? at, at);
  }
  return end === null ? null : new Date(end).toISOString();
}

export interface ExpectedOutcome {
  task: string;
  reward: number | null;
  exception: string | null;
  /** The corrected verdict when a manual verdict applies ("passed" | "failed"), else the raw outcome. */
  corrected: "passed" | "failed" | "errored";
}

export interface Mismatch {
  task: string;
  expected: string;
  got: string;
}

const shown = (reward: number | null, exception: string | null) => `reward ${reward === null ? "none" : reward}${exception ? `, ${exception}` : ""}`;

/** Task by task: the counted trial's reward and exception against the ground truth; and tasks missing on either side. */
export function auditMismatches(report: AuditReport, expected: readonly ExpectedOutcome[]): Mismatch[] {
  const out: Mismatch[] = [];
  const byTask = new Map(report.tasks.map((t) => [t.task, t]));
  for (const e of expected) {
    const t = byTask.get(e.task);
    if (!t || t.trials.length === 0) {
      out.push({ task: e.task, expected: shown(e.reward, e.exception), got: "no counted trial" });
      continue;
    }
    for (const trial of t.trials) {
      if (trial.reward !== e.reward || trial.exceptionType !== e.exception) out.push({ task: e.task, expected: shown(e.reward, e.exception), got: `${shown(trial.reward, trial.exceptionType)} (${trial.path})` });
    }
  }
  const known = new Set(expected.map((e) => e.task));
  for (const t of report.tasks) if (!known.has(t.task)) out.push({ task: t.task, expected: "not in the dataset", got: `${t.trials.length} counted trial(s)` });
  return out;
}

export interface OutcomeCounts {
  passed: number;
  failed: number;
  errored: number;
  byException: Record<string, number>;
}

/** Counts of the ground truth in the audit's words (passed: reward 1, failed: reward 0, errored: no reward). */
export function expectedCounts(expected: readonly ExpectedOutcome[], corrected: boolean): OutcomeCounts {
  const counts: OutcomeCounts = { passed: 0, failed: 0, errored: 0, byException: {} };
  for (const e of expected) {
    const outcome = corrected ? e.corrected : e.reward === null ? "errored" : e.reward >= 1 ? "passed" : "failed";
    counts[outcome] += 1;
    if (e.exception) counts.byException[e.exception] = (counts.byException[e.exception] ?? 0) + 1;
  }
  return counts;
}

/** The same counts read from an audit (raw or corrected score; exceptions of the counted trials). */
export function auditCounts(report: AuditReport, corrected: boolean): OutcomeCounts {
  const score = corrected ? report.scores.corrected : report.scores.raw;
  const byException: Record<string, number> = {};
  for (const t of report.tasks.flatMap((x) => x.trials)) if (t.exceptionType) byException[t.exceptionType] = (byException[t.exceptionType] ?? 0) + 1;
  return { passed: score.passed, failed: score.failed, errored: score.errored, byException };
}

/** Rows "what | audit | ground truth | equal" for the report. */
export function countRows(audit: OutcomeCounts, truth: OutcomeCounts): { what: string; audit: number; truth: number; equal: boolean }[] {
  const rows: { what: string; audit: number; truth: number; equal: boolean }[] = (["passed", "failed", "errored"] as const).map((k) => ({ what: k, audit: audit[k], truth: truth[k], equal: audit[k] === truth[k] }));
  const types = [...new Set([...Object.keys(audit.byException), ...Object.keys(truth.byException)])].sort();
  for (const k of types) rows.push({ what: k, audit: audit.byException[k] ?? 0, truth: truth.byException[k] ?? 0, equal: (audit.byException[k] ?? 0) === (truth.byException[k] ?? 0) });
  return rows;
}

export interface EstimatorSample {
  fraction: number;
  /** When status was read (the runner's clock: StatusReport.generatedAt is this machine's, close enough). */
  takenAt: string;
  /** The mean-of-finished-trials estimate (status before issue 33) and results/eta.ts's, seconds from takenAt; null when none. */
  oldSec: number | null;
  newSec: number | null;
}

/**
 * Both estimates from one status report: the new one is what status printed; the old one is recomputed
 * from the same report's figures (mean finished trial, concurrency, pending, running elapsed), so the two
 * are compared on the same moment of the same run.
 */
export function estimatesOfReport(r: StatusReport, fraction: number): EstimatorSample {
  const oldSec = r.eta && r.trials.pending !== null ? estimateEta({ meanTrialSec: r.eta.meanTrialSec, concurrency: r.eta.concurrency, pending: r.trials.pending, runningElapsedSec: r.running.map((x) => x.elapsedSec) }) : null;
  return { fraction, takenAt: r.generatedAt, oldSec, newSec: r.eta?.remainingSec ?? null };
}

/** Each estimate's error against the job's end: (end − estimated end) / time left; positive = optimistic. */
export function estimatorErrors(samples: readonly EstimatorSample[], actualEnd: string): { fraction: number; old: number | null; new: number | null }[] {
  const end = Date.parse(actualEnd);
  return samples.map((s) => {
    const left = (end - Date.parse(s.takenAt)) / 1000;
    const err = (sec: number | null) => (sec === null || !(left > 0) ? null : (left - sec) / left);
    return { fraction: s.fraction, old: err(s.oldSec), new: err(s.newSec) };
  });
}
