// validate --leaderboard on trees in the shape Harbor 0.21.0 writes (test/helpers/harbor-tree.ts): the
// valid 89×5 tree passes; each broken tree is rejected naming the rule it breaks.
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  atifErrors,
  checkSubmission,
  configDeviations,
  datasetFromOption,
  findSecrets,
  LeaderboardVerdict,
  readSubmissionTree,
  RULES,
  summarizeScore,
  summaryLines,
} from "../../../results/leaderboard";
import { editJson, rewardOf, tempRoot, trialDirs, writeHarborJob, writeSubmissionTree } from "../../helpers/harbor-tree";

// The full 89 × 5 tree for what needs the real dataset; a 6-task × 5 tree of a local dataset (whose task
// list is the job's lock.json) for the other rules, to keep the suite quick on two cores.
const MINI = { tasks: 6, dataset: { path: "/data/tb-mini/tasks" } };
let root: string;
let base: string;
let mini: string;
beforeAll(() => {
  root = tempRoot();
  base = writeSubmissionTree(path.join(root, "base"));
  mini = writeSubmissionTree(path.join(root, "mini"), MINI);
});
// Two dozen copies of a 3,600-file tree take a while to delete.
afterAll(() => fs.rmSync(root, { recursive: true, force: true }), 120_000);

/** A fresh copy of a valid submission (default: the 6-task one): its folder and its job folder. */
function copyOfValid(name: string, from: "mini" | "base" = "mini"): { sub: string; job: string } {
  const src = from === "mini" ? mini : base;
  const dest = path.join(root, name, path.relative(path.join(root, from), src));
  fs.cpSync(src, dest, { recursive: true });
  return { sub: dest, job: path.join(dest, "tb2-k5") };
}

const check = (dir: string, opts = {}): LeaderboardVerdict => checkSubmission(readSubmissionTree(dir), opts);
const rules = (v: LeaderboardVerdict): string[] => [...new Set(v.violations.map((x) => x.rule))].sort();
const violation = (v: LeaderboardVerdict, rule: string, match: RegExp = /./) => v.violations.find((x) => x.rule === rule && match.test(x.message));

describe("validate --leaderboard: the valid tree", () => {
  it("accepts a complete 89 × 5 run and prints the official-like summary with labelled CIs", () => {
    const v = check(base);
    expect(v.violations).toEqual([]);
    expect(v.label).toBe("submission");
    expect(v.counts).toMatchObject({ jobs: 1, trials: 445, tasks: 89 });
    const rewards = trialDirs(path.join(base, "tb2-k5")).map(rewardOf);
    const passed = rewards.filter((r) => r === 1).length;
    expect(v.score.passed).toBe(passed);
    expect(v.score.zeroReward).toBe(445 - passed);
    expect(v.score.score).toBeCloseTo(passed / 445, 12);
    const lines = summaryLines(v);
    expect(lines[0]).toBe("official_like_errors: 0");
    expect(lines).toContain(`passed: ${passed}`);
    expect(lines.find((l) => l.startsWith("95% CI half-width, binomial over 445 trials: ±"))).toBeDefined();
    expect(lines.find((l) => l.startsWith("95% CI half-width, clustered by task (89 tasks): ±"))).toBeDefined();
    expect(lines.find((l) => l.startsWith("95% CI half-width, over the 5 attempt-runs: ±"))).toBeDefined();
  });

  it("every violation names a rule with a source", () => {
    const { sub, job } = copyOfValid("sources");
    fs.rmSync(path.join(job, "lock.json"));
    const v = check(sub);
    for (const x of v.violations) {
      expect(RULES[x.rule]).toBeDefined();
      expect(x.sources.length).toBeGreaterThan(0);
      expect(x.sources).toEqual(RULES[x.rule].sources);
    }
  });
});

