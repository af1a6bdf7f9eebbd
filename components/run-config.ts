// Pure renderers for the benchmark run: the Harbor job config (seed 000's tb21-full-89-agent6x.yaml), the
// docker compose override (tb21-docker-runtime.yaml), the preflight assertions on `harbor run
// --print-config`, job names, runner paths and the run manifest. Field names follow Harbor 0.21's
// pydantic models (shared/reference/harbor.md §2); everything here is unit-tested against the seed.
import * as path from "node:path";
import { parse as parseToml } from "smol-toml";
import { Document, isPair, isScalar, visit } from "yaml";
import { agentPlacement, containerApiBase, usesModelBridge } from "../infra/config-derive";
import type { ReprobenchConfig } from "../infra/config-schema";
import { SECRET_PLACEHOLDER } from "../infra/config-schema";

// ---------------------------------------------------------------------------------------------------------
// Paths on the runner host

/** Absolute directory of task directories on the runner (datasetDir/datasetTasksSubdir; seed: $TASK_ROOT). */
export function tasksDir(harbor: ReprobenchConfig["harbor"]): string {
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
  /** Names the job the runner is currently running for this work dir (one benchmark at a time). */
  currentFile: string;
}

export function runPaths(harbor: ReprobenchConfig["harbor"], jobName: string): RunPaths {
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
    currentFile: path.posix.join(harbor.workDir, "runs", "current"),
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

/** True when task containers get the proxy env (mirrors infra/index.ts: the bridge exists). */
export function proxyActive(config: ReprobenchConfig): boolean {
  return config.proxy.enabled && config.proxyUpstream !== undefined;
}

/** The job config as a plain object, keys in seed 000's order. `apiBase` is the router URL (config-derive apiBase). */
export function jobConfigObject(config: ReprobenchConfig, apiBase: string): Record<string, unknown> {
  const run = config.run;
  const job: Record<string, unknown> = {};
  if (run.nAttempts !== 1) job.n_attempts = run.nAttempts;
  job.n_concurrent_trials = run.nConcurrentTrials;
  if (run.timeoutMultiplier !== 1) job.timeout_multiplier = run.timeoutMultiplier;
  if (run.agentTimeoutMultiplier !== null) job.agent_timeout_multiplier = run.agentTimeoutMultiplier;
  if (run.agentSetupTimeoutMultiplier !== null) job.agent_setup_timeout_multiplier = run.agentSetupTimeoutMultiplier;
  if (run.verifierTimeoutMultiplier !== null) job.verifier_timeout_multiplier = run.verifierTimeoutMultiplier;
  if (run.environmentBuildTimeoutMultiplier !== null) job.environment_build_timeout_multiplier = run.environmentBuildTimeoutMultiplier;
  if (run.maxRetries !== 0) job.retry = { max_retries: run.maxRetries };
  job.environment = environmentObject(config);
  const placement = agentPlacement(run.agent);
  const agent: Record<string, unknown> = { name: run.agent };
  if (placement !== "none") {
    agent.model_name = run.modelName;
  }
  if (run.nConcurrentAgents !== null) agent.n_concurrent = run.nConcurrentAgents;
  if (placement === "container") {
    agent.kwargs = inContainerAgentKwargs(config);
    agent.env = inContainerAgentEnv(config);
  } else if (placement === "host") {
    const kwargs: Record<string, unknown> = { api_base: apiBase };
    if (run.sampling.temperature !== null) kwargs.temperature = run.sampling.temperature;
    kwargs.record_terminal_session = run.recordTerminalSession;
    const callKwargs: Record<string, unknown> = {};
    if (run.sampling.topP !== null) callKwargs.top_p = run.sampling.topP;
    if (run.sampling.topK !== null) callKwargs.top_k = run.sampling.topK;
    Object.assign(callKwargs, run.sampling.extraCallKwargs);
    if (Object.keys(callKwargs).length > 0) kwargs.llm_call_kwargs = callKwargs;
    kwargs.model_info = {
      max_input_tokens: run.modelInfo.maxInputTokens,
      max_output_tokens: run.modelInfo.maxOutputTokens,
      input_cost_per_token: run.modelInfo.inputCostPerToken,
      output_cost_per_token: run.modelInfo.outputCostPerToken,
    };
    if (run.reasoningEffort !== null) kwargs.reasoning_effort = run.reasoningEffort;
    Object.assign(kwargs, run.extraAgentKwargs);
    agent.kwargs = kwargs;
  } else if (Object.keys(run.extraAgentKwargs).length > 0) {
    agent.kwargs = { ...run.extraAgentKwargs };
  }
  job.agents = [agent];
  const dataset: Record<string, unknown> = { path: tasksDir(config.harbor) };
  if (run.taskFilter.include.length > 0) dataset.task_names = run.taskFilter.include;
  if (run.taskFilter.exclude.length > 0) dataset.exclude_task_names = run.taskFilter.exclude;
  if (run.taskFilter.nTasks !== null) dataset.n_tasks = run.taskFilter.nTasks;
  job.datasets = [dataset];
  return job;
}

/**
 * The job's environment: Docker on the runner (seed 000) or one HF Jobs sandbox per task (seeds 002/003:
 * `--env hf-sandbox --ek flavor=cpu-upgrade --ek job_timeout=2h`). run.taskEnv reaches every command in the
 * task container (Harbor's environment.env), run.taskMounts are Compose bind mounts (environment.mounts).
 */
export function environmentObject(config: ReprobenchConfig): Record<string, unknown> {
  const run = config.run;
  const env: Record<string, unknown> = { type: run.environment };
  if (run.environment === "docker") {
    env.cpu_enforcement_policy = run.cpuEnforcementPolicy;
    env.memory_enforcement_policy = run.memoryEnforcementPolicy;
  }
  if (run.taskMounts.length > 0) {
    env.mounts = run.taskMounts.map((m) => ({ type: "bind", source: m.source, target: m.target, read_only: m.readOnly }));
  }
  if (Object.keys(run.taskEnv).length > 0) env.env = { ...run.taskEnv };
  if (run.environment === "hf-sandbox") {
    const kwargs: Record<string, unknown> = { flavor: run.hfSandbox.flavor };
    if (run.hfSandbox.jobTimeout !== null) kwargs.job_timeout = run.hfSandbox.jobTimeout;
    if (run.hfSandbox.forwardHfToken) kwargs.forward_hf_token = true;
    env.kwargs = kwargs;
  }
  return env;
}

/**
 * Where an in-container agent (mini-swe-agent) gets the model: the agent env, which Harbor forwards into
 * every agent command in the task container — the job-config form of seed 002 Run 3's `--ae OPENAI_API_KEY=…
 * --ae OPENAI_BASE_URL=…`. The key is the template ${OPENAI_API_KEY}, resolved by Harbor from its own
 * environment (the root-only EnvironmentFile), so it is in no rendered file and in no config.json.
 */
export function inContainerAgentEnv(config: ReprobenchConfig): Record<string, string> {
  return { OPENAI_API_KEY: "${OPENAI_API_KEY}", OPENAI_BASE_URL: containerApiBase(config) };
}

/** kwargs of an in-container agent: its pinned version and sampling (mini-swe-agent's model.model_kwargs). */
export function inContainerAgentKwargs(config: ReprobenchConfig): Record<string, unknown> {
  const run = config.run;
  const kwargs: Record<string, unknown> = {};
  if (run.agentVersion !== null) kwargs.version = run.agentVersion;
  const modelKwargs: Record<string, unknown> = {};
  if (run.sampling.temperature !== null) modelKwargs.temperature = run.sampling.temperature;
  if (run.sampling.topP !== null) modelKwargs.top_p = run.sampling.topP;
  if (run.sampling.topK !== null) modelKwargs.top_k = run.sampling.topK;
  Object.assign(modelKwargs, run.sampling.extraCallKwargs);
  if (Object.keys(modelKwargs).length > 0) kwargs.config = { model: { model_kwargs: modelKwargs } };
  Object.assign(kwargs, run.extraAgentKwargs);
  return kwargs;
}

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

/** The job config file (seed: $WORKSPACE/tb21-full-89-agent6x.yaml). Holds no secret: the API key travels as OPENAI_API_KEY. */
export function renderJobConfig(config: ReprobenchConfig, apiBase: string): string {
  return toYaml(jobConfigObject(config, apiBase), " Rendered by reprobench (components/run-config.ts); Harbor 0.21 JobConfig.");
}

// ---------------------------------------------------------------------------------------------------------
// Docker compose override

/** Compose interpolates ${VAR} and $VAR from Harbor's environment; reprobench renders literal absolute paths only. */
function composeLiteral(value: string, what: string): string {
  if (value.includes("$")) throw new Error(`${what} ${JSON.stringify(value)} contains '$', which docker compose would interpolate`);
  return value;
}

/**
 * The compose override object (seed: tb21-docker-runtime.yaml): host-gateway alias, tool bundle binds, proxy
 * env. When an in-container agent reaches the model through the bridge on the docker gateway, that host
 * joins NO_PROXY: otherwise the agent's OpenAI client would send it to the upstream proxy.
 */
export function composeOverrideObject(config: ReprobenchConfig): Record<string, unknown> {
  const main: Record<string, unknown> = {
    extra_hosts: [`${config.proxy.containerHost}:host-gateway`],
  };
  const t = config.toolBundle;
  if (t.enabled) {
    const dir = composeLiteral(t.hostDir, "toolBundle.hostDir");
    const mount = composeLiteral(t.mountPath, "toolBundle.mountPath");
    main.volumes = [`${dir}:${mount}:ro`, `${dir}/bin/tmux:/usr/bin/tmux:ro`, `${dir}/bin/asciinema:/usr/bin/asciinema:ro`];
  }
  if (proxyActive(config)) {
    const url = `http://${config.proxy.containerHost}:${config.proxy.bridgePort}`;
    const bypass = usesModelBridge(config) && !config.proxy.noProxy.includes(config.proxy.containerHost) ? [config.proxy.containerHost] : [];
    const noProxy = composeLiteral([...config.proxy.noProxy, ...bypass].join(","), "proxy.noProxy");
    main.environment = {
      HTTP_PROXY: url,
      HTTPS_PROXY: url,
      http_proxy: url,
      https_proxy: url,
      NO_PROXY: noProxy,
      no_proxy: noProxy,
    };
  }
  return { services: { main } };
}

export function renderComposeOverride(config: ReprobenchConfig): string {
  return toYaml(composeOverrideObject(config), " Rendered by reprobench: passed to harbor run --extra-docker-compose.");
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
  config: ReprobenchConfig;
  jobConfig: string;
  composeOverride: string;
  harbor: Record<string, unknown>;
  dataset: Record<string, unknown>;
  images: Record<string, unknown>;
  /** Worker host → /server_info text (JSON) as the worker reported it. */
  serverInfo: Record<string, string>;
  /** Host → sha256 of its daemon.json. */
  daemonJsonSha256: Record<string, string>;
}

/** Removes secret-bearing keys from the config (the loaded config already has placeholders; drop them entirely). */
export function publicConfig(config: ReprobenchConfig): Record<string, unknown> {
  const { sshPrivateKeys: _keys, proxyUpstream, hfToken, ...rest } = config;
  return { ...rest, proxyUpstream: proxyUpstream === undefined ? null : SECRET_PLACEHOLDER, hfToken: hfToken === undefined ? null : SECRET_PLACEHOLDER };
}

/** reprobench-manifest.json: what ran, with what, on which cluster state. Contains no secret. */
export function runManifest(m: ManifestInputs): Record<string, unknown> {
  const serverInfo: Record<string, unknown> = {};
  for (const [host, text] of Object.entries(m.serverInfo)) {
    try {
      serverInfo[host] = JSON.parse(text);
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
    workers: serverInfo,
    daemonJsonSha256: m.daemonJsonSha256,
    jobConfig: m.jobConfig,
    composeOverride: m.composeOverride,
    config: publicConfig(m.config),
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
