// Pure pieces of the benchmark run that need no stack config: runner paths, job names, YAML with the seed's
// float style, the preflight assertions on `harbor run --print-config`, the task image manifest, the run
// manifest and the job summary. (What renders the job config and the compose override from the stack
// config is components/config/job.ts.) Field names follow Harbor 0.21's pydantic models (shared/reference/harbor.md §2).
import * as path from "node:path";
import { parse as parseToml } from "smol-toml";
import { Document, isPair, isScalar, visit } from "yaml";
import { withoutSecretFields } from "./model-server-spec";
import type { PreflightFacts } from "./preflight/plan";

/** Where the dataset and the run live on the runner (harbor.* of the stack). */
export interface RunnerPaths {
  /** The dataset checkout and the task directories inside it. */
  datasetDir: string;
  datasetTasksSubdir: string;
  /** Harbor's work directory (runs/, logs/) and its jobs directory. */
  workDir: string;
  jobsDir: string;
}

/** A git remote (https/ssh/git/file URL or scp-like user@host:path) as opposed to a local directory. */
export function isGitUrl(text: string): boolean {
  return /^(https?|ssh|git|file):\/\//.test(text) || /^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:/.test(text);
}

// ---------------------------------------------------------------------------------------------------------
// Paths on the runner host

/** Absolute directory of task directories on the runner (datasetDir/datasetTasksSubdir; seed: $TASK_ROOT). */
export function tasksDir(harbor: Pick<RunnerPaths, "datasetDir" | "datasetTasksSubdir">): string {
  return harbor.datasetTasksSubdir === "" ? harbor.datasetDir : path.posix.join(harbor.datasetDir, harbor.datasetTasksSubdir);
}

/** Where one job's files live on the runner. Everything is keyed by the job name so a resume finds the exact files. */
export interface RunPaths {
  /** Rendered job config and compose override, plus the 0600 env file with the API key. */
  runDir: string;
  jobConfig: string;
  composeOverride: string;
  /** OPENAI_API_KEY=… (mode 0600, root only); systemd reads it as EnvironmentFile. */
  envFile: string;
  /** `harbor run --print-config` output (seed: logs/tb21-agent6x-resolved-config.json). */
  resolvedConfig: string;
  /** Harbor's stdout and stderr, appended (seed: logs/$JOB_NAME.log). */
  log: string;
  /** <jobsDir>/<jobName>: Harbor's job directory. */
  jobDir: string;
  /** <jobsDir>/<jobName>.reprobench-manifest.json: beside the job dir, so Harbor finds its own dir empty. */
  manifest: string;
  /** The transient systemd unit supervising `harbor run`. */
  unit: string;
  /** Names the job this stack is currently running on the runner (one job per stack at a time). */
  currentFile: string;
}

/**
 * `stackId` names the stack running the job ("project.stack"): each stack keeps its own current job, so
 * a run stack's new job replaces only that stack's previous one, never another stack's running job.
 */
export function runPaths(harbor: Pick<RunnerPaths, "workDir" | "jobsDir">, jobName: string, stackId = "default"): RunPaths {
  const runDir = path.posix.join(harbor.workDir, "runs", jobName);
  return {
    runDir,
    jobConfig: path.posix.join(runDir, "harbor-job.yaml"),
    composeOverride: path.posix.join(runDir, "docker-override.yaml"),
    envFile: path.posix.join(runDir, "harbor.env"),
    resolvedConfig: path.posix.join(runDir, "resolved-config.json"),
    log: path.posix.join(harbor.workDir, "logs", `${jobName}.log`),
    jobDir: path.posix.join(harbor.jobsDir, jobName),
    manifest: path.posix.join(harbor.jobsDir, `${jobName}.reprobench-manifest.json`),
    unit: `reprobench-harbor-${jobName}.service`,
    currentFile: path.posix.join(harbor.workDir, "runs", "current.d", stackId),
  };
}

// ---------------------------------------------------------------------------------------------------------
// Job name

const JOB_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** prefix-YYYYmmdd-HHMMSS in UTC (seed: $(date +%Y%m%d-%H%M%S)). */
export function jobName(prefix: string, at: Date): string {
  if (!JOB_NAME.test(prefix)) throw new Error(`run.jobNamePrefix ${JSON.stringify(prefix)}: expected letters, digits, '.', '_' or '-'`);
  if (Number.isNaN(at.getTime())) throw new Error("jobName: invalid date");
  const p = (n: number) => String(n).padStart(2, "0");
  const stamp = `${at.getUTCFullYear()}${p(at.getUTCMonth() + 1)}${p(at.getUTCDate())}-${p(at.getUTCHours())}${p(at.getUTCMinutes())}${p(at.getUTCSeconds())}`;
  return `${prefix}-${stamp}`;
}