describe("validate --leaderboard: each broken tree is rejected naming its rule", () => {
  it("wrong-level: pointed at the job folder, it says so instead of reading 445 jobs", () => {
    const v = check(path.join(base, "tb2-k5"));
    expect(v.label).toBe("invalid");
    expect(rules(v)).toEqual(["wrong-level"]);
    expect(v.violations[0].message).toMatch(/^'tb2-k5' is a Harbor job folder \(445 trial folders\), not a submission: point validate at the <agent>__<model>\/ folder/);
    expect(v.counts.jobs).toBe(0);
  });

  it("wrong-level: pointed above the submission, it lists the submission folders", () => {
    const v = check(path.join(root, "base", "submissions"));
    expect(rules(v)).toEqual(["wrong-level"]);
    expect(v.violations[0].message).toMatch(/holds 1 submission folder\(s\); validate one at a time: submissions\/terminal-bench\/2\.0\/Terminus-2__Qwen3\.8-27B/);
  });

  it("layout: a folder outside submissions/terminal-bench/<version>/ or not named <agent>__<model>", () => {
    const dest = path.join(root, "layout", "Terminus-2-Qwen");
    fs.cpSync(mini, dest, { recursive: true });
    fs.writeFileSync(path.join(dest, "NOTES.md"), "run notes\n");
    const v = check(dest);
    expect(rules(v)).toEqual(["layout"]);
    const messages = v.violations.map((x) => x.message);
    expect(messages).toContain("folder name 'Terminus-2-Qwen' is not <agent>__<model(s)>");
    expect(messages.some((m) => m.startsWith("the folder must sit at submissions/terminal-bench/<version>/Terminus-2-Qwen"))).toBe(true);
    expect(violation(v, "layout", /only metadata\.yaml and job folders/)!.where).toEqual(["NOTES.md"]);
  });

  it("metadata: required fields missing", () => {
    const { sub } = copyOfValid("metadata");
    fs.writeFileSync(path.join(sub, "metadata.yaml"), "agent_url: https://example.org\nagent_display_name: T2\nmodels:\n  - model_name: Qwen/Qwen3.8-27B\n    model_provider: openai\n");
    const v = check(sub);
    expect(rules(v)).toEqual(["metadata"]);
    expect(v.violations.map((x) => x.message).sort()).toEqual([
      "metadata.yaml: agent_org_display_name missing or empty",
      "metadata.yaml: models[0].model_display_name missing or empty",
      "metadata.yaml: models[0].model_org_display_name missing or empty",
    ]);
  });

  it("dataset-complete: 80 of 89 tasks, even with the lock and the job result edited to match", () => {
    const { sub, job } = copyOfValid("80of89", "base");
    const dropped = new Set(Array.from({ length: 9 }, (_, i) => `terminal-bench/task-${String(80 + i).padStart(3, "0")}`));
    const gone: string[] = [];
    for (const t of trialDirs(job)) {
      const r = JSON.parse(fs.readFileSync(path.join(t, "result.json"), "utf8"));
      if (dropped.has(r.task_name)) {
        gone.push(path.basename(t));
        fs.rmSync(t, { recursive: true });
      }
    }
    editJson(path.join(job, "lock.json"), (l) => {
      l.trials = (l.trials as { task: { name: string } }[]).filter((t) => !dropped.has(t.task.name));
    });
    rewriteJobResult(job);
    const v = check(sub);
    expect(rules(v)).toEqual(["dataset-complete"]);
    expect(v.violations[0].message).toBe("80 of 89 tasks of terminal-bench@2.0 present");
    expect(v.violations[0].where).toEqual(["tb2-k5/config.json"]);
    expect(gone).toHaveLength(45);
  });

  it("dataset-complete: a filtered dataset, and --dataset naming a task the run lacks", () => {
    const { sub, job } = copyOfValid("filtered");
    editJson(path.join(job, "config.json"), (c) => {
      (c.datasets as Record<string, unknown>[])[0].n_tasks = 89;
      // (any n_tasks counts as a filter, even one that keeps every task)
    });
    const names = path.join(root, "filtered", "tasks.txt");
    fs.writeFileSync(names, "# the dataset\ntask-000\nextra-task\n");
    const v = check(sub, { dataset: datasetFromOption(names) });
    expect(rules(v)).toEqual(["dataset-complete"]);
    expect(v.violations.map((x) => x.message).sort()).toEqual([`1 of 2 tasks of --dataset ${names} present; missing: extra-task`, "the dataset is filtered (n_tasks: 89)"]);
    // --dataset is the list the job is held against: no "pass --dataset" for its unreadable local folder.
    expect(v.warnings.filter((w) => w.includes("pass --dataset"))).toEqual([]);
    expect(check(sub).warnings.filter((w) => w.includes("pass --dataset"))).toHaveLength(1);
  });

  it("run-conditions + config-consistency: configs edited back to defaults after running at 6×", () => {
    const dir = path.join(root, "six", "submissions", "terminal-bench", "2.0");
    const sub = writeSubmissionTree(path.join(root, "six"), { ...MINI, runConfig: { agent_timeout_multiplier: 6.0 } });
    expect(sub.startsWith(dir)).toBe(true);
    const job = path.join(sub, "tb2-k5");
    editJson(path.join(job, "config.json"), (c) => delete c.agent_timeout_multiplier);
    for (const t of trialDirs(job)) editJson(path.join(t, "config.json"), (c) => delete c.agent_timeout_multiplier);
    const v = check(sub);
    expect(v.label).toBe("invalid");
    expect(rules(v)).toEqual(["config-consistency", "run-conditions"]);
    const fromResult = violation(v, "run-conditions", /^trial result\.json config: agent_timeout_multiplier is 6/)!;
    expect(fromResult.where).toHaveLength(30);
    expect(violation(v, "run-conditions", /^trial lock\.json: agent_timeout_multiplier is 6/)!.where).toHaveLength(30);
    expect(violation(v, "run-conditions", /^job lock\.json: agent_timeout_multiplier is 6/)).toBeDefined();
    expect(violation(v, "config-consistency")!.message).toBe("agent_timeout_multiplier: trial config.json says null, result.json config says 6");
  });

  it("a run at 6× left as it ran is a reproduction, not a submission", () => {
    const sub = writeSubmissionTree(path.join(root, "six-honest"), { ...MINI, runConfig: { agent_timeout_multiplier: 6.0 } });
    const v = check(sub);
    expect(v.label).toBe("reproduction");
    expect(rules(v)).toEqual(["run-conditions"]);
    expect(v.summary).toMatch(/^a reproduction, not a leaderboard submission: job config\.json: agent_timeout_multiplier is 6/);
  });

  it("trial-artifacts + lock-present: trial folders holding only result.json", () => {
    const { sub, job } = copyOfValid("hollow-trials");
    const stripped = trialDirs(job).slice(0, 3);
    for (const t of stripped) for (const e of fs.readdirSync(t)) if (e !== "result.json") fs.rmSync(path.join(t, e), { recursive: true });
    const v = check(sub);
    const where = stripped.map((t) => `tb2-k5/${path.basename(t)}`);
    expect(violation(v, "lock-present", /^trial lock\.json missing/)!.where).toEqual(where);
    const artifacts = v.violations.filter((x) => x.rule === "trial-artifacts");
    expect(artifacts.flatMap((x) => x.where).sort()).toEqual(where);
    expect(artifacts[0].message).toMatch(/^trial folder lacks config\.json, trial\.log/);
    const passing = stripped.filter((t) => rewardOf(t) === 1).map((t) => `tb2-k5/${path.basename(t)}`);
    if (passing.length) expect(violation(v, "trajectory")!.where).toEqual(passing);
  });

  it("lock-present: the job's lock.json removed", () => {
    const { sub, job } = copyOfValid("no-job-lock");
    fs.rmSync(path.join(job, "lock.json"));
    const v = check(sub);
    expect(rules(v)).toEqual(["dataset-complete", "lock-present"]);
    expect(violation(v, "lock-present")).toMatchObject({ message: "job lock.json missing (Harbor writes it when the run starts)", where: ["tb2-k5"] });
    // A local dataset not readable here and no lock: nothing says which tasks the run should have had.
    expect(violation(v, "dataset-complete")!.message).toMatch(/^cannot tell which tasks the dataset has .*: pass --dataset$/);
  });

  it("stale-job: an older job of another model beside the new one", () => {
    const { sub } = copyOfValid("stale");
    writeHarborJob(sub, { ...MINI, name: "old-gpt-oss-run", model: "openai/openai/gpt-oss-20b", start: "2026-08-01T08:00:00Z" });
    const v = check(sub);
    expect(rules(v)).toEqual(["stale-job"]);
    expect(v.violations[0].where).toEqual(["old-gpt-oss-run"]);
    expect(v.violations[0].message).toMatch(/^job old-gpt-oss-run ran model openai\/openai\/gpt-oss-20b, which metadata\.yaml does not list \(Qwen\/Qwen3\.8-27B\)/);
  });

  it("duplicate-trials + job-counts: a job duplicated with its failing trials deleted (a 100 % copy)", () => {
    const { sub, job } = copyOfValid("duplicated");
    const copy = path.join(sub, "tb2-k5-best");
    fs.cpSync(job, copy, { recursive: true });
    for (const t of trialDirs(copy)) if (rewardOf(t) !== 1) fs.rmSync(t, { recursive: true });
    const v = check(sub);
    expect(rules(v)).toEqual(["duplicate-trials", "job-counts"]);
    expect(violation(v, "duplicate-trials", /are the same job/)!.message).toMatch(/^job folders tb2-k5 and tb2-k5-best are the same job/);
    const twice = violation(v, "duplicate-trials", /the same trial twice/)!;
    expect(twice.where.every((w) => /^tb2-k5-best\/(\S+) \(= tb2-k5\/\1\)$/.test(w))).toBe(true);
    expect(twice.where.length).toBe(trialDirs(path.join(sub, "tb2-k5-best")).length);
    expect(violation(v, "job-counts", /n_total_trials/)!.message).toMatch(/^job result\.json n_total_trials is 30, the folder holds \d+$/);
    expect(violation(v, "job-counts", /lists \d+ rewarded trial\(s\) that are not in the folder/)).toBeDefined();
    expect(violation(v, "job-counts", /mean/)!.where).toEqual(["tb2-k5-best"]);
  });

  it("trials-per-task: a task with 4 trials", () => {
    const { sub, job } = copyOfValid("four");
    const victim = trialDirs(job).find((t) => JSON.parse(fs.readFileSync(path.join(t, "result.json"), "utf8")).task_name === "terminal-bench/task-004")!;
    fs.rmSync(victim, { recursive: true });
    const v = check(sub);
    expect(violation(v, "trials-per-task")!.where).toEqual(["terminal-bench/task-004 (4)"]);
    expect(violation(v, "job-counts", /n_total_trials is 30, the folder holds 29/)).toBeDefined();
  });

  it("no-tb-access: tbench.ai in extra_allowed_hosts (as run) and the repository in a trajectory", () => {
    const sub = writeSubmissionTree(path.join(root, "tbench"), { ...MINI, runConfig: { environment: { extra_allowed_hosts: ["tbench.ai"] } } });
    const first = trialDirs(path.join(sub, "tb2-k5"))[0];
    const traj = path.join(first, "agent", "trajectory.json");
    fs.writeFileSync(traj, fs.readFileSync(traj, "utf8").replace("cat /app/README.md", "curl -sL https://github.com/laude-institute/terminal-bench/raw/main/tasks/x/solution.sh"));
    const v = check(sub);
    expect(rules(v)).toEqual(["no-tb-access"]);
    expect(violation(v, "no-tb-access", /extra_allowed_hosts/)!.message).toBe("extra_allowed_hosts lets the agent reach tbench.ai");
    const hosts = violation(v, "no-tb-access", /extra_allowed_hosts/)!.where;
    // Each file once (the job lock has the host in all 30 of its trial entries): job config + lock, 30 × (config, lock, result).
    expect(hosts.sort()).toEqual([...new Set(hosts)].sort());
    expect(hosts).toHaveLength(2 + 30 * 3);
    expect(hosts).toContain("tb2-k5/config.json");
    const inTrajectory = violation(v, "no-tb-access", /the agent's record/)!;
    expect(inTrajectory.where).toEqual([`tb2-k5/${path.basename(first)}/agent/trajectory.json`]);
    expect(inTrajectory.message).toMatch(/github\.com\/laude-institute\/terminal-bench/);
  });

  it("no-secrets + allowlist: an API key in the agent kwargs and a token in a leftover home", () => {
    const sub = writeSubmissionTree(path.join(root, "secrets"), { ...MINI, kwargs: { api_base: "http://127.0.0.1:30000/v1", llm_kwargs: { api_key: "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx1234" } } });
    const job = path.join(sub, "tb2-k5");
    const home = path.join(trialDirs(job)[0], "wecode-home", ".cache", "huggingface");
    fs.mkdirSync(home, { recursive: true });
    fs.writeFileSync(path.join(home, "token"), "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH\n");
    const v = check(sub);
    expect(rules(v)).toEqual(["allowlist", "no-secrets"]);
    const t0 = path.basename(trialDirs(job)[0]);
    const apiKey = violation(v, "no-secrets", /^a value under 'api_key' \(sk-p…\(36 chars\)\)$/)!;
    // One finding, every place it is: the job's config and lock, each trial's config, lock and result.
    expect(apiKey.where).toHaveLength(2 + 30 * 3);
    expect(apiKey.where).toContain("tb2-k5/config.json at agents[*].kwargs.llm_kwargs.api_key");
    expect(apiKey.where).toContain("tb2-k5/lock.json at trials[*].agent.kwargs.llm_kwargs.api_key");
    expect(apiKey.where).toContain(`tb2-k5/${t0}/result.json at config.agent.kwargs.llm_kwargs.api_key`);
    expect(violation(v, "no-secrets", /a Hugging Face token/)!.where).toEqual([`tb2-k5/${t0}/wecode-home/.cache/huggingface/token at line 1`]);
    expect(violation(v, "allowlist")!.where).toEqual([`tb2-k5/${path.basename(trialDirs(job)[0])}/wecode-home`]);
    // The secret itself is never printed.
    expect(JSON.stringify(v)).not.toContain("AbCdEfGhIjKlMnOpQrStUvWx1234");
  });

  it("no-system-prompt: a proprietary prompt, or \"REDACTED\" instead of an empty field", () => {
    const sub = writeSubmissionTree(path.join(root, "prompt"), { ...MINI, kwargs: { system_prompt: "REDACTED" } });
    const v = check(sub);
    expect(rules(v)).toEqual(["no-system-prompt"]);
    expect(violation(v, "no-system-prompt")!.message).toBe('"REDACTED" (leave it empty instead)');
    expect(violation(v, "no-system-prompt")!.where).toContain("tb2-k5/config.json at agents[*].kwargs.system_prompt");
    const empty = writeSubmissionTree(path.join(root, "prompt-empty"), { ...MINI, kwargs: { system_prompt: "" } });
    expect(check(empty).violations).toEqual([]);
  });

  it("trajectory: a hollow ATIF file for a passing trial", () => {
    const { sub, job } = copyOfValid("hollow-atif");
    const passing = trialDirs(job).find((t) => rewardOf(t) === 1)!;
    fs.writeFileSync(path.join(passing, "agent", "trajectory.json"), '{"schema_version":"ATIF-v1.4"}');
    const v = check(sub);
    expect(rules(v)).toEqual(["trajectory"]);
    expect(v.violations[0].message).toBe("agent/trajectory.json is not valid ATIF: trajectory.agent: required field is missing; trajectory.steps: required field is missing");
    expect(v.violations[0].where).toEqual([`tb2-k5/${path.basename(passing)}`]);
  });

  it("allowlist: seed 004's run-side leftovers at the job level (job.log is Harbor's own and stays)", () => {
    const { sub, job } = copyOfValid("leftovers");
    fs.writeFileSync(path.join(job, "wecode-run-status.json"), "{}\n");
    fs.writeFileSync(path.join(job, "killed-active-trials-1.tsv"), "x\n");
    fs.symlinkSync("/etc/hostname", path.join(trialDirs(job)[0], "agent", "link"));
    const v = check(sub);
    expect(rules(v)).toEqual(["allowlist"]);
    expect(violation(v, "allowlist", /job folder/)!.where.sort()).toEqual(["tb2-k5/killed-active-trials-1.tsv", "tb2-k5/wecode-run-status.json"]);
    expect(violation(v, "allowlist", /symlink/)!.where).toEqual([`tb2-k5/${path.basename(trialDirs(job)[0])}/agent/link`]);
  });

  it("trial-result, duplicate-trials, job-complete, job-files", () => {
    const { sub, job } = copyOfValid("misc");
    const [a, b] = trialDirs(job);
    editJson(path.join(a, "result.json"), (r) => delete r.task_checksum);
    fs.renameSync(b, path.join(job, "renamed-trial__AAAAAAA"));
    editJson(path.join(job, "result.json"), (r) => (r.finished_at = null));
    const v = check(sub);
    expect(violation(v, "trial-result")!.message).toBe("trial result.json lacks task_checksum (required by Harbor's TrialResult)");
    expect(violation(v, "duplicate-trials")!.where).toEqual(["tb2-k5/renamed-trial__AAAAAAA"]);
    expect(violation(v, "job-complete")!.message).toBe("job result.json finished_at is null (the job never completed)");
    fs.rmSync(path.join(job, "config.json"));
    expect(violation(check(sub), "job-files")!.message).toBe("job config.json missing");
  });
});

/** Recomputes the job result from the trials left, as a careful editor would. */
function rewriteJobResult(job: string): void {
  const trials = trialDirs(job).map((t) => JSON.parse(fs.readFileSync(path.join(t, "result.json"), "utf8")));
  editJson(path.join(job, "result.json"), (r) => {
    const stats = r.stats as Record<string, unknown>;
    r.n_total_trials = trials.length;
    stats.n_completed_trials = trials.length;
    stats.n_errored_trials = trials.filter((t) => t.exception_info).length;
    const [key] = Object.keys(stats.evals as object);
    const rewardStats: Record<string, string[]> = {};
    const exceptionStats: Record<string, string[]> = {};
    for (const t of trials) {
      if (t.verifier_result) (rewardStats[t.verifier_result.rewards.reward === 1 ? "1.0" : "0.0"] ??= []).push(t.trial_name);
      if (t.exception_info) (exceptionStats[t.exception_info.exception_type] ??= []).push(t.trial_name);
    }
    stats.evals = {
      [key]: {
        n_trials: trials.filter((t) => t.verifier_result).length,
        n_errors: stats.n_errored_trials,
        metrics: [{ mean: trials.reduce((s, t) => s + (t.verifier_result?.rewards.reward ?? 0), 0) / trials.length }],
        pass_at_k: {},
        reward_stats: { reward: rewardStats },
        exception_stats: exceptionStats,
      },
    };
  });
}

describe("atifErrors (Harbor 0.21.0's Trajectory model)", () => {
  const valid = { schema_version: "ATIF-v1.6", agent: { name: "t", version: "1" }, steps: [{ step_id: 1, source: "user", message: "hi" }] };
  const errorsOf = (patch: (t: Record<string, unknown>) => void): string[] => {
    const t = structuredClone(valid) as Record<string, unknown>;
    patch(t);
    return atifErrors(JSON.stringify(t));
  };

  it("accepts a minimal trajectory and rejects each broken rule", () => {
    expect(atifErrors(JSON.stringify(valid))).toEqual([]);
    expect(errorsOf((t) => ((t.steps as object[])[0] = { step_id: 2, source: "user", message: "hi" }))).toEqual(["trajectory.steps.0.step_id: expected 1 (sequential from 1), got 2"]);
    expect(errorsOf((t) => (t.steps = []))).toEqual(["trajectory.steps: Array must contain at least 1 element(s)"]);
    expect(errorsOf((t) => (t.unknown = 1))).toEqual(["trajectory: unexpected field(s) unknown (not part of ATIF)"]);
    expect(errorsOf((t) => (t.schema_version = "ATIF-v9"))[0]).toMatch(/^trajectory\.schema_version: Invalid enum value/);
    expect(errorsOf((t) => ((t.steps as Record<string, unknown>[])[0].timestamp = "yesterday"))).toEqual(["trajectory.steps.0.timestamp: not an ISO 8601 timestamp"]);
    expect(errorsOf((t) => ((t.steps as Record<string, unknown>[])[0].model_name = "m"))).toEqual(["trajectory.steps.0.model_name: only allowed on agent steps (source is 'user')"]);
    expect(
      errorsOf((t) => {
        (t.steps as Record<string, unknown>[])[0] = { step_id: 1, source: "agent", message: "x", tool_calls: [{ tool_call_id: "a", function_name: "f", arguments: {} }], observation: { results: [{ source_call_id: "b" }] } };
      }),
    ).toEqual(["trajectory.steps.0.observation.results.0.source_call_id: 'b' is not a tool_call_id of this step"]);
    expect(atifErrors("[1]")).toEqual(["trajectory must be a JSON object"]);
    expect(atifErrors("{")[0]).toMatch(/^not JSON/);
  });
});

describe("findSecrets", () => {
  it("flags credentials in Harbor's records, not placeholders or token counts", () => {
    const cfg = JSON.stringify({ agent: { env: { OPENAI_API_KEY: "${OPENAI_API_KEY}", HF_TOKEN: "hf_a****xyz" }, kwargs: { api_key: "EMPTY", max_tokens: 4096, tokenizer: "Qwen/Qwen3.8-27B", llm_kwargs: { api_key: "abcdefgh12345678" } } } });
    expect(findSecrets("job/config.json", cfg, "full")).toEqual([{ file: "job/config.json", field: "agent.kwargs.llm_kwargs.api_key", kind: "secret", what: "a value under 'api_key' (abcd…(16 chars))" }]);
    expect(findSecrets("job/trial.log", "proxy at http://bench:s3cretpassw0rd@10.0.0.1:3128\n", "full").map((x) => x.what)).toEqual(["a password in a URL (bench:s3cr…(14 chars)@…)"]);
    expect(findSecrets("job/job.log", "line\nexport OPENAI_API_KEY=abcdefghijklmnop\n", "full").map((x) => `${x.field} ${x.what}`)).toEqual(["line 2 OPENAI_API_KEY=abcd…(16 chars)"]);
  });

  it("in run output, only token formats and the trajectory's agent record", () => {
    const pane = "mysql -u root --password: hunter2hunter2\npostgres://app:apppassword@db/app\nexport KEY=sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv\n";
    expect(findSecrets("j/t/agent/terminus_2.pane", pane, "run-output").map((x) => `${x.field} ${x.what}`)).toEqual(["line 3 an OpenAI/Anthropic-style API key (sk-a…(35 chars))"]);
    const traj = JSON.stringify({ agent: { name: "terminus-2", extra: { llm_kwargs: { api_key: "abcdefgh12345678" } } }, steps: [{ message: "password: hunter2hunter2" }] });
    expect(findSecrets("j/t/agent/trajectory.json", traj, "run-output").map((x) => x.field)).toEqual(["agent.extra.llm_kwargs.api_key"]);
  });
});

describe("summarizeScore", () => {
  it("labels three CI methods: binomial over trials, clustered by task, over attempt-runs", () => {
    const s = summarizeScore([
      { task: "a", reward: 1, errored: false, startedAt: "1" },
      { task: "a", reward: 1, errored: false, startedAt: "2" },
      { task: "b", reward: 0, errored: true, startedAt: "1" },
      { task: "b", reward: 1, errored: false, startedAt: "2" },
    ]);
    expect(s).toMatchObject({ trials: 4, tasks: 2, passed: 3, zeroReward: 1, errors: 1, score: 0.75, attemptRuns: 2 });
    expect(s.ci.binomial).toBeCloseTo(1.96 * Math.sqrt((0.75 * 0.25) / 4), 12);
    // Task means 1 and 0.5; run means 0.5 (first attempts) and 1 (second): both sd √0.125, over √2.
    expect(s.ci.clusteredByTask).toBeCloseTo((1.96 * Math.sqrt(0.125)) / Math.SQRT2, 12);
    expect(s.ci.attemptRuns).toBeCloseTo((1.96 * Math.sqrt(0.125)) / Math.SQRT2, 12);
  });

  it("seed 004's 392/445 gives the per-trial binomial ±3.0 pp, not its ±1.7", () => {
    const trials = Array.from({ length: 445 }, (_, i) => ({ task: `t${i % 89}`, reward: i < 392 ? 1 : 0, errored: false, startedAt: String(i) }));
    expect(((summarizeScore(trials).ci.binomial ?? 0) * 100).toFixed(1)).toBe("3.0");
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
