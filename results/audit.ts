// The audit proper: pure functions from parsed job records to an AuditReport. No file system here; see
// load.ts for reading job directories.
import { asRecord, HarborConfig, interruptedWithoutRecord, JobResult, parseTime, redactSecrets, secondsBetween, TrialResult } from "./harbor";
import { configDeviations } from "./leaderboard";
import { Override } from "./overrides";
import { AUDIT_SCHEMA_VERSION, AuditReport, AuditTrial, Outcome, Phases, Score, Tokens } from "./schema";
import { Category, CATEGORIES, classifyTrial, Evidence, isScored, scoringDependsOnLogs } from "./taxonomy";

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
  /** Read from trial.log (results/harbor.ts cancelledAfterException); absent when not read. */
  cancelledAfterException?: boolean;
  /** Finished with neither exception nor reward: a stop landed in it (results/harbor.ts interruptedWithoutRecord). */
  interruptedWithoutRecord?: boolean;
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
    ...(interruptedWithoutRecord(r) ? { interruptedWithoutRecord: true } : {}),
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
  "per task, trials are replayed oldest to newest by finished_at (UTC offsets honoured) across all given jobs and " +
  "passes into attemptsPerTask slots. A genuine trial (a reward, or an error the audit scores) takes a free slot, " +
  "else the oldest unscored slot, else the oldest slot: the newest genuine result counts. An infra/setup/cancelled " +
  "attempt takes a free slot or the oldest unscored slot, never a genuine one; when every slot is genuine it is " +
  "superseded itself. Everything displaced is listed as superseded";

/** Why a trial does not count. */
export type SupersededReason = "replaced-by-newer" | "unscored-after-genuine";

export interface SupersededTrial {
  trial: TrialInput;
  reason: SupersededReason;
  /** The trial that took its slot; for an unscored attempt with one slot, the genuine trial that kept it. */
  by: TrialInput | null;
}

export interface TaskSelection {
  /** Newest first. */
  chosen: TrialInput[];
  /** Newest first. */
  superseded: SupersededTrial[];
}

/** Sort key: when the trial ended (else started), in epoch ms; timestamps with offsets compare as instants. */
function trialTime(t: TrialInput): number {
  return parseTime(t.finishedAt) ?? parseTime(t.startedAt) ?? -Infinity;
}

/**
 * Picks the trials that count. Harbor's own summary cannot be trusted across resume passes and rerun
 * jobs (seed 002), so newer trials replace older ones — but only a genuine trial may replace a genuine
 * one: an infra error or a cancellation in a later pass says nothing about the model (issue 13).
 * `isGenuine` is the audit's own "scored" test, so selection and scoring never disagree.
 */
