import * as pulumi from "@pulumi/pulumi";
import type { ReprobenchConfig } from "../infra/config";
import { modelEndpoint } from "../infra/config";
import { CheckedCommand, type SshConnectionInput } from "./checked-command";
import { scriptWithEnv } from "./host-script";

export const MODEL_BRIDGE_UNIT = "reprobench-model-bridge";

/** Inputs of proxy-bridge.sh in direct mode: gateway:modelBridgePort → the router (or the single worker). */
export function modelBridgeScriptEnv(config: ReprobenchConfig): Record<string, string> {
  const { host, port } = modelEndpoint(config);
  return {
    UNIT: MODEL_BRIDGE_UNIT,
    BRIDGE_PORT: String(config.run.modelBridgePort),
    UPSTREAM_HOST: host,
    UPSTREAM_PORT: String(port),
    CONTAINER_HOST: config.proxy.containerHost,
    CHECK_IMAGE: config.toolBundle.canaryImage,
    // Liveness of the router / model server, reached the way the agent will reach it.
    CHECK_URL: `http://${config.proxy.containerHost}:${config.run.modelBridgePort}/health`,
    CHECK_MODE: "direct",
  };
}

export interface ModelBridgeArgs {
  /** SSH connection to the runner host. */
  readonly connection: pulumi.Input<SshConnectionInput>;
  readonly config: ReprobenchConfig;
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
        connection: args.connection,
        create: scriptWithEnv("proxy-bridge", modelBridgeScriptEnv(args.config)),
        check: scriptWithEnv("proxy-bridge-check", { UNIT: MODEL_BRIDGE_UNIT }),
        delete: scriptWithEnv("proxy-bridge-remove", { UNIT: MODEL_BRIDGE_UNIT }),
        timeoutSeconds: 600,
      },
      // Children do not inherit the component's dependsOn: pass it on (the router must be up first).
      { parent: this, dependsOn: opts?.dependsOn },
    );
    this.listen = unit.stdout.apply((s) => s.trim().split("\n").pop() ?? "");
    this.registerOutputs({ listen: this.listen });
  }
}
