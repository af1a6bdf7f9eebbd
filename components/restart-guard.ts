import * as pulumi from "@pulumi/pulumi";
import { runHostScript } from "./checked-command";
import { scriptWithEnv } from "./host-script";
import type { HostConnection, HostConnectionInput } from "./transport";

/** Where the guard looks for running jobs, and whether the stack allows restarts under them. */
export interface RestartGuardSettings {
  /** The cluster (its BenchCluster's name) whose runner this guard asks: one program may hold several. */
  readonly cluster: string;
  /** SSH connection to the runner host (where Harbor's jobs run). */
  readonly runnerConnection: pulumi.Input<HostConnectionInput>;
  /** <harbor.workDir>/runs/current.d, where every stack names the job it runs. */
  readonly currentDir: string;
  /** Allow the restart under a running job (the trials at risk are reported in `report`). */
  readonly allowDuringJobs: boolean;
}

/**
 * Inputs that are bookkeeping, not the thing: the way into the host (a new key is no restart), our
 * provider's own code and records, what the last check read.
 */
const BOOKKEEPING = new Set(["connection", "progressUrn", "rerunOnLogin", "__provider", "expected", "observed", "info", "stdout", "recorded"]);

/** The inputs that differ between two input maps, bookkeeping left out. */
export function changedInputs(olds: Record<string, unknown>, news: Record<string, unknown>): string[] {
  const keys = new Set([...Object.keys(olds), ...Object.keys(news)]);
  return [...keys].filter((k) => !BOOKKEEPING.has(k) && JSON.stringify(olds[k] ?? null) !== JSON.stringify(news[k] ?? null)).sort();
}

/**
 * Whether an operation the guard sees needs asking: every delete (a replacement deletes first, and a
 * destroy stops the thing), and an update that changes an input of the thing. An update with equal
 * inputs repairs something already gone or broken (drift) and restarts nothing that runs.
 */
export function guardApplies(args: Pick<pulumi.ResourceHookArgs, "oldInputs" | "newInputs">): boolean {
  if (!args.newInputs || !args.oldInputs) return true;
  return changedInputs(args.oldInputs, args.newInputs).length > 0;
}

/** The one name the restart guard hook is registered under (see restartGuardHook). */
export const RESTART_GUARD_HOOK = "reprobench-restart-guard";

/** What each guarded resource is, for the guard's messages, and which cluster's guard it asks. */
const guarded = new Map<string, { what: string; cluster: string }>();
/** Each cluster's guard settings, by the cluster's name (the latest registration wins). */
const clusters = new Map<string, RestartGuardSettings>();
/** Each settings' runner connection, resolved once (before any step runs; hooks never run in a preview). */
const runners = new WeakMap<RestartGuardSettings, Promise<HostConnection>>();
let hook: pulumi.ResourceHook | undefined;

function runnerOf(settings: RestartGuardSettings): Promise<HostConnection> {
  let runner = runners.get(settings);
  if (!runner) {
    runner = new Promise<HostConnection>((resolve) => {
      pulumi.output(settings.runnerConnection).apply((c) => resolve(c as HostConnection));
    });
    runners.set(settings, runner);
  }
  return runner;
}

/**
 * The guards a hook call asks: the resource's own cluster's; for a resource the program no longer has,
 * the cluster whose name prefixes its name, else (state written before children were named after their
 * cluster) every cluster's, so none is skipped.
 */
export function guardsFor(resourceName: string, registered: ReadonlyMap<string, RestartGuardSettings>, owners: ReadonlyMap<string, { cluster: string }>): RestartGuardSettings[] {
  const own = owners.get(resourceName)?.cluster;
  const byPrefix = [...registered.keys()].filter((c) => resourceName.startsWith(`${c}-`)).sort((a, b) => b.length - a.length)[0];
  const cluster = own ?? byPrefix;
  const settings = cluster === undefined ? undefined : registered.get(cluster);
  return settings ? [settings] : [...registered.values()];
}

/**
 * The restart guard as a resource hook of the very resources it guards (server and router containers,
 * daemon.json, the proxy and model bridges, the tool bundle, the Harbor install): before one is updated or
 * deleted (a replacement deletes first), restart-guard.sh runs on its cluster's runner and, while any
 * stack's Harbor job runs there, refuses — naming the job and its running trials — unless the stack allows
 * it. Being part of the step itself, it cannot pass once and let a later `up` restart something under a job
 * that started since (a separate guard resource recorded its pass in state). Hooks run only when `up`
 * applies a step, never in a preview; a destroy runs the program (`--run-program`) so the hook is there.
 *
 * One hook under one name for the whole program, registered by the program whatever it contains: the
 * engine looks a delete hook up by the name in state, also for a resource the program no longer has (a
 * model bridge turned off, a host removed), and that name must still be registered. It asks the guard of
 * the resource's cluster (guardsFor), so two clusters in one program each keep their own.
 */
export function restartGuardHook(settings: RestartGuardSettings): pulumi.ResourceHook {
  clusters.set(settings.cluster, settings);
  if (hook) return hook;
  hook = new pulumi.ResourceHook(RESTART_GUARD_HOOK, async (args) => {
    if (!guardApplies(args)) return;
    const what = guarded.get(args.name)?.what ?? `${args.name} (a resource this program no longer has)`;
    for (const guard of guardsFor(args.name, clusters, guarded)) {
      const now = clusters.get(guard.cluster) ?? guard;
      const script = scriptWithEnv("restart-guard", { WHAT: what, CURRENT_DIR: now.currentDir, ALLOW: now.allowDuringJobs ? "1" : "0" });
      const report = (await runHostScript(await runnerOf(now), script, { timeoutSeconds: 60 })).trim();
      if (report) void pulumi.log.info(report);
    }
  });
  return hook;
}

/** The hooks option of a guarded resource named `resourceName` (none without a guard). */
export function guardHooks(resourceName: string, settings: RestartGuardSettings | undefined, what: string): pulumi.ResourceHookBinding | undefined {
  if (!settings) return undefined;
  guarded.set(resourceName, { what, cluster: settings.cluster });
  const guard = restartGuardHook(settings);
  return { beforeUpdate: [guard], beforeDelete: [guard] };
}
