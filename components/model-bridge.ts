import * as pulumi from "@pulumi/pulumi";
import type { ClusterHost } from "./host";
import { CheckedCommand } from "./checked-command";
import { scriptWithEnv } from "./host-script";
import { guardHooks } from "./restart-guard";

export const MODEL_BRIDGE_UNIT = "reprobench-model-bridge";

/** Where the model bridge listens and what it forwards to. */
export interface ModelBridgeSettings {
  /** Port on the docker bridge gateway (run.modelBridgePort). */
  bridgePort: number;
  /** The name containers use for the gateway (host.docker.internal). */
  containerHost: string;
  /** Image the check runs in (a task image). */
  checkImage: string;
  /** The model endpoint on the runner: the router, or the single worker. */
  upstream: { host: string; port: number };
}

/** Inputs of proxy-bridge.sh in direct mode: gateway:bridgePort → the router (or the single worker). */
export function modelBridgeScriptEnv(s: ModelBridgeSettings): Record<string, string> {
  return {
    UNIT: MODEL_BRIDGE_UNIT,
    BRIDGE_PORT: String(s.bridgePort),
    UPSTREAM_HOST: s.upstream.host,
    UPSTREAM_PORT: String(s.upstream.port),
    CONTAINER_HOST: s.containerHost,
    CHECK_IMAGE: s.checkImage,
    // Liveness of the router / model server, reached the way the agent will reach it.
    CHECK_URL: `http://${s.containerHost}:${s.bridgePort}/health`,
    CHECK_MODE: "direct",
  };
}

export interface ModelBridgeArgs {
  /** The runner host (its connection, proxy and restart guard). */
  readonly host: ClusterHost;
  readonly settings: ModelBridgeSettings;
}

/**
 * The model endpoint for agents that run INSIDE the task container (mini-swe-agent, seed 002 Run 3): the
 * router listens on the runner's loopback, which containers cannot reach, so socat on the docker bridge
 * gateway forwards to it (the same mechanism as the proxy bridge), as a systemd unit, checked from a container.
 */
export class ModelBridge extends pulumi.ComponentResource {
  /** gateway:port the task containers reach as <containerHost>:<modelBridgePort>. */
  public readonly listen: pulumi.Output<string>;

  constructor(name: string, args: ModelBridgeArgs, opts?: pulumi.ComponentResourceOptions) {
    super("reprobench:run:ModelBridge", name, {}, opts);
    const unit = new CheckedCommand(
      `${name}-unit`,
      {
        connection: args.host.connection,
        create: scriptWithEnv(["retry", "proxy-bridge"], modelBridgeScriptEnv(args.settings)),
        check: scriptWithEnv("proxy-bridge-check", { UNIT: MODEL_BRIDGE_UNIT }),
        delete: scriptWithEnv("proxy-bridge-remove", { UNIT: MODEL_BRIDGE_UNIT }),
        onDrift: "update",
        timeoutSeconds: 600,
      },
      // Children do not inherit the component's dependsOn: pass it on (the router must be up first).
      // Agents in running trials talk through it: a change asks the restart guard first.
      { parent: this, dependsOn: opts?.dependsOn, hooks: guardHooks(`${name}-unit`, args.host.restartGuard, "the model bridge") },
    );
    this.listen = unit.stdout.apply((s) => s.trim().split("\n").pop() ?? "");
    this.registerOutputs({ listen: this.listen });
  }
}
