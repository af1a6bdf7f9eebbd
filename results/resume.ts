// Mop-up passes (`harbor job resume`) and rerun jobs, planned by pure functions. Harbor's resume rules
// (harbor.md §4): `-f` deletes trials with those exception types and REPLACES the default CancelledError
// filter; the job dir used is config.jobs_dir/config.job_name resolved against the CWD (not -p); every
// kept trial's TrialConfig must equal the planned one (agent kwargs included) or resume aborts; lock.json
// must match the resolved lock (n_concurrent_trials included).
import * as path from "node:path";
import { asArray, asRecord, HARBOR_DEFAULTS, HarborConfig, jsonDiff, jsonEqual } from "./harbor";
import { defaultMopUpErrorTypes, nonTransientUnscoredTypes } from "./taxonomy";

export interface ResumeTrial {
  dir: string;
  task: string;
  exceptionType: string | null;
  /** The trial's own config.json (TrialConfig). */
  config: HarborConfig | null;
  /** Harbor cancelled it after an earlier exception (results/harbor.ts cancelledAfterException). */
  cancelledAfterException?: boolean;
  /** A stop landed in it and nothing was recorded (results/harbor.ts interruptedWithoutRecord). */
  interruptedWithoutRecord?: boolean;
}

export interface ResumeInput {
  /** Absolute job dir. */
  jobDir: string;
  config: HarborConfig;
  lock: HarborConfig | null;
  trials: ResumeTrial[];
  /** Trial dirs without result.json; Harbor deletes and re-runs them. */
  incompleteTrialDirs: string[];
}

export interface ResumeOptions {
  errorTypes?: string[];
  nConcurrent?: number;
  harborBin?: string;
}

export interface FileEdit {
  file: "config.json" | "lock.json";
  key: string;
  from: unknown;
  to: unknown;
  why: string;
}

export interface ResumePlan {
  /** Set when resuming would do harm; says why and what to do instead. */
  refusal: string | null;
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  errorTypes: string[];
  trialsToRerun: { dir: string; task: string; exceptionType: string }[];
  /** Unscored trials left alone because they would fail the same way again (auth, unknown model, quota). */
  keptNonTransient: { dir: string; task: string; exceptionType: string }[];
  /**
   * Trials a stop cut short that Harbor would keep as final: cancelled after an earlier exception (no
   * reward, yet a type the filter keeps; `exceptionType` is that type), or interrupted with nothing
   * recorded (`exceptionType` null). Moved from the job dir into `setAsideDir` before Harbor starts, so it
   * re-runs them; the move keeps their logs.
   */
  trialsToSetAside: { dir: string; task: string; exceptionType: string | null }[];
  /** `<job dir>.cancelled-trials`, beside the job dir (Harbor deletes trial dirs it finds without a result). */
  setAsideDir: string;
  edits: FileEdit[];
  config: HarborConfig;
  lock: HarborConfig | null;
  warnings: string[];
}

/** TrialConfig fields copied from the JobConfig; a difference in any of them breaks resume matching. */
const SHARED_FIELDS = [
  "timeout_multiplier",
  "agent_timeout_multiplier",
  "verifier_timeout_multiplier",
  "agent_setup_timeout_multiplier",
  "environment_build_timeout_multiplier",
  "environment",
] as const;

function jobAgentFor(config: HarborConfig, trialAgent: Record<string, unknown>): { index: number; agent: Record<string, unknown> } | null {
  const agents = asArray(config.agents).map(asRecord);
  if (agents.length === 0) return null;
  const same = agents.findIndex((a) => a.name === trialAgent.name && a.model_name === trialAgent.model_name);
  if (same >= 0) return { index: same, agent: agents[same] };
  return agents.length === 1 ? { index: 0, agent: agents[0] } : null;
}

interface Mismatch {
  key: string;
  job: unknown;
  trials: unknown;
  dirs: string[];
}

