import * as pulumi from "@pulumi/pulumi";
import type { ResolvedSglangSettings } from "../infra/config";
import { serverCommand } from "../infra/config";
import { CheckedCommand, type SshConnectionInput } from "./checked-command";
import { scriptWithEnv, specHash } from "./host-script";

/**
 * The container's argv split for `docker run`: SGLang's image has no ENTRYPOINT, so the whole command
 * follows the image (seed 000); vllm/vllm-openai's ENTRYPOINT is `vllm serve`, so for vLLM the entry
 * point is set explicitly and the rest follows (otherwise the image would run `vllm serve vllm serve …`).
 */
export function containerArgv(s: ResolvedSglangSettings): { entrypoint: string | null; command: string[] } {
  const argv = serverCommand(s);
  return s.engine === "vllm" ? { entrypoint: argv[0], command: argv.slice(1) } : { entrypoint: null, command: argv };
}

/** `docker run` options for one model server worker, as seed 000 starts it (the image and argv follow). */
export function workerDockerArgs(s: ResolvedSglangSettings): string[] {
  const args = ["--network", "host", "--ipc", s.ipc, "--stop-timeout", String(s.stopTimeoutSecs)];
  const { entrypoint } = containerArgv(s);
  if (entrypoint !== null) args.push("--entrypoint", entrypoint);
  if (s.gpus === "all") args.push("--gpus", "all");
  for (const [name, value] of Object.entries(s.ulimits)) {
    args.push("--ulimit", typeof value === "number" ? `${name}=${value}` : `${name}=${value.soft}:${value.hard}`);
  }
  if (s.shmSizeMb !== null) args.push("--shm-size", `${s.shmSizeMb}m`);
  for (const [k, v] of Object.entries(s.env)) args.push("--env", `${k}=${v}`);
  args.push("--volume", `${s.modelPath}:${s.modelMountPath}:ro`);
  return args;
}

/**
 * The /server_info fields (SGLang's names and JSON types) that must equal the config after start. Settings
 * left to SGLang (null) are not asserted, except max_mamba_cache_size, which SGLang echoes as given.
 */
export function expectedServerInfo(s: ResolvedSglangSettings): Record<string, unknown> {
  const expected: Record<string, unknown> = {
    served_model_name: s.servedModelName,
    tp_size: s.tp,
    dp_size: s.dp,
  };
  if (s.contextLength !== null) expected.context_length = s.contextLength;
  if (s.maxRunningRequests !== null) expected.max_running_requests = s.maxRunningRequests;
  Object.assign(expected, {
    max_mamba_cache_size: s.maxMambaCacheSize,
    mem_fraction_static: s.memFractionStatic,
    reasoning_parser: s.reasoningParser,
    tool_call_parser: s.toolCallParser,
  });
  const optional: [string, unknown][] = [
    ["kv_cache_dtype", s.kvCacheDtype],
    ["attention_backend", s.attentionBackend],
    ["chunked_prefill_size", s.chunkedPrefillSize],
    ["max_prefill_tokens", s.maxPrefillTokens],
    ["mamba_full_memory_ratio", s.mamba.fullMemoryRatio],
    ["mamba_radix_cache_strategy", s.mamba.radixCacheStrategy],
    ["mamba_ssm_dtype", s.mamba.ssmDtype],
    ["default_chat_template_kwargs", s.enableThinking === null ? null : { enable_thinking: s.enableThinking }],
  ];
  for (const [field, value] of optional) if (value !== null) expected[field] = value;
  if (s.trustRemoteCode) expected.trust_remote_code = true;
  return expected;
}

/** What a vLLM worker must show on /v1/models (it has no /server_info): the served name, owned_by vllm, max_model_len. */
export function expectedVllmModel(s: ResolvedSglangSettings): Record<string, unknown> {
  const expected: Record<string, unknown> = { id: s.servedModelName, owned_by: "vllm" };
  if (s.contextLength !== null) expected.max_model_len = s.contextLength;
  return expected;
}

