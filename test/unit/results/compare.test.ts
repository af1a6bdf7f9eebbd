// results/compare.ts on two generated Harbor 0.21 jobs (89 tasks × 5 attempts, 3× vs 6×) with known flips
// and infra errors: every flip found by cause, McNemar's b, c, p against the exact binomial sum written
// out, the bootstrap CI deterministic by seed and around the true difference; plus the statistics alone.
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JobInput } from "../../../results/audit";
import { binomialCdfHalf, compareRuns, type CompareSide, type Comparison, DifferentTasksError, mcnemarExact, pairedBootstrap, quantileSorted, renderCompareMarkdown, runConditions } from "../../../results/compare";
import { renderCompareHtml } from "../../../results/compare-html";
import { runCost } from "../../../results/cost";
import { auditDirs, readJob } from "../../../results/load";
import { findManifest } from "../../../results/manifest";
import { tempDir } from "../../fixtures/results/build";
import { comparePlan, writeCompareJobs, writeCompareSide } from "./compare-fixture";

const side = (dir: string): CompareSide => {
  const jobs = [readJob(dir)];
  const manifest = findManifest([dir])?.data ?? null;
  return { jobs: jobs.map((j) => j.name), audit: auditDirs([dir]), conditions: runConditions(jobs, manifest), cost: runCost(jobs, manifest) };
};

let root: string;
let dirs: { a: string; b: string };
let A: CompareSide;
let B: CompareSide;
let c: Comparison;
const plan = comparePlan();
const tasksOf = (group: string) => [...plan].filter(([, p]) => p.group === group).map(([t]) => t);

