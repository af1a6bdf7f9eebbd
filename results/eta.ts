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
// - a task with no finished attempt in this job takes one of its trials in earlier jobs of the same tasks
//   (the same agent and model on the same dataset, read by status from the runner): seed 000 ran 3×
//   before 6×, and a task that ran out of its budget there is taken to run out of this one too; work
//   that ended there takes as long; either times a ratio drawn from this job's pace against the earlier
//   ones (earlierPaceDistribution: Kaplan–Meier over duration here / earlier, the running trials
//   censored, since the first to finish are the ones that ran fast this time; work and timeouts apart),
//   and a trial past every ratio seen is late, not a timeout in the making (OVERDUE_SHARE);
// - a pending attempt whose task has no finished attempt but a running one takes that one's drawn
//   duration: a task seen running long (a timeout in the making) queues long again;
// - the mass beyond the longest work seen is the trials that time out: a running trial past every
//   finished one (in budget units) runs to its budget (the finished timeouts' median share of it once one
//   has ended); others as long as the longest of the long trials seen so far, never past their budget;
// - the job's concurrency slots are filled in order with the drawn durations: 400 seeded draws of that
//   schedule (drawObserved).
// That model places a timeout only where one was seen, no longer than the longest trial seen. A second
// one (drawPooled) lets every trial time out: a mixture in which a trial times out (runs to its budget)
// at its tier's rate, else does normal work (Kaplan–Meier in budget units). The tiers' rates are
// partially pooled toward the overall rate by a Beta prior whose strength their own spread sets
// (poolRates: the beta-binomial's method of moments, bounded to 2–100 trials' worth: tiers that differ no
// more than noise pool completely, plainly different ones weakly) and learnt by EM from the finished
// trials and the running ones: a running trial is a timeout with the posterior p / (p + (1 − p)·S) given
// how long it has run (S: its survival as a normal trial; 1/(m + 1) once it outlived all m finished
// normal trials of its tier, by exchangeability) and informs its tier's rate as far as a normal one would
// have ended by now (1 − S: a young trial says nothing). Each draw takes every tier's rate from its Beta
// posterior, then every trial's fate, and schedules them; the end is a max over slots, so the draws are
// what matters, not an expected duration.
// Until the long tiers' trials have run a while the data cannot tell the two models apart: the estimate
// is the median of both models' draws together (equal weights), the range the wider of their 10th–90th
// percentiles.
//
// Measured on the seeded simulation of test/unit/sim/rehearsal-eta.test.ts (TB 2.1 timeouts, seed 000's
// behaviours, 6×, 25 slots; mean |error| of the time left at 25/50/75 %, seeds 0–4, held-out seeds 5–14 in
// brackets): 7/2/1 % (4/4/5 %) with 5 attempts per task, 9/1/1 % (8/2/5 %) with 3, and 27/28/28 %
// (21/17/19 %) with one. There the end is set by the one agent timeout on the 1800 s tier, pending at 50 %
// and young at 75 % (150–1100 s of a 10800 s agent budget) while its tier shows no timeout among its
// finished trials; what would bet on it bets the same on the young trials of the 3600 s tier, whose
// timeouts (~21600 s) the data make as likely and which do not happen. Even given every tier's true
// timeout rate and length, the median of such schedules misses by 16/15/37 % (14/16/29 %): the bound of
// 15 % is out of reach of a calibrated model of independent fates at 75 %, and met there only by betting
// on timeouts at about three times their rate. The pooled model alone bets far more (97/79/97 %), the
// first alone far less (35/37/42 %); their median lands between the two, which is why it is closer, not
// because it foresees the timeout; with one attempt the range holds the end in 44 of the 45 samples.
// After a 3× run of the same tasks (3 attempts; overthinking tasks as the rehearsal dataset has them, five
// times their 1× timeout: a timeout at 3× that fits 6×, where the earlier run misleads), the 89 × 1 run
// at 6× is within 2/2/1 % (2/2/2 %), against 25/23/19 % (27/23/21 %) without it.
// Models of the fates alone (per-tier Beta rates pooled by their marginal likelihood, with or without a
// trend in log budget or a spike at zero; survivorship from a censored lognormal) were further off at
// 25 % or 75 % on one of the two seed sets (the test's comment).
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
  /**
   * Finished, not cancelled trials of the same tasks in earlier jobs (the same agent and model on the same
   * dataset, e.g. the 3× smoke run before a 6× one), each with its budget in that job: used for the tasks
   * with no finished attempt in this one (durationFromEarlier).
   */
  earlier?: readonly { task: string; durationSec: number; budgetSec: number | null; timedOut?: boolean }[];
  /** Seed and number of schedule draws (default 0 and 400). */
  seed?: number;
  draws?: number;
}

