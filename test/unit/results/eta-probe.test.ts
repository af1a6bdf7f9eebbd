// The ETA's view of the job: the probe (results/remote/status-probe.sh, run here with bash and jq) lists
// every task of the job's local datasets with its agent and verifier timeouts, status.ts turns them into
// the pending trials' budgets in Harbor's order, and results/eta.ts weighs them.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { durationFromEarlier, EARLIER_PACE_MIN_TASKS, earlierPace, estimateRemaining } from "../../../results/eta";
import { buildStatus, ETA_SETUP_ALLOWANCE_SEC, pendingTrials, type Probe, ProbeSchema, renderStatus, taskBudgetSec, trialBudgetSec } from "../../../results/status";
import { tempDir, writeJob } from "../../fixtures/results/build";

const repoRoot = path.resolve(__dirname, "../../..");
const probeScript = fs.readFileSync(path.join(repoRoot, "results/remote/status-probe.sh"), "utf8");

/** Runs the probe script locally (bash -s, inputs exported first, as over SSH); systemctl from `bin`. */
function probe(env: Record<string, string>, bin: string): Probe {
  const prelude = Object.entries(env).map(([k, v]) => `export ${k}='${v.replace(/'/g, `'\\''`)}'`).join("\n");
  const r = spawnSync("bash", ["-s"], { input: `${prelude}\n${probeScript}`, encoding: "utf8", env: { ...process.env, PATH: `${bin}:${process.env.PATH}` } });
  if (r.status !== 0) throw new Error(`probe failed: ${r.stderr}`);
  return ProbeSchema.parse(JSON.parse(r.stdout.trim().split("\n").pop()!));
}

const MIN = 60_000;

/** A local dataset's entries in the order Harbor lists them (LocalDatasetConfig: Path.iterdir()). */
function harborOrder(dir: string): string[] {
  const r = spawnSync("python3", ["-c", "import pathlib, sys\nfor p in pathlib.Path(sys.argv[1]).iterdir(): print(p.name)", dir], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`python3: ${r.stderr}`);
  return r.stdout.trim().split("\n");
}

describe("the probe lists the job's tasks with their timeouts", () => {
  let root: string;
  let bin: string;
  let dataset: string;
  const now = Date.now();
  const task = (dir: string, toml: string) => {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "task.toml"), toml);
  };
  beforeAll(() => {
    root = tempDir("reprobench-eta-probe-");
    dataset = path.join(root, "dataset");
    // Both tables, in either order, a comment after the value; a verifier without timeout_sec; a value
    // that is no number; a directory without task.toml (not a task); one extra task outside the dataset.
    task(path.join(dataset, "alpha"), 'schema_version = "1.1"\n[verifier]\ntimeout_sec = 900.0\n\n[agent]\ntimeout_sec = 900.0  # seconds\n');
    task(path.join(dataset, "bravo"), "[agent]\ntimeout_sec = 3600\n[verifier]\ntimeout_sec = 1200.0\n[environment]\ntimeout_sec = 5\n");
    task(path.join(dataset, "charlie"), "[agent]\ntimeout_sec = 750.0\n[verifier]\nenv = {}\n");
    task(path.join(dataset, "delta"), '[agent]\ntimeout_sec = "soon"\n[verifier]\ntimeout_sec = 60.0\n');
    fs.mkdirSync(path.join(dataset, "notes"), { recursive: true });
    task(path.join(root, "extra", "echo"), "[agent]\ntimeout_sec = 12000.0\n[verifier]\ntimeout_sec = 12000.0\n");
    bin = path.join(root, "bin");
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, "systemctl"), "#!/bin/sh\nprintf 'ActiveState=active\\nSubState=running\\nMainPID=7\\nResult=success\\n'\n", { mode: 0o755 });
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  const job = (name: string, config: Record<string, unknown>) => {
    const dir = writeJob(path.join(root, "jobs"), {
      name,
      config: { n_concurrent_trials: 2, ...config },
      finished: false,
      trials: [
        { task: "alpha", reward: 1, start: new Date(now - 30 * MIN).toISOString(), durationSec: 600 },
        { task: "bravo", start: new Date(now - 5 * MIN).toISOString(), noResult: true, configPatch: { task: { path: path.join(dataset, "bravo"), source: "dataset" } } },
      ],
    });
    const result = JSON.parse(fs.readFileSync(path.join(dir, "result.json"), "utf8"));
    fs.writeFileSync(path.join(dir, "result.json"), JSON.stringify({ ...result, started_at: new Date(now - 30 * MIN).toISOString(), n_total_trials: 5 }));
    return dir;
  };

  it("reads [agent] and [verifier] timeout_sec of every dataset task and of tasks[], null where there is none", () => {
    const p = probe({ JOB_DIR: job("listed", { datasets: [{ path: dataset }], tasks: [{ path: path.join(root, "extra", "echo") }] }) }, bin);
    const byName = new Map(p.job!.tasks!.map((t) => [t.task, t]));
    expect(Object.fromEntries(byName)).toEqual({
      alpha: { task: "alpha", agentTimeoutSec: 900, verifierTimeoutSec: 900 },
      bravo: { task: "bravo", agentTimeoutSec: 3600, verifierTimeoutSec: 1200 },
      charlie: { task: "charlie", agentTimeoutSec: 750, verifierTimeoutSec: null },
      delta: { task: "delta", agentTimeoutSec: null, verifierTimeoutSec: 60 },
      echo: { task: "echo", agentTimeoutSec: 12000, verifierTimeoutSec: 12000 },
    });
    // The dataset's tasks in Harbor's order (Path.iterdir), then tasks[].
    expect(p.job!.tasks!.map((t) => t.task)).toEqual([...harborOrder(dataset).filter((n) => n !== "notes"), "echo"]);
    // The running trial's own timeouts: the verifier's too now, and the trial's multipliers.
    expect(p.job!.timeouts).toEqual([expect.objectContaining({ taskTimeoutSec: 3600, verifierTimeoutSec: 1200, agentTimeoutMultiplier: 6 })]);
  });

  it("lists a dataset of many tasks in Harbor's order (the directory's own, not sorted): the order the pending trials start in", () => {
    const many = path.join(root, "many");
    // Created out of order, so that neither creation order nor the name's sorts it.
    for (let i = 0; i < 40; i++) task(path.join(many, `task-${String((i * 17) % 40).padStart(2, "0")}`), "[agent]\ntimeout_sec = 900.0\n");
    const p = probe({ JOB_DIR: job("many", { datasets: [{ path: many }] }) }, bin);
    expect(p.job!.tasks!.map((t) => t.task)).toEqual(harborOrder(many));
    expect(p.job!.tasks).toHaveLength(40);
  });

  it("lists nothing for a dataset that is not on this host, and still answers", () => {
    const p = probe({ JOB_DIR: job("elsewhere", { datasets: [{ path: path.join(root, "missing") }, { name: "terminal-bench", version: "2.1" }] }) }, bin);
    expect(p.job!.tasks).toEqual([]);
    expect(p.job!.trials).toHaveLength(2);
  });

  it("gives status the pending trials' budgets: a long-tier pending task makes the ETA longer", () => {
    const withTasks = probe({ UNIT: "harbor.service", JOB_DIR: job("budgets", { datasets: [{ path: dataset }], tasks: [{ path: path.join(root, "extra", "echo") }] }) }, bin);
    const report = (p: Probe) => buildStatus({ stack: "s", cluster: null, now: p.now, job: p.job, servers: [], router: null });
    const long = report(withTasks);
    // The same job with echo listed at 900 s instead of 12000 s.
    const short = report({ ...withTasks, job: { ...withTasks.job!, tasks: withTasks.job!.tasks!.map((t) => (t.task === "echo" ? { ...t, agentTimeoutSec: 900, verifierTimeoutSec: 900 } : t)) } });
    expect(long.eta).not.toBeNull();
    expect(long.eta!.remainingSec).toBeGreaterThan(short.eta!.remainingSec);
    // Without the listing (an older probe) the ETA still comes, from what the trials tell.
    expect(report({ ...withTasks, job: { ...withTasks.job!, tasks: undefined } }).eta).not.toBeNull();
  });

  it("reads result.json again when Harbor is rewriting it (a half-written file), a bounded number of times", () => {
    // A jq that fails its first N reads of the job's result.json (a counter file), as on a file caught
    // half written, then runs the real one.
    const realJq = spawnSync("sh", ["-c", "command -v jq"], { encoding: "utf8" }).stdout.trim();
    const flaky = path.join(root, "flaky-bin");
    fs.mkdirSync(flaky, { recursive: true });
    const counter = path.join(root, "jq-failures");
    fs.writeFileSync(
      path.join(flaky, "jq"),
      `#!/bin/sh\ncase "$*" in *"del(.trial_results)"*) n=$(cat '${counter}'); if [ "$n" -gt 0 ]; then echo $((n - 1)) >'${counter}'; echo 'jq: parse error: Unfinished JSON term' >&2; exit 2; fi;; esac\nexec '${realJq}' "$@"\n`,
      { mode: 0o755 },
    );
    const dir = job("rewriting", { datasets: [{ path: dataset }] });
    fs.writeFileSync(counter, "2");
    const twice = probe({ UNIT: "harbor.service", JOB_DIR: dir }, `${flaky}:${bin}`);
    expect(fs.readFileSync(counter, "utf8").trim()).toBe("0");
    expect(twice.job!.result?.n_total_trials).toBe(5);
    // Never readable: the probe still answers, without the totals, after its 5 tries.
    fs.writeFileSync(counter, "99");
    const never = probe({ UNIT: "harbor.service", JOB_DIR: dir }, `${flaky}:${bin}`);
    expect(fs.readFileSync(counter, "utf8").trim()).toBe("94");
    expect(never.job!.result).toBeNull();
  });
});

