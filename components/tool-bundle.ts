import * as command from "@pulumi/command";
import * as pulumi from "@pulumi/pulumi";
import type { ReprobenchConfig } from "../infra/config";
import { bashCommand } from "./host-script";

/** Inputs of tool-bundle.sh. */
export function bundleScriptEnv(t: ReprobenchConfig["toolBundle"]): Record<string, string> {
  return {
    TOOLS_DIR: t.hostDir,
    MOUNT_PATH: t.mountPath,
    WHEEL_URL: t.asciinemaWheelUrl,
    WHEEL_SHA256: t.asciinemaSha256,
    CANARY_IMAGE: t.canaryImage,
  };
}

export interface ToolBundleArgs {
  /** SSH connection to the runner host. */
  readonly connection: command.types.input.remote.ConnectionArgs;
  readonly toolBundle: ReprobenchConfig["toolBundle"];
}

/** The read-only tmux/asciinema bundle task containers mount (Terminus-2 drives tmux and records with asciinema). */
export class ToolBundle extends pulumi.ComponentResource {
  /** Versions seen inside the canary image. */
  public readonly report: pulumi.Output<string>;

  constructor(name: string, args: ToolBundleArgs, opts?: pulumi.ComponentResourceOptions) {
    super("reprobench:runner:ToolBundle", name, {}, opts);
    const build = new command.remote.Command(
      `${name}-build`,
      {
        connection: args.connection,
        create: bashCommand("tool-bundle", bundleScriptEnv(args.toolBundle)),
        delete: `rm -rf ${JSON.stringify(args.toolBundle.hostDir)} ${JSON.stringify(`${args.toolBundle.hostDir}.building`)}`,
        addPreviousOutputInEnv: false,
      },
      // A component's dependsOn does not reach its children by itself (the SDK waits only on a
      // resource's own dependsOn), so pass it on: e.g. no container starts before daemon.json is settled.
      { parent: this, dependsOn: opts?.dependsOn },
    );
    this.report = build.stdout.apply((s) => s.trim().split("\n").pop() ?? "");
    this.registerOutputs({ report: this.report });
  }
}
