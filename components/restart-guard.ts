import * as pulumi from "@pulumi/pulumi";
import { CheckedCommand } from "./checked-command";
import { scriptWithEnv } from "./host-script";
import type { HostConnectionInput } from "./ssh";

/** Where the guard looks for running jobs, and whether the stack allows restarts under them. */
export interface RestartGuardSettings {
  /** SSH connection to the runner host (where Harbor's jobs run). */
  readonly runnerConnection: pulumi.Input<HostConnectionInput>;
  /** <harbor.workDir>/runs/current.d, where every stack names the job it runs. */
  readonly currentDir: string;
  /** Allow the restart under a running job (the trials at risk are reported in `report`). */
  readonly allowDuringJobs: boolean;
}

export interface RestartGuardArgs extends RestartGuardSettings {
  /** What would restart, for the messages ("worker-a's model server"). */
  readonly what: string;
  /** Everything whose change restarts the guarded thing (its spec, image digest, …). */
  readonly spec: Record<string, pulumi.Input<unknown>>;
}

/**
 * A check that runs on the runner before a change that would restart a server, the router, dockerd or a
 * bridge: pass it in the guarded resource's `dependsOn`. Its spec changes with the guarded resource's, so
 * `up` runs it first, and while a Harbor job runs it refuses (naming the job and its running trials)
 * before anything restarts, unless the stack allows it.
 */
export class RestartGuard extends pulumi.ComponentResource {
  /** What the guard said last: nothing runs, or the trials a permitted restart put at risk. */
  public readonly report: pulumi.Output<string>;

  constructor(name: string, args: RestartGuardArgs, opts?: pulumi.ComponentResourceOptions) {
    super("reprobench:cluster:RestartGuard", name, {}, opts);
    const check = new CheckedCommand(
      `${name}-check`,
      {
        connection: args.runnerConnection,
        create: scriptWithEnv("restart-guard", { WHAT: args.what, CURRENT_DIR: args.currentDir, ALLOW: args.allowDuringJobs ? "1" : "0" }),
        // Nothing on the host to read back: the guard is a step, re-run whenever its spec changes.
        check: "echo guard",
        spec: pulumi.all(args.spec).apply((s) => JSON.stringify(s)),
        onDrift: "update",
        timeoutSeconds: 60,
      },
      { parent: this, dependsOn: opts?.dependsOn },
    );
    this.report = check.stdout.apply((s) => s.trim());
    this.registerOutputs({ report: this.report });
  }
}