describe("the probe reads the earlier jobs of the same tasks beside the job", () => {
  let root: string;
  let bin: string;
  let dataset: string;
  const now = Date.now();
  const config = (model: string, multiplier: number) => ({
    n_concurrent_trials: 2,
    n_attempts: 1,
    agent_timeout_multiplier: multiplier,
    agents: [{ name: "terminus-2", model_name: model, kwargs: { temperature: multiplier } }],
    datasets: [{ path: dataset }],
  });
  /** A job dir under jobs/, its config.json dated `ageMin` minutes ago (the probe takes the newest first). */
  const job = (name: string, cfg: Record<string, unknown>, ageMin: number, trials: Parameters<typeof writeJob>[1]["trials"], finished = true) => {
    const dir = writeJob(path.join(root, "jobs"), { name, config: cfg, finished, trials });
    const at = new Date(now - ageMin * MIN);
    fs.utimesSync(path.join(dir, "config.json"), at, at);
    return dir;
  };
  let current: string;
  beforeAll(() => {
    root = tempDir("reprobench-eta-earlier-");
    dataset = path.join(root, "dataset");
    for (const [task, sec] of [["alpha", 900], ["bravo", 900], ["charlie", 900]] as const) {
      fs.mkdirSync(path.join(dataset, task), { recursive: true });
      fs.writeFileSync(path.join(dataset, task, "task.toml"), `[agent]\ntimeout_sec = ${sec}.0\n[verifier]\ntimeout_sec = ${sec}.0\n`);
    }
    bin = path.join(root, "bin");
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, "systemctl"), "#!/bin/sh\nprintf 'ActiveState=active\\nSubState=running\\nMainPID=7\\nResult=success\\n'\n", { mode: 0o755 });
    const start = (minAgo: number) => new Date(now - minAgo * MIN).toISOString();
    // The 3× smoke run: charlie ran out of its 2700 s agent budget (and took setup and verifier besides).
    job("smoke-3x", config("openai/Qwen/Qwen3.8-27B", 3), 300, [
      { task: "alpha", reward: 1, start: start(300), durationSec: 400 },
      { task: "bravo", reward: 1, start: start(300), durationSec: 500 },
      { task: "charlie", reward: 0, exception: "AgentTimeoutError", start: start(290), durationSec: 2900 },
    ]);
    // Older, the same tasks: beyond EARLIER_JOBS=1. Another model: never.
    job("older-3x", config("openai/Qwen/Qwen3.8-27B", 3), 600, [{ task: "alpha", reward: 1, start: start(600), durationSec: 450 }]);
    job("other-model", config("openai/other", 3), 100, [{ task: "charlie", reward: 1, start: start(100), durationSec: 60 }]);
    // The 6× run: alpha done, bravo running, charlie pending.
    current = job("full-6x", config("openai/Qwen/Qwen3.8-27B", 6), 20, [
      { task: "alpha", reward: 1, start: start(20), durationSec: 420 },
      { task: "bravo", start: start(12), noResult: true },
    ], false);
    const result = JSON.parse(fs.readFileSync(path.join(current, "result.json"), "utf8"));
    fs.writeFileSync(path.join(current, "result.json"), JSON.stringify({ ...result, started_at: start(20), n_total_trials: 3 }));
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it("the newest ones with the same agent, model and datasets, never the job itself; EARLIER_JOBS limits them", () => {
    const all = probe({ UNIT: "harbor.service", JOB_DIR: current }, bin).job!.earlier!;
    expect(all.map((e) => e.jobName)).toEqual(["smoke-3x", "older-3x"]);
    expect(all[0].config).toMatchObject({ agent_timeout_multiplier: 3 });
    const charlie = all[0].trials.find((t) => t.dir.startsWith("charlie__"))!;
    expect(charlie.result).toMatchObject({ task_name: "charlie", exception_info: { exception_type: "AgentTimeoutError" } });
    expect(probe({ UNIT: "harbor.service", JOB_DIR: current, EARLIER_JOBS: "1" }, bin).job!.earlier!.map((e) => e.jobName)).toEqual(["smoke-3x"]);
    expect(probe({ UNIT: "harbor.service", JOB_DIR: current, EARLIER_JOBS: "0" }, bin).job!.earlier).toEqual([]);
  });

  it("refuses an EARLIER_JOBS that is no whole number, naming it", () => {
    expect(() => probe({ JOB_DIR: current, EARLIER_JOBS: "all" }, bin)).toThrow(/EARLIER_JOBS must be a whole number, got 'all'/);
  });

  it("status: the task that timed out at 3× is taken to run its 6× budget; the report names the earlier job", () => {
    const p = probe({ UNIT: "harbor.service", JOB_DIR: current, EARLIER_JOBS: "1" }, bin);
    const report = (job: Probe["job"]) => buildStatus({ stack: "s", cluster: null, now: p.now, job, servers: [], router: null });
    const withEarlier = report(p.job);
    const without = report({ ...p.job!, earlier: [] });
    expect(withEarlier.eta).toMatchObject({ earlierJobs: ["smoke-3x"], earlierTrials: 3 });
    expect(without.eta!.earlierJobs).toBeUndefined();
    // charlie: 2900 s at 3× (2700 s agent budget) → 2900 + 2700 s more at 6×, once a slot is free.
    expect(withEarlier.eta!.remainingSec).toBeGreaterThanOrEqual(2900 + 2700);
    expect(without.eta!.remainingSec).toBeLessThan(2900);
    expect(renderStatus(withEarlier)).toContain("and 3 trials of the same tasks in an earlier job (smoke-3x)");
  });
});