beforeAll(() => {
  root = tempDir("reprobench-compare-");
  dirs = writeCompareJobs(path.join(root, "jobs"));
  A = side(dirs.a);
  B = side(dirs.b);
  c = compareRuns(A, B, { now: new Date("2026-09-02T00:00:00Z") });
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe("compareRuns on 89 tasks × 5 attempts, 3× vs 6×", () => {
  it("matches every task and finds every flip, grouped by cause", () => {
    expect(c.tasks).toHaveLength(89);
    expect(c.a).toMatchObject({ jobs: ["tb21-3x"], tasks: 89 });
    for (const g of ["timeout → pass", "fail → pass", "infra → pass", "pass → fail", "pass → timeout", "pass → infra"] as const) {
      expect(c.flips.byCause[g], g).toEqual(tasksOf(g));
    }
    expect(c.flips.failToPass).toEqual([...tasksOf("timeout → pass"), ...tasksOf("fail → pass"), ...tasksOf("infra → pass")].sort());
    expect(c.flips.passToFail).toEqual([...tasksOf("pass → fail"), ...tasksOf("pass → timeout"), ...tasksOf("pass → infra")].sort());
    // No flip where the plan has none, including the tasks whose mean moved (0.6 → 0.8).
    for (const t of c.tasks) expect(t.flip ?? "same", t.task).toBe(plan.get(t.task)!.group.startsWith("same") ? "same" : plan.get(t.task)!.group);
    const moved = c.tasks.find((t) => t.task === tasksOf("same: pass (moved)")[0])!;
    expect(moved).toMatchObject({ a: { outcome: "passed", reward: 0.6, exception: "SandboxError" }, b: { outcome: "passed", reward: 0.8 } });
    const timedOut = c.tasks.find((t) => t.task === tasksOf("timeout → pass")[0])!;
    expect(timedOut.a).toMatchObject({ outcome: "failed", reward: 0.2, cause: "timeout", exception: "AgentTimeoutError ×4", attempts: 5, passedAttempts: 1 });
    expect(c.notes.join("\n")).toContain("3 flip(s) are infra/setup/cancelled errors");
  });

  it("McNemar: b = 4 pass → fail, c = 13 fail → pass, p from the exact binomial sum", () => {
    // p = 2 · P(X ≤ 4), X ~ Binomial(17, 1/2) = 2 · (C(17,0) + C(17,1) + C(17,2) + C(17,3) + C(17,4)) / 2^17
    const tail = 1 + 17 + 136 + 680 + 2380; // = 3214
    const p = (2 * tail) / 2 ** 17; // = 0.049041748046875
    expect(c.mcnemar.b).toBe(4);
    expect(c.mcnemar.c).toBe(13);
    expect(c.mcnemar.p).toBeCloseTo(p, 12);
    expect(p).toBe(0.049041748046875);
    console.log(`McNemar: b=${c.mcnemar.b} c=${c.mcnemar.c} p=${c.mcnemar.p} (hand: ${p})`);
  });

  it("bootstrap: B − A = 4.4/89, its 95% CI holds it, the same for the same seed", () => {
    // Σ per-task differences: 8·0.6 + 3·0.2 + 2·0.8 − 2·0.8 − 0.8 − 0.6 + 2·0.2 = 4.4.
    const truth = 4.4 / 89;
    expect(c.bootstrap.diff).toBeCloseTo(truth, 12);
    expect(c.bootstrap).toMatchObject({ level: 0.95, resamples: 10_000, seed: 0 });
    expect(c.bootstrap.lo!).toBeLessThan(truth);
    expect(c.bootstrap.hi!).toBeGreaterThan(truth);
    expect(c.a.meanReward! + truth).toBeCloseTo(c.b.meanReward!, 12);
    // Independent check: the normal approximation (sd over tasks, n = 89) diff ± 1.96·sd/√n lands within Monte Carlo error of it.
    const d = c.tasks.map((t) => t.b.reward - t.a.reward);
    const sd = Math.sqrt(d.reduce((s, x) => s + (x - truth) ** 2, 0) / d.length);
    const half = (1.96 * sd) / Math.sqrt(d.length);
    expect(Math.abs(c.bootstrap.lo! - (truth - half))).toBeLessThan(0.01);
    expect(Math.abs(c.bootstrap.hi! - (truth + half))).toBeLessThan(0.01);
    const again = compareRuns(A, B, { now: new Date("2026-09-02T00:00:00Z") });
    expect(again.bootstrap).toEqual(c.bootstrap);
    const other = compareRuns(A, B, { seed: 7 });
    expect(Math.abs(other.bootstrap.lo! - c.bootstrap.lo!)).toBeLessThan(0.005);
    console.log(`bootstrap: diff=${c.bootstrap.diff} 95% CI [${c.bootstrap.lo}, ${c.bootstrap.hi}] (normal approx. [${truth - half}, ${truth + half}]); seed 7: [${other.bootstrap.lo}, ${other.bootstrap.hi}]`);
  });

  it("the pass threshold decides the flips (and says so)", () => {
    const strict = compareRuns(A, B, { passThreshold: 0.7 });
    // At 0.7, fail → pass (0.4 → 0.6) is no flip; pass → timeout (0.8 → 0) still is.
    expect(strict.flips.byCause["fail → pass"]).toEqual([]);
    expect(strict.flips.byCause["pass → timeout"]).toEqual(tasksOf("pass → timeout"));
    expect(strict.passRule).toContain("≥ 0.7");
  });

  it("run conditions side by side: only the agent timeout multiplier differs", () => {
    const differing = c.conditions.filter((r) => r.differs);
    expect(differing).toEqual([{ field: "agent_timeout_multiplier", a: "3", b: "6", differs: true }]);
    const row = (f: string) => c.conditions.find((r) => r.field === f)!;
    expect(row("model").a).toBe("openai/Qwen/Qwen3.8-27B");
    expect(row("sampling: temperature")).toMatchObject({ a: "1", b: "1" });
    expect(row("dataset commit").a).toBe("5f1c0ffee5f1c0ffee5f1c0ffee5f1c0ffee5f1c");
    expect(row("attempts per task").a).toBe("5");
    expect(c.conditions.some((r) => r.field.includes("api_base"))).toBe(false);
  });

  it("cost: wall time, trial time by phase, tokens by outcome, GPU-hours from the manifest", () => {
    const cost = c.cost.b!;
    expect(cost.trials).toBe(445);
    const jobB = readJob(dirs.b);
    const sum = jobB.trials.reduce((s, t) => s + t.durationSec!, 0);
    expect(cost.trialSecSum).toBeCloseTo(sum, 6);
    const p = cost.phaseSec;
    expect(p.environmentSetup + p.agentSetup + p.agentExecution + p.verifier + p.other).toBeCloseTo(sum, 3);
    expect(cost.tokens.total.input).toBe(cost.tokens.passed.input + cost.tokens.failed.input + cost.tokens.errored.input);
    expect(cost.tokens.errored.input).toBeGreaterThan(0); // the SandboxErrors
    expect(cost.gpu.hosts).toEqual([{ name: "worker-a", gpus: 8 }, { name: "worker-b", gpus: 8 }]);
    expect(cost.gpu.gpuHours).toBeCloseTo((16 * cost.wallSec!) / 3600, 9);
    expect(cost.tokensPerGpuHour!.output).toBeCloseTo(cost.tokens.total.output / cost.gpu.gpuHours!, 6);
    expect(runCost([jobB], null).gpu).toEqual({ hosts: null, gpuHours: null, note: "unknown: no run manifest (it names the hosts and their GPUs)" });
  });

  it("markdown and html label both statistics; the page is offline", () => {
    const text = renderCompareMarkdown(c);
    expect(text).toContain("McNemar's exact test (pass/fail per task; a task passes when its mean reward over its counted attempts is ≥ 0.5 (a missing reward counts 0)): b = 4 pass → fail, c = 13 fail → pass, two-sided p = 0.0490");
    expect(text).toMatch(/Paired bootstrap, mean-reward difference B − A over 89 tasks \(attempts averaged per task first\): \+0\.0494, 95% CI \[[+-]0\.\d{4}, \+0\.\d{4}\] \(percentile interval, 10000 resamples, seed 0\)/);
    expect(text).toContain("### timeout → pass (8)");
    expect(text).toContain("| agent_timeout_multiplier | 3 | 6 | **differs** |");
    expect(text).toContain("| GPU-hours (GPUs × wall hours) |");
    const html = renderCompareHtml(c, "/*chart.js*/");
    expect(html).toContain("default-src 'none'");
    expect(html).toContain('<canvas id="chart-flips">');
    expect(html).toContain('<canvas id="chart-durations">');
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href=/);
    const data = JSON.parse(/<script type="application\/json" id="compare-data">(.*?)<\/script>/s.exec(html)![1]);
    expect(data.tasks).toHaveLength(89);
    expect(data.groups.find((g: { group: string }) => g.group === "timeout → pass").count).toBe(8);
  });
});

describe("different task sets", () => {
  it("are refused naming --allow-different-tasks, else the intersection is compared and the rest named", () => {
    const b = side(writeCompareSide(path.join(root, "jobs"), "b", { name: "tb21-6x-without-003", skip: ["task-003"] }));
    expect(() => compareRuns(A, b)).toThrow(DifferentTasksError);
    expect(() => compareRuns(A, b)).toThrow(/1 task\(s\) only in A \(task-003\).*--allow-different-tasks to compare the 88 task\(s\) both have/);
    const r = compareRuns(A, b, { allowDifferentTasks: true });
    expect(r.tasks).toHaveLength(88);
    expect(r.leftOut).toEqual({ onlyA: ["task-003"], onlyB: [] });
    expect(r.notes[0]).toContain("compared the 88 task(s) both have; left out 1");
  });
});

describe("the statistics", () => {
  it("a local checkout's path is no condition: two stacks' checkouts of one commit do not differ", () => {
    const job = (stack: string): JobInput => ({
      name: `j-${stack}`, dir: `/jobs/j-${stack}`, result: null, trials: [], incompleteTrialDirs: [], warnings: [],
      config: { datasets: [{ path: `/var/lib/reprobench/datasets/reprobench.${stack}` }] } as JobInput["config"],
    });
    const manifest = { dataset: { identity: "b1284a5f842085d4a89e2855df0179f944db89cd" } };
    const a = runConditions([job("dev")], manifest);
    const b = runConditions([job("prod")], manifest);
    expect(a.dataset).toBe("local checkout");
    expect(b.dataset).toBe(a.dataset);
    expect(a["dataset commit"]).toBe("b1284a5f842085d4a89e2855df0179f944db89cd");
    // A different commit still shows as one.
    expect(runConditions([job("prod")], { dataset: { identity: "0".repeat(40) } })["dataset commit"]).not.toBe(a["dataset commit"]);
  });

  it("binomial CDF and McNemar edge cases", () => {
    expect(binomialCdfHalf(0, 1)).toBe(0.5);
    expect(binomialCdfHalf(2, 4)).toBeCloseTo(11 / 16, 15); // (1 + 4 + 6) / 16
    expect(binomialCdfHalf(5, 5)).toBe(1);
    expect(mcnemarExact(0, 0)).toEqual({ b: 0, c: 0, p: 1 });
    expect(mcnemarExact(3, 3).p).toBe(1); // 2 · P(X ≤ 3 | n = 6) = 2 · 42/64 > 1
    expect(mcnemarExact(0, 6).p).toBeCloseTo(2 / 64, 15);
    expect(mcnemarExact(6, 0).p).toBe(mcnemarExact(0, 6).p);
    // Large n stays finite: P(X ≤ 400 | n = 1000) is tiny but not NaN.
    expect(Number.isFinite(mcnemarExact(400, 600).p)).toBe(true);
    expect(mcnemarExact(400, 600).p).toBeLessThan(1e-9);
  });

  it("quantiles interpolate; the bootstrap of a constant is that constant", () => {
    expect(quantileSorted([0, 10], 0.25)).toBe(2.5);
    expect(quantileSorted([1, 2, 3, 4, 5], 0.5)).toBe(3);
    expect(pairedBootstrap([0.25, 0.25, 0.25], { seed: 1, resamples: 200, level: 0.9 })).toEqual({ diff: 0.25, lo: 0.25, hi: 0.25 });
    expect(pairedBootstrap([], { seed: 1, resamples: 200, level: 0.9 })).toEqual({ diff: null, lo: null, hi: null });
  });
});
