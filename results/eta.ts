// How long a Harbor job still runs, from the trials that finished, the ones running (and for how long) and
// the ones pending, each with its task and budget when known. Pure and seeded.
//
// Why not the mean of the finished trials (estimateEta in status.ts, before issue 33): the short ones
// finish first, so early in a run that mean is far too low (40–72 % of the time left at 25/50/75 % of
// seed 000's rehearsal). Instead:
// - attempts of one task behave alike: a trial whose task has finished attempts takes one of their
//   durations (Harbor runs attempt by attempt over the tasks, so with k > 1 most later attempts have one);
// - otherwise the work is measured in units of each trial's budget (agent + verifier timeout and a setup
//   allowance: a trial cannot run past it), so pending trials of long timeout tiers count as long, and its
//   distribution is the Kaplan–Meier estimate with the running trials (and the timeouts) as censored
//   observations — "ran at least this long" — which is what corrects the short-ones-first bias;
// - the mass beyond the longest work seen is the trials that time out: they run as long as the longest
//   of the long trials seen so far, never past their own budget;
// - the job's concurrency slots are filled in order with the drawn durations; the median of 400 seeded
//   draws of that schedule is the estimate, the 10th–90th percentile its range.
// On the seeded simulation of test/unit/sim/rehearsal-eta.test.ts (TB 2.1 timeouts, seed 000's behaviours,
// 6×, 25 slots) its error is far below the old one's but not everywhere within 15 % of the time left:
// with one attempt per task nothing tells which young trial will time out, and the last one to start
// decides the end.
import { seededUniform } from "./random";

export interface EtaInput {
  /** The job's concurrency (n_concurrent_trials). */
  concurrency: number;
  /** Finished, not cancelled trials: duration, the budget when known, whether the agent timed out. */
  finished: readonly { task?: string; durationSec: number; budgetSec: number | null; timedOut?: boolean }[];
  /** Running trials: time since they started, and the budget when known. */
  running: readonly { task?: string; elapsedSec: number; budgetSec: number | null }[];
  /** Pending trials in the order Harbor starts them (when known), each with its budget when known. */
  pending: readonly { task?: string; budgetSec: number | null }[];
  /** Seed and number of schedule draws (default 0 and 400). */
  seed?: number;
  draws?: number;
}

export interface EtaEstimate {
  /** Median of the drawn schedules' remaining times, seconds. */
  remainingSec: number;
  /** 10th and 90th percentile. */
  lowSec: number;
  highSec: number;
}

/** The durations' distribution in budget units: support points with probabilities (Kaplan–Meier). */
export interface DurationDistribution {
  points: { u: number; p: number }[];
}

/**
 * Kaplan–Meier over budget-relative durations: `events` ended at u, `censored` have lasted at least u.
 * The mass the estimate leaves beyond the last event goes to `tailU` (Infinity: "beyond what was seen",
 * for the caller to place).
 */
export function kaplanMeier(events: readonly number[], censored: readonly number[], tailU: number): DurationDistribution {
  const obs = [...events.map((u) => ({ u, event: true })), ...censored.map((u) => ({ u, event: false }))].sort((a, b) => a.u - b.u || Number(b.event) - Number(a.event));
  let atRisk = obs.length;
  let survival = 1;
  const points: { u: number; p: number }[] = [];
  for (let i = 0; i < obs.length; ) {
    const u = obs[i].u;
    let d = 0;
    let n = 0;
    // Events before censorings at the same value: a trial censored at u was still running at u.
    for (; i < obs.length && obs[i].u === u; i++, n++) if (obs[i].event) d++;
    if (d > 0) {
      const next = survival * (1 - d / atRisk);
      points.push({ u, p: survival - next });
      survival = next;
    }
    atRisk -= n;
  }
  if (survival > 1e-12) {
    const last = points.length ? points[points.length - 1].u : 0;
    points.push({ u: tailU === Infinity ? Infinity : Math.max(tailU, last), p: survival });
  }
  return { points };
}

/** Draws u from the distribution given u > after (the running trial's elapsed share); null when no mass lies beyond. */
function drawBeyond(dist: DurationDistribution, after: number, random: () => number): number | null {
  let total = 0;
  for (const x of dist.points) if (x.u > after) total += x.p;
  if (total <= 0) return null;
  let r = random() * total;
  for (const x of dist.points) {
    if (x.u <= after) continue;
    r -= x.p;
    if (r <= 0) return x.u;
  }
  return dist.points[dist.points.length - 1].u;
}


/** When the last trial ends if slots free up in order: running trials hold slots first, pending ones queue. */
export function makespan(runningRemaining: readonly number[], pendingDurations: readonly number[], concurrency: number): number {
  const slots = Math.max(1, concurrency, runningRemaining.length);
  const free: number[] = [...runningRemaining, ...Array<number>(slots - runningRemaining.length).fill(0)];
  let end = Math.max(0, ...runningRemaining);
  for (const d of pendingDurations) {
    let k = 0;
    for (let i = 1; i < free.length; i++) if (free[i] < free[k]) k = i;
    free[k] += d;
    end = Math.max(end, free[k]);
  }
  return end;
}