describe("durationFromEarlier", () => {
  const share = (b: number | null) => (b === null ? null : 0.9 * b);
  it("work that ended takes as long again, never past this budget", () => {
    expect(durationFromEarlier({ task: "a", durationSec: 500, budgetSec: 3000 }, 6000, share)).toBe(500);
    expect(durationFromEarlier({ task: "a", durationSec: 5000, budgetSec: 9000 }, 3000, share)).toBe(3000);
  });
  it("a timeout runs this budget, shifted by the change of budget; by timeoutSec when a budget is unknown", () => {
    expect(durationFromEarlier({ task: "a", durationSec: 2900, budgetSec: 3900, timedOut: true }, 6600, share)).toBe(2900 + 2700);
    expect(durationFromEarlier({ task: "a", durationSec: 2900, budgetSec: null, timedOut: true }, 6600, share)).toBeCloseTo(5940, 6);
    expect(durationFromEarlier({ task: "a", durationSec: 2900, budgetSec: 3900, timedOut: true }, null, share)).toBeNull();
  });
  it("work that ended earlier is scaled by this job's pace on the tasks both have finished (a timeout against its shifted duration)", () => {
    const earlier = [
      { task: "a", durationSec: 100, budgetSec: 6600 },
      { task: "b", durationSec: 200, budgetSec: 6600 },
      { task: "c", durationSec: 300, budgetSec: 6600 },
      { task: "slow", durationSec: 500, budgetSec: 6600 },
      { task: "t", durationSec: 2900, budgetSec: 3900, timedOut: true },
    ];
    // This job takes twice as long on a, b, c; t times out again, as long as its earlier run shifted by the
    // change of budget (2900 + 6600 − 3900): a timeout, whose ratio (1) is not the work's.
    const finished = [
      { task: "a", durationSec: 200, budgetSec: 6600 },
      { task: "b", durationSec: 400, budgetSec: 6600 },
      { task: "c", durationSec: 600, budgetSec: 6600 },
      { task: "t", durationSec: 5600, budgetSec: 6600, timedOut: true },
    ];
    expect(EARLIER_PACE_MIN_TASKS).toBe(3);
    expect(earlierPace({ finished, running: [], pending: [], earlier })).toBe(2);
    expect(earlierPace({ finished: finished.slice(0, 2), running: [], pending: [], earlier })).toBe(1);
    const e = estimateRemaining({ concurrency: 1, finished, running: [], pending: [{ task: "slow", budgetSec: 6600 }], earlier })!;
    // 500 s earlier, at this job's pace for work (2 on each of a, b, c): 1000 s in every draw.
    expect(e.remainingSec).toBe(1000);
    expect(e.lowSec).toBe(1000);
  });
  it("the pace counts the tasks still running here as 'at least this slow': the first to finish ran fast this time", () => {
    const earlier = ["a", "b", "c", "d", "e", "f"].map((task) => ({ task, durationSec: 100, budgetSec: 6600 }));
    // Three tasks finished at 0.9 of their earlier time; three run at 1.3 of it already.
    const finished = ["a", "b", "c"].map((task) => ({ task, durationSec: 90, budgetSec: 6600 }));
    const running = ["d", "e", "f"].map((task) => ({ task, elapsedSec: 130, budgetSec: 6600 }));
    expect(earlierPace({ finished, running: [], pending: [], earlier })).toBeCloseTo(0.9, 9);
    expect(earlierPace({ finished, running, pending: [], earlier })).toBeCloseTo(0.9, 9);
    // Running trials past every finished ratio are late, not timeouts: they end within a tenth of their
    // elapsed time more (never run to their 6600 s budget), and the pending one takes ~90 s after them.
    const e = estimateRemaining({ concurrency: 3, finished, running, pending: [{ task: "a", budgetSec: 6600 }], earlier })!;
    expect(e.remainingSec).toBeLessThanOrEqual(130 * 0.1 + 90 + 1e-9);
    expect(e.highSec).toBeLessThan(300);
  });
  it("a task's own finished attempt in this job outweighs its earlier trials", () => {
    const finished = [{ task: "a", durationSec: 300, budgetSec: 6600 }];
    const earlier = [{ task: "a", durationSec: 2900, budgetSec: 3900, timedOut: true }];
    const own = estimateRemaining({ concurrency: 1, finished, running: [], pending: [{ task: "a", budgetSec: 6600 }], earlier })!;
    expect(own.remainingSec).toBe(300);
    const fromEarlier = estimateRemaining({ concurrency: 1, finished, running: [], pending: [{ task: "b", budgetSec: 6600 }], earlier: [{ ...earlier[0], task: "b" }] })!;
    expect(fromEarlier.remainingSec).toBe(2900 + 2700);
  });
});

