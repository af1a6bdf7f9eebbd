// The ETA's second model (results/eta.ts drawPooled): per-tier timeout rates partially pooled toward the
// overall one, learnt from finished trials and from running ones that outlived their tier's normal ones,
// and the range it widens.
import { describe, expect, it } from "vitest";
import { drawBeta, drawObserved, drawPooled, estimateRemaining, type EtaInput, poolRates, POOLING_STRENGTH_BOUNDS } from "../../../results/eta";
import { seededUniform } from "../../../results/random";

const normals = (n: number, budgetSec: number, from: number, step: number) => Array.from({ length: n }, (_, i) => ({ durationSec: from + step * i, budgetSec }));
const timeouts = (n: number, budgetSec: number) => Array.from({ length: n }, () => ({ durationSec: budgetSec, budgetSec, timedOut: true }));
/** The share of draws in which the one trial left runs (nearly) to its budget. */
const timeoutShare = (draws: readonly number[], atLeastSec: number) => draws.filter((d) => d >= atLeastSec).length / draws.length;

describe("poolRates: the Beta prior's mean and strength from the tiers' spread", () => {
  it("pools tiers that differ no more than binomial noise completely (the upper bound), and the mean is the overall rate", () => {
    const r = poolRates([{ k: 10, n: 100 }, { k: 11, n: 100 }, { k: 9, n: 100 }]);
    expect(r.m).toBeCloseTo(30.5 / 301, 10);
    expect(r.n0).toBe(POOLING_STRENGTH_BOUNDS.max);
  });

  it("pools tiers that plainly differ weakly, never below the lower bound", () => {
    const apart = poolRates([{ k: 0, n: 50 }, { k: 25, n: 50 }]);
    expect(apart.n0).toBeLessThan(10);
    expect(apart.n0).toBeGreaterThanOrEqual(POOLING_STRENGTH_BOUNDS.min);
    // Some spread between the two: the strength lies inside the bounds.
    const some = poolRates([{ k: 5, n: 100 }, { k: 15, n: 100 }, { k: 10, n: 100 }]);
    expect(some.n0).toBeGreaterThan(apart.n0);
    expect(some.n0).toBeLessThan(POOLING_STRENGTH_BOUNDS.max);
  });

  it("with one tier, or none, pools completely and the rate is never 0", () => {
    expect(poolRates([{ k: 0, n: 10 }])).toEqual({ m: 0.5 / 11, n0: POOLING_STRENGTH_BOUNDS.max });
    expect(poolRates([])).toEqual({ m: 0.5, n0: POOLING_STRENGTH_BOUNDS.max });
  });
});

describe("drawBeta", () => {
  it.each([
    [2, 8],
    [0.3, 3],
    [40, 10],
  ])("Beta(%d, %d): the draws' mean and variance are the distribution's", (a, b) => {
    const random = seededUniform(7);
    const xs = Array.from({ length: 20000 }, () => drawBeta(a, b, random));
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    const variance = xs.reduce((s, x) => s + (x - mean) ** 2, 0) / xs.length;
    const trueVar = (a * b) / ((a + b) ** 2 * (a + b + 1));
    expect(mean).toBeCloseTo(a / (a + b), 2);
    expect(Math.abs(variance - trueVar) / trueVar).toBeLessThan(0.08);
    for (const x of xs) expect(x >= 0 && x <= 1).toBe(true);
  });
});

