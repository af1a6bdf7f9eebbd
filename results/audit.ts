// The audit proper: pure functions from parsed job records to an AuditReport. No file system here; see
// load.ts for reading job directories.
import { asRecord, HarborConfig, JobResult, parseTime, redactSecrets, secondsBetween, TrialResult } from "./harbor";
import { configDeviations } from "./leaderboard";
import { Override } from "./overrides";
import { AUDIT_SCHEMA_VERSION, AuditReport, AuditTrial, Outcome, Phases, Score, Tokens } from "./schema";
import { Category, CATEGORIES, classifyTrial, Evidence, UNSCORED_CATEGORIES } from "./taxonomy";

export interface TrialInput {
  job: string;
  trial: string;
  /** "<job>/<trial>", relative to the jobs directory. */
  path: string;
  task: string;
  startedAt: string | null;
  finishedAt: string | null;
  reward: number | null;
  exceptionType: string | null;
  exceptionMessage: string | null;
  tokens: Tokens;
  phases: Phases;
  durationSec: number | null;
  /** The trial's own config.json (TrialConfig), when present; resume compares it with the job's. */
  config: HarborConfig | null;
}

export interface JobInput {
  name: string;
  dir: string;
  config: HarborConfig | null;
  result: JobResult | null;
  trials: TrialInput[];
  /** Trial dirs without a readable result.json (hard kill, or still running). */
  incompleteTrialDirs: string[];
  warnings: string[];
}

/** Converts one trial result.json into the audit's input record. */
export function trialInput(job: string, dirName: string, r: TrialResult): TrialInput {
  const rewards = r.verifier_result?.rewards ?? null;
  const reward = rewards && typeof rewards.reward === "number" ? rewards.reward : null;
  const ar = r.agent_result ?? null;
  return {
    job,
    trial: r.trial_name || dirName,
    path: `${job}/${dirName}`,
    task: r.task_name,
    startedAt: r.started_at ?? null,
    finishedAt: r.finished_at ?? null,
    reward,
    exceptionType: r.exception_info?.exception_type ?? null,
    exceptionMessage: r.exception_info?.exception_message ? (redactSecrets(r.exception_info.exception_message) as string) : null,
    tokens: {
      input: ar?.n_input_tokens ?? 0,
      cache: ar?.n_cache_tokens ?? 0,
      output: ar?.n_output_tokens ?? 0,
      costUsd: ar?.cost_usd ?? null,
    },
    phases: {
      environmentSetup: secondsBetween(r.environment_setup?.started_at, r.environment_setup?.finished_at),
      agentSetup: secondsBetween(r.agent_setup?.started_at, r.agent_setup?.finished_at),
      agentExecution: secondsBetween(r.agent_execution?.started_at, r.agent_execution?.finished_at),
      verifier: secondsBetween(r.verifier?.started_at, r.verifier?.finished_at),
    },
    durationSec: secondsBetween(r.started_at, r.finished_at),
    config: r.config ? asRecord(r.config) : null,
  };
}

/** How many trials per task count: the largest `n_attempts` among the jobs (Harbor default 1). */
export function attemptsPerTask(jobs: readonly JobInput[]): number {
  let k = 1;
  for (const j of jobs) {
    const n = j.config?.n_attempts;
    if (typeof n === "number" && Number.isInteger(n) && n > k) k = n;
  }
  return k;
}

export const SELECTION_RULE =
  "per task, trials are replayed oldest to newest by finished_at across all given jobs and passes (ties: the job " +
  "given later wins) into attemptsPerTask slots; once the slots are full, a newer trial replaces the oldest trial " +
  "that errored with an infra/setup/cancelled exception type, else the oldest trial. With one attempt per task " +
  "this is simply the latest finished trial; replaced trials are superseded";

/** Trials a mop-up pass exists to replace: unrewarded, with an infra/setup/cancelled exception type or message. */
function replaceableFirst(t: TrialInput): boolean {
  if (t.reward !== null || !t.exceptionType) return false;
  const c = classifyTrial(t.reward, t.exceptionType, t.exceptionMessage, []).category;
  return c !== null && UNSCORED_CATEGORIES.has(c);
}

/**
 * Picks the trials that count. Harbor's own summary cannot be trusted across resume passes and rerun
 * jobs (seed 002), so newer trials replace older ones. With k attempts per task a rerun of two
 * infra-errored attempts must replace those two, not the two oldest (which may be genuine results).
 */