// ---------------------------------------------------------------------------------------------------------
// Harbor job config

/** Keys whose numbers the seed writes as floats (6.0, 1.0): kept that way so the file reads like the manual. */
const FLOAT_KEYS = new Set([
  "timeout_multiplier", "agent_timeout_multiplier", "agent_setup_timeout_multiplier", "verifier_timeout_multiplier",
  "environment_build_timeout_multiplier", "temperature",
]);

/** YAML text of a plain object; numbers under FLOAT_KEYS keep a fractional digit. */
export function toYaml(value: unknown, header?: string): string {
  const doc = new Document(value);
  visit(doc, {
    Pair(_key, pair) {
      if (isPair(pair) && isScalar(pair.key) && FLOAT_KEYS.has(String(pair.key.value)) && isScalar(pair.value) && typeof pair.value.value === "number") {
        pair.value.minFractionDigits = 1;
      }
    },
  });
  if (header) doc.commentBefore = header;
  return doc.toString({ lineWidth: 0 });
}

// ---------------------------------------------------------------------------------------------------------
// Preflight assertions

/** One expected value at a JSON path (jq getpath form). */
export interface ConfigCheck {
  path: (string | number)[];
  expected: unknown;
}

/** Harbor 0.21 field defaults that `--print-config` (exclude_defaults=True) leaves out. */
const HARBOR_DEFAULTS: { path: (string | number)[]; value: unknown }[] = [
  { path: ["n_attempts"], value: 1 },
  { path: ["n_concurrent_trials"], value: 4 },
  { path: ["timeout_multiplier"], value: 1 },
  { path: ["environment", "cpu_enforcement_policy"], value: "auto" },
  { path: ["environment", "memory_enforcement_policy"], value: "auto" },
  { path: ["retry", "max_retries"], value: 0 },
];

function isHarborDefault(p: (string | number)[], value: unknown): boolean {
  return HARBOR_DEFAULTS.some((d) => JSON.stringify(d.path) === JSON.stringify(p) && d.value === value);
}

/** Every scalar leaf of the rendered job (arrays of scalars count as one leaf). */
function leaves(value: unknown, prefix: (string | number)[] = []): ConfigCheck[] {
  if (value !== null && typeof value === "object" && !(Array.isArray(value) && value.every((v) => v === null || typeof v !== "object"))) {
    const entries = Array.isArray(value) ? value.map((v, i) => [i, v] as const) : Object.entries(value as Record<string, unknown>);
    return entries.flatMap(([k, v]) => leaves(v, [...prefix, k]));
  }
  return [{ path: prefix, expected: value }];
}

/**
 * Splits the key fields of a rendered job into what `harbor run --print-config` must show and what it
 * omits because the value equals Harbor's default (checked on the rendered file instead).
 */
export function preflightChecks(job: Record<string, unknown>): { printed: ConfigCheck[]; rendered: ConfigCheck[] } {
  const printed: ConfigCheck[] = [];
  const rendered: ConfigCheck[] = [];
  for (const check of leaves(job)) (isHarborDefault(check.path, check.expected) ? rendered : printed).push(check);
  // environment.type is printed although it looks like a default: its field default is None (a validator sets docker).
  return { printed, rendered };
}

// ---------------------------------------------------------------------------------------------------------
// Task images

/** [environment].docker_image of one task.toml (null when the task builds from a Dockerfile). Throws naming the file on bad TOML. */
export function dockerImageOf(taskTomlText: string, file = "task.toml"): string | null {
  let doc: Record<string, unknown>;
  try {
    doc = parseToml(taskTomlText) as Record<string, unknown>;
  } catch (err) {
    throw new Error(`${file}: not valid TOML (${err instanceof Error ? err.message.split("\n")[0] : String(err)})`);
  }
  const env = doc.environment;
  if (env === undefined) return null;
  if (typeof env !== "object" || env === null || Array.isArray(env)) throw new Error(`${file}: [environment] must be a table`);
  const image = (env as Record<string, unknown>).docker_image;
  if (image === undefined) return null;
  if (typeof image !== "string" || image.trim() === "") throw new Error(`${file}: [environment].docker_image must be a non-empty string, got ${JSON.stringify(image)}`);
  return image.trim();
}

