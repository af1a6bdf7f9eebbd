import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkSubmission, configDeviations } from "../../../results/leaderboard";
import { readSubmission } from "../../../results/load";
import { tempDir, writeSubmission } from "../../fixtures/results/build";

let root: string;
beforeAll(() => {
  root = tempDir();
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const fresh = (name: string): string => fs.mkdirSync(path.join(root, name), { recursive: true }) as string;

describe("validate --leaderboard", () => {
  it("a clean -k 5 run with metadata and trajectories is a submission", () => {
    const v = checkSubmission(readSubmission(writeSubmission(fresh("ok"))));
    expect(v.violations).toEqual([]);
    expect(v.label).toBe("submission");
    expect(v.counts).toEqual({ jobs: 1, trials: 15, tasks: 3, passed: 7 });
  });

  it("seed 000's 6× run is labelled a reproduction, not a submission", () => {
    const v = checkSubmission(readSubmission(writeSubmission(fresh("repro"), { config: { agent_timeout_multiplier: 6.0, agent_setup_timeout_multiplier: 5.0 } })));
    expect(v.label).toBe("reproduction");
    expect(v.summary).toMatch(/^a reproduction, not a leaderboard submission: agent_timeout_multiplier is 6/);
    const rule = v.violations.find((x) => x.message === "agent_timeout_multiplier is 6 (leaderboard requires 1.0)")!;
    expect(rule.kind).toBe("conditions");
    expect(rule.where).toEqual(["tb2-run-5/config.json"]);
    // Trial configs carry the multiplier too; identical findings are grouped, one entry per trial.
    const trialRule = v.violations.find((x) => x.message === "trial config: agent_timeout_multiplier is 6 (leaderboard requires 1.0)")!;
    expect(trialRule.where).toHaveLength(15);
  });

  it("lists every violation of an invalid tree", () => {
    const dir = writeSubmission(fresh("bad"), {
      trialsPerTask: 4,
      metadata: "agent_url: https://example.invalid\nagent_display_name: T2\nmodels:\n  - model_name: q\n    model_provider: sglang\n",
      config: { environment: { type: "docker", override_cpus: 4 }, verifier: { override_timeout_sec: 1800 } },
    });
    const job = path.join(dir, "tb2-run-5");
    const trials = fs.readdirSync(job).filter((d) => fs.statSync(path.join(job, d)).isDirectory()).sort();
    const passing = trials.find((t) => JSON.parse(fs.readFileSync(path.join(job, t, "result.json"), "utf8")).verifier_result?.rewards?.reward === 1)!;
    fs.rmSync(path.join(job, passing, "agent", "trajectory.json"));
    const other = trials.find((t) => t !== passing)!;
    fs.rmSync(path.join(job, other, "result.json"));

    const v = checkSubmission(readSubmission(dir));
    expect(v.label).toBe("invalid");
    const messages = v.violations.map((x) => `${x.rule}: ${x.message}`);
    expect(messages).toEqual(
      expect.arrayContaining([
        "metadata: metadata.yaml: agent_org_display_name missing or empty",
        "metadata: metadata.yaml: models[0].model_display_name missing or empty",
        "metadata: metadata.yaml: models[0].model_org_display_name missing or empty",
        "run-conditions: environment.override_cpus is 4 (no resource overrides allowed)",
        "run-conditions: verifier.override_timeout_sec is 1800 (no timeout overrides allowed)",
        "trial-result: trial has no result.json",
        "trajectory: passing trial has no agent/trajectory.json (ATIF required)",
        "trials-per-task: fewer than 5 trials for the task",
      ]),
    );
    expect(v.violations.find((x) => x.rule === "trajectory")!.where).toEqual([`tb2-run-5/${passing}`]);
    expect(v.violations.find((x) => x.rule === "trial-result")!.where).toEqual([`tb2-run-5/${other}`]);
    // A trial without result.json is not a valid trial, so its task is one short.
    const shortTask = other.split("__")[0];
    const expected = ["task-0", "task-1", "task-2"].map((t) => `${t} (${t === shortTask ? 3 : 4})`);
    expect(v.violations.find((x) => x.rule === "trials-per-task")!.where).toEqual(expected);
    expect(v.warnings.join("\n")).toMatch(/n_attempts is 4/);
    expect(v.warnings.join("\n")).toMatch(/job\.log: run-side leftover/);
  });

  it("a missing metadata.yaml and an unfinished job are structural", () => {
    const dir = writeSubmission(fresh("nometa"), { metadata: null });
    const result = path.join(dir, "tb2-run-5", "result.json");
    fs.writeFileSync(result, JSON.stringify({ ...JSON.parse(fs.readFileSync(result, "utf8")), finished_at: null }));
    const v = checkSubmission(readSubmission(dir));
    expect(v.label).toBe("invalid");
    expect(v.violations.map((x) => x.message)).toEqual(expect.arrayContaining(["metadata.yaml missing", "job result.json finished_at is null (job never completed)"]));
  });

  it("two job dirs in one submission draw a warning (seed 004's stale job)", () => {
    const root2 = fresh("two");
    writeSubmission(root2, { jobName: "old-run" });
    const v = checkSubmission(readSubmission(writeSubmission(root2, { jobName: "new-run" })));
    expect(v.counts.jobs).toBe(2);
    expect(v.warnings.join("\n")).toMatch(/2 job dirs \(new-run, old-run\)/);
  });
});

describe("configDeviations", () => {
  it("accepts defaults and explicit 1.0; flags agent overrides on JobConfig and TrialConfig", () => {
    expect(configDeviations({ timeout_multiplier: 1.0, agent_timeout_multiplier: null })).toEqual([]);
    expect(configDeviations({ agents: [{ name: "t", max_timeout_sec: 100 }] })).toEqual(["agents[0].max_timeout_sec is 100 (no timeout overrides allowed)"]);
    expect(configDeviations({ agent: { override_timeout_sec: 10 }, environment: { override_memory_mb: 1 } })).toEqual([
      "agent.override_timeout_sec is 10 (no timeout overrides allowed)",
      "environment.override_memory_mb is 1 (no resource overrides allowed)",
    ]);
  });
});
