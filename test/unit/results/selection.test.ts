// Issue 13: which trial counts when passes disagree. A later infra error or cancellation never displaces
// a genuine result; a genuine result always displaces an older one; timestamps compare as instants.
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { audit as auditCommand } from "../../../cli/commands/audit";
import { report as reportCommand } from "../../../cli/commands/report";
import { auditDirs } from "../../../results/load";
import { parseOverrides } from "../../../results/overrides";
import { AuditReport, AuditReportSchema } from "../../../results/schema";
import { GENUINE_FIRST_OVERRIDES, tempDir, writeAttemptSlotsScenario, writeGenuineFirstScenario } from "../../fixtures/results/build";

let root: string;
let dirs: string[];
let report: AuditReport;
beforeAll(() => {
  root = tempDir();
  dirs = writeGenuineFirstScenario(path.join(root, "jobs"));
  report = auditDirs(dirs, { overrides: parseOverrides(GENUINE_FIRST_OVERRIDES, "verdicts.yaml"), now: new Date("2026-09-01T00:00:00Z") });
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

const taskOf = (r: AuditReport, task: string) => {
  const t = r.tasks.find((x) => x.task === task);
  if (!t) throw new Error(`no task ${task}`);
  return t;
};
const jobOf = (p: string | null): string | null => (p === null ? null : p.split("/")[0]);

// task → the counted trial's job, outcome, exception, scored; then each superseded trial's job, reason and
// the job of the trial that took (or kept) its slot.
const EXPECTED: [string, string, string, string | null, boolean, [string, string, string | null][]][] = [
  ["cancelled-then-timeout", "pass1-mopup", "errored", "AgentTimeoutError", true, [["pass1", "replaced-by-newer", "pass1-mopup"]]],
  ["fail-then-docker", "pass1", "failed", null, true, [["pass1-mopup", "unscored-after-genuine", "pass1"]]],
  ["fail-then-internal", "pass1", "failed", "AgentTimeoutError", true, [["pass1-rerun", "unscored-after-genuine", "pass1"]]],
  ["infra-by-logs", "pass1", "passed", null, true, [["pass1-mopup", "unscored-after-genuine", "pass1"]]],
  ["infra-then-infra", "pass1-mopup", "errored", "ReadTimeout", false, [["pass1", "replaced-by-newer", "pass1-mopup"]]],
  ["infra-then-pass", "pass1-rerun", "passed", null, true, [["pass1", "replaced-by-newer", "pass1-rerun"]]],
  ["offsets-rerun-earlier", "pass1", "passed", null, true, [["pass1-rerun", "replaced-by-newer", "pass1"]]],
  ["offsets-rerun-later", "pass1-rerun", "failed", null, true, [["pass1", "replaced-by-newer", "pass1-rerun"]]],
  ["pass-then-agent-error", "pass1-mopup", "errored", "NonZeroAgentExitCodeError", true, [["pass1", "replaced-by-newer", "pass1-mopup"]]],
  ["pass-then-cancelled", "pass1", "passed", null, true, [["pass1-mopup", "unscored-after-genuine", "pass1"]]],
  ["pass-then-fail", "pass1-rerun", "failed", null, true, [["pass1", "replaced-by-newer", "pass1-rerun"]]],
  ["pass-then-network", "pass1", "passed", null, true, [["pass1-rerun", "unscored-after-genuine", "pass1"]]],
];

describe("one attempt per task: the newest genuine trial counts", () => {
  it.each(EXPECTED)("%s → %s %s (%s, scored %s)", (task, job, outcome, exceptionType, scored, superseded) => {
    const t = taskOf(report, task);
    expect(t.trials).toHaveLength(1);
    expect([t.trials[0].job, t.trials[0].outcome, t.trials[0].exceptionType, t.trials[0].scored]).toEqual([job, outcome, exceptionType, scored]);
    expect(t.superseded.map((s) => [jobOf(s.path), s.reason, jobOf(s.by)])).toEqual(superseded);
    expect(t.supersededTrials).toEqual(t.superseded.map((s) => s.path));
  });

  it("lists the infra attempts that lost to an older genuine result as unscored", () => {
    const keptOut = report.tasks.flatMap((t) => t.superseded).filter((s) => s.reason === "unscored-after-genuine");
    expect(keptOut.map((s) => [s.exceptionType, s.scored])).toEqual([
      ["RuntimeError", false],
      ["InternalServerError", false],
      ["NonZeroAgentExitCodeError", false],
      ["CancelledError", false],
      ["NetworkConnectionError", false],
    ]);
  });

  it("orders trials written with different UTC offsets by instant, not by their text", () => {
    const later = taskOf(report, "offsets-rerun-later");
    expect(later.trials[0].finishedAt).toBe("2026-08-30T19:14:31.000000-05:00");
    expect(later.superseded[0].finishedAt).toBe("2026-08-31T08:54:31.000000+09:00");
    const earlier = taskOf(report, "offsets-rerun-earlier");
    expect(earlier.trials[0].finishedAt).toBe("2026-08-30T20:00:00.000000-05:00");
    expect(earlier.superseded[0].finishedAt).toBe("2026-08-31T09:30:00.000000+09:00");
  });

  it("raw score and everything derived from the selection count the genuine results", () => {
    expect(report.scores.raw).toMatchObject({ nTasks: 12, nTrials: 12, passed: 5, failed: 4, errored: 3, unscored: 1, scored: 11, excluded: 0 });
    expect(report.scores.raw.mean).toBeCloseTo(5 / 12, 10);
    expect(report.scores.raw.passRate).toBeCloseTo(5 / 11, 10);
    // 11 genuine trials at 100k input tokens, one ReadTimeout at 1k; all 24 trials: 15 genuine, 9 infra.
    expect(report.tokens.chosen.input).toBe(11 * 100_000 + 1_000);
    expect(report.tokens.allTrials.input).toBe(15 * 100_000 + 9 * 1_000);
    // Ten genuine trials of 600 s, the rerun's 3600 s one, the counted ReadTimeout's 60 s.
    expect(report.durations.trialSec).toMatchObject({ sum: 10 * 600 + 3600 + 60, max: 3600, median: 600 });
    expect(Object.fromEntries(report.taxonomy.map((c) => [c.category, c.count]))).toEqual({
      task_failed: 3,
      agent_error: 1,
      agent_timeout_with_reward: 1,
      agent_timeout_without_reward: 1,
      infra: 1,
    });
  });

  it("corrected score: only the verdicts judged on counted trials apply", () => {
    expect(report.scores.corrected).toMatchObject({ nTasks: 11, nTrials: 11, passed: 6, failed: 3, errored: 2, unscored: 1, scored: 10, excluded: 1 });
    expect(report.scores.corrected.mean).toBeCloseTo(6 / 11, 10);
    expect(report.scores.corrected.passRate).toBeCloseTo(6 / 10, 10);
    expect(report.overrides.map((o) => [o.task, o.status, o.rawOutcomes])).toEqual([
      ["fail-then-docker", "applied", ["failed"]],
      ["pass-then-agent-error", "applied", ["errored"]],
      ["pass-then-fail", "not-counted", []],
      ["infra-then-infra", "not-counted", []],
      ["fail-then-internal", "not-found", []],
    ]);
  });

  it("an override on a trial that does not count says which trial counts and why the verdict is not applied", () => {
    const [, , replaced, infra, gone] = report.overrides;
    const rerunTrial = taskOf(report, "pass-then-fail").trials[0];
    expect(replaced.countedTrials).toEqual([{ path: rerunTrial.path, outcome: "failed" }]);
    expect(replaced.note).toBe(
      `override for task 'pass-then-fail' names trial 'pass1/pass-then-fail__Pass1Pf', which was replaced by the newer trial ${rerunTrial.path}; ` +
        `counted: ${rerunTrial.trial} (raw failed). The verdict was judged on 'pass1/pass-then-fail__Pass1Pf', so it is not applied: re-judge the counted trial and name it in the override`,
    );
    expect(infra.note).toContain(`counted: ${taskOf(report, "infra-then-infra").trials[0].trial} (raw errored)`);
    // The verdict (failed) already matches the counted trial's raw outcome: nothing to re-judge.
    expect(infra.note).not.toContain("already");
    expect(gone.note).toMatch(/names trial 'fail-then-internal__Gone123', which is not in the given jobs \(`harbor job resume` deletes the trials it re-runs\); counted: fail-then-internal__\w+ \(raw failed\)\. .*not applied: re-judge/);
    expect(report.warnings.filter((w) => w.startsWith("override for task"))).toHaveLength(3);
  });

  it("a verdict on a non-counted trial that agrees with the counted trial's raw outcome says so", () => {
    const text = "- {task: pass-then-fail, trial: pass-then-fail__Pass1Pf, verdict: failed, reason: r, evidence: e}\n";
    const r = auditDirs(dirs, { overrides: parseOverrides(text, "o.yaml") });
    expect(r.overrides[0].status).toBe("not-counted");
    expect(r.overrides[0].note).toMatch(/not applied; the counted trial's raw outcome is already failed$/);
    expect(r.scores.corrected).toMatchObject({ passed: 5, failed: 4, excluded: 0 });
  });

  it("validates against schema v2", () => {
    const parsed = AuditReportSchema.parse(JSON.parse(JSON.stringify(report)));
    expect(parsed.schemaVersion).toBe(2);
    expect(parsed.selection.rule).toContain("never a genuine one");
  });
});

describe("several attempts per task: each slot keeps its newest genuine trial", () => {
  let k3: AuditReport;
  beforeAll(() => {
    k3 = auditDirs(writeAttemptSlotsScenario(path.join(root, "k3")));
  });

  it.each([
    // task, counted (job:outcome:exception) newest first, superseded (job:reason:by job)
    [
      "slots",
      ["k3-rerun:passed:-", "k3-pass1:failed:-", "k3-pass1:passed:-"],
      ["k3-rerun:CancelledError:unscored-after-genuine:-", "k3-mopup:ReadTimeout:replaced-by-newer:k3-rerun", "k3-pass1:SandboxError:replaced-by-newer:k3-mopup"],
    ],
    [
      "slots-genuine-rerun",
      ["k3-rerun:failed:-", "k3-pass1:failed:-", "k3-pass1:passed:-"],
      ["k3-pass1:-:replaced-by-newer:k3-rerun"],
    ],
    [
      "slots-stopped",
      ["k3-mopup:errored:CancelledError", "k3-mopup:failed:-", "k3-pass1:passed:-"],
      ["k3-pass1:CancelledError:replaced-by-newer:k3-mopup", "k3-pass1:CancelledError:replaced-by-newer:k3-mopup"],
    ],
  ])("%s", (task, counted, superseded) => {
    const t = taskOf(k3, task);
    expect(t.trials.map((x) => `${x.job}:${x.outcome}:${x.exceptionType ?? "-"}`)).toEqual(counted);
    expect(t.superseded.map((s) => `${jobOf(s.path)}:${s.exceptionType ?? "-"}:${s.reason}:${jobOf(s.by) ?? "-"}`)).toEqual(superseded);
  });

  it("scores three slots per task", () => {
    expect(k3.selection.attemptsPerTask).toBe(3);
    expect(k3.scores.raw).toMatchObject({ nTasks: 3, nTrials: 9, passed: 4, failed: 4, errored: 1, unscored: 1, scored: 8 });
    expect(k3.scores.raw.mean).toBeCloseTo(4 / 9, 10);
    expect(k3.scores.raw.passRate).toBeCloseTo(4 / 8, 10);
  });
});

describe("the CLI renders the same numbers", () => {
  let out: string[];
  const capture = (): void => {
    out = [];
    vi.spyOn(console, "log").mockImplementation((...a: unknown[]) => void out.push(a.join(" ")));
    vi.spyOn(console, "error").mockImplementation(() => undefined);
  };
  const overridesFile = (): string => {
    const file = path.join(root, "verdicts.yaml");
    fs.writeFileSync(file, GENUINE_FIRST_OVERRIDES);
    return file;
  };

  it("reprobench audit prints the raw and corrected scores and the unapplied verdicts", async () => {
    capture();
    expect(await auditCommand.run([...dirs, "--overrides", overridesFile()])).toBe(0);
    const text = out.join("\n");
    expect(text).toContain("outcomes: 5 passed, 4 failed, 3 errored (1 infra/setup/cancelled, left out of the pass rate)");
    expect(text).toContain("raw score:       5/12 passed, mean 0.4167 (41.67%); pass rate 5/11 = 45.45% over scored trials");
    expect(text).toContain("corrected score: 6/11 passed, mean 0.5455 (54.55%); pass rate 6/10 = 60.00% over scored trials (2 manual verdict(s) applied, 3 not applied, 1 excluded)");
    expect(text).toContain("12 superseded trial(s), 5 of them infra/setup/cancelled attempts that came after a genuine result (which still counts)");
    expect(text).toMatch(/ {2}pass-then-fail: excluded NOT APPLIED \(not-counted\): override for task 'pass-then-fail'/);
    expect(text.match(/override for task 'pass-then-fail'/g)).toHaveLength(1);
    const notCounted = text.slice(text.indexOf("not counted: infra/setup/cancelled attempts")).split("\n").slice(1, 6);
    expect(notCounted.map((l) => l.replace(/__\w+/g, "__ID"))).toEqual([
      "  pass1-mopup/fail-then-docker__ID: RuntimeError (counted: pass1/fail-then-docker__ID)",
      "  pass1-rerun/fail-then-internal__ID: InternalServerError (counted: pass1/fail-then-internal__ID)",
      "  pass1-mopup/infra-by-logs__ID: NonZeroAgentExitCodeError (counted: pass1/infra-by-logs__ID)",
      "  pass1-mopup/pass-then-cancelled__ID: CancelledError (counted: pass1/pass-then-cancelled__ID)",
      "  pass1-rerun/pass-then-network__ID: NetworkConnectionError (counted: pass1/pass-then-network__ID)",
    ]);
  });

  it("reprobench report renders the audit's scores, per-task outcomes and superseded trials", async () => {
    const dest = path.join(root, "report");
    capture();
    expect(await reportCommand.run([...dirs, "--overrides", overridesFile(), "--out", dest])).toBe(0);
    const md = fs.readFileSync(path.join(dest, "report.md"), "utf8");
    expect(md).toContain("| raw | 5/12 passed, mean 0.4167 (41.67%); pass rate 5/11 = 45.45% over scored trials |");
    expect(md).toContain("| corrected (2 manual verdicts) | 6/11 passed, mean 0.5455 (54.55%); pass rate 6/10 = 60.00% over scored trials |");
    expect(md).toContain("12 tasks, 12 counted trials (1 per task): 5 passed, 4 failed, 3 errored, 1 left out of the pass rate as infra/setup/cancelled.");
    const perTask = md.slice(md.indexOf("## Per task")).split("\n");
    for (const [task, job, outcome] of EXPECTED) {
      expect(perTask.filter((l) => l.startsWith(`| ${task} | `))).toEqual([expect.stringMatching(new RegExp(`^\\| ${task} \\| ${outcome} \\|.*\\| \`${job}/${task}__\\w+\` \\|$`))]);
    }
    const superseded = md.slice(md.indexOf("## Superseded trials"), md.indexOf("## Per task")).split("\n").filter((l) => /^\| [a-z-]+ \| `/.test(l));
    expect(superseded).toHaveLength(12);
    expect(superseded.filter((l) => l.includes("| unscored-after-genuine |"))).toHaveLength(5);
    expect(md).toContain("| pass-then-fail | — | excluded — **not applied** (not-counted) |");
    expect(md.match(/override for task 'pass-then-fail'/g)).toHaveLength(1);
    const html = fs.readFileSync(path.join(dest, "report.html"), "utf8");
    expect(html).toContain("<b>41.67%</b><span class=\"muted\">5/12 passed</span>");
    expect(html).toContain("<b>54.55%</b><span class=\"muted\">6/11 passed, 1 excluded</span>");
  });
});
