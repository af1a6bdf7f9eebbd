// Terminal-Bench leaderboard static checks (peers-and-style.md §B2, seed 004): what the submission bot
// rejects, run locally before opening the PR. Pure: works on a SubmissionSnapshot read by load.ts.
import { parse as parseYaml } from "yaml";
import { asArray, asRecord, HarborConfig, TrialResultSchema } from "./harbor";

const MULTIPLIERS = [
  "timeout_multiplier",
  "agent_timeout_multiplier",
  "verifier_timeout_multiplier",
  "agent_setup_timeout_multiplier",
  "environment_build_timeout_multiplier",
] as const;
const AGENT_TIMEOUT_OVERRIDES = ["override_timeout_sec", "override_setup_timeout_sec", "max_timeout_sec"] as const;
const VERIFIER_TIMEOUT_OVERRIDES = ["override_timeout_sec", "max_timeout_sec"] as const;
const RESOURCE_OVERRIDES = ["override_cpus", "override_memory_mb", "override_storage_mb", "override_gpus"] as const;

const isSet = (v: unknown): boolean => v !== undefined && v !== null;

/**
 * Where a job or trial config departs from leaderboard conditions: any timeout multiplier other than
 * 1.0, any agent/verifier timeout override, any resource override. Works for JobConfig (`agents[]`) and
 * TrialConfig (`agent`). Such a run is a reproduction, not a submission.
 */
export function configDeviations(config: HarborConfig): string[] {
  const out: string[] = [];
  for (const m of MULTIPLIERS) {
    const v = config[m];
    if (isSet(v) && v !== 1) out.push(`${m} is ${JSON.stringify(v)} (leaderboard requires 1.0)`);
  }
  const agents: [string, Record<string, unknown>][] = config.agent
    ? [["agent", asRecord(config.agent)]]
    : asArray(config.agents).map((a, i) => [`agents[${i}]`, asRecord(a)]);
  for (const [where, agent] of agents) {
    for (const f of AGENT_TIMEOUT_OVERRIDES) {
      if (isSet(agent[f])) out.push(`${where}.${f} is ${JSON.stringify(agent[f])} (no timeout overrides allowed)`);
    }
  }
  const verifier = asRecord(config.verifier);
  for (const f of VERIFIER_TIMEOUT_OVERRIDES) {
    if (isSet(verifier[f])) out.push(`verifier.${f} is ${JSON.stringify(verifier[f])} (no timeout overrides allowed)`);
  }
  const env = asRecord(config.environment);
  for (const f of RESOURCE_OVERRIDES) {
    if (isSet(env[f])) out.push(`environment.${f} is ${JSON.stringify(env[f])} (no resource overrides allowed)`);
  }
  return out;
}

export const MIN_TRIALS_PER_TASK = 5;
export const METADATA_FIELDS = ["agent_url", "agent_display_name", "agent_org_display_name"] as const;
export const MODEL_FIELDS = ["model_name", "model_provider", "model_display_name", "model_org_display_name"] as const;
/** Run-side leftovers seed 004 deletes before submitting. */
const LEFTOVER_PATTERNS = [/^job\.log$/, /^job-log-index/, /^killed-active-trials-.*\.tsv$/, /-preflight\.txt$/, /-run-(profile|status)\.json$/];

export interface TrialSnapshot {
  dir: string;
  /** Raw result.json text, or null when the file is missing. */
  resultText: string | null;
  /** Raw agent/trajectory.json text, or null when missing. */
  trajectoryText: string | null;
  config: HarborConfig | null;
}

export interface JobSnapshot {
  name: string;
  config: HarborConfig | null;
  resultText: string | null;
  topLevelFiles: string[];
  trials: TrialSnapshot[];
}

export interface SubmissionSnapshot {
  dirName: string;
  metadataText: string | null;
  jobs: JobSnapshot[];
}

export type ViolationKind = "structure" | "conditions";

export interface Violation {
  kind: ViolationKind;
  rule: string;
  message: string;
  /** Job/trial paths affected (grouped so 445 identical findings read as one). */
  where: string[];
}

export interface LeaderboardVerdict {
  label: "submission" | "reproduction" | "invalid";
  summary: string;
  violations: Violation[];
  warnings: string[];
  counts: { jobs: number; trials: number; tasks: number; passed: number };
}

function add(list: Violation[], kind: ViolationKind, rule: string, message: string, where: string): void {
  const existing = list.find((v) => v.rule === rule && v.message === message);
  if (existing) existing.where.push(where);
  else list.push({ kind, rule, message, where: [where] });
}

