// The rehearsal's measurements on hand-made trials whose answers are known.
import { describe, expect, it } from "vitest";
import type { TrialInput } from "../../../results/audit";
import { auditMismatches, countRows, endWithoutStop, estimatesOfReport, estimatorErrors, etaErrors, expectedCounts, overheadOutsideAgentAndVerifier, throughput } from "../../../sim/rehearsal/measure";
import type { StatusReport } from "../../../results/status";
import type { AuditReport } from "../../../results/schema";

const t0 = Date.parse("2026-12-01T10:00:00Z");
const at = (sec: number) => new Date(t0 + sec * 1000).toISOString();
function trial(task: string, start: number, end: number, agent: number | null, verifier: number | null): TrialInput {
  return {
    job: "j",
    trial: `${task}__1`,
    path: `j/${task}__1`,
    task,
    startedAt: at(start),
    finishedAt: at(end),
    reward: 1,
    exceptionType: null,
    exceptionMessage: null,
    tokens: { input: 0, cache: 0, output: 0, costUsd: null },
    phases: { environmentSetup: null, agentSetup: null, agentExecution: agent, verifier },
    durationSec: end - start,
    config: null,
  };
}

describe("throughput", () => {
  it("makespan from first start to last end; lower bound max(longest, Σ/concurrency)", () => {
    const trials = [trial("a", 0, 100, 80, 10), trial("b", 0, 40, 30, 5), trial("c", 40, 100, 50, 5)];
    const r = throughput(trials, 2);
    expect(r.makespanSec).toBe(100);
    expect(r.lowerBoundSec).toBe(100); // longest 100 > 200/2
    expect(throughput(trials, 1).lowerBoundSec).toBe(200);
    expect(r.trialsPerMinute).toBeCloseTo(1.8);
  });
  it("no trials: zeros, not NaN", () => {
    expect(throughput([], 25)).toEqual({ trials: 0, makespanSec: 0, lowerBoundSec: 0, longestTrialSec: 0, trialsPerMinute: 0 });
  });
});

describe("overhead", () => {
  it("duration minus agent and verifier time", () => {
    const r = overheadOutsideAgentAndVerifier([trial("a", 0, 100, 80, 10), trial("b", 0, 40, 30, 5), trial("c", 0, 20, null, null)]);
    expect(r).toEqual({ trials: 2, meanSec: 7.5, p50Sec: 5, maxSec: 10 });
  });
});

describe("eta errors", () => {
  it("positive when the job ended later than status said, relative to the time that was left", () => {
    const [a, b] = etaErrors([{ fraction: 0.25, takenAt: at(100), finishAt: at(300) }, { fraction: 0.5, takenAt: at(200), finishAt: null }], at(400));
    expect(a).toEqual({ fraction: 0.25, errorSec: 100, errorOfRemaining: 100 / 300 });
    expect(b.errorSec).toBeNull();
  });
});

describe("audit against the ground truth", () => {
  const report = {
    tasks: [
      { task: "a", trials: [{ reward: 1, exceptionType: null, path: "j/a__1" }] },
      { task: "b", trials: [{ reward: 0, exceptionType: "AgentTimeoutError", path: "j/b__1" }] },
      { task: "x", trials: [{ reward: 1, exceptionType: null, path: "j/x__1" }] },
    ],
    scores: { raw: { passed: 2, failed: 1, errored: 0 }, corrected: { passed: 2, failed: 1, errored: 0 } },
  } as unknown as AuditReport;
  it("names each task whose counted trial differs, and tasks on one side only", () => {
    const m = auditMismatches(report, [
      { task: "a", reward: 1, exception: null, corrected: "passed" },
      { task: "b", reward: 1, exception: "AgentTimeoutError", corrected: "passed" },
      { task: "c", reward: null, exception: "RuntimeError", corrected: "failed" },
    ]);
    expect(m).toEqual([
      { task: "b", expected: "reward 1, AgentTimeoutError", got: "reward 0, AgentTimeoutError (j/b__1)" },
      { task: "c", expected: "reward none, RuntimeError", got: "no counted trial" },
      { task: "x", expected: "not in the dataset", got: "1 counted trial(s)" },
    ]);
  });
  it("counts raw and corrected the audit's way", () => {
    const truth = [
      { task: "a", reward: 1, exception: null, corrected: "passed" as const },
      { task: "c", reward: null, exception: "VerifierTimeoutError", corrected: "passed" as const },
    ];
    expect(expectedCounts(truth, false)).toEqual({ passed: 1, failed: 0, errored: 1, byException: { VerifierTimeoutError: 1 } });
    expect(expectedCounts(truth, true)).toMatchObject({ passed: 2, errored: 0 });
    const rows = countRows(expectedCounts(truth, false), expectedCounts(truth, false));
    expect(rows.every((r) => r.equal)).toBe(true);
    expect(rows.map((r) => r.what)).toEqual(["passed", "failed", "errored", "VerifierTimeoutError"]);
  });
});