export function selectLatest(
  jobs: readonly JobInput[],
  k: number,
): Map<string, { chosen: TrialInput[]; superseded: TrialInput[] }> {
  const byTask = new Map<string, { t: TrialInput; jobIndex: number; at: number }[]>();
  jobs.forEach((job, jobIndex) => {
    for (const t of job.trials) {
      const list = byTask.get(t.task) ?? [];
      list.push({ t, jobIndex, at: parseTime(t.finishedAt) ?? parseTime(t.startedAt) ?? -Infinity });
      byTask.set(t.task, list);
    }
  });
  const out = new Map<string, { chosen: TrialInput[]; superseded: TrialInput[] }>();
  for (const task of [...byTask.keys()].sort()) {
    const list = byTask.get(task)!;
    list.sort((a, b) => a.at - b.at || a.jobIndex - b.jobIndex || (a.t.trial < b.t.trial ? -1 : a.t.trial > b.t.trial ? 1 : 0));
    const slots: typeof list = [];
    const superseded: typeof list = [];
    for (const entry of list) {
      if (slots.length < k) {
        slots.push(entry);
        continue;
      }
      // Slots keep arrival order, so the first match is the oldest of its kind.
      let victim = slots.findIndex((s) => replaceableFirst(s.t));
      if (victim < 0) victim = 0;
      superseded.push(slots[victim]);
      slots.splice(victim, 1);
      slots.push(entry);
    }
    const newestFirst = (a: (typeof list)[number], b: (typeof list)[number]) => b.at - a.at || b.jobIndex - a.jobIndex;
    out.set(task, { chosen: slots.sort(newestFirst).map((x) => x.t), superseded: superseded.sort(newestFirst).map((x) => x.t) });
  }
  return out;
}

export function outcomeOf(reward: number | null): Outcome {
  if (reward === null) return "errored";
  return reward >= 1 ? "passed" : "failed";
}

interface Scorable {
  task: string;
  reward: number | null;
  outcome: Outcome;
  scored: boolean;
  excluded: boolean;
}

/** Harbor-style mean (missing reward = 0) plus the pass rate over scored trials. */
export function computeScore(items: readonly Scorable[]): Score {
  const kept = items.filter((i) => !i.excluded);
  const sumReward = kept.reduce((s, i) => s + (i.reward ?? 0), 0);
  const passed = kept.filter((i) => i.outcome === "passed").length;
  const scored = kept.filter((i) => i.scored).length;
  return {
    nTasks: new Set(kept.map((i) => i.task)).size,
    nTrials: kept.length,
    sumReward,
    mean: kept.length ? sumReward / kept.length : null,
    passed,
    failed: kept.filter((i) => i.outcome === "failed").length,
    errored: kept.filter((i) => i.outcome === "errored").length,
    unscored: kept.length - scored,
    excluded: items.length - kept.length,
    scored,
    passRate: scored ? passed / scored : null,
  };
}

function sumTokens(trials: readonly { tokens: Tokens }[]): Tokens {
  let costSeen = false;
  const t = { input: 0, cache: 0, output: 0, costUsd: 0 as number | null };
  for (const x of trials) {
    t.input += x.tokens.input;
    t.cache += x.tokens.cache;
    t.output += x.tokens.output;
    if (x.tokens.costUsd !== null) {
      costSeen = true;
      t.costUsd = (t.costUsd ?? 0) + x.tokens.costUsd;
    }
  }
  if (!costSeen) t.costUsd = null;
  return t;
}

function quantile(sorted: readonly number[], q: number): number | null {
  if (sorted.length === 0) return null;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[idx];
}

export interface AuditOptions {
  evidence?: ReadonlyMap<string, Evidence[]>;
  overrides?: readonly Override[];
  now?: Date;
}