/** Inputs of the worker's host script, minus the API key. */
export function workerScriptEnv(s: ResolvedSglangSettings): Record<string, string> {
  const dockerArgs = workerDockerArgs(s);
  const { command } = containerArgv(s);
  const vllm = s.engine === "vllm";
  return {
    CONTAINER_NAME: s.containerName,
    IMAGE: s.image,
    SPEC: specHash({ image: s.image, dockerArgs, command, user: s.user }),
    DOCKER_ARGS_JSON: JSON.stringify(dockerArgs),
    COMMAND_JSON: JSON.stringify(command),
    CONTAINER_USER: s.user,
    REQUIRED_DIRS: s.modelPath,
    BASE_URL: s.url,
    READY_TIMEOUT_SECONDS: String(s.readyTimeoutMinutes * 60),
    EXPECTED_JSON: JSON.stringify(vllm ? expectedVllmModel(s) : expectedServerInfo(s)),
    SERVED_MODEL_NAME: s.servedModelName,
    // Seed 002 Run 3's check after disabling thinking: a completion carries no reasoning_content.
    EXPECT_NO_REASONING: s.enableThinking === false ? "1" : "0",
  };
}

/** The gate script for the worker's engine. */
export function workerGateScript(s: ResolvedSglangSettings): string {
  return s.engine === "vllm" ? "vllm-worker" : "sglang-worker";
}

export interface SglangWorkerArgs {
  /** SSH connection to the worker host. */
  readonly connection: pulumi.Input<SshConnectionInput>;
  /** The worker's resolved settings (sglang + this host's override). */
  readonly settings: ResolvedSglangSettings;
  /** The --api-key every worker and the router share. Secret. */
  readonly apiKey: pulumi.Input<string>;
}

/**
 * One model server container on a worker host (seed 000 "启动两个 SGLang workers"), gated on /health
 * and on /server_info matching the config (vLLM: /v1/models, it has no /server_info). A refresh notices a
 * dead or changed container and the next `up` recreates it.
 */
export class SglangWorker extends pulumi.ComponentResource {
  /** http://<privateIp>:<port>, what the router dials. */
  public readonly url: pulumi.Output<string>;
  /** /server_info as the worker reported it after start (without internal_states). */
  public readonly serverInfo: pulumi.Output<string>;
  /** spec, running state and container id as last observed; changes when the container is recreated. */
  public readonly observed: pulumi.Output<string>;

  constructor(name: string, args: SglangWorkerArgs, opts?: pulumi.ComponentResourceOptions) {
    super("reprobench:cluster:SglangWorker", name, {}, opts);
    const env = workerScriptEnv(args.settings);
    const container = new CheckedCommand(
      `${name}-container`,
      {
        connection: args.connection,
        // The script and its inputs stay readable in previews; only the key travels as a secret.
        create: scriptWithEnv(["container-run", "server-health", workerGateScript(args.settings)], env),
        environment: { API_KEY: args.apiKey },
        check: scriptWithEnv("container-check", { CONTAINER_NAME: env.CONTAINER_NAME }),
        delete: scriptWithEnv("container-stop", { CONTAINER_NAME: env.CONTAINER_NAME, STOP_TIMEOUT: String(args.settings.stopTimeoutSecs) }),
        spec: env.SPEC,
        summary: [...workerDockerArgs(args.settings), args.settings.image, ...containerArgv(args.settings).command],
        timeoutSeconds: args.settings.readyTimeoutMinutes * 60 + 600,
      },
      // A component's dependsOn does not reach its children by itself (the SDK waits only on a
      // resource's own dependsOn), so pass it on: e.g. no container starts before daemon.json is settled.
      { parent: this, dependsOn: opts?.dependsOn },
    );
    this.url = pulumi.output(args.settings.url);
    this.serverInfo = container.stdout.apply((s) => s.trim().split("\n").pop() ?? "");
    this.observed = container.observed;
    this.registerOutputs({ url: this.url, serverInfo: this.serverInfo, observed: this.observed });
  }
}
