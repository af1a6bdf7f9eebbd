import * as pulumi from "@pulumi/pulumi";
import type { ResolvedSglangSettings } from "../infra/config";
import { sglangCommand } from "../infra/config";
import { CheckedCommand, type SshConnectionInput } from "./checked-command";
import { scriptWithEnv, specHash } from "./host-script";

/** `docker run` options for one SGLang worker, as seed 000 starts it (the image and argv follow). */
export function workerDockerArgs(s: ResolvedSglangSettings): string[] {
  const args = ["--network", "host", "--ipc", s.ipc, "--stop-timeout", String(s.stopTimeoutSecs)];
  if (s.gpus === "all") args.push("--gpus", "all");
  for (const [name, value] of Object.entries(s.ulimits)) {
    args.push("--ulimit", typeof value === "number" ? `${name}=${value}` : `${name}=${value.soft}:${value.hard}`);
  }
  if (s.shmSizeMb !== null) args.push("--shm-size", `${s.shmSizeMb}m`);
  for (const [k, v] of Object.entries(s.env)) args.push("--env", `${k}=${v}`);
  args.push("--volume", `${s.modelPath}:${s.modelMountPath}:ro`);
  return args;
}

/** The /server_info fields (SGLang's names and JSON types) that must equal the config after start. */
export function expectedServerInfo(s: ResolvedSglangSettings): Record<string, unknown> {
  return {
    served_model_name: s.servedModelName,
    tp_size: s.tp,
    dp_size: s.dp,
    context_length: s.contextLength,
    max_running_requests: s.maxRunningRequests,
    max_mamba_cache_size: s.maxMambaCacheSize,
    mem_fraction_static: s.memFractionStatic,
    reasoning_parser: s.reasoningParser,
    tool_call_parser: s.toolCallParser,
  };
}

/** Inputs of the worker's host script, minus the API key. */
export function workerScriptEnv(s: ResolvedSglangSettings): Record<string, string> {
  const dockerArgs = workerDockerArgs(s);
  const command = sglangCommand(s);
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
    EXPECTED_JSON: JSON.stringify(expectedServerInfo(s)),
  };
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
 * One SGLang server container on a worker host (seed 000 "启动两个 SGLang workers"), gated on /health
 * and on /server_info matching the config. A refresh notices a dead or changed container and the next
 * `up` recreates it.
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
        create: scriptWithEnv(["container-run", "sglang-worker"], env),
        environment: { API_KEY: args.apiKey },
        check: scriptWithEnv("container-check", { CONTAINER_NAME: env.CONTAINER_NAME }),
        delete: scriptWithEnv("container-stop", { CONTAINER_NAME: env.CONTAINER_NAME, STOP_TIMEOUT: String(args.settings.stopTimeoutSecs) }),
        spec: env.SPEC,
        summary: [...workerDockerArgs(args.settings), args.settings.image, ...sglangCommand(args.settings)],
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
