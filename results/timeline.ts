// The report's timeline: every trial of every pass over wall-clock time, one row per concurrency slot,
// coloured by outcome — where the run spent its hours and where errors clustered. Harbor does not record
// which slot ran a trial, so slots are assigned here: in start order, each trial takes the lowest slot
// that is free at its start (so the number of rows is the run's peak concurrency). Pure.
import type { JobInput } from "./audit";
import { parseTime } from "./harbor";

export const TIMELINE_OUTCOMES = ["passed", "failed", "agent timeout", "errored", "cancelled"] as const;
export type TimelineOutcome = (typeof TIMELINE_OUTCOMES)[number];

export interface TimelineBar {
  /** Slot, 0-based. */
  slot: number;
  /** Hours since the timeline's start. */
  start: number;
  end: number;
  trial: string;
  task: string;
  outcome: TimelineOutcome;
  exceptionType: string | null;
  /** Counted by the audit (false: superseded by another pass's trial). */
  counted: boolean;
}

export interface Timeline {
  /** ISO time of hour 0 (the earliest trial start). */
  startedAt: string | null;
  slots: number;
  hours: number;
  bars: TimelineBar[];
  /** Trials left out: no start or finish time (still running, or hard-killed). */
  skipped: number;
  /** Per wall-clock hour (by finish time): how many trials ended with each outcome. */
  perHour: { hour: number; counts: Record<TimelineOutcome, number> }[];
}

export function timelineOutcome(t: { reward: number | null; exceptionType: string | null }): TimelineOutcome {
  if (t.exceptionType === "CancelledError") return "cancelled";
  if (t.reward !== null && t.reward >= 1) return "passed";
  if (t.exceptionType === "AgentTimeoutError") return "agent timeout";
  if (t.reward !== null) return "failed";
  return "errored";
}

/** The timeline of the given jobs' trials; `counted` holds the paths ("<job>/<trial>") the audit counts. */
export function buildTimeline(jobs: readonly JobInput[], counted: ReadonlySet<string>): Timeline {
  const timed: { path: string; trial: string; task: string; a: number; b: number; reward: number | null; exceptionType: string | null }[] = [];
  let skipped = 0;
  for (const j of jobs) {
    skipped += j.incompleteTrialDirs.length;
    for (const t of j.trials) {
      const a = parseTime(t.startedAt);
      const b = parseTime(t.finishedAt);
      if (a === null || b === null) {
        skipped++;
        continue;
      }
      timed.push({ path: t.path, trial: t.trial, task: t.task, a, b: Math.max(a, b), reward: t.reward, exceptionType: t.exceptionType });
    }
  }
  if (timed.length === 0) return { startedAt: null, slots: 0, hours: 0, bars: [], skipped, perHour: [] };
  timed.sort((x, y) => x.a - y.a || x.b - y.b || x.path.localeCompare(y.path));
  const t0 = timed[0].a;
  const freeAt: number[] = [];
  const bars: TimelineBar[] = timed.map((t) => {
    let slot = freeAt.findIndex((end) => end <= t.a);
    if (slot < 0) slot = freeAt.length;
    freeAt[slot] = t.b;
    return {
      slot,
      start: (t.a - t0) / 3_600_000,
      end: (t.b - t0) / 3_600_000,
      trial: t.trial,
      task: t.task,
      outcome: timelineOutcome(t),
      exceptionType: t.exceptionType,
      counted: counted.has(t.path),
    };
  });
  const hours = Math.max(...bars.map((b) => b.end));
  const perHour: Timeline["perHour"] = [];
  for (let h = 0; h <= Math.floor(hours); h++) {
    const counts = Object.fromEntries(TIMELINE_OUTCOMES.map((o) => [o, 0])) as Record<TimelineOutcome, number>;
    for (const b of bars) if (Math.min(Math.floor(b.end), Math.floor(hours)) === h) counts[b.outcome]++;
    perHour.push({ hour: h, counts });
  }
  return { startedAt: new Date(t0).toISOString(), slots: freeAt.length, hours, bars, skipped, perHour };
}