describe("old and new estimator from one status report (bench/rehearsal.ts)", () => {
  const report = (over: Partial<StatusReport>): StatusReport =>
    ({
      generatedAt: "2026-01-01T00:00:00.000Z",
      trials: { pending: 4 },
      running: [{ elapsedSec: 100 }, { elapsedSec: 500 }],
      eta: { remainingSec: 3000, meanTrialSec: 600, concurrency: 4 },
      ...over,
    }) as unknown as StatusReport;

  it("recomputes the old estimate from the report's figures and takes the new one as printed", () => {
    // Old: (600−100) + (600−500) + 4 × 600 = 3000 s of work over 4 slots = 750 s, at least one trial (600 s).
    expect(estimatesOfReport(report({}), 0.25)).toEqual({ fraction: 0.25, takenAt: "2026-01-01T00:00:00.000Z", oldSec: 750, newSec: 3000 });
    expect(estimatesOfReport(report({ eta: null }), 0.5)).toMatchObject({ oldSec: null, newSec: null });
  });

  it("errors as a share of the time left, positive when the job ended later", () => {
    const rows = estimatorErrors([{ fraction: 0.25, takenAt: "2026-01-01T00:00:00.000Z", oldSec: 750, newSec: 3300 }], "2026-01-01T00:50:00.000Z");
    expect(rows[0].fraction).toBe(0.25);
    expect(rows[0].old).toBeCloseTo((3000 - 750) / 3000, 10);
    expect(rows[0].new).toBeCloseTo(-0.1, 10);
    expect(estimatorErrors([{ fraction: 1, takenAt: "2026-01-01T01:00:00.000Z", oldSec: 1, newSec: null }], "2026-01-01T00:50:00.000Z")).toEqual([{ fraction: 1, old: null, new: null }]);
  });
});

describe("endWithoutStop", () => {
  // Harbor's timestamps carry no zone (UTC). The stop at 10:10; the resume began at 10:11 (60 s idle).
  const at = (hm: string) => `2026-12-06T${hm}:00.000000`;
  const stop = { stoppedAt: "2026-12-06T10:10:00.000Z", idleMs: 60_000 };
  it("a rerun of a cut trial counts from the cut trial's start; a trial not started by the stop moves back by the idle time", () => {
    const trials = [
      { task: "done-early", startedAt: at("10:00"), finishedAt: at("10:05") },
      // Cut at 10:10 after 8 minutes; the rerun took 12 minutes from 10:11: 10:02 + 12 min.
      { task: "long", startedAt: at("10:11"), finishedAt: at("10:23") },
      // Pending at the stop, started by the resume: 10:12–10:15, one idle minute earlier.
      { task: "pending", startedAt: at("10:12"), finishedAt: at("10:15") },
    ];
    expect(endWithoutStop(trials, { ...stop, cut: [{ task: "long", startedAt: at("10:02") }] })).toBe("2026-12-06T10:14:00.000Z");
    // Without knowing the cut start, the rerun only moves back by the idle time.
    expect(endWithoutStop(trials, { ...stop, cut: [] })).toBe("2026-12-06T10:22:00.000Z");
  });
  it("cut attempts of one task pair with its reruns in start order; null without finished trials", () => {
    const trials = [
      { task: "t", startedAt: at("10:11"), finishedAt: at("10:13") },
      { task: "t", startedAt: at("10:12"), finishedAt: at("10:20") },
    ];
    const cut = [{ task: "t", startedAt: at("10:08") }, { task: "t", startedAt: at("10:01") }];
    // 10:01 + 2 min, 10:08 + 8 min.
    expect(endWithoutStop(trials, { ...stop, cut })).toBe("2026-12-06T10:16:00.000Z");
    expect(endWithoutStop([{ task: "t", startedAt: at("10:01"), finishedAt: null }], { ...stop, cut })).toBeNull();
  });
  it("a cut trial ran at least until the stop: a rerun in the emptier resume that is quicker than its run so far does not end it earlier", () => {
    const trials = [{ task: "slow", startedAt: at("10:11"), finishedAt: at("10:14") }];
    // 10:02 + 3 min would be 10:05, but it was still running at 10:10.
    expect(endWithoutStop(trials, { ...stop, cut: [{ task: "slow", startedAt: at("10:02") }] })).toBe("2026-12-06T10:10:00.000Z");
  });
  it("a cut trial that runs into its agent timeout ends that long after its agent began, plus what the finished timeouts took after theirs", () => {
    const phases = (setup: number, agent: number) => ({ environmentSetup: setup / 2, agentSetup: setup / 2, agentExecution: agent, verifier: null });
    const timedOut = (task: string, startMin: number, afterSec: number) => ({
      task,
      startedAt: at(`10:0${startMin}`),
      finishedAt: new Date(Date.parse(`${at(`10:0${startMin}`)}Z`) + (60 + 600 + afterSec) * 1000).toISOString(),
      exceptionType: "AgentTimeoutError",
      durationSec: 60 + 600 + afterSec,
      phases: phases(60, 600),
    });
    // Two finished timeouts: 60 s of setup, the 600 s agent budget, then 100 and 140 s (median 120 s).
    const trials = [
      timedOut("t1", 0, 100),
      timedOut("t2", 0, 140),
      // The reruns of the cut trials, quick in the resume.
      { task: "cut-in-agent", startedAt: at("10:11"), finishedAt: at("10:12") },
      { task: "cut-in-setup", startedAt: at("10:11"), finishedAt: at("10:12") },
    ];
    const cut = [
      { task: "cut-in-agent", startedAt: at("10:02"), agentStartedAt: at("10:03") },
      // Still in setup at the stop: its agent is taken to begin after the median setup (60 s).
      { task: "cut-in-setup", startedAt: at("10:09"), agentStartedAt: null },
    ];
    const agentTimeoutSec = (task: string) => (task.startsWith("cut-") ? 600 : null);
    // 10:09 + 1 min + 10 min + 2 min = 10:22 (the other: 10:03 + 12 min = 10:15).
    expect(endWithoutStop(trials, { ...stop, cut, agentTimeoutSec })).toBe("2026-12-06T10:22:00.000Z");
    expect(endWithoutStop(trials, { ...stop, cut: cut.slice(0, 1), agentTimeoutSec })).toBe("2026-12-06T10:15:00.000Z");
    // Without the ground truth's timeouts: from their reruns, at least until the stop (10:10); t2's end is later.
    expect(endWithoutStop(trials, { ...stop, cut })).toBe("2026-12-06T10:13:20.000Z");
  });
});