describe("drawPooled: each trial times out at its tier's pooled rate", () => {
  // Tier A (budget 1000): 20 normal trials, no timeout. Tier B (1100): 10 normal, 10 timeouts.
  const finished = [...normals(20, 1000, 100, 10), ...normals(10, 1100, 100, 10), ...timeouts(10, 1100)];
  const pendingOf = (budgetSec: number): EtaInput => ({ concurrency: 4, finished, running: [], pending: [{ budgetSec }] });

  it("a pending trial of a tier that timed out often times out often; one that never did rarely; an unseen tier's at the overall rate", () => {
    const a = timeoutShare(drawPooled(pendingOf(1000))!, 900);
    const b = timeoutShare(drawPooled(pendingOf(1100))!, 1000);
    const c = timeoutShare(drawPooled({ ...pendingOf(3000), draws: 2000 })!, 2900);
    expect(a).toBeLessThan(0.06);
    expect(b).toBeGreaterThan(0.35);
    expect(b).toBeLessThan(0.6);
    // The overall rate is 10.5 / 41 ≈ 0.26.
    expect(c).toBeGreaterThan(0.18);
    expect(c).toBeLessThan(0.34);
    // The first model places no timeout on a tier where none was seen, and no longer than any trial seen.
    expect(Math.max(...drawObserved(pendingOf(3000))!)).toBeLessThanOrEqual(1100);
  });

  it("a running trial past every normal one of its tier is taken for a timeout; a young one mostly not", () => {
    const running = (elapsedSec: number): EtaInput => ({ concurrency: 4, finished, running: [{ elapsedSec, budgetSec: 1100 }], pending: [], draws: 1000 });
    // Past all 10 normal trials of tier B (100–190 s), though not past tier A's in budget units (they run
    // 100–790 s of 1000): its own tier's say it is a timeout unless it is their longest normal one.
    const longA = [...normals(20, 1000, 100, 36), ...normals(10, 1100, 100, 10), ...timeouts(10, 1100)];
    const old = drawPooled({ ...running(300), finished: longA })!;
    expect(timeoutShare(old, 1100 - 300 - 1)).toBeGreaterThan(0.85);
    // Young: a timeout at about the tier's rate, else a normal trial's remaining time.
    const young = drawPooled(running(50))!;
    const share = timeoutShare(young, 1000);
    expect(share).toBeGreaterThan(0.3);
    expect(share).toBeLessThan(0.65);
    expect(young[Math.floor(young.length * 0.2)]).toBeLessThan(200);
  });

  it("learns from a running trial that outlived its tier's normal ones: the tier's pending trials time out more often", () => {
    // Tier A with 5 of its trials running far past its 20 normal ones (100–290 s of a 1000 s budget).
    const base: EtaInput = { concurrency: 8, finished, running: [], pending: [{ budgetSec: 1000 }], draws: 2000 };
    // (8 slots: the pending trial starts now; a normal draw past everything seen ends by 600 s.)
    const withLong: EtaInput = { ...base, running: Array.from({ length: 5 }, () => ({ elapsedSec: 600, budgetSec: 1000 })) };
    const before = timeoutShare(drawPooled(base)!, 900);
    const after = timeoutShare(drawPooled(withLong)!, 900);
    expect(before).toBeLessThan(0.06);
    expect(after).toBeGreaterThan(0.15);
  });
});

describe("estimateRemaining: both models' median, and the range of either", () => {
  const input: EtaInput = {
    concurrency: 2,
    finished: [...normals(10, 1000, 100, 10), ...timeouts(3, 1000)],
    running: [{ elapsedSec: 50, budgetSec: 1000 }],
    // A long tier where nothing was seen yet: the pooled model lets it time out.
    pending: [{ budgetSec: 1000 }, { budgetSec: 20000 }, { budgetSec: 20000 }],
  };

  it("is seeded, its range holds both models' 10th–90th percentiles and the estimate lies between their medians", () => {
    const e = estimateRemaining(input)!;
    expect(estimateRemaining(input)).toEqual(e);
    const observed = drawObserved(input)!;
    const pooled = drawPooled(input)!;
    const q = (xs: number[], p: number) => xs[Math.round(p * (xs.length - 1))];
    expect(e.highSec).toBeGreaterThanOrEqual(Math.max(q(observed, 0.9), q(pooled, 0.9)) - 1e-9);
    expect(e.lowSec).toBeLessThanOrEqual(Math.min(q(observed, 0.1), q(pooled, 0.1)) + 1e-9);
    expect(e.remainingSec).toBeGreaterThanOrEqual(Math.min(q(observed, 0.5), q(pooled, 0.5)) - 1e-9);
    expect(e.remainingSec).toBeLessThanOrEqual(Math.max(q(observed, 0.5), q(pooled, 0.5)) + 1e-9);
    // The long tier's possible timeouts reach the range, not the first model's.
    expect(q(pooled, 0.9)).toBeGreaterThan(10000);
    expect(q(observed, 0.9)).toBeLessThan(3000);
    expect(e.highSec).toBeGreaterThan(10000);
  });

  it("nothing left: 0; nothing finished: none", () => {
    expect(estimateRemaining({ ...input, running: [], pending: [] })).toEqual({ remainingSec: 0, lowSec: 0, highSec: 0 });
    expect(estimateRemaining({ ...input, finished: [] })).toBeNull();
    expect(drawPooled({ ...input, finished: [] })).toBeNull();
  });
});