/** Builds the whole audit report. Throws when an override names a task or trial that is not in the run. */
export function buildAudit(jobs: readonly JobInput[], opts: AuditOptions = {}): AuditReport {
  if (jobs.length === 0) throw new Error("audit needs at least one job directory");
  const evidence = opts.evidence ?? new Map<string, Evidence[]>();
  const overrides = opts.overrides ?? [];
  const k = attemptsPerTask(jobs);
  const selection = selectLatest(jobs, k);
  const warnings: string[] = [];

  const tasks: AuditReport["tasks"] = [];
  for (const [task, { chosen, superseded }] of selection) {
    const trials: AuditTrial[] = chosen.map((t) => {
      const ev = evidence.get(t.path) ?? [];
      const c = classifyTrial(t.reward, t.exceptionType, t.exceptionMessage, ev);
      const outcome = outcomeOf(t.reward);
      const scored = outcome !== "errored" || !(c.category && UNSCORED_CATEGORIES.has(c.category));
      if (t.finishedAt === null) warnings.push(`${t.path}: result.json has no finished_at; ordered by started_at`);
      return {
        task,
        job: t.job,
        trial: t.trial,
        path: t.path,
        startedAt: t.startedAt,
        finishedAt: t.finishedAt,
        reward: t.reward,
        outcome,
        exceptionType: t.exceptionType,
        exceptionMessage: t.exceptionMessage,
        category: c.category,
        suspectedInfra: c.suspectedInfra,
        scored,
        durationSec: t.durationSec,
        phases: t.phases,
        tokens: t.tokens,
        evidence: ev,
      };
    });
    tasks.push({ task, trials, supersededTrials: superseded.map((s) => s.path) });
  }

  const allChosen = tasks.flatMap((t) => t.trials);
  const raw = computeScore(allChosen.map((t) => ({ ...t, excluded: false })));

  // Overrides: validate every entry against the chosen trials, then score the corrected view.
  const applied: AuditReport["overrides"] = [];
  const corrected = new Map<string, Scorable>(allChosen.map((t) => [t.path, { ...t, excluded: false }]));
  for (const o of overrides) {
    const entry = tasks.find((t) => t.task === o.task);
    if (!entry) {
      const known = tasks.slice(0, 5).map((t) => t.task).join(", ");
      throw new Error(`override for task '${o.task}': no such task in the given jobs (tasks include: ${known}…)`);
    }
    const targets = o.trial ? entry.trials.filter((t) => t.trial === o.trial || t.path === o.trial) : entry.trials;
    if (targets.length === 0) {
      throw new Error(
        `override for task '${o.task}' names trial '${o.trial}', which is not a counted trial ` +
          `(counted: ${entry.trials.map((t) => t.trial).join(", ")})`,
      );
    }
    for (const t of targets) {
      corrected.set(t.path, {
        task: t.task,
        reward: o.verdict === "passed" ? 1 : 0,
        outcome: o.verdict === "passed" ? "passed" : "failed",
        scored: true,
        excluded: o.verdict === "excluded",
      });
    }
    applied.push({
      task: o.task,
      trial: o.trial ?? null,
      verdict: o.verdict,
      reason: o.reason,
      evidence: o.evidence,
      rawOutcomes: targets.map((t) => t.outcome),
    });
  }

  const taxonomy = CATEGORIES.map((category: Category) => {
    const trials = allChosen.filter((t) => t.category === category).map((t) => t.path);
    return { category, count: trials.length, trials };
  }).filter((c) => c.count > 0);

  const allTrials = jobs.flatMap((j) => j.trials);
  const starts = allTrials.map((t) => parseTime(t.startedAt)).filter((x): x is number => x !== null);
  const ends = allTrials.map((t) => parseTime(t.finishedAt)).filter((x): x is number => x !== null);
  const durations = allChosen.map((t) => t.durationSec).filter((x): x is number => x !== null).sort((a, b) => a - b);
  const phaseSum = (key: keyof Phases): number | null => {
    const v = allChosen.map((t) => t.phases[key]).filter((x): x is number => x !== null);
    return v.length ? v.reduce((a, b) => a + b, 0) : null;
  };

  const deviations = jobs.flatMap((j) => (j.config ? configDeviations(j.config).map((d) => `${j.name}: ${d}`) : []));
  for (const j of jobs) {
    warnings.push(...j.warnings.map((w) => `${j.name}: ${w}`));
    if (!j.result) warnings.push(`${j.name}: no job result.json`);
    else if (!j.result.finished_at) {
      warnings.push(`${j.name}: job result.json finished_at is null — the job was stopped or is still running`);
    }
    if (j.incompleteTrialDirs.length) {
      warnings.push(
        `${j.name}: ${j.incompleteTrialDirs.length} trial dir(s) without result.json ignored ` +
          `(${j.incompleteTrialDirs.slice(0, 3).join(", ")}${j.incompleteTrialDirs.length > 3 ? ", …" : ""})`,
      );
    }
  }

  return {
    kind: "reprobench.audit",
    schemaVersion: AUDIT_SCHEMA_VERSION,
    generatedAt: (opts.now ?? new Date()).toISOString(),
    selection: { rule: SELECTION_RULE, attemptsPerTask: k },
    jobs: jobs.map((j) => ({
      name: j.name,
      dir: j.dir,
      complete: Boolean(j.result?.finished_at),
      startedAt: j.result?.started_at ?? null,
      finishedAt: j.result?.finished_at ?? null,
      nTrialDirs: j.trials.length + j.incompleteTrialDirs.length,
      incompleteTrialDirs: j.incompleteTrialDirs,
      warnings: j.warnings,
    })),
    runConditions: { leaderboardComparable: deviations.length === 0, deviations },
    tasks,
    scores: { raw, corrected: computeScore([...corrected.values()]) },
    overrides: applied,
    taxonomy,
    suspectedInfra: allChosen.filter((t) => t.suspectedInfra).map((t) => t.path),
    tokens: { chosen: sumTokens(allChosen), allTrials: sumTokens(allTrials) },
    durations: {
      wallClockSec: starts.length && ends.length ? Math.max(0, (Math.max(...ends) - Math.min(...starts)) / 1000) : null,
      trialSec: {
        median: quantile(durations, 0.5),
        p90: quantile(durations, 0.9),
        max: durations.length ? durations[durations.length - 1] : null,
        sum: durations.reduce((a, b) => a + b, 0),
      },
      phaseSumSec: {
        environmentSetup: phaseSum("environmentSetup"),
        agentSetup: phaseSum("agentSetup"),
        agentExecution: phaseSum("agentExecution"),
        verifier: phaseSum("verifier"),
      },
    },
    warnings,
  };
}