describe("budgets", () => {
  it("a running trial: agent timeout, the task's verifier timeout × its multiplier, setup", () => {
    expect(trialBudgetSec({ dir: "x__1", taskTimeoutSec: 900, verifierTimeoutSec: 1800, agentTimeoutMultiplier: 6, verifierTimeoutMultiplier: 2 })).toBe(5400 + 3600 + ETA_SETUP_ALLOWANCE_SEC);
    // No verifier timeout read: like the agent's base; the timeout multiplier stands in for missing ones.
    expect(trialBudgetSec({ dir: "x__1", taskTimeoutSec: 900, timeoutMultiplier: 2 })).toBe(1800 + 1800 + ETA_SETUP_ALLOWANCE_SEC);
    expect(trialBudgetSec({ dir: "x__1", taskTimeoutSec: null, verifierTimeoutSec: 60 })).toBeNull();
  });

  it("a task not started yet: its task.toml and the job's config.json, as Harbor will compute it", () => {
    const t = { task: "bravo", agentTimeoutSec: 3600, verifierTimeoutSec: 1200 };
    expect(taskBudgetSec(t, { agent_timeout_multiplier: 6 })).toBe(21600 + 1200 + ETA_SETUP_ALLOWANCE_SEC);
    expect(taskBudgetSec(t, { timeout_multiplier: 2, agents: [{ max_timeout_sec: 1000 }] })).toBe(2000 + 2400 + ETA_SETUP_ALLOWANCE_SEC);
    expect(taskBudgetSec(t, { agents: [{ override_timeout_sec: 100 }], verifier: { override_timeout_sec: 50 } })).toBe(100 + 50 + ETA_SETUP_ALLOWANCE_SEC);
    expect(taskBudgetSec({ task: "delta", agentTimeoutSec: null, verifierTimeoutSec: 60 }, null)).toBeNull();
  });
});

