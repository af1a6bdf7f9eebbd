import * as command from "@pulumi/command";
import * as pulumi from "@pulumi/pulumi";
import type { ReprobenchConfig } from "../infra/config";
import { parseCidr } from "../infra/config";
import { bashCommand } from "./host-script";

/** Where the host keeps daemon.json backups and the pre-reprobench original. */
export const DAEMON_STATE_DIR = "/var/lib/reprobench/docker-daemon";

type Pool = ReprobenchConfig["docker"]["addressPools"][number];

/**
 * Problems with the pools themselves, before any host is asked: overlapping pools, a network size
 * smaller than the base. (Overlaps with a host's routes and networks are checked on the host.)
 */
export function poolProblems(pools: Pool[]): string[] {
  const problems: string[] = [];
  const parsed = pools.map((p) => ({ p, c: parseCidr(p.base) }));
  for (const { p, c } of parsed) {
    if (!c) problems.push(`pool ${p.base} is not a valid IPv4 CIDR`);
    else if (p.size < c.prefix) problems.push(`pool ${p.base} cannot be cut into /${p.size} networks (size must be ≥ ${c.prefix})`);
  }
  for (let i = 0; i < parsed.length; i++) {
    for (let j = i + 1; j < parsed.length; j++) {
      const a = parsed[i].c;
      const b = parsed[j].c;
      if (!a || !b) continue;
      const aEnd = a.network + 2 ** (32 - a.prefix);
      const bEnd = b.network + 2 ** (32 - b.prefix);
      if (a.network < bEnd && b.network < aEnd) problems.push(`pools ${parsed[i].p.base} and ${parsed[j].p.base} overlap`);
    }
  }
  return problems;
}

/** How many networks the pools provide (Harbor needs one per concurrent trial, plus leftovers). */
export function poolCapacity(pools: Pool[]): number {
  return pools.reduce((n, p) => n + 2 ** (p.size - (parseCidr(p.base)?.prefix ?? p.size)), 0);
}

/** Inputs of docker-daemon.sh for a config. */
export function daemonScriptEnv(docker: ReprobenchConfig["docker"]): Record<string, string> {
  return {
    POOLS_JSON: JSON.stringify(docker.addressPools.map((p) => ({ base: p.base, size: p.size }))),
    FORCE_RESTART: docker.forceRestart ? "1" : "0",
    RESTART_POLICY: docker.restartPolicy,
    VERIFY_NETWORKS: String(docker.verifyNetworks),
    STATE_DIR: DAEMON_STATE_DIR,
    DAEMON_JSON: docker.daemonConfigPath,
  };
}

export interface DockerDaemonConfigArgs {
  /** SSH connection to the host (@pulumi/command remote ConnectionArgs). */
  readonly connection: command.types.input.remote.ConnectionArgs;
  /** The stack's docker settings. */
  readonly docker: ReprobenchConfig["docker"];
}

/**
 * `default-address-pools` merged into a host's daemon.json (seed 000 "为高并发任务准备 Docker network
 * pools"): validated, backed up, docker restarted only when the content changed and nothing runs,
 * verified by allocating test networks. Destroy restores the original (docker.restoreOnDestroy).
 */
export class DockerDaemonConfig extends pulumi.ComponentResource {
  /** What the host script reported. */
  public readonly report: pulumi.Output<string>;

  constructor(name: string, args: DockerDaemonConfigArgs, opts?: pulumi.ComponentResourceOptions) {
    super("reprobench:cluster:DockerDaemonConfig", name, {}, opts);
    const problems = poolProblems(args.docker.addressPools);
    if (problems.length > 0) throw new Error(`${name}: invalid docker.addressPools: ${problems.join("; ")}`);
    const env = daemonScriptEnv(args.docker);
    const apply = new command.remote.Command(
      `${name}-daemon-json`,
      {
        connection: args.connection,
        create: bashCommand("docker-daemon", env),
        delete: args.docker.restoreOnDestroy
          ? bashCommand("docker-daemon-restore", { STATE_DIR: env.STATE_DIR, DAEMON_JSON: env.DAEMON_JSON, FORCE_RESTART: env.FORCE_RESTART })
          : undefined,
        addPreviousOutputInEnv: false,
      },
      // A component's dependsOn does not reach its children by itself (the SDK waits only on a
      // resource's own dependsOn), so pass it on: e.g. no container starts before daemon.json is settled.
      { parent: this, dependsOn: opts?.dependsOn },
    );
    this.report = apply.stdout;
    this.registerOutputs({ report: this.report });
  }
}
