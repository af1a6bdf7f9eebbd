import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditDirs, readJob } from "../../../results/load";
import { parseOverrides } from "../../../results/overrides";
import { AuditReport, AuditReportSchema } from "../../../results/schema";
import { classifyTrial, defaultMopUpErrorTypes, scanText } from "../../../results/taxonomy";
import { computeScore, outcomeOf } from "../../../results/audit";
import {
  at,
  LOGS,
  MULTI_PASS_OVERRIDES,
  SEED000_OVERRIDES,
  tempDir,
  writeMultiPassScenario,
  writeJob,
  writeSeed000Scenario,
} from "../../fixtures/results/build";

let root: string;
let dirs: string[];
let report: AuditReport;
const trialOf = (r: AuditReport, task: string) => {
  const t = r.tasks.find((x) => x.task === task);
  if (!t) throw new Error(`no task ${task}`);
  return t.trials[0];
};

beforeAll(() => {
  root = tempDir();
  dirs = writeMultiPassScenario(path.join(root, "jobs"));
  report = auditDirs(dirs, { overrides: parseOverrides(MULTI_PASS_OVERRIDES, "overrides.yaml"), now: new Date("2026-09-01T00:00:00Z") });
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe("selection across passes", () => {
  it("takes the trial with the latest finished_at across all jobs", () => {
    expect(trialOf(report, "alpha").job).toBe("qwen-full-rerun-2");
    expect(trialOf(report, "alpha").outcome).toBe("failed");
    expect(report.tasks.find((t) => t.task === "alpha")!.supersededTrials.map((p) => p.split("/")[0])).toEqual(["qwen-full-mopup-1", "qwen-full"]);
    expect(trialOf(report, "golf").job).toBe("qwen-full-mopup-1");
    expect(trialOf(report, "golf").outcome).toBe("passed");
  });

  it("keeps an older job's trial when the later job's trial finished earlier", () => {
    expect(trialOf(report, "bravo").job).toBe("qwen-full");
    expect(trialOf(report, "bravo").reward).toBe(1);
  });

  it("ignores hard-killed trial dirs without result.json and says so", () => {
    expect(report.tasks.map((t) => t.task)).not.toContain("quebec");
    expect(report.jobs[0].incompleteTrialDirs).toHaveLength(1);
    expect(report.warnings.some((w) => w.includes("without result.json"))).toBe(true);
    expect(report.warnings.some((w) => w.startsWith("qwen-full: job result.json finished_at is null"))).toBe(true);
  });
});

describe("selection with several attempts per task", () => {
  it("a rerun of two infra-errored attempts replaces those two, not the oldest genuine results", () => {
    const jobsDir = path.join(root, "k5");
    const first = writeJob(jobsDir, {
      name: "k5-run",
      config: { n_attempts: 5 },
      trials: [
        { task: "t", attempt: 0, reward: 1, start: at(0) },
        { task: "t", attempt: 1, reward: 0, start: at(0.1) },
        { task: "t", attempt: 2, exception: "SandboxError", start: at(0.2) },
        { task: "t", attempt: 3, reward: 1, start: at(0.3) },
        { task: "t", attempt: 4, exception: "RuntimeError", exceptionMessage: "all predefined address pools have been fully subnetted", start: at(0.4) },
      ],
    });
    const rerun = writeJob(jobsDir, {
      name: "k5-rerun",
      config: { n_attempts: 2 },
      trials: [
        { task: "t", attempt: 0, reward: 1, start: at(2) },
        { task: "t", attempt: 1, exception: "CancelledError", start: at(2.1) },
      ],
    });
    const r = auditDirs([first, rerun]);
    expect(r.selection.attemptsPerTask).toBe(5);
    const t = r.tasks[0];
    const kinds = t.trials.map((x) => `${x.job}:${x.outcome}:${x.exceptionType ?? "-"}`);
    expect(kinds).toEqual(["k5-rerun:errored:CancelledError", "k5-rerun:passed:-", "k5-run:passed:-", "k5-run:failed:-", "k5-run:passed:-"]);
    expect(t.supersededTrials.map((p) => p.split("/")[0])).toEqual(["k5-run", "k5-run"]);
    expect(r.scores.raw).toMatchObject({ nTrials: 5, passed: 3, failed: 1, errored: 1, unscored: 1, scored: 4 });
    // A third pass replaces the still-cancelled attempt before any genuine one.
    const third = writeJob(jobsDir, { name: "k5-rerun-2", trials: [{ task: "t", reward: 0, start: at(3) }] });
    const r3 = auditDirs([first, rerun, third]);
    expect(r3.tasks[0].trials.map((x) => x.exceptionType)).not.toContain("CancelledError");
    expect(r3.scores.raw).toMatchObject({ nTrials: 5, passed: 3, failed: 2, errored: 0 });
  });
});

describe("a trial the stop interrupted with nothing recorded", () => {
  it("is a cancellation: unscored, so it neither fails the task nor takes a genuine slot", () => {
    const jobDir = writeJob(path.join(root, "interrupted"), {
      name: "stopped",
      trials: [
        { task: "cut", start: at(0) },
        { task: "no-verifier", start: at(0), configPatch: { verifier: { disable: true } } },
        { task: "ok", reward: 1, start: at(0) },
      ],
    });
    const r = auditDirs([jobDir]);
    expect(trialOf(r, "cut")).toMatchObject({ outcome: "errored", exceptionType: null, category: "cancelled", scored: false });
    expect(trialOf(r, "no-verifier")).toMatchObject({ category: "unknown", scored: true });
    expect(r.scores.raw).toMatchObject({ nTrials: 3, passed: 1, unscored: 1, scored: 2 });
  });
});

describe("outcomes and taxonomy", () => {
  it.each([
    ["charlie", "passed", "AgentTimeoutError", "agent_timeout_with_reward", true],
    ["delta", "errored", "AgentTimeoutError", "agent_timeout_without_reward", true],
    ["echo", "errored", "VerifierTimeoutError", "verifier_timeout", true],
    ["foxtrot", "failed", null, "task_failed", true],
    ["papa", "errored", "CancelledError", "cancelled", false],
    ["hotel", "errored", "AgentSetupTimeoutError", "setup", false],
    ["india", "errored", "SandboxError", "infra", false],
    ["juliet", "errored", "NonZeroAgentExitCodeError", "infra", false],
    ["kilo", "errored", "NonZeroAgentExitCodeError", "agent_error", true],
    ["lima", "errored", "RewardFileNotFoundError", "unknown", true],
    ["mike", "failed", null, "task_failed", true],
    ["oscar", "errored", "EnvironmentStartTimeoutError", "setup", false],
  ])("%s → %s / %s / %s (scored %s)", (task, outcome, type, category, scored) => {
    const t = trialOf(report, task);
    expect(t.outcome).toBe(outcome);
    expect(t.exceptionType).toBe(type);
    expect(t.category).toBe(category);
    expect(t.scored).toBe(scored);
  });

  it("cites the evidence file and line of each log signature", () => {
    const fox = trialOf(report, "foxtrot");
    expect(fox.suspectedInfra).toBe(true);
    expect(fox.evidence).toEqual([
      expect.objectContaining({ signature: "proxy-502", file: `qwen-full/${fox.trial}/verifier/test-stdout.txt`, line: 3 }),
      expect.objectContaining({ signature: "apt-fetch-failed", line: 3 }),
    ]);
    const juliet = trialOf(report, "juliet");
    expect(juliet.evidence).toEqual([expect.objectContaining({ signature: "tls-verify-failed", file: `qwen-full/${juliet.trial}/agent/terminus_2.pane`, line: 2 })]);
    const hotel = trialOf(report, "hotel");
    expect(hotel.evidence).toEqual([expect.objectContaining({ signature: "tmux-missing", file: `qwen-full/${hotel.trial}/trial.log`, line: 3 })]);
    const nov = trialOf(report, "november");
    expect(nov.category).toBe("agent_timeout_without_reward");
    expect(nov.suspectedInfra).toBe(true);
    expect(nov.evidence[0]).toMatchObject({ signature: "curl-timeout", line: 2 });
    expect(report.suspectedInfra).toEqual([fox.path, nov.path]);
  });

  it("does not scan cleanly passed trials", () => {
    expect(trialOf(report, "bravo").evidence).toEqual([]);
  });

  it("groups the taxonomy by category", () => {
    const byCat = Object.fromEntries(report.taxonomy.map((c) => [c.category, c.count]));
    expect(byCat).toEqual({
      task_failed: 3,
      agent_error: 1,
      agent_timeout_with_reward: 1,
      agent_timeout_without_reward: 2,
      verifier_timeout: 1,
      infra: 2,
      setup: 2,
      cancelled: 1,
      unknown: 1,
    });
  });
});

describe("scores", () => {
  it("raw: Harbor mean with missing rewards as 0; pass rate without infra errors", () => {
    expect(report.scores.raw).toMatchObject({ nTasks: 16, nTrials: 16, passed: 3, failed: 3, errored: 10, unscored: 5, scored: 11, excluded: 0 });
    expect(report.scores.raw.mean).toBeCloseTo(3 / 16, 10);
    expect(report.scores.raw.passRate).toBeCloseTo(3 / 11, 10);
  });

  it("corrected: overrides applied, listed separately with the raw outcome", () => {
    expect(report.scores.corrected).toMatchObject({ nTrials: 15, nTasks: 15, passed: 4, excluded: 1, scored: 10 });
    expect(report.scores.corrected.mean).toBeCloseTo(4 / 15, 10);
    expect(report.scores.corrected.passRate).toBeCloseTo(4 / 10, 10);
    expect(report.overrides.map((o) => [o.task, o.verdict, o.rawOutcomes])).toEqual([
      ["foxtrot", "passed", ["failed"]],
      ["echo", "failed", ["errored"]],
      ["lima", "excluded", ["errored"]],
    ]);
  });

  it("reproduces seed 000's final table: raw 61/89 = 68.54%, corrected 64/88 = 72.73%", () => {
    const dir = writeSeed000Scenario(path.join(root, "seed000"));
    const r = auditDirs([dir], { overrides: parseOverrides(SEED000_OVERRIDES, "seed000.yaml") });
    expect(r.scores.raw).toMatchObject({ nTrials: 89, passed: 61, failed: 24, errored: 4 });
    expect((r.scores.raw.mean! * 100).toFixed(2)).toBe("68.54");
    expect(r.tasks.flatMap((t) => t.trials).filter((t) => t.exceptionType !== null)).toHaveLength(16);
    expect(r.scores.corrected).toMatchObject({ nTrials: 88, passed: 64, excluded: 1 });
    expect((r.scores.corrected.mean! * 100).toFixed(2)).toBe("72.73");
    expect(r.runConditions.leaderboardComparable).toBe(false);
    expect(r.runConditions.deviations.join("\n")).toContain("agent_timeout_multiplier is 6");
    // 8 hand-written trials at the fixture default, 81 generated ones with the fixture's formula.
    let input = 8 * 100_000;
    for (let i = 0; i < 81; i++) input += 600_000 + ((i * 7919) % 1_500_000);
    expect(r.tokens.chosen.input).toBe(input);
    expect(r.tokens.allTrials.input).toBe(input);
  });

  it("computeScore: empty input has null rates", () => {
    expect(computeScore([])).toMatchObject({ nTrials: 0, mean: null, passRate: null });
    expect(outcomeOf(0.5)).toBe("failed");
  });
});

describe("json schema", () => {
  it("validates against the versioned zod schema and round-trips through JSON", () => {
    const parsed = AuditReportSchema.parse(JSON.parse(JSON.stringify(report)));
    expect(parsed.schemaVersion).toBe(2);
    expect(parsed.kind).toBe("reprobench.audit");
    expect(parsed.selection.attemptsPerTask).toBe(1);
  });
});

describe("overrides file", () => {
  it("rejects unknown verdicts, missing reasons and duplicates naming the file, entry, task and field", () => {
    expect(() => parseOverrides("overrides:\n  - {task: a, verdict: maybe, reason: r, evidence: e}\n", "o.yaml")).toThrow(
      "o.yaml: overrides[0] (task 'a'): verdict 'maybe' is not one of passed, failed, excluded",
    );
    expect(() => parseOverrides("- {task: a, verdict: pass, evidence: e}\n", "o.yaml")).toThrow("o.yaml: entry 0 (task 'a'): reason: missing (required)");
    expect(() => parseOverrides("- {task: a, verdict: pass, reason: r, evidence: e}\n- {task: a, verdict: fail, reason: r, evidence: e}\n", "o.yaml")).toThrow(
      "o.yaml: entry 1 (task 'a'): same task as entry 0; keep one",
    );
    expect(() => parseOverrides("overides: []\n", "o.yaml")).toThrow("o.yaml: (top level): unknown key(s) 'overides'; expected `overrides:");
  });

  it("a missing evidence names the entry and the field, not '(top level): Invalid input'", () => {
    const text = "overrides:\n  - {task: a, verdict: pass, reason: r, evidence: e}\n  - {task: prove-plus-comm, verdict: pass, reason: proof compiles}\n";
    expect(() => parseOverrides(text, "verdicts.yaml")).toThrow(/^verdicts\.yaml: overrides\[1\] \(task 'prove-plus-comm'\): evidence: missing \(required\)$/);
  });

  it("reports every malformed entry at once, each with its index and field", () => {
    const text = [
      "version: 1",
      "overrides:",
      "  - {task: a, verdict: pass, reason: r, evidence: e, trail: a__X}",
      "  - just a string",
      "  - {verdict: fail, reason: '', evidence: [1]}",
    ].join("\n");
    let message = "";
    try {
      parseOverrides(text, "o.yaml");
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message.split("\n")).toEqual([
      "o.yaml: overrides[0] (task 'a'): trail: unknown field (fields: task, trial, verdict, reason, evidence)",
      "o.yaml: overrides[1]: expected a mapping with task, verdict, reason, evidence",
      "o.yaml: overrides[2]: task: missing (required)",
      "o.yaml: overrides[2]: reason: is empty; say why the verdict differs from the raw outcome",
      "o.yaml: overrides[2]: evidence: expected a string or a list of strings",
    ]);
    expect(() => parseOverrides("version: 2\noverrides: []\n", "o.yaml")).toThrow("o.yaml: version: 2 is not supported (only 1)");
    expect(() => parseOverrides("overrides: {task: a}\n", "o.yaml")).toThrow("o.yaml: overrides: must be a list");
  });

  it("SCHEMA.md's example error lines are exactly what the parser reports", () => {
    const schemaDoc = fs.readFileSync(path.join(__dirname, "../../../results/SCHEMA.md"), "utf8");
    const documented = /```\n(verdicts\.yaml: [\s\S]*?)\n```/.exec(schemaDoc)![1].split("\n");
    const text = [
      "overrides:",
      "  - {task: dna-assembly, verdict: pass, reason: r, evidence: e}",
      "  - {task: prove-plus-comm, verdict: pass, reason: proof compiles}",
      "  - {task: tune-mjcf, verdict: maybe, reason: r, evidence: e}",
      "  - {task: tune-mjcf, trial: tune-mjcf__X, trail: tune-mjcf__X, verdict: pass, reason: r, evidence: e}",
      "  - {task: dna-assembly, verdict: fail, reason: r, evidence: e}",
    ].join("\n");
    expect(() => parseOverrides(text, "verdicts.yaml")).toThrow(documented.join("\n"));
  });

  it("fails the audit when an override names a task that is not in the run", () => {
    expect(() => auditDirs(dirs, { overrides: parseOverrides("- {task: zulu, verdict: pass, reason: r, evidence: e}\n", "o.yaml") })).toThrow(
      "override for task 'zulu': no such task in the given jobs",
    );
  });
});

describe("inputs", () => {
  it("explains when given a jobs dir instead of job dirs", () => {
    expect(() => readJob(path.join(root, "jobs"))).toThrow(/looks like a jobs dir — pass its job dirs instead: .*qwen-full/);
  });
});

describe("signatures and classification (pure)", () => {
  it("redacts proxy credentials in evidence lines", () => {
    const [hit] = scanText("ok\nProxyError: http://alice:s3cret@10.0.0.5:27890 returned 502 Bad Gateway", "p.log");
    expect(hit).toMatchObject({ signature: "proxy-502", line: 2 });
    expect(hit.text).toBe("ProxyError: http://[redacted]@10.0.0.5:27890 returned 502 Bad Gateway");
  });
  it("finds address pool exhaustion on its line", () => {
    expect(scanText(LOGS.addressPools, "x.log")).toEqual([expect.objectContaining({ signature: "address-pools-exhausted", line: 2 })]);
  });
  it("reads infra hints from the exception message of ambiguous types", () => {
    expect(classifyTrial(null, "RuntimeError", "Error response from daemon: all predefined address pools have been fully subnetted", []).category).toBe("infra");
    expect(classifyTrial(null, "RuntimeError", "Failed to start tmux session", []).category).toBe("setup");
    expect(classifyTrial(null, "RuntimeError", "pane vanished", []).category).toBe("unknown");
  });
  it("default mop-up types include CancelledError and transient infra, never AgentTimeoutError nor auth/model/quota errors", () => {
    const types = defaultMopUpErrorTypes();
    for (const t of ["AgentAuthenticationError", "ApiKeyRejectedError", "ModelNotFoundError", "ApiUsageLimitError"]) expect(types).not.toContain(t);
    expect(types).toContain("CancelledError");
    expect(types).toContain("SandboxError");
    expect(types).toContain("EnvironmentStartTimeoutError");
    expect(types).not.toContain("AgentTimeoutError");
    expect(types).not.toContain("VerifierTimeoutError");
  });
});
