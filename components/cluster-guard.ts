import * as pulumi from "@pulumi/pulumi";
import type { ClusterHost } from "./host";
import { CheckedCommand } from "./checked-command";
import { scriptWithEnv } from "./host-script";

export interface ClusterGuardArgs {
  /** The runner host, where every stack names the job it runs. */
  readonly host: ClusterHost;
  /** <harbor.workDir>/runs/current.d, where every stack names the job it runs. */
  readonly currentDir: string;
  /** This (owning) stack's id, "project.stack". */
  readonly ownStackId: string;
}

/**
 * The owning stack's refusal to take the cluster down under another stack's running job. Pass every
 * cluster component in `dependsOn`: the guard is then destroyed first, and when its check refuses (naming
 * the stack and the job), nothing else of the cluster is touched.
 */
export class ClusterGuard extends pulumi.ComponentResource {
  constructor(name: string, args: ClusterGuardArgs, opts?: pulumi.ComponentResourceOptions) {
    super("reprobench:cluster:ClusterGuard", name, {}, opts);
    const env = { CURRENT_DIR: args.currentDir, OWN_STACK: args.ownStackId };
    new CheckedCommand(
      `${name}-check`,
      {
        connection: args.host.connection,
        create: scriptWithEnv("cluster-guard", { ...env, MODE: "check" }),
        check: scriptWithEnv("cluster-guard", { ...env, MODE: "check" }),
        delete: scriptWithEnv("cluster-guard", { ...env, MODE: "guard" }),
        onDrift: "update",
        timeoutSeconds: 60,
      },
      { parent: this, dependsOn: opts?.dependsOn },
    );
    this.registerOutputs({});
  }
}
