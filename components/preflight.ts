// The preflight of a worker host, before its model server is created or replaced: components/preflight/
// holds the checks (pure), components/scripts/preflight-host.sh reads the host (read-only).
import * as pulumi from "@pulumi/pulumi";
import { CheckedCommand, runHostScript } from "./checked-command";
import type { ClusterHost } from "./host";
import { scriptWithEnv } from "./host-script";
import { parseHostReport } from "./preflight/facts";
import { type HostPlan, type HostVerdict, PREFLIGHT_SCRIPTS, type PreflightFacts, judgeHost, preflightEnv, readyLine, refusal } from "./preflight/plan";
import type { HostConnection } from "./transport";

export { type HostPlan, type HostVerdict, PREFLIGHT_SCRIPTS, type PreflightFacts, hostPlan, judgeHost, preflightEnv } from "./preflight/plan";

/** Upper bound of one preflight run: two short container runs, the safetensors headers, optional sha256. */
export const PREFLIGHT_TIMEOUT_SECONDS = 900;

export interface WorkerPreflightArgs {
  /** The worker host (its connection; the checks name it). */
  readonly host: ClusterHost;
  /** What the host must satisfy (components/preflight/plan.ts hostPlan). */
  readonly plan: HostPlan;
  /** The image the server's container runs (its id or pinned reference): the decisive check runs it. */
  readonly image: pulumi.Input<string>;
  /** Anything whose change restarts the server: a change runs the preflight again, before the restart. */
  readonly trigger: pulumi.Input<string>;
}

/** Runs the whole preflight on a host and judges it: what the component's gate and `reprobench check` do. */
export async function runPreflight(connection: HostConnection, plan: HostPlan, image?: string): Promise<HostVerdict> {
  const stdout = await runHostScript(connection, scriptWithEnv(PREFLIGHT_SCRIPTS, preflightEnv(plan, { image, full: true })), { timeoutSeconds: PREFLIGHT_TIMEOUT_SECONDS });
  return judgeHost(plan, parseHostReport(stdout, plan.host));
}

/**
 * The preflight of one worker (issue 30): before its model server's container is created or replaced, the
 * host is read (preflight-host.sh) and judged — the server image run with the server's --gpus (toolkit,
 * driver against the image's CUDA requirement, fabric manager), GPU count against tp × dp, MIG, foreign
 * compute processes, free memory per GPU for mem-fraction-static, the weights (path, readability as the
 * container's user, config.json, the index, every shard complete, no partial download, no HF cache
 * snapshot), the memory fit, the host tools and the ports. Any problem fails the step with one line per
 * problem naming the host, the GPU or the file, and the fix; the container, which depends on this, is then
 * neither created nor stopped.
 *
 * The judging runs as a hook of the `-facts` step (beforeCreate / beforeUpdate), so it runs exactly when that
 * step runs: on the first `up`, and whenever `trigger` (what would restart the server) changes — never in a
 * converged `up`, a preview or a refresh. A refused step leaves nothing in the state, so the next `up` reads
 * the host afresh. The step itself then records the facts (GPU inventory, driver, weights size, the fit) as
 * `facts`, without the slow parts (CUDA probe, sha256).
 */
export class WorkerPreflight extends pulumi.ComponentResource {
  /** What the host had when the preflight last passed. */
  public readonly facts: pulumi.Output<PreflightFacts>;

  constructor(name: string, args: WorkerPreflightArgs, opts?: pulumi.ComponentResourceOptions) {
    super("reprobench:cluster:WorkerPreflight", name, {}, opts);
    const plan = args.plan;
    const what = `${plan.host}'s model server${plan.worker ? ` (${plan.worker.containerName})` : ""}`;
    const image = pulumi.output(args.image);
    // Resolved before any step runs (hooks never run in a preview, where the connection may be unknown).
    const connection = new Promise<HostConnection>((resolve) => void pulumi.output(args.host.connection).apply((c) => resolve(c as HostConnection)));
    const imageNow = new Promise<string>((resolve) => void image.apply(resolve));
    const gate = async () => {
      const verdict = await runPreflight(await connection, plan, await imageNow);
      if (!verdict.ready) throw new Error(refusal(verdict, what));
      for (const c of verdict.checks) for (const n of c.notes) void pulumi.log.warn(`${plan.host}: ${c.check}: ${n}`, this);
      void pulumi.log.info(readyLine(verdict), this);
    };
    const record = new CheckedCommand(
      `${name}-facts`,
      {
        connection: args.host.connection,
        create: image.apply((i) => scriptWithEnv(PREFLIGHT_SCRIPTS, preflightEnv(plan, { image: i, full: false }))),
        check: scriptWithEnv("preflight-settled", { HOST_NAME: plan.host }),
        spec: args.trigger,
        // The weights are read as the login's uid:gid: another login is checked again.
        rerunOnLogin: ["user"],
        onDrift: "update",
        timeoutSeconds: PREFLIGHT_TIMEOUT_SECONDS,
      },
      { parent: this, dependsOn: opts?.dependsOn, hooks: { beforeCreate: [gate], beforeUpdate: [gate] } },
    );
    this.facts = record.stdout.apply((s) => judgeHost(plan, parseHostReport(s, plan.host)).facts);
    this.registerOutputs({ facts: this.facts });
  }
}