export interface EtaEstimate {
  /** Median of the drawn schedules' remaining times (drawObserved), seconds. */
  remainingSec: number;
  /** The lower of both models' 10th percentiles, the higher of their 90th (see the file comment). */
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

/**
 * How long a trial of this job takes, judged by a trial of its task in an earlier job: work that ended
 * there takes as long here (never past this budget); work that outlasted the earlier agent timeout
 * outlasts this one too, so it runs this job's agent budget plus what setup and verifier took there
 * (the earlier duration shifted by the change of budget), or `timeoutSec` of this budget when either
 * budget is unknown. Null when nothing can be said (no budget known here for a timeout). This job's pace
 * is applied by the caller (earlierPaceDistribution).
 */
export function durationFromEarlier(t: NonNullable<EtaInput["earlier"]>[number], budgetSec: number | null, timeoutSec: (budgetSec: number | null) => number | null): number | null {
  if (!t.timedOut) return Math.min(t.durationSec, budgetSec ?? Infinity);
  if (budgetSec !== null && t.budgetSec !== null) return Math.min(budgetSec, Math.max(0, t.durationSec + budgetSec - t.budgetSec));
  return timeoutSec(budgetSec);
}

/** The fewest tasks finished in both this job and the earlier ones before their pace is trusted. */
export const EARLIER_PACE_MIN_TASKS = 3;

/**
 * How much longer this job takes than the earlier jobs said (a loaded server, a flaky proxy, a busier
 * machine), as a distribution: per task, its duration here over what its earlier trials give
 * (`expected`, durationFromEarlier at pace 1; a timeout's is its earlier duration shifted by the change of
 * budget). Finished tasks are events; running ones are censored at elapsed / expected — the tasks that
 * finish first are the ones that ran fast this time, so the finished ones alone would say "faster". The
 * Kaplan–Meier estimate over those ratios, or null until EARLIER_PACE_MIN_TASKS tasks have finished here.
 * Work that timed out before and work that ended are two distributions (`expected` holds one kind): a
 * timeout's length is set by its budget and varies little, work varies with the run.
 */
export function earlierPaceDistribution(o: Pick<EtaInput, "finished" | "running">, expected: ReadonlyMap<string, number>): DurationDistribution | null {
  const here = new Map<string, number[]>();
  for (const t of o.finished) if (t.task !== undefined && expected.has(t.task)) here.set(t.task, [...(here.get(t.task) ?? []), t.durationSec]);
  const events = [...here].map(([task, d]) => d.reduce((a, b) => a + b, 0) / d.length / expected.get(task)!);
  if (events.length < EARLIER_PACE_MIN_TASKS) return null;
  const censored = o.running.filter((t) => t.task !== undefined && expected.has(t.task) && !here.has(t.task)).map((t) => t.elapsedSec / expected.get(t.task!)!);
  return kaplanMeier(events, censored, Infinity);
}

/** The median of earlierPaceDistribution for work that ended before (1 while it is null): how much slower this job runs the same tasks. */
export function earlierPace(o: Pick<EtaInput, "finished" | "running" | "pending" | "earlier">): number {
  const dist = earlierPaceDistribution(o, earlierExpected(earlierByTask(o, () => null)).work);
  if (!dist) return 1;
  let acc = 0;
  for (const x of dist.points) if ((acc += x.p) >= 0.5) return x.u;
  return dist.points[dist.points.length - 1].u;
}

/**
 * Per task with earlier trials, what they give for this job (durationFromEarlier at pace 1): each trial's
 * duration, and whether every one of them timed out.
 */
function earlierByTask(o: Pick<EtaInput, "finished" | "running" | "pending" | "earlier">, timeoutSec: (budgetSec: number | null) => number | null): Map<string, { sec: number[]; allTimedOut: boolean }> {
  const budgets = new Map<string, number | null>();
  for (const t of [...o.finished, ...o.running, ...o.pending]) if (t.task !== undefined) budgets.set(t.task, t.budgetSec);
  const by = new Map<string, { sec: number[]; allTimedOut: boolean }>();
  for (const t of o.earlier ?? []) {
    const sec = durationFromEarlier(t, budgets.get(t.task) ?? null, timeoutSec);
    if (sec === null || !(sec > 0)) continue;
    const e = by.get(t.task) ?? { sec: [], allTimedOut: true };
    by.set(t.task, { sec: [...e.sec, sec], allTimedOut: e.allTimedOut && t.timedOut === true });
  }
  return by;
}

/** earlierByTask's mean per task: `timeouts` for the tasks whose every earlier trial timed out, `work` for the others. */
function earlierExpected(by: ReadonlyMap<string, { sec: number[]; allTimedOut: boolean }>): { work: Map<string, number>; timeouts: Map<string, number> } {
  const mean = (d: number[]) => d.reduce((a, b) => a + b, 0) / d.length;
  return {
    work: new Map([...by].filter(([, e]) => !e.allTimedOut).map(([task, e]) => [task, mean(e.sec)])),
    timeouts: new Map([...by].filter(([, e]) => e.allTimedOut).map(([task, e]) => [task, mean(e.sec)])),
  };
}

/**
 * A trial slower, against its earlier trials, than every trial of this job so far is taken to end within
 * this share of its elapsed time: it is late, not a timeout in the making (that would have shown earlier).
 */
export const OVERDUE_SHARE = 0.1;

/**
 * A trial whose task has finished attempts takes one of their durations (longer than `atLeast`, its
 * elapsed time when it runs): attempts of one task behave alike. A task with no finished attempt in this
 * job takes what one of its trials in earlier jobs gives (durationFromEarlier) times a ratio drawn from
 * earlierPaceDistribution of its kind (work or timeout) — for a running trial, one beyond the ratio it has
 * already reached; past every ratio seen, it is late (OVERDUE_SHARE).
 */
function siblingSampler(o: EtaInput, timeoutSec: (budgetSec: number | null) => number | null): (task: string | undefined, atLeast: number, random: () => number) => number | null {
  const siblings = new Map<string, number[]>();
  for (const t of o.finished) if (t.task !== undefined) siblings.set(t.task, [...(siblings.get(t.task) ?? []), t.durationSec]);
  const budgets = new Map<string, number | null>();
  for (const t of [...o.finished, ...o.running, ...o.pending]) if (t.task !== undefined) budgets.set(t.task, t.budgetSec);
  const byTask = earlierByTask(o, timeoutSec);
  const expected = earlierExpected(byTask);
  const pace = { work: earlierPaceDistribution(o, expected.work), timeouts: earlierPaceDistribution(o, expected.timeouts) };
  return (task, atLeast, random) => {
    if (task === undefined) return null;
    const own = siblings.get(task)?.filter((d) => d > atLeast);
    if (own?.length) return own[Math.floor(random() * own.length)];
    const before = byTask.get(task)?.sec;
    if (siblings.has(task) || !before?.length) return null;
    const cap = Math.max(budgets.get(task) ?? Infinity, atLeast);
    const overdue = Math.min(atLeast * (1 + OVERDUE_SHARE), cap);
    const dist = expected.timeouts.has(task) ? pace.timeouts : pace.work;
    if (!dist) {
      // Too few tasks finished here to tell this job's pace: as long as an earlier trial that outlasts it.
      const longer = before.filter((d) => d > atLeast);
      return longer.length ? longer[Math.floor(random() * longer.length)] : overdue;
    }
    const base = before[Math.floor(random() * before.length)];
    const r = drawBeyond(dist, atLeast / base, random);
    return r === null || r === Infinity ? overdue : Math.min(base * r, cap);
  };
}

/** Gamma(shape, 1) draw (Marsaglia–Tsang; shape < 1 by the u^(1/shape) boost), from uniforms. */
function drawGamma(shape: number, random: () => number): number {
  if (shape < 1) return drawGamma(shape + 1, random) * Math.pow(Math.max(random(), 1e-300), 1 / shape);
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (let i = 0; i < 100; i++) {
    const z = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
    const v = (1 + c * z) ** 3;
    if (v <= 0) continue;
    const u = random();
    if (Math.log(Math.max(u, 1e-300)) < 0.5 * z * z + d - d * v + d * Math.log(v)) return d * v;
  }
  return d; // not reached in practice: bounded, so a draw never loops
}

/** Beta(a, b) draw. */
export function drawBeta(a: number, b: number, random: () => number): number {
  const x = drawGamma(a, random);
  const y = drawGamma(b, random);
  return x + y > 0 ? x / (x + y) : a / (a + b);
}

/** Survival of a distribution at u: the mass strictly beyond it. */
function survivalAt(dist: DurationDistribution, u: number): number {
  let s = 0;
  for (const x of dist.points) if (x.u > u) s += x.p;
  return s;
}

/** Weighted Kaplan–Meier (weights on the censored observations: a running trial counts as a normal one with its weight). */
function weightedKaplanMeier(events: readonly number[], censored: readonly { u: number; w: number }[]): DurationDistribution {
  const obs = [...events.map((u) => ({ u, w: 1, event: true })), ...censored.filter((c) => c.w > 0).map((c) => ({ ...c, event: false }))].sort((a, b) => a.u - b.u || Number(b.event) - Number(a.event));
  let atRisk = obs.reduce((s, o) => s + o.w, 0);
  let survival = 1;
  const points: { u: number; p: number }[] = [];
  for (let i = 0; i < obs.length; ) {
    const u = obs[i].u;
    let d = 0;
    let n = 0;
    for (; i < obs.length && obs[i].u === u; i++) {
      n += obs[i].w;
      if (obs[i].event) d += obs[i].w;
    }
    if (d > 0 && atRisk > 0) {
      const next = survival * (1 - d / atRisk);
      points.push({ u, p: survival - next });
      survival = next;
    }
    atRisk -= n;
  }
  if (survival > 1e-12) points.push({ u: Infinity, p: survival });
  return { points };
}

/** Strength of the Beta prior that pools the tiers' timeout rates toward the overall one: its bounds. */
export const POOLING_STRENGTH_BOUNDS = { min: 2, max: 100 } as const;

/**
 * Partial pooling of per-tier rates (k_t of n_t, fractional counts allowed): the overall rate m and the
 * prior strength n0 of Beta(n0·m, n0·(1 − m)), by the method of moments of the beta-binomial — the spread
 * of the tiers' rates beyond what binomial noise explains is the between-tier variance τ², and
 * n0 = m(1 − m)/τ² − 1. Tiers that differ a lot pool weakly, alike ones strongly; bounded by
 * POOLING_STRENGTH_BOUNDS (at least two trials' worth of pooling, never complete pooling).
 */
export function poolRates(tiers: readonly { k: number; n: number }[]): { m: number; n0: number } {
  const K = tiers.reduce((s, t) => s + t.k, 0);
  const N = tiers.reduce((s, t) => s + t.n, 0);
  // The overall rate with half a pseudo-observation each way (Jeffreys): never 0 or 1.
  const m = (K + 0.5) / (N + 1);
  const used = tiers.filter((t) => t.n > 0);
  if (used.length < 2 || N <= 0) return { m, n0: POOLING_STRENGTH_BOUNDS.max };
  const spread = used.reduce((s, t) => s + t.n * (t.k / t.n - m) ** 2, 0);
  const denom = N - used.reduce((s, t) => s + t.n * t.n, 0) / N;
  const tau2 = denom > 0 ? Math.max(0, (spread - (used.length - 1) * m * (1 - m)) / denom) : 0;
  const n0 = tau2 > 0 ? m * (1 - m) / tau2 - 1 : POOLING_STRENGTH_BOUNDS.max;
  return { m, n0: Math.min(POOLING_STRENGTH_BOUNDS.max, Math.max(POOLING_STRENGTH_BOUNDS.min, n0)) };
}

/** The quantiles of the drawn ends: the estimate and its range. */
export const ETA_QUANTILES = { estimate: 0.5, low: 0.1, high: 0.9 } as const;

/** The ETA (see the file comment); null until a trial has finished. 0 when nothing is left. */
export function estimateRemaining(o: EtaInput): EtaEstimate | null {
  const observed = drawObserved(o);
  const pooled = drawPooled(o);
  if (observed === null || pooled === null) return null;
  // Both models equally likely (the data cannot tell them apart until the young trials of the long tiers
  // have run for a while): the median of their draws together.
  const both = [...observed, ...pooled].sort((a, b) => a - b);
  return {
    remainingSec: quantile(both, ETA_QUANTILES.estimate),
    lowSec: Math.min(quantile(observed, ETA_QUANTILES.low), quantile(pooled, ETA_QUANTILES.low)),
    highSec: Math.max(quantile(observed, ETA_QUANTILES.high), quantile(pooled, ETA_QUANTILES.high)),
  };
}

/**
 * The ends of `o.draws` (400) simulated schedules, sorted: each running trial's remaining time, each
 * pending trial's whole duration — an attempt of a task with finished attempts takes one of theirs; of a
 * task running now, the duration this draw gave that attempt (the same task behaves alike, so a task seen
 * running long queues long); else `fresh` — laid over the free slots. `beginDraw` runs first in each draw.
 */
function simulatedEnds(
  o: EtaInput,
  random: () => number,
  fromSiblings: ReturnType<typeof siblingSampler>,
  draw: { beginDraw?: () => void; remaining: (t: EtaInput["running"][number], j: number) => number; fresh: (t: EtaInput["pending"][number]) => number },
): number[] {
  const ends: number[] = [];
  for (let r = 0; r < (o.draws ?? 400); r++) {
    draw.beginDraw?.();
    const drawnOfTask = new Map<string, number[]>();
    const running = o.running.map((t, j) => {
      const left = draw.remaining(t, j);
      if (t.task !== undefined) drawnOfTask.set(t.task, [...(drawnOfTask.get(t.task) ?? []), t.elapsedSec + left]);
      return left;
    });
    const pending = o.pending.map((t) => {
      const sibling = fromSiblings(t.task, 0, random);
      if (sibling !== null) return sibling;
      const drawn = t.task === undefined ? undefined : drawnOfTask.get(t.task);
      if (drawn?.length) return Math.min(drawn[Math.floor(random() * drawn.length)], t.budgetSec ?? Infinity);
      return draw.fresh(t);
    });
    ends.push(makespan(running, pending, o.concurrency));
  }
  return ends.sort((a, b) => a - b);
}

/**
 * The schedule's remaining times, sorted, when timeouts are placed only where they were seen (the file
 * comment): the estimate. Null until a trial has finished.
 */
export function drawObserved(o: EtaInput): number[] | null {
  if (o.finished.length === 0) return null;
  if (o.running.length === 0 && o.pending.length === 0) return [0];
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
  // A trial that times out runs its agent budget, then the verifier: this share of its whole budget, as
  // the finished timeouts took (their median); the whole budget until one has finished.
  const timeoutShares = timedOut.filter((t) => t.budgetSec !== null && t.budgetSec > 0).map((t) => Math.min(1, t.durationSec / t.budgetSec!)).sort((a, b) => a - b);
  const timeoutShare = timeoutShares.length ? quantile(timeoutShares, 0.5) : 1;

  // Attempts of one task behave alike (the same work, the same timeout): a trial whose task has finished
  // attempts takes one of their durations. Harbor runs attempt by attempt over the tasks, so with k > 1
  // the first attempt has usually ended before the next begins.
  const fromSiblings = siblingSampler(o, (b) => (b !== null && b > 0 ? timeoutShare * b : null));

  const random = seededUniform(o.seed ?? 0);
  return simulatedEnds(o, random, fromSiblings, {
    remaining: remainingOf,
    fresh: (t) => {
      const u = drawBeyond(dist, -Infinity, random) ?? 0;
      if (u !== Infinity) return Math.min(u * scale(t.budgetSec), Math.max(longestWorkSec, u * fallback));
      const own = t.budgetSec ?? tailSec ?? lastEvent * fallback;
      return Math.min(own, tailSec ?? own);
    },
  });

  function remainingOf(t: EtaInput["running"][number], j: number): number {
    const sibling = fromSiblings(t.task, t.elapsedSec, random);
    if (sibling !== null) return sibling - t.elapsedSec;
    const u = drawBeyond(dist, censored[j], random);
    const cap = Math.max(0, (t.budgetSec ?? Infinity) - t.elapsedSec);
    if (u !== null && u !== Infinity) return Math.min((u - censored[j]) * scale(t.budgetSec), cap);
    // In the tail: to the long trials' length (timeouts run their budget); once past that, nothing seen
    // says how much longer, so as long again as it has run (never past its budget).
    // Past every finished trial in budget units it is a timeout in the making: it runs to its budget.
    if (t.budgetSec !== null && t.budgetSec > 0 && censored[j] > lastEvent) return Math.max(0, timeoutShare * t.budgetSec - t.elapsedSec);
    if (tailSec !== null && tailSec > t.elapsedSec) return Math.min(tailSec - t.elapsedSec, cap);
    return Math.min(t.elapsedSec, cap);
  }
}

/**
 * The schedule's remaining times, sorted, when every trial may time out at its tier's rate, partially
 * pooled (the file comment): the range's other model. Null until a trial has finished.
 */
export function drawPooled(o: EtaInput): number[] | null {
  if (o.finished.length === 0) return null;
  if (o.running.length === 0 && o.pending.length === 0) return [0];
  const known = [...o.finished, ...o.running, ...o.pending].map((t) => t.budgetSec).filter((b): b is number => b !== null && b > 0);
  const fallback = known.length ? known.reduce((a, b) => a + b, 0) / known.length : 1;
  const scale = (b: number | null) => (b !== null && b > 0 ? b : fallback);
  // A trial's timeout tier: its budget (trials of unknown budget share one tier).
  const tierOf = (b: number | null) => (b !== null && b > 0 ? b : -1);

  const done = o.finished.filter((t) => !t.timedOut);
  const timedOut = o.finished.filter((t) => t.timedOut);
  const events = done.map((t) => t.durationSec / scale(t.budgetSec));
  const shares = o.running.map((t) => t.elapsedSec / scale(t.budgetSec));
  const longestWorkSec = Math.max(0, ...done.map((t) => t.durationSec), ...o.running.map((t) => t.elapsedSec));
  const timeoutShares = timedOut.filter((t) => t.budgetSec !== null && t.budgetSec > 0).map((t) => Math.min(1, t.durationSec / t.budgetSec!)).sort((a, b) => a - b);
  const timeoutShare = timeoutShares.length ? quantile(timeoutShares, 0.5) : 1;

  // A mixture: a trial either times out (runs its agent budget, then the verifier) or does normal work,
  // whose length in budget units is one distribution for all tiers. Its rate of timing out is its tier's,
  // partially pooled toward the overall rate. Fitted by EM: a running trial is a timeout with the
  // posterior p / (p + (1 − p)·S(u)) given that it has run u (S: the normal work's survival); it informs
  // its tier's rate only as far as a normal trial would have ended by now (1 − S(u)): a young trial says
  // nothing, one that outlived every normal one counts as a timeout.
  const tiers = new Map<number, { k: number; n: number }>();
  const tier = (b: number | null) => {
    const key = tierOf(b);
    if (!tiers.has(key)) tiers.set(key, { k: 0, n: 0 });
    return key;
  };
  for (const t of [...o.finished, ...o.running, ...o.pending]) tier(t.budgetSec);
  // Past every finished normal trial of its tier (m of them), a running trial is the longest normal one
  // of m + 1 exchangeable trials with chance 1/(m + 1): its survival as a normal trial. Otherwise the
  // pooled one at its elapsed share of the budget.
  const normalOfTier = new Map<number, number[]>();
  for (const t of done) normalOfTier.set(tierOf(t.budgetSec), [...(normalOfTier.get(tierOf(t.budgetSec)) ?? []), t.durationSec]);
  const survivalOf = (j: number, u: number): number => {
    const seen = normalOfTier.get(tierOf(o.running[j].budgetSec)) ?? [];
    if (seen.length && o.running[j].elapsedSec > Math.max(...seen)) return Math.min(survivalAt(normal, u), 1 / (seen.length + 1));
    return survivalAt(normal, u);
  };
  let w = o.running.map(() => 0);
  let normal = weightedKaplanMeier(events, shares.map((u) => ({ u, w: 1 })));
  let posterior = new Map<number, { a: number; b: number }>();
  for (let iter = 0; iter < 5; iter++) {
    for (const v of tiers.values()) v.k = v.n = 0;
    for (const t of o.finished) {
      const v = tiers.get(tierOf(t.budgetSec))!;
      v.n += 1;
      if (t.timedOut) v.k += 1;
    }
    const survival = shares.map((u, j) => survivalOf(j, u));
    o.running.forEach((t, j) => {
      const v = tiers.get(tierOf(t.budgetSec))!;
      v.n += 1 - survival[j];
      v.k += (1 - survival[j]) * w[j];
    });
    const { m, n0 } = poolRates([...tiers.values()]);
    posterior = new Map([...tiers].map(([key, v]) => [key, { a: n0 * m + v.k, b: n0 * (1 - m) + v.n - v.k }]));
    w = o.running.map((t, j) => {
      const { a, b } = posterior.get(tierOf(t.budgetSec))!;
      const p = a / (a + b);
      return p / (p + (1 - p) * survival[j]);
    });
    normal = weightedKaplanMeier(events, shares.map((u, j) => ({ u, w: 1 - w[j] })));
  }
  // Normal work beyond everything seen (the KM's open tail): as long as the longest normal work seen, or
  // a running trial's own elapsed time again, never past the budget.
  const fromSiblings = siblingSampler(o, (b) => (b !== null && b > 0 ? timeoutShare * b : null));

  const random = seededUniform(o.seed ?? 0);
  const survivalNow = shares.map((u, j) => survivalOf(j, u));
  // This draw's rate per tier (parameter uncertainty: the same rate for every trial of a tier).
  let rate = new Map<number, number>();
  return simulatedEnds(o, random, fromSiblings, {
    beginDraw: () => void (rate = new Map([...posterior].map(([key, { a, b }]) => [key, drawBeta(a, b, random)]))),
    remaining: (t, j) => remainingOf(t, j, rate.get(tierOf(t.budgetSec))!),
    fresh: (t) => {
      if (random() < rate.get(tierOf(t.budgetSec))!) return timeoutShare * scale(t.budgetSec);
      const u = drawBeyond(normal, -Infinity, random) ?? 0;
      if (u !== Infinity) return Math.min(u * scale(t.budgetSec), Math.max(longestWorkSec, u * fallback));
      return Math.min(longestWorkSec, t.budgetSec ?? Infinity);
    },
  });

  function remainingOf(t: EtaInput["running"][number], j: number, p: number): number {
    const sibling = fromSiblings(t.task, t.elapsedSec, random);
    if (sibling !== null) return sibling - t.elapsedSec;
    const cap = Math.max(0, (t.budgetSec ?? Infinity) - t.elapsedSec);
    const s = survivalNow[j];
    const isTimeout = s <= 0 || random() < p / (p + (1 - p) * s);
    if (isTimeout) return Math.max(0, Math.min(timeoutShare * scale(t.budgetSec) - t.elapsedSec, cap));
    const u = drawBeyond(normal, shares[j], random);
    if (u !== null && u !== Infinity) return Math.min((u - shares[j]) * scale(t.budgetSec), cap);
    return Math.min(Math.max(longestWorkSec - t.elapsedSec, t.elapsedSec), cap);
  }
}