/** Where kept trials' configs differ from what the job config would plan now. */
export function configMismatches(config: HarborConfig, trials: readonly ResumeTrial[]): Mismatch[] {
  const found = new Map<string, Mismatch>();
  const note = (key: string, job: unknown, trial: unknown, dir: string): void => {
    const id = `${key}\u0000${JSON.stringify(job)}\u0000${JSON.stringify(trial)}`;
    const m = found.get(id) ?? { key, job, trials: trial, dirs: [] };
    m.dirs.push(dir);
    found.set(id, m);
  };
  for (const t of trials) {
    if (!t.config) continue;
    const trialAgent = asRecord(t.config.agent);
    const match = jobAgentFor(config, trialAgent);
    if (!match) note("agents", config.agents ?? null, trialAgent, t.dir);
    else for (const d of jsonDiff(match.agent, trialAgent)) note(`agents[${match.index}].${d.path}`, d.a, d.b, t.dir);
    for (const f of SHARED_FIELDS) {
      const jobValue = config[f] ?? null;
      const trialValue = t.config[f] ?? null;
      if (!jsonEqual(jobValue, trialValue)) for (const d of jsonDiff(jobValue, trialValue, f)) note(d.path, d.a, d.b, t.dir);
    }
  }
  return [...found.values()];
}

const show = (v: unknown): string => (v === undefined ? "(unset)" : JSON.stringify(v));

/** Works out the cwd that makes Harbor's `jobs_dir/job_name` resolve to this very job dir. */
export function resumeCwd(jobDir: string, config: HarborConfig): { cwd: string } | { problem: string } {
  const name = config.job_name;
  const base = path.basename(jobDir);
  if (typeof name !== "string" || name !== base) {
    return {
      problem:
        `config.json job_name is ${show(name)} but the directory is '${base}'. Harbor resumes ` +
        `jobs_dir/job_name, not -p, so it would work on a different directory (and re-run every trial if that has no config.json). ` +
        `Rename the directory back to the job name, or set job_name to '${base}' in config.json.`,
    };
  }
  const jobsDir = typeof config.jobs_dir === "string" ? config.jobs_dir : "jobs";
  if (path.isAbsolute(jobsDir)) {
    if (path.resolve(jobsDir, name) !== path.resolve(jobDir)) {
      return {
        problem:
          `config.json jobs_dir is '${jobsDir}', so Harbor would resume '${path.join(jobsDir, name)}', not this copy at '${jobDir}'. ` +
          `Resume on the host where the job ran (then \`reprobench pull\` it again), or move this copy to '${path.join(jobsDir, name)}'.`,
      };
    }
    return { cwd: path.dirname(path.resolve(jobDir)) };
  }
  const suffix = path.join(jobsDir, name);
  const abs = path.resolve(jobDir);
  if (!abs.endsWith(path.sep + path.normalize(suffix))) {
    return {
      problem:
        `config.json jobs_dir is the relative path '${jobsDir}', but '${abs}' does not end in '${suffix}', so no working directory ` +
        `makes Harbor find this job. Put the job dir under a '${jobsDir}/' directory, or resume from where it was started.`,
    };
  }
  return { cwd: abs.slice(0, abs.length - suffix.length - 1) || path.sep };
}

