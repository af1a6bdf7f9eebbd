import * as pulumi from "@pulumi/pulumi";
import type { ReprobenchConfig } from "../infra/config";
import { hostsWithRole, routerCommand, workerSettings } from "../infra/config";
import { CheckedCommand, type SshConnectionInput } from "./checked-command";
import { scriptWithEnv, specHash } from "./host-script";

/** `docker run` options for the router (seed 000: host network, nofile 65536, the model mounted read-only). */
export function routerDockerArgs(config: ReprobenchConfig): string[] {
  const r = config.router;
  const args = ["--network", "host", "--stop-timeout", String(r.stopTimeoutSecs)];
  for (const [name, value] of Object.entries(r.ulimits)) {
    args.push("--ulimit", typeof value === "number" ? `${name}=${value}` : `${name}=${value.soft}:${value.hard}`);
  }
  for (const [k, v] of Object.entries(r.env)) args.push("--env", `${k}=${v}`);
  // The router loads the tokenizer from the workers' model_path; mount it where the workers see it.
  if (r.mountModel) args.push("--volume", `${config.sglang.modelPath}:${config.sglang.modelMountPath}:ro`);
  return args;
}

/** Every DP rank as the dp-aware router names it: http://<ip>:<port>@<rank> (one entry per worker otherwise). */
export function expectedRouterWorkers(config: ReprobenchConfig): string[] {
  return hostsWithRole(config, "worker").flatMap((h) => {
    const s = workerSettings(config, h.name);
    return config.router.dpAware ? Array.from({ length: s.dp }, (_, rank) => `${s.url}@${rank}`) : [s.url];
  });
}

/** The router's base URL as seen from its own host. */
export function routerLocalUrl(config: ReprobenchConfig): string {
  const host = config.router.host === "0.0.0.0" ? "127.0.0.1" : config.router.host;
  return `http://${host}:${config.router.port}`;
}

/** Inputs of the router's host script, minus the API key. */
export function routerScriptEnv(config: ReprobenchConfig): Record<string, string> {
  const r = config.router;
  const dockerArgs = routerDockerArgs(config);
  const command = routerCommand(config);
  return {
    CONTAINER_NAME: r.containerName,
    IMAGE: r.image ?? config.sglang.image,
    // The rank list is fixed when the router starts, so a DP-size change must restart it too.
    SPEC: specHash({ image: r.image, dockerArgs, command, user: r.user, workers: expectedRouterWorkers(config) }),
    DOCKER_ARGS_JSON: JSON.stringify(dockerArgs),
    COMMAND_JSON: JSON.stringify(command),
    CONTAINER_USER: r.user,
    REQUIRED_DIRS: r.mountModel ? config.sglang.modelPath : "",
    ROUTER_URL: routerLocalUrl(config),
    EXPECTED_WORKERS: JSON.stringify(expectedRouterWorkers(config)),
    SERVED_MODEL_NAME: config.sglang.servedModelName,
    MODEL_LISTED: config.sglang.engine === "vllm" ? "0" : "1",
    READY_TIMEOUT_SECONDS: String(r.workerStartupTimeoutSecs + 120),
  };
}

export interface SglangRouterArgs {
  /** SSH connection to the router host. */
  readonly connection: pulumi.Input<SshConnectionInput>;
  /** The whole stack config (the router needs every worker's URL and DP size). */
  readonly config: ReprobenchConfig;
  /** The workers' shared --api-key. Secret. */
  readonly apiKey: pulumi.Input<string>;
}

/**
 * The DP-aware, cache-aware sglang-router in front of every worker (seed 000 "启动 global router").
 * Pass the workers in `dependsOn`: it is created only after each passed its gate, and destroyed first.
 */
export class SglangRouter extends pulumi.ComponentResource {
  /** OpenAI-compatible base URL on the router host. */
  public readonly url: pulumi.Output<string>;
  /** {workers, models} the router reported after its checks. */
  public readonly status: pulumi.Output<string>;

  constructor(name: string, args: SglangRouterArgs, opts?: pulumi.ComponentResourceOptions) {
    super("reprobench:cluster:SglangRouter", name, {}, opts);
    const env = routerScriptEnv(args.config);
    const container = new CheckedCommand(
      `${name}-container`,
      {
        connection: args.connection,
        // The script and its inputs stay readable in previews; only the key travels as a secret.
        create: scriptWithEnv(["container-run", "sglang-router"], env),
        environment: { API_KEY: args.apiKey },
        check: scriptWithEnv("container-check", { CONTAINER_NAME: env.CONTAINER_NAME }),
        // Drain: give in-flight generations the seed's 180 s before the container goes.
        delete: scriptWithEnv("container-stop", { CONTAINER_NAME: env.CONTAINER_NAME, STOP_TIMEOUT: String(args.config.router.stopTimeoutSecs) }),
        spec: env.SPEC,
        summary: [...routerDockerArgs(args.config), env.IMAGE, ...routerCommand(args.config)],
        timeoutSeconds: Number(env.READY_TIMEOUT_SECONDS) + 900,
      },
      // A component's dependsOn does not reach its children by itself (the SDK waits only on a
      // resource's own dependsOn), so pass it on: e.g. no container starts before daemon.json is settled.
      { parent: this, dependsOn: opts?.dependsOn },
    );
    this.url = pulumi.output(routerLocalUrl(args.config));
    this.status = container.stdout.apply((s) => s.trim().split("\n").pop() ?? "");
    this.registerOutputs({ url: this.url, status: this.status });
  }
}