export function selectCounted(
  jobs: readonly JobInput[],
  k: number,
  isGenuine: (t: TrialInput) => boolean,
): Map<string, TaskSelection> {
  interface Entry {
    t: TrialInput;
    jobIndex: number;
    at: number;
    genuine: boolean;
  }
  const byTask = new Map<string, Entry[]>();
  jobs.forEach((job, jobIndex) => {
    for (const t of job.trials) {
      const list = byTask.get(t.task) ?? [];
      list.push({ t, jobIndex, at: trialTime(t), genuine: isGenuine(t) });
      byTask.set(t.task, list);
    }
  });
  const newestFirst = (a: { at: number; jobIndex: number }, b: { at: number; jobIndex: number }) => b.at - a.at || b.jobIndex - a.jobIndex;
  const out = new Map<string, TaskSelection>();
  for (const task of [...byTask.keys()].sort()) {
    const list = byTask.get(task)!;
    // Ties: the job given later on the command line is newer; then the trial name, for a stable order.
    list.sort((a, b) => a.at - b.at || a.jobIndex - b.jobIndex || (a.t.trial < b.t.trial ? -1 : a.t.trial > b.t.trial ? 1 : 0));
    const slots: Entry[] = [];
    const superseded: (SupersededTrial & { entry: Entry })[] = [];
    for (const entry of list) {
      if (slots.length < k) {
        slots.push(entry);
        continue;
      }
      // Slots keep arrival order, so the first match is the oldest of its kind.
      let victim = slots.findIndex((s) => !s.genuine);
      if (victim < 0 && entry.genuine) victim = 0;
      if (victim < 0) {
        superseded.push({ entry, trial: entry.t, reason: "unscored-after-genuine", by: k === 1 ? slots[0].t : null });
        continue;
      }
      superseded.push({ entry: slots[victim], trial: slots[victim].t, reason: "replaced-by-newer", by: entry.t });
      slots.splice(victim, 1);
      slots.push(entry);
    }
    out.set(task, {
      chosen: slots.sort(newestFirst).map((x) => x.t),
      superseded: superseded.sort((a, b) => newestFirst(a.entry, b.entry)).map(({ trial, reason, by }) => ({ trial, reason, by })),
    });
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
  /** Log evidence of one trial; called at most once per trial, and only when the audit needs it. */
  evidenceFor?: (t: TrialInput) => readonly Evidence[];
  overrides?: readonly Override[];
  now?: Date;
}

type OverrideRecord = AuditReport["overrides"][number];

/** What an override whose trial is not the counted one tells the reader, and why it is not applied. */
function unappliedOverrideNote(o: Override, counted: readonly AuditTrial[], superseded: AuditReport["tasks"][number]["superseded"][number] | undefined): string {
  const countedText = counted.map((t) => `${t.trial} (raw ${t.outcome})`).join(", ");
  const why = !superseded
    ? `is not in the given jobs (\`harbor job resume\` deletes the trials it re-runs)`
    : superseded.reason === "replaced-by-newer"
      ? `was replaced by the newer trial ${superseded.by ?? "?"}`
      : "is an infra/setup/cancelled attempt that came after a genuine result and never counted";
  const agrees = o.verdict !== "excluded" && counted.length > 0 && counted.every((t) => t.outcome === o.verdict);
  return (
    `override for task '${o.task}' names trial '${o.trial}', which ${why}; counted: ${countedText}. ` +
    `The verdict was judged on '${o.trial}', so it is not applied` +
    (agrees ? `; the counted trial's raw outcome is already ${o.verdict}` : `: re-judge the counted trial and name it in the override`)
  );
}

/** Builds the whole audit report. Throws when an override names a task that is not in the run. */
export function buildAudit(jobs: readonly JobInput[], opts: AuditOptions = {}): AuditReport {
  if (jobs.length === 0) throw new Error("audit needs at least one job directory");
  const evidenceCache = new Map<string, readonly Evidence[]>();
  const evidenceOf = (t: TrialInput): Evidence[] => {
    let ev = evidenceCache.get(t.path);
    if (!ev) {
      ev = opts.evidenceFor ? opts.evidenceFor(t) : [];
      evidenceCache.set(t.path, ev);
    }
    return [...ev];
  };
  const isGenuine = (t: TrialInput): boolean => {
    const ev = scoringDependsOnLogs(t.reward, t.exceptionType, t.exceptionMessage) ? evidenceOf(t) : [];
    return isScored(t.reward, classifyTrial(t.reward, t.exceptionType, t.exceptionMessage, ev, t.interruptedWithoutRecord).category);
  };
  const overrides = opts.overrides ?? [];
  const k = attemptsPerTask(jobs);
  const selection = selectCounted(jobs, k, isGenuine);
  const warnings: string[] = [];

  const tasks: AuditReport["tasks"] = [];
  for (const [task, { chosen, superseded }] of selection) {
    const trials: AuditTrial[] = chosen.map((t) => {
      // Clean passes need no log evidence; everything else gets it for the taxonomy and the report.
      const cleanPass = t.reward !== null && t.reward >= 1 && t.exceptionType === null;
      const ev = cleanPass ? [] : evidenceOf(t);
      const c = classifyTrial(t.reward, t.exceptionType, t.exceptionMessage, ev, t.interruptedWithoutRecord);
      if (t.finishedAt === null) warnings.push(`${t.path}: result.json has no finished_at; ordered by started_at`);
      return {
        task,
        job: t.job,
        trial: t.trial,
        path: t.path,
        startedAt: t.startedAt,
        finishedAt: t.finishedAt,
        reward: t.reward,
        outcome: outcomeOf(t.reward),
        exceptionType: t.exceptionType,
        exceptionMessage: t.exceptionMessage,
        category: c.category,
        suspectedInfra: c.suspectedInfra,
        scored: isScored(t.reward, c.category),
        durationSec: t.durationSec,
        phases: t.phases,
        tokens: t.tokens,
        evidence: ev,
      };
    });
    tasks.push({
      task,
      trials,
      supersededTrials: superseded.map((s) => s.trial.path),
      superseded: superseded.map((s) => ({
        trial: s.trial.trial,
        path: s.trial.path,
        finishedAt: s.trial.finishedAt,
        outcome: outcomeOf(s.trial.reward),
        exceptionType: s.trial.exceptionType,
        scored: isGenuine(s.trial),
        reason: s.reason,
        by: s.by?.path ?? null,
      })),
    });
  }

  const allChosen = tasks.flatMap((t) => t.trials);
  const raw = computeScore(allChosen.map((t) => ({ ...t, excluded: false })));

  // Overrides: a verdict applies to the trial it was judged on. When that trial is not the counted one,
  // say so (and what counts instead) rather than failing the whole audit.
  const applied: OverrideRecord[] = [];
  const corrected = new Map<string, Scorable>(allChosen.map((t) => [t.path, { ...t, excluded: false }]));
  for (const o of overrides) {
    const entry = tasks.find((t) => t.task === o.task);
    if (!entry) {
      const known = tasks.slice(0, 5).map((t) => t.task).join(", ");
      throw new Error(`override for task '${o.task}': no such task in the given jobs (tasks include: ${known}…)`);
    }
    const matches = (t: { trial: string; path: string }) => t.trial === o.trial || t.path === o.trial;
    const targets = o.trial ? entry.trials.filter(matches) : entry.trials;
    const counted = entry.trials.map((t) => ({ path: t.path, outcome: t.outcome }));
    if (targets.length === 0) {
      const superseded = entry.superseded.find(matches);
      const note = unappliedOverrideNote(o, entry.trials, superseded);
      warnings.push(note);
      applied.push({
        task: o.task,
        trial: o.trial ?? null,
        verdict: o.verdict,
        reason: o.reason,
        evidence: o.evidence,
        rawOutcomes: [],
        status: superseded ? "not-counted" : "not-found",
        countedTrials: counted,
        note,
      });
      continue;
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
      status: "applied",
      countedTrials: counted,
      note: null,
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