/** Plans a mop-up pass. Never throws for job problems: they come back as `refusal`. */
export function planResume(input: ResumeInput, opts: ResumeOptions = {}): ResumePlan {
  const errorTypes = [...new Set(opts.errorTypes && opts.errorTypes.length ? opts.errorTypes : defaultMopUpErrorTypes())];
  const warnings: string[] = [];
  if (errorTypes.includes("AgentTimeoutError")) {
    warnings.push("AgentTimeoutError is in the filter: those trials are legitimate results (seed 002); re-running them changes what the run measures");
  }
  if (!errorTypes.includes("CancelledError")) {
    warnings.push("CancelledError is not in the filter: -f replaces Harbor's default, so cancelled trials will be kept as final");
  }
  const trialsToRerun = input.trials
    .filter((t): t is ResumeTrial & { exceptionType: string } => t.exceptionType !== null && errorTypes.includes(t.exceptionType))
    .map((t) => ({ dir: t.dir, task: t.task, exceptionType: t.exceptionType }));
  const nonTransient = new Set(nonTransientUnscoredTypes());
  const keptNonTransient = input.trials
    .filter((t): t is ResumeTrial & { exceptionType: string } => t.exceptionType !== null && nonTransient.has(t.exceptionType) && !errorTypes.includes(t.exceptionType))
    .map((t) => ({ dir: t.dir, task: t.task, exceptionType: t.exceptionType }));
  if (keptNonTransient.length) {
    const types = [...new Set(keptNonTransient.map((t) => t.exceptionType))].sort();
    warnings.push(
      `${keptNonTransient.length} trial(s) failed with ${types.join(", ")}: kept, because a re-run fails the same way until the API key, ` +
        `model name or quota is fixed. Fix that first, then add ${types.map((t) => `--error-type ${t}`).join(" ")} (plus the default types you still want)`,
    );
  }
  const namedNonTransient = errorTypes.filter((t) => nonTransient.has(t));
  if (namedNonTransient.length) {
    warnings.push(`${namedNonTransient.join(", ")} in the filter: these fail again the same way unless the API key, model name or quota was fixed since`);
  }
  const rerunDirs = new Set(trialsToRerun.map((t) => t.dir));
  // A cancelled trial is re-run when the filter re-runs cancellations, whatever exception it kept; so is
  // one the stop interrupted without a record (the same cancellation, arrived as KeyboardInterrupt).
  const cutShort = (t: ResumeTrial): boolean =>
    (t.cancelledAfterException === true && t.exceptionType !== null) || (t.interruptedWithoutRecord === true && t.exceptionType === null);
  const trialsToSetAside = errorTypes.includes("CancelledError")
    ? input.trials.filter((t) => cutShort(t) && !rerunDirs.has(t.dir)).map((t) => ({ dir: t.dir, task: t.task, exceptionType: t.exceptionType }))
    : [];
  for (const t of trialsToSetAside) rerunDirs.add(t.dir);
  const kept = input.trials.filter((t) => !rerunDirs.has(t.dir));

  const config: HarborConfig = structuredClone(input.config);
  const lock: HarborConfig | null = input.lock ? structuredClone(input.lock) : null;
  const edits: FileEdit[] = [];
  const refusals: string[] = [];

  const mismatches = configMismatches(input.config, kept);
  if (mismatches.length) {
    const lines = mismatches.map(
      (m) => `  - ${m.key}: config.json has ${show(m.job)}, ${m.dirs.length} kept trial(s) have ${show(m.trials)} (e.g. ${m.dirs.slice(0, 2).join(", ")})`,
    );
    refusals.push(
      [
        "the job's config.json no longer matches the trials it would keep:",
        ...lines,
        "Harbor compares every kept trial's config (agent kwargs such as api_base included) with the job's and aborts with",
        "'Existing trial config does not match planned job config' — or re-runs everything if the job dir does not resolve.",
        "What to do instead:",
        "  - new model endpoint or agent settings: leave this job as it is and start a rerun job for the tasks to redo,",
        `    \`reprobench rerun ${input.jobDir} <task>… [--api-base URL]\`, then audit both job dirs together (latest trial wins);`,
        "  - to resume in place, put config.json back to the values the trials have (listed above).",
      ].join("\n"),
    );
  }

  const where = resumeCwd(input.jobDir, input.config);
  if ("problem" in where) refusals.push(where.problem);

  // Concurrency lives in both files; Harbor refuses a resume whose lock.json disagrees with config.json.
  const cfgN = typeof config.n_concurrent_trials === "number" ? config.n_concurrent_trials : HARBOR_DEFAULTS.n_concurrent_trials;
  let targetN = cfgN;
  if (opts.nConcurrent !== undefined) {
    if (!Number.isInteger(opts.nConcurrent) || opts.nConcurrent < 1) throw new Error(`--n-concurrent must be a positive integer, got ${opts.nConcurrent}`);
    targetN = opts.nConcurrent;
    const tooBig = asArray(config.agents)
      .map(asRecord)
      .map((a, i) => [i, a.n_concurrent] as const)
      .filter(([, n]) => typeof n === "number" && n > targetN);
    if (tooBig.length) {
      refusals.push(
        `--n-concurrent ${targetN} is below agents[${tooBig[0][0]}].n_concurrent (${tooBig[0][1]}); Harbor rejects that config. ` +
          "agents[].n_concurrent is part of every trial's config, so changing it breaks resume: pick n ≥ it.",
      );
    }
    if (targetN !== cfgN) {
      edits.push({ file: "config.json", key: "n_concurrent_trials", from: config.n_concurrent_trials, to: targetN, why: "--n-concurrent" });
      config.n_concurrent_trials = targetN;
    }
  }
  if (lock && lock.n_concurrent_trials !== undefined && lock.n_concurrent_trials !== targetN) {
    edits.push({
      file: "lock.json",
      key: "n_concurrent_trials",
      from: lock.n_concurrent_trials,
      to: targetN,
      why: opts.nConcurrent !== undefined ? "--n-concurrent" : "match config.json (Harbor aborts when lock.json disagrees)",
    });
    lock.n_concurrent_trials = targetN;
  }

  if (trialsToRerun.length === 0 && trialsToSetAside.length === 0 && input.incompleteTrialDirs.length === 0) {
    warnings.push(`no trial has an exception type in the filter (${errorTypes.join(", ")}); resume will only start trials that never ran`);
  }

  const harbor = opts.harborBin ?? "harbor";
  return {
    refusal: refusals.length ? refusals.join("\n\n") : null,
    argv: [harbor, "job", "resume", "-p", path.resolve(input.jobDir), ...errorTypes.flatMap((t) => ["-f", t])],
    cwd: "cwd" in where ? where.cwd : path.dirname(path.resolve(input.jobDir)),
    env: { HARBOR_TELEMETRY: "0" },
    errorTypes,
    trialsToRerun,
    keptNonTransient,
    trialsToSetAside,
    setAsideDir: `${path.resolve(input.jobDir)}.cancelled-trials`,
    edits,
    config,
    lock,
    warnings,
  };
}