const quantile = (sorted: readonly number[], q: number): number => {
  const pos = q * (sorted.length - 1);
  const lo = Math.floor(pos);
  return sorted[lo] + (sorted[Math.ceil(pos)] - sorted[lo]) * (pos - lo);
};

/** The ETA (see the file comment); null until a trial has finished. 0 when nothing is left. */
export function estimateRemaining(o: EtaInput): EtaEstimate | null {
  if (o.finished.length === 0) return null;
  if (o.running.length === 0 && o.pending.length === 0) return { remainingSec: 0, lowSec: 0, highSec: 0 };
  const known = [...o.finished, ...o.running, ...o.pending].map((t) => t.budgetSec).filter((b): b is number => b !== null && b > 0);
  // Trials of unknown budget are measured against the mean known one (in seconds when none is known) and
  // have no cap of their own.
  const fallback = known.length ? known.reduce((a, b) => a + b, 0) / known.length : 1;
  const scale = (b: number | null) => (b !== null && b > 0 ? b : fallback);
  // The work a trial does scales with its budget (harder tasks get longer timeouts), so the finished
  // trials' durations are measured against their budgets. A timeout is no such sample: it says only that
  // the work would have taken at least that long, like a running trial.
  const done = o.finished.filter((t) => !t.timedOut);
  const timedOut = o.finished.filter((t) => t.timedOut);
  const events = done.map((t) => t.durationSec / scale(t.budgetSec));
  const censored = o.running.map((t) => t.elapsedSec / scale(t.budgetSec));
  const lastEvent = events.length ? Math.max(...events) : 0;
  // Scaling by the budget extrapolates: a long-tier task draws its share from mostly short-tier trials. So
  // no pending trial's work is expected to take longer than the longest work seen so far, in seconds —
  // finished, or still running (which says it takes at least that long).
  const longestWorkSec = Math.max(0, ...done.map((t) => t.durationSec), ...o.running.map((t) => t.elapsedSec));
  const dist = kaplanMeier(events, [...censored, ...timedOut.map((t) => t.durationSec / scale(t.budgetSec))], Infinity);
  // The tail (longer than any work seen) is the trials that time out, which run to their budget: as long
  // as the longest of the long trials seen (the timeouts, and the trials running past everything else),
  // never past a trial's own budget — a long-tier task is not taken to time out before one is seen to.
  const long = [...timedOut.map((t) => t.durationSec), ...o.running.filter((_, j) => censored[j] > lastEvent).map((t) => t.budgetSec ?? t.elapsedSec)].sort((a, b) => a - b);
  const tailSec = long.length ? long[long.length - 1] : null;

  // Attempts of one task behave alike (the same work, the same timeout): a trial whose task has finished
  // attempts takes one of their durations. Harbor runs attempt by attempt over the tasks, so with k > 1
  // the first attempt has usually ended before the next begins.
  const siblings = new Map<string, number[]>();
  for (const t of o.finished) if (t.task !== undefined) siblings.set(t.task, [...(siblings.get(t.task) ?? []), t.durationSec]);
  const fromSiblings = (task: string | undefined, atLeast: number, random: () => number): number | null => {
    const pool = (task === undefined ? [] : (siblings.get(task) ?? [])).filter((d) => d > atLeast);
    return pool.length ? pool[Math.floor(random() * pool.length)] : null;
  };

  const random = seededUniform(o.seed ?? 0);
  const draws = o.draws ?? 400;
  const ends: number[] = [];
  for (let r = 0; r < draws; r++) {
    const running = o.running.map((t, j) => {
      const sibling = fromSiblings(t.task, t.elapsedSec, random);
      if (sibling !== null) return sibling - t.elapsedSec;
      const u = drawBeyond(dist, censored[j], random);
      const cap = Math.max(0, (t.budgetSec ?? Infinity) - t.elapsedSec);
      if (u !== null && u !== Infinity) return Math.min((u - censored[j]) * scale(t.budgetSec), cap);
      // In the tail: to the long trials' length (timeouts run their budget); once past that, nothing seen
      // says how much longer, so as long again as it has run (never past its budget).
      if (tailSec !== null && tailSec > t.elapsedSec) return Math.min(tailSec - t.elapsedSec, cap);
      return Math.min(t.elapsedSec, cap);
    });
    const pending = o.pending.map((t) => {
      const sibling = fromSiblings(t.task, 0, random);
      if (sibling !== null) return sibling;
      const u = drawBeyond(dist, -Infinity, random) ?? 0;
      if (u !== Infinity) return Math.min(u * scale(t.budgetSec), Math.max(longestWorkSec, u * fallback));
      const own = t.budgetSec ?? tailSec ?? lastEvent * fallback;
      return Math.min(own, tailSec ?? own);
    });
    ends.push(makespan(running, pending, o.concurrency));
  }
  ends.sort((a, b) => a - b);
  return { remainingSec: quantile(ends, 0.5), lowSec: quantile(ends, 0.1), highSec: quantile(ends, 0.9) };
}
