import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readJob } from "../../../results/load";
import { planRerun, planResume, ResumeInput, resumeCwd } from "../../../results/resume";
import { defaultMopUpErrorTypes, NON_TRANSIENT_TYPES } from "../../../results/taxonomy";
import { at, DEFAULT_KWARGS, tempDir, writeJob } from "../../fixtures/results/build";

let root: string;
beforeAll(() => {
  root = tempDir();
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

function inputFor(jobDir: string): ResumeInput {
  const job = readJob(jobDir);
  return {
    jobDir,
    config: job.config!,
    lock: JSON.parse(fs.readFileSync(path.join(jobDir, "lock.json"), "utf8")),
    trials: job.trials.map((t) => ({ dir: t.path.split("/")[1], task: t.task, exceptionType: t.exceptionType, config: t.config })),
    incompleteTrialDirs: job.incompleteTrialDirs,
  };
}

const mixedTrials = [
  { task: "a", reward: 1, start: at(0) },
  { task: "b", exception: "CancelledError", start: at(0) },
  { task: "c", exception: "SandboxError", start: at(0) },
  { task: "d", exception: "AgentTimeoutError", reward: 0, start: at(0) },
  { task: "e", exception: "EnvironmentStartTimeoutError", start: at(0) },
  { task: "f", exception: "VerifierTimeoutError", start: at(0) },
];

describe("planResume", () => {
  it("default filter: infra + setup + CancelledError, never AgentTimeoutError; absolute -p and matching cwd", () => {
    const jobsDir = path.join(root, "abs", "jobs");
    const jobDir = writeJob(jobsDir, { name: "run1", trials: mixedTrials });
    const plan = planResume(inputFor(jobDir));
    expect(plan.refusal).toBeNull();
    expect(plan.trialsToRerun.map((t) => [t.task, t.exceptionType])).toEqual([
      ["b", "CancelledError"],
      ["c", "SandboxError"],
      ["e", "EnvironmentStartTimeoutError"],
    ]);
    expect(plan.argv.slice(0, 5)).toEqual(["harbor", "job", "resume", "-p", jobDir]);
    expect(path.isAbsolute(plan.argv[4])).toBe(true);
    const filters = plan.argv.slice(5).filter((_, i) => i % 2 === 1);
    expect(plan.argv.slice(5).filter((_, i) => i % 2 === 0).every((f) => f === "-f")).toBe(true);
    expect(filters).toContain("CancelledError");
    expect(filters).not.toContain("AgentTimeoutError");
    expect(plan.cwd).toBe(jobsDir);
    expect(plan.env.HARBOR_TELEMETRY).toBe("0");
    expect(plan.edits).toEqual([]);
  });

  it("default filter leaves out errors that fail the same way again (auth, unknown model, usage limit) and says so", () => {
    const jobDir = writeJob(path.join(root, "non-transient"), {
      name: "run1",
      trials: [
        { task: "a", exception: "AgentAuthenticationError", exceptionMessage: "Not logged in", start: at(0) },
        { task: "b", exception: "ModelNotFoundError", exceptionMessage: "Cannot use this model", start: at(0) },
        { task: "c", exception: "ApiUsageLimitError", start: at(0) },
        { task: "d", exception: "NetworkConnectionError", start: at(0) },
        { task: "e", exception: "ApiRateLimitError", start: at(0) },
      ],
    });
    const plan = planResume(inputFor(jobDir));
    expect(plan.trialsToRerun.map((t) => [t.task, t.exceptionType])).toEqual([
      ["d", "NetworkConnectionError"],
      ["e", "ApiRateLimitError"],
    ]);
    expect(plan.keptNonTransient.map((t) => t.task)).toEqual(["a", "b", "c"]);
    expect(plan.warnings).toContain(
      "3 trial(s) failed with AgentAuthenticationError, ApiUsageLimitError, ModelNotFoundError: kept, because a re-run fails the same way " +
        "until the API key, model name or quota is fixed. Fix that first, then add --error-type AgentAuthenticationError " +
        "--error-type ApiUsageLimitError --error-type ModelNotFoundError (plus the default types you still want)",
    );

    const fixed = planResume(inputFor(jobDir), { errorTypes: ["AgentAuthenticationError", "NetworkConnectionError", "CancelledError"] });
    expect(fixed.trialsToRerun.map((t) => t.task)).toEqual(["a", "d"]);
    expect(fixed.keptNonTransient.map((t) => t.task)).toEqual(["b", "c"]);
    expect(fixed.warnings).toContain("AgentAuthenticationError in the filter: these fail again the same way unless the API key, model name or quota was fixed since");
  });

  it("every default type is one Harbor 0.21 retries (not in RetryConfig.exclude_exceptions' default)", () => {
    // Harbor 0.21's list, as shared/reference/harbor.md §2 quotes it.
    const harborExcludes = [
      "AgentTimeoutError",
      "VerifierTimeoutError",
      "RewardFileNotFoundError",
      "RewardFileEmptyError",
      "VerifierOutputParseError",
      "ApiUsageLimitError",
      "AgentSafetyRefusalError",
      "AgentAuthenticationError",
      "ModelNotFoundError",
    ];
    for (const t of harborExcludes) expect(NON_TRANSIENT_TYPES.has(t)).toBe(true);
    const defaults = defaultMopUpErrorTypes();
    expect(defaults.filter((t) => NON_TRANSIENT_TYPES.has(t))).toEqual([]);
    expect(defaults).toEqual(expect.arrayContaining(["CancelledError", "NetworkConnectionError", "InternalServerError", "SandboxError", "ReadTimeout"]));
    expect(defaults).not.toContain("ApiKeyRejectedError");
  });

  it("explicit error types replace the default and warn when CancelledError is dropped or AgentTimeoutError added", () => {
    const jobDir = writeJob(path.join(root, "explicit"), { name: "run1", trials: mixedTrials });
    const plan = planResume(inputFor(jobDir), { errorTypes: ["AgentTimeoutError"] });
    expect(plan.trialsToRerun.map((t) => t.task)).toEqual(["d"]);
    expect(plan.argv.slice(5)).toEqual(["-f", "AgentTimeoutError"]);
    expect(plan.warnings.join("\n")).toMatch(/AgentTimeoutError is in the filter/);
    expect(plan.warnings.join("\n")).toMatch(/cancelled trials will be kept as final/);
  });

  it("refuses when the model endpoint in config.json differs from the kept trials, and says what to do", () => {
    const jobDir = writeJob(path.join(root, "endpoint"), { name: "run1", trials: mixedTrials });
    const input = inputFor(jobDir);
    const agents = input.config.agents as Record<string, unknown>[];
    agents[0] = { ...agents[0], kwargs: { ...DEFAULT_KWARGS, api_base: "http://10.0.0.99:30000/v1" } };
    const plan = planResume(input);
    expect(plan.refusal).toContain('agents[0].kwargs.api_base: config.json has "http://10.0.0.99:30000/v1", 3 kept trial(s) have "http://127.0.0.1:30000/v1"');
    expect(plan.refusal).toContain("Existing trial config does not match planned job config");
    expect(plan.refusal).toContain(`reprobench rerun ${jobDir} <task>…`);
  });

  it("does not refuse for a mismatch only on trials the filter deletes anyway", () => {
    const jobDir = writeJob(path.join(root, "only-deleted"), {
      name: "run1",
      trials: [
        { task: "a", reward: 1, start: at(0) },
        { task: "b", exception: "CancelledError", start: at(0), agentKwargs: { api_base: "http://old:1/v1" } },
      ],
    });
    expect(planResume(inputFor(jobDir)).refusal).toBeNull();
  });

  it("refuses when agent kwargs or multipliers drifted (e.g. temperature, agent_timeout_multiplier)", () => {
    const jobDir = writeJob(path.join(root, "drift"), {
      name: "run1",
      trials: [{ task: "a", reward: 1, start: at(0), agentKwargs: { ...DEFAULT_KWARGS, temperature: 0.7 }, configPatch: { agent_timeout_multiplier: 3 } }],
    });
    const plan = planResume(inputFor(jobDir));
    expect(plan.refusal).toContain("agents[0].kwargs.temperature: config.json has 1, 1 kept trial(s) have 0.7");
    expect(plan.refusal).toContain("agent_timeout_multiplier: config.json has 6, 1 kept trial(s) have 3");
  });

  it("keeps lock.json in step with config.json and applies --n-concurrent to both", () => {
    const jobDir = writeJob(path.join(root, "conc"), { name: "run1", trials: mixedTrials });
    const input = inputFor(jobDir);
    input.config.n_concurrent_trials = 10; // the user edited config.json only (seed 002's advice, half done)
    let plan = planResume(input);
    expect(plan.edits).toEqual([expect.objectContaining({ file: "lock.json", key: "n_concurrent_trials", from: 25, to: 10 })]);
    expect(plan.lock!.n_concurrent_trials).toBe(10);

    plan = planResume(inputFor(jobDir), { nConcurrent: 30 });
    expect(plan.edits.map((e) => [e.file, e.from, e.to])).toEqual([
      ["config.json", 25, 30],
      ["lock.json", 25, 30],
    ]);
    expect(plan.config.n_concurrent_trials).toBe(30);
    expect(plan.refusal).toBeNull();

    plan = planResume(inputFor(jobDir), { nConcurrent: 8 });
    expect(plan.refusal).toMatch(/--n-concurrent 8 is below agents\[0\]\.n_concurrent \(20\)/);
    expect(() => planResume(inputFor(jobDir), { nConcurrent: 0 })).toThrow("--n-concurrent must be a positive integer");
  });
});

describe("resumeCwd", () => {
  it("relative jobs_dir: cwd is the prefix that makes jobs_dir/job_name the job dir", () => {
    expect(resumeCwd("/data/work/jobs/run1", { job_name: "run1", jobs_dir: "jobs" })).toEqual({ cwd: "/data/work" });
    expect(resumeCwd("/data/work/jobs/run1", { job_name: "run1" })).toEqual({ cwd: "/data/work" });
  });
  it("refuses a pulled copy whose absolute jobs_dir points elsewhere, and a renamed dir", () => {
    const moved = resumeCwd("/home/me/pulled/run1", { job_name: "run1", jobs_dir: "/srv/results" });
    expect("problem" in moved && moved.problem).toMatch(/Harbor would resume '\/srv\/results\/run1', not this copy/);
    const renamed = resumeCwd("/srv/results/run1-copy", { job_name: "run1", jobs_dir: "/srv/results" });
    expect("problem" in renamed && renamed.problem).toMatch(/job_name is "run1" but the directory is 'run1-copy'/);
    const nowhere = resumeCwd("/data/run1", { job_name: "run1", jobs_dir: "jobs" });
    expect("problem" in nowhere && nowhere.problem).toMatch(/does not end in 'jobs\/run1'/);
  });
});

describe("planRerun", () => {
  it("builds a new job beside the old one with just those tasks' refs and a new name", () => {
    const jobsDir = path.join(root, "rerun");
    const jobDir = writeJob(jobsDir, { name: "run1", trials: mixedTrials });
    const job = readJob(jobDir);
    const plan = planRerun(jobDir, job.config!, job.trials, ["c", "e", "c"], { now: new Date("2026-09-01T12:34:56Z"), apiBase: "http://10.0.0.99:30000/v1" });
    expect(plan.jobName).toBe("run1-rerun-20260901-123456");
    // No `source`: Harbor 0.21's rerun job would crash on a source it has no dataset for (see planRerun).
    expect(plan.config.tasks).toEqual([{ path: "/data/tb21/tasks/c" }, { path: "/data/tb21/tasks/e" }]);
    expect(plan.config.datasets).toEqual([]);
    expect(plan.config.jobs_dir).toBe(jobsDir);
    expect((plan.config.agents as { kwargs: { api_base: string; temperature: number } }[])[0].kwargs).toMatchObject({ api_base: "http://10.0.0.99:30000/v1", temperature: 1 });
    expect(plan.config.agent_timeout_multiplier).toBe(6);
    expect(plan.configFile).toBe(path.join(jobsDir, "run1-rerun-20260901-123456.job.json"));
    expect(plan.argv).toEqual(["harbor", "run", "-c", plan.configFile, "--job-name", plan.jobName, "--jobs-dir", jobsDir, "-y"]);
    // The old job is untouched: its config still names the dataset.
    expect(job.config!.datasets).toEqual([{ path: "/data/tb21/tasks" }]);
  });

  it("names the unknown task and lists known ones", () => {
    const jobDir = writeJob(path.join(root, "rerun-bad"), { name: "run1", trials: mixedTrials });
    const job = readJob(jobDir);
    expect(() => planRerun(jobDir, job.config!, job.trials, ["zzz"])).toThrow(/task 'zzz' has no trial .* \(known tasks: a, b, c, d, e, f\)/);
    expect(() => planRerun(jobDir, job.config!, job.trials, ["a"], { jobName: "bad name" })).toThrow(/job name 'bad name'/);
  });
});

describe("a trial Harbor cancelled after an earlier exception (a stop in a timed-out trial's verifier)", () => {
  /** Appends Harbor's cancel line (trial.py run()) to the trial.log of each named task's trial. */
  function cancelIn(jobDir: string, tasks: string[]): void {
    for (const dir of fs.readdirSync(jobDir)) {
      const result = path.join(jobDir, dir, "result.json");
      if (!fs.existsSync(result)) continue;
      const r = JSON.parse(fs.readFileSync(result, "utf8"));
      if (tasks.includes(r.task_name)) fs.appendFileSync(path.join(jobDir, dir, "trial.log"), `Trial ${r.trial_name} cancelled\n`);
    }
  }
  const trials = [
    { task: "cut-verifier", exception: "AgentTimeoutError", start: at(0) },
    { task: "scored-then-cancelled", exception: "AgentTimeoutError", reward: 0, start: at(0) },
    { task: "unscored-no-cancel", exception: "AgentTimeoutError", start: at(0) },
    { task: "plain-cancel", exception: "CancelledError", start: at(0) },
  ];

  it("readJob tells it by trial.log's cancel line, only when it has no verifier result", () => {
    const jobDir = writeJob(path.join(root, "cancel-after", "jobs"), { name: "run1", trials });
    cancelIn(jobDir, ["cut-verifier", "scored-then-cancelled", "plain-cancel"]);
    const flags = Object.fromEntries(readJob(jobDir).trials.map((t) => [t.task, t.cancelledAfterException === true]));
    expect(flags).toEqual({ "cut-verifier": true, "scored-then-cancelled": false, "unscored-no-cancel": false, "plain-cancel": false });
  });

  it("is set aside beside the job dir and re-run when the filter re-runs cancellations; kept when it does not", () => {
    const jobDir = writeJob(path.join(root, "cancel-after-plan", "jobs"), { name: "run1", trials });
    cancelIn(jobDir, ["cut-verifier", "plain-cancel"]);
    const input = inputFor(jobDir);
    input.trials = readJob(jobDir).trials.map((t) => ({ ...input.trials.find((i) => i.task === t.task)!, cancelledAfterException: t.cancelledAfterException }));
    const plan = planResume(input);
    expect(plan.trialsToSetAside.map((t) => [t.task, t.exceptionType])).toEqual([["cut-verifier", "AgentTimeoutError"]]);
    expect(plan.setAsideDir).toBe(`${jobDir}.cancelled-trials`);
    expect(plan.trialsToRerun.map((t) => t.task)).toEqual(["plain-cancel"]);
    expect(plan.argv).not.toContain("AgentTimeoutError");
    const without = planResume(input, { errorTypes: ["SandboxError"] });
    expect(without.trialsToSetAside).toEqual([]);
  });

  it("a mismatch on the set-aside trial alone does not refuse the resume (it is not kept)", () => {
    const jobDir = writeJob(path.join(root, "cancel-after-mismatch", "jobs"), {
      name: "run1",
      trials: [
        { task: "a", reward: 1, start: at(0) },
        { task: "cut-verifier", exception: "AgentTimeoutError", start: at(0), agentKwargs: { ...DEFAULT_KWARGS, api_base: "http://10.9.9.9:30000/v1" } },
      ],
    });
    cancelIn(jobDir, ["cut-verifier"]);
    const input = inputFor(jobDir);
    const flagged = planResume({ ...input, trials: input.trials.map((t) => ({ ...t, cancelledAfterException: t.task === "cut-verifier" })) });
    expect(flagged.refusal).toBeNull();
    expect(planResume(input).refusal).toContain("agents[0].kwargs.api_base");
  });
});

describe("a trial the stop interrupted with nothing recorded (harbor's SIGTERM → KeyboardInterrupt)", () => {
  // writeJob leaves exception_info and verifier_result null for a trial with neither: what Trial.run's
  // `finally` writes when KeyboardInterrupt passes both of its except clauses.
  const trials = [
    { task: "passed", reward: 1, start: at(0) },
    { task: "interrupted", start: at(0) },
    { task: "no-verifier", start: at(0), configPatch: { verifier: { disable: true } } },
    { task: "plain-cancel", exception: "CancelledError", start: at(0) },
  ];

  it("readJob tells it from result.json alone; a trial with verification switched off is not one", () => {
    const jobDir = writeJob(path.join(root, "interrupted", "jobs"), { name: "run1", trials });
    const flags = Object.fromEntries(readJob(jobDir).trials.map((t) => [t.task, t.interruptedWithoutRecord === true]));
    expect(flags).toEqual({ passed: false, interrupted: true, "no-verifier": false, "plain-cancel": false });
  });

  it("is set aside and re-run when the filter re-runs cancellations; kept when it does not", () => {
    const jobDir = writeJob(path.join(root, "interrupted-plan", "jobs"), { name: "run1", trials });
    const input = inputFor(jobDir);
    input.trials = readJob(jobDir).trials.map((t) => ({ ...input.trials.find((i) => i.task === t.task)!, interruptedWithoutRecord: t.interruptedWithoutRecord }));
    const plan = planResume(input);
    expect(plan.refusal).toBeNull();
    expect(plan.trialsToSetAside.map((t) => [t.task, t.exceptionType])).toEqual([["interrupted", null]]);
    expect(plan.trialsToRerun.map((t) => t.task)).toEqual(["plain-cancel"]);
    expect(planResume(input, { errorTypes: ["SandboxError"] }).trialsToSetAside).toEqual([]);
  });
});