/** Runs every static check; each violation is listed with where it occurs. */
export function checkSubmission(s: SubmissionSnapshot): LeaderboardVerdict {
  const violations: Violation[] = [];
  const warnings: string[] = [];

  if (!/^[^_]+(?:_[^_]+)*__.+$/.test(s.dirName)) {
    warnings.push(`submission dir '${s.dirName}' is not named <agent>__<model>`);
  }
  checkMetadata(s.metadataText, violations);

  if (s.jobs.length === 0) add(violations, "structure", "job-present", "no job directory (a dir with config.json) in the submission", s.dirName);
  if (s.jobs.length > 1) {
    warnings.push(`${s.jobs.length} job dirs (${s.jobs.map((j) => j.name).join(", ")}): make sure an old run is not left beside the new one (seed 004)`);
  }

  const trialsPerTask = new Map<string, number>();
  let nTrials = 0;
  let passed = 0;
  for (const job of s.jobs) {
    if (!job.config) add(violations, "structure", "job-config", "job config.json missing or not JSON", job.name);
    else {
      for (const d of configDeviations(job.config)) add(violations, "conditions", "run-conditions", d, `${job.name}/config.json`);
      const k = job.config.n_attempts ?? 1;
      // Only a warning: several k=1 jobs can still add up to five trials per task (checked below).
      if (typeof k === "number" && k < MIN_TRIALS_PER_TASK) warnings.push(`${job.name}: n_attempts is ${k}; the leaderboard runs -k ${MIN_TRIALS_PER_TASK}`);
    }
    if (job.resultText === null) add(violations, "structure", "job-result", "job result.json missing", job.name);
    else {
      try {
        const r = asRecord(JSON.parse(job.resultText));
        if (!r.finished_at) add(violations, "structure", "job-complete", "job result.json finished_at is null (job never completed)", job.name);
      } catch {
        add(violations, "structure", "job-result", "job result.json is not valid JSON", job.name);
      }
    }
    for (const f of job.topLevelFiles) {
      if (LEFTOVER_PATTERNS.some((p) => p.test(f))) warnings.push(`${job.name}/${f}: run-side leftover; seed 004 removes it before submitting`);
    }

    for (const t of job.trials) {
      const where = `${job.name}/${t.dir}`;
      nTrials++;
      if (t.resultText === null) {
        add(violations, "structure", "trial-result", "trial has no result.json", where);
        continue;
      }
      let parsedJson: unknown;
      try {
        parsedJson = JSON.parse(t.resultText);
      } catch {
        add(violations, "structure", "trial-result", "trial result.json is not valid JSON", where);
        continue;
      }
      const parsed = TrialResultSchema.safeParse(parsedJson);
      if (!parsed.success) {
        const i = parsed.error.issues[0];
        add(violations, "structure", "trial-result", `trial result.json invalid: ${i.path.join(".")}: ${i.message}`, where);
        continue;
      }
      const r = parsed.data;
      trialsPerTask.set(r.task_name, (trialsPerTask.get(r.task_name) ?? 0) + 1);
      if (!r.finished_at) add(violations, "structure", "trial-complete", "trial result.json has no finished_at", where);
      const reward = r.verifier_result?.rewards?.reward;
      if (typeof reward === "number" && reward > 0) {
        passed += reward >= 1 ? 1 : 0;
        if (t.trajectoryText === null) add(violations, "structure", "trajectory", "passing trial has no agent/trajectory.json (ATIF required)", where);
        else if (!isTrajectory(t.trajectoryText)) add(violations, "structure", "trajectory", "agent/trajectory.json is not an ATIF JSON object", where);
      }
      const trialConfig = t.config ?? (r.config ? asRecord(r.config) : null);
      if (trialConfig) for (const d of configDeviations(trialConfig)) add(violations, "conditions", "run-conditions", `trial config: ${d}`, where);
    }
  }
  for (const [task, n] of [...trialsPerTask].sort()) {
    if (n < MIN_TRIALS_PER_TASK) add(violations, "structure", "trials-per-task", `fewer than ${MIN_TRIALS_PER_TASK} trials for the task`, `${task} (${n})`);
  }

  const structural = violations.some((v) => v.kind === "structure");
  const conditions = violations.filter((v) => v.kind === "conditions");
  const label = structural ? "invalid" : conditions.length ? "reproduction" : "submission";
  const summary =
    label === "submission"
      ? "passes the leaderboard's static checks"
      : label === "reproduction"
        ? `a reproduction, not a leaderboard submission: ${conditions.map((c) => c.message).filter((m, i, a) => a.indexOf(m) === i).slice(0, 3).join("; ")}`
        : `not a valid submission: ${violations.filter((v) => v.kind === "structure").length} structural rule(s) broken`;
  return { label, summary, violations, warnings, counts: { jobs: s.jobs.length, trials: nTrials, tasks: trialsPerTask.size, passed } };
}

function isTrajectory(text: string): boolean {
  try {
    const t = asRecord(JSON.parse(text));
    return Object.keys(t).length > 0 && (Array.isArray(t.steps) || typeof t.schema_version === "string");
  } catch {
    return false;
  }
}

function checkMetadata(text: string | null, violations: Violation[]): void {
  if (text === null) {
    add(violations, "structure", "metadata", "metadata.yaml missing", "metadata.yaml");
    return;
  }
  let meta: Record<string, unknown>;
  try {
    meta = asRecord(parseYaml(text));
  } catch (err) {
    add(violations, "structure", "metadata", `metadata.yaml does not parse: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}`, "metadata.yaml");
    return;
  }
  for (const f of METADATA_FIELDS) {
    if (typeof meta[f] !== "string" || (meta[f] as string).trim() === "") add(violations, "structure", "metadata", `metadata.yaml: ${f} missing or empty`, "metadata.yaml");
  }
  const models = asArray(meta.models);
  if (models.length === 0) add(violations, "structure", "metadata", "metadata.yaml: models must list at least one model", "metadata.yaml");
  models.forEach((m, i) => {
    const rec = asRecord(m);
    for (const f of MODEL_FIELDS) {
      if (typeof rec[f] !== "string" || (rec[f] as string).trim() === "") add(violations, "structure", "metadata", `metadata.yaml: models[${i}].${f} missing or empty`, "metadata.yaml");
    }
  });
}