/** The deduplicated, sorted image list of a dataset (seed: images-amd64.txt), from task.toml texts keyed by path. */
export function imageManifest(taskTomls: Record<string, string>): { images: string[]; withoutImage: string[] } {
  const images = new Set<string>();
  const withoutImage: string[] = [];
  for (const [file, text] of Object.entries(taskTomls).sort(([a], [b]) => a.localeCompare(b))) {
    const image = dockerImageOf(text, file);
    if (image === null) withoutImage.push(file);
    else images.add(image);
  }
  return { images: [...images].sort(), withoutImage };
}

/** Registry host of an image reference ("" for Docker Hub). */
export function registryOf(image: string): string {
  const first = image.split("/")[0];
  return image.includes("/") && (first.includes(".") || first.includes(":") || first === "localhost") ? first : "";
}

// ---------------------------------------------------------------------------------------------------------
// Run manifest

export interface ManifestInputs {
  toolkitVersion: string;
  jobName: string;
  paths: RunPaths;
  /** The stack config with its secrets replaced by placeholders. */
  publicConfig: Record<string, unknown>;
  jobConfig: string;
  composeOverride: string;
  harbor: Record<string, unknown>;
  dataset: Record<string, unknown>;
  images: Record<string, unknown>;
  /** Worker host → /server_info text (JSON) as the worker reported it (ModelServer.serverInfo, secrets removed). */
  serverInfo: Record<string, string>;
  /** Host → sha256 of its daemon.json. */
  daemonJsonSha256: Record<string, string>;
  /** Server and router images as pulled (name@sha256:…). */
  serverImages: Record<string, string>;
  /**
   * Worker host → what its preflight last found there (WorkerPreflight.facts: GPUs, driver, weights, fit).
   * A worker without a preflight has no entry; none at all gives `{}`, so the key is always there.
   */
  preflight: Record<string, PreflightFacts>;
}

/** reprobench-manifest.json: what ran, with what, on which cluster state. Contains no secret. */
export function runManifest(m: ManifestInputs): Record<string, unknown> {
  const serverInfo: Record<string, unknown> = {};
  for (const [host, text] of Object.entries(m.serverInfo)) {
    // ModelServer.serverInfo has no secret fields; dropping them again keeps "contains no secret" true
    // whatever fed this (SGLang's /server_info echoes api_key and admin_api_key as given).
    try {
      serverInfo[host] = withoutSecretFields(JSON.parse(text));
    } catch {
      serverInfo[host] = text;
    }
  }
  return {
    schema: "reprobench-manifest/v1",
    toolkit: { name: "reprobench", version: m.toolkitVersion },
    job: { name: m.jobName, dir: m.paths.jobDir, log: m.paths.log, unit: m.paths.unit, jobConfigFile: m.paths.jobConfig, composeOverrideFile: m.paths.composeOverride },
    harbor: m.harbor,
    dataset: m.dataset,
    images: m.images,
    serverImages: m.serverImages,
    workers: serverInfo,
    preflight: m.preflight,
    daemonJsonSha256: m.daemonJsonSha256,
    jobConfig: m.jobConfig,
    composeOverride: m.composeOverride,
    config: m.publicConfig,
  };
}

/** The summary Harbor's job result.json yields (seed: jq '{started_at, finished_at, stats}'). */
export interface JobSummary {
  trials: number;
  passed: number;
  errors: number;
  mean: number | null;
  finished: boolean;
}

/** Summarises a Harbor 0.21 job result.json (stats.evals[*]: reward_stats, n_errors, metrics[0].mean). */
export function summarizeJobResult(result: unknown): JobSummary {
  const r = (result ?? {}) as Record<string, unknown>;
  const stats = (r.stats ?? {}) as Record<string, unknown>;
  const evals = Object.values((stats.evals ?? {}) as Record<string, Record<string, unknown>>);
  let passed = 0;
  let errors = 0;
  let mean: number | null = null;
  for (const e of evals) {
    const rewards = ((e.reward_stats ?? {}) as Record<string, Record<string, unknown[]>>).reward ?? {};
    for (const [value, trials] of Object.entries(rewards)) if (Number(value) >= 1) passed += trials.length;
    errors += Number(e.n_errors ?? 0);
    const metrics = (e.metrics ?? []) as Record<string, unknown>[];
    if (evals.length === 1 && typeof metrics[0]?.mean === "number") mean = metrics[0].mean as number;
  }
  return {
    trials: Number(r.n_total_trials ?? 0),
    passed,
    errors,
    mean,
    finished: r.finished_at !== null && r.finished_at !== undefined,
  };
}