export interface RerunTrial {
  task: string;
  config: HarborConfig | null;
}

export interface RerunOptions {
  jobName?: string;
  apiBase?: string;
  now?: Date;
  harborBin?: string;
}

export interface RerunPlan {
  jobName: string;
  jobsDir: string;
  configFile: string;
  config: HarborConfig;
  argv: string[];
  env: Record<string, string>;
}

function taskKeys(t: RerunTrial): string[] {
  const ref = asRecord(t.config?.task);
  const keys = [t.task];
  if (typeof ref.path === "string") keys.push(path.basename(ref.path));
  if (typeof ref.name === "string") keys.push(ref.name, ref.name.split("/").pop()!);
  return keys;
}

/**
 * A new job with just the given tasks (their exact task refs from the old trials), a new job name and
 * the same settings, beside the old job so `audit` can merge both (seed 002's advice).
 */
export function planRerun(jobDir: string, config: HarborConfig, trials: readonly RerunTrial[], tasks: readonly string[], opts: RerunOptions = {}): RerunPlan {
  if (tasks.length === 0) throw new Error("rerun needs at least one task name");
  const refs: unknown[] = [];
  const seen = new Set<string>();
  for (const wanted of tasks) {
    const trial = trials.find((t) => taskKeys(t).includes(wanted) && t.config?.task);
    if (!trial) {
      const known = [...new Set(trials.map((t) => t.task))].sort();
      throw new Error(`task '${wanted}' has no trial with a task reference in ${jobDir} (known tasks: ${known.slice(0, 8).join(", ")}${known.length > 8 ? ", …" : ""})`);
    }
    // Without `source`: Harbor 0.21 keeps metrics only for the job's datasets (and "adhoc"), so a task
    // whose source names a dataset the rerun job does not list crashes its live metric display
    // (job.py _update_metric_display: IndexError) when the first trial ends. Found by the rehearsal.
    const { source: _source, ...ref } = asRecord(trial.config!.task);
    const key = JSON.stringify(ref);
    if (!seen.has(key)) refs.push(ref);
    seen.add(key);
  }
  const stamp = (opts.now ?? new Date()).toISOString().replace(/[-:]/g, "").replace(/\..*$/, "").replace("T", "-");
  const oldName = typeof config.job_name === "string" ? config.job_name : path.basename(jobDir);
  const jobName = opts.jobName ?? `${oldName}-rerun-${stamp}`;
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(jobName)) throw new Error(`job name '${jobName}' must be letters, digits, '.', '_' or '-'`);
  const jobsDir = path.dirname(path.resolve(jobDir));
  const next: HarborConfig = structuredClone(config);
  next.job_name = jobName;
  next.jobs_dir = jobsDir;
  next.datasets = [];
  next.tasks = refs;
  if (opts.apiBase) {
    next.agents = asArray(next.agents).map((a) => {
      const agent = asRecord(a);
      return { ...agent, kwargs: { ...asRecord(agent.kwargs), api_base: opts.apiBase } };
    });
  }
  const configFile = path.join(jobsDir, `${jobName}.job.json`);
  const harbor = opts.harborBin ?? "harbor";
  return {
    jobName,
    jobsDir,
    configFile,
    config: next,
    argv: [harbor, "run", "-c", configFile, "--job-name", jobName, "--jobs-dir", jobsDir, "-y"],
    env: { HARBOR_TELEMETRY: "0" },
  };
}
