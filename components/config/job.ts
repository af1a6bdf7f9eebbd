// The benchmark run rendered from the stack config: the Harbor job config (seed 000's
// tb21-full-89-agent6x.yaml) and the docker compose override (tb21-docker-runtime.yaml), plus the config
// as the run manifest records it. Field names follow Harbor 0.21's pydantic models (shared/reference/harbor.md §2).
import { SECRET_PLACEHOLDER, type ReprobenchConfig } from "./schema";
import { agentPlacement, containerApiBase, usesModelBridge } from "./derive";
import type { RunSettings } from "../benchmark-run";
import { specHash } from "../host-script";
import { preflightChecks, tasksDir, toYaml } from "../run-config";

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

/** The job config file (seed: $WORKSPACE/tb21-full-89-agent6x.yaml). Holds no secret: the API key travels as OPENAI_API_KEY. */
export function renderJobConfig(config: ReprobenchConfig, apiBase: string): string {
  return toYaml(jobConfigObject(config, apiBase), " Rendered by reprobench (infra/run-config.ts); Harbor 0.21 JobConfig.");
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

/** Removes secret-bearing keys from the config (the loaded config already has placeholders; drop them entirely). */
export function publicConfig(config: ReprobenchConfig): Record<string, unknown> {
  const { sshPrivateKeys: _keys, proxyUpstream, hfToken, proxyUrls, ...rest } = config;
  return {
    ...rest,
    proxyUpstream: proxyUpstream === undefined ? null : SECRET_PLACEHOLDER,
    hfToken: hfToken === undefined ? null : SECRET_PLACEHOLDER,
    // Only when set: a cluster without proxies records the clusterConfig it did before they existed.
    ...(Object.keys(proxyUrls).length > 0 ? { proxyUrls: Object.fromEntries(Object.keys(proxyUrls).map((k) => [k, SECRET_PLACEHOLDER])) } : {}),
  };
}


/** Everything that makes a different job: a change here means a new job name (and a new Harbor job). */
export function runSpec(config: ReprobenchConfig, apiBase: string): string {
  const h = config.harbor;
  return specHash({
    job: renderJobConfig(config, apiBase),
    override: renderComposeOverride(config),
    harbor: [h.version, h.wheelSha256, h.datasetRepo, h.datasetCommit, h.jobsDir],
    prefix: config.run.jobNamePrefix,
  });
}

/** The run as the BenchmarkRun component takes it: rendered files, paths and timing, no other config. */
export function runSettings(config: ReprobenchConfig, apiBase: string, stackId: string): RunSettings {
  const docker = config.run.environment === "docker";
  return {
    stackId,
    jobNamePrefix: config.run.jobNamePrefix,
    spec: runSpec(config, apiBase),
    venv: config.harbor.venv,
    workDir: config.harbor.workDir,
    jobsDir: config.harbor.jobsDir,
    jobConfigYaml: renderJobConfig(config, apiBase),
    composeOverrideYaml: docker ? renderComposeOverride(config) : null,
    preflight: preflightChecks(jobConfigObject(config, apiBase)),
    expectedTaskCount: config.harbor.expectedTaskCount,
    toolsDir: config.toolBundle.enabled && docker ? config.toolBundle.hostDir : null,
    stopTimeoutSecs: config.run.stopTimeoutSecs,
    waitForCompletion: config.run.waitForCompletion,
    waitTimeoutMinutes: config.run.waitTimeoutMinutes,
    daemonConfigPath: config.docker.daemonConfigPath,
    publicConfig: publicConfig(config),
  };
}