describe("pendingTrials: Harbor's order", () => {
  const budget = (task: string) => ({ a: 1, b: 2, c: 3 })[task] ?? null;
  it("attempt by attempt over the listing; a task's started attempts are not pending again", () => {
    // a has 2 of 3 attempts started, b 1, c none: round 0 c; round 1 b, c; round 2 a, b, c.
    expect(pendingTrials(["a", "b", "c"], new Map([["a", 2], ["b", 1]]), 3, 6, budget).map((t) => t.task)).toEqual(["c", "b", "c", "a", "b", "c"]);
    expect(pendingTrials(["a", "b", "c"], new Map([["a", 2], ["b", 1]]), 3, 2, budget)).toEqual([{ task: "c", budgetSec: 3 }, { task: "b", budgetSec: 2 }]);
  });
  it("tasks seen only in trial dirs come after the listing; a short listing is padded with unknown trials", () => {
    expect(pendingTrials(["b"], new Map([["z", 1]]), 2, 4, budget)).toEqual([{ task: "b", budgetSec: 2 }, { task: "b", budgetSec: 2 }, { task: "z", budgetSec: null }, { budgetSec: null }]);
  });
});

describe("estimateRemaining", () => {
  const finished = Array.from({ length: 10 }, (_, i) => ({ task: `f${i}`, durationSec: 300 + 10 * i, budgetSec: 6600 }));
  it("a trial running past every finished one in budget units runs to its budget, never past it", () => {
    // One trial has run 4000 s of a 6600 s budget while the others took ~5 minutes: it times out.
    const e = estimateRemaining({ concurrency: 4, finished, running: [{ task: "long", elapsedSec: 4000, budgetSec: 6600 }], pending: [] })!;
    expect(e.remainingSec).toBeCloseTo(2600, 6);
    expect(e.highSec).toBeLessThanOrEqual(2600 + 1e-6);
  });
  it("a pending attempt of a task whose attempt runs long queues as long (attempts of one task behave alike)", () => {
    const running = [{ task: "long", elapsedSec: 4000, budgetSec: 6600 }];
    const sibling = estimateRemaining({ concurrency: 1, finished, running, pending: [{ task: "long", budgetSec: 6600 }] })!;
    const stranger = estimateRemaining({ concurrency: 1, finished, running, pending: [{ task: "other", budgetSec: 6600 }] })!;
    // One slot: the pending attempt starts when the long one ends and takes a whole timeout too.
    expect(sibling.remainingSec).toBeGreaterThan(2600 + 5000);
    expect(stranger.remainingSec).toBeLessThan(2600 + 1000);
  });
});
