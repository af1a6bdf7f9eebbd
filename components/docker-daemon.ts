import * as pulumi from "@pulumi/pulumi";
import type { ClusterHost } from "./host";
import { CheckedCommand } from "./checked-command";
import { parseCidr } from "./cidr";
import type { DaemonProxies } from "./host-proxy";
import { scriptWithEnv } from "./host-script";
import { guardHooks } from "./restart-guard";

/** Where the host keeps daemon.json backups and the pre-reprobench original. */
export const DAEMON_STATE_DIR = "/var/lib/reprobench/docker-daemon";

/** One entry of daemon.json's default-address-pools. */
export interface AddressPool {
  /** The range networks are cut from, e.g. 172.18.0.0/15. */
  base: string;
  /** Prefix length of each network cut from it, e.g. 24. */
  size: number;
}

/** The daemon.json settings reprobench manages on a host. */
export interface DaemonSettings {
  /** default-address-pools (seed 000: 172.18.0.0/15 cut into /24s, 512 networks). */
  addressPools: AddressPool[];
  /** Restart docker even while containers run (they stop). */
  forceRestart: boolean;
  /** "when-idle": restart docker only when no container runs; "never": write the file only. */
  restartPolicy: "when-idle" | "never";
  /** Test networks allocated to prove the pools (0 skips). */
  verifyNetworks: number;
  /** The file (seed: /etc/docker/daemon.json). */
  daemonConfigPath: string;
  /** Put the pre-reprobench daemon.json back on destroy. */
  restoreOnDestroy: boolean;
  /** daemon.json "registry-mirrors" (Docker Hub pull-through caches; registries[].mirror of docker.io). Empty: none of ours. */
  registryMirrors?: string[];
}

type Pool = AddressPool;

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
export function daemonScriptEnv(docker: DaemonSettings): Record<string, string> {
  return {
    POOLS_JSON: JSON.stringify(docker.addressPools.map((p) => ({ base: p.base, size: p.size }))),
    FORCE_RESTART: docker.forceRestart ? "1" : "0",
    RESTART_POLICY: docker.restartPolicy,
    VERIFY_NETWORKS: String(docker.verifyNetworks),
    STATE_DIR: DAEMON_STATE_DIR,
    DAEMON_JSON: docker.daemonConfigPath,
    // Only when set: a stack without mirrors keeps the script it had.
    ...(docker.registryMirrors && docker.registryMirrors.length > 0 ? { MIRRORS_JSON: JSON.stringify(docker.registryMirrors) } : {}),
  };
}

export interface DockerDaemonConfigArgs {
  /** The host (its connection, name for messages, and restart guard). */
  readonly host: ClusterHost;
  /** The daemon.json settings to converge. */
  readonly settings: DaemonSettings;
  /**
   * daemon.json "proxies": what dockerd pulls images through (hosts[].proxy). Secret (the URL may carry
   * credentials): it reaches the host in the command's secret environment, the file is written 0600, and
   * state and the drift check only hold its sha256. Omitted: proxies reprobench set earlier are removed,
   * any others left alone.
   */
  readonly proxies?: pulumi.Input<DaemonProxies>;
}

/**
 * `default-address-pools` merged into a host's daemon.json (seed 000 "为高并发任务准备 Docker network
 * pools"): validated, backed up, docker restarted only when the content changed and nothing runs,
 * verified by allocating test networks. A refresh reads the pools back from the file: pools removed or
 * changed by hand are drift that the next `up` repairs in place. Destroy restores the original
 * (docker.restoreOnDestroy).
 */
export class DockerDaemonConfig extends pulumi.ComponentResource {
  /** What the host script reported; resolves once the pools are in effect. */
  public readonly report: pulumi.Output<string>;
  /** The pools as daemon.json holds them, as last read from the host. */
  public readonly observedPools: pulumi.Output<string>;

  constructor(name: string, args: DockerDaemonConfigArgs, opts?: pulumi.ComponentResourceOptions) {
    super("reprobench:cluster:DockerDaemonConfig", name, {}, opts);
    const settings = args.settings;
    const problems = poolProblems(settings.addressPools);
    if (problems.length > 0) throw new Error(`${name}: invalid docker.addressPools: ${problems.join("; ")}`);
    const env = daemonScriptEnv(settings);
    const proxies = args.proxies === undefined ? undefined : pulumi.secret(pulumi.output(args.proxies));
    const apply = new CheckedCommand(
      `${name}-daemon-json`,
      {
        connection: args.host.connection,
        create: scriptWithEnv("docker-daemon", env),
        check: scriptWithEnv("docker-daemon-check", { DAEMON_JSON: env.DAEMON_JSON }),
        // Re-running the merge repairs drift; a replace would first restore the original file.
        onDrift: "update",
        // The proxy URL only ever travels here, in the secret environment (never in the script text).
        ...(proxies ? { environment: proxies.apply((p) => ({ PROXIES_JSON: JSON.stringify(p) })) } : {}),
        delete: settings.restoreOnDestroy
          ? scriptWithEnv("docker-daemon-restore", { STATE_DIR: env.STATE_DIR, DAEMON_JSON: env.DAEMON_JSON, FORCE_RESTART: env.FORCE_RESTART })
          : undefined,
        timeoutSeconds: 600,
      },
      // A component's dependsOn does not reach its children by itself (the SDK waits only on a
      // resource's own dependsOn), so pass it on. A change of the pools or proxies (which may restart
      // dockerd) asks the restart guard first, as part of that very step.
      { parent: this, dependsOn: opts?.dependsOn, hooks: guardHooks(`${name}-daemon-json`, args.host.restartGuard, `dockerd on ${args.host.name}`) },
    );
    this.report = apply.stdout;
    this.observedPools = apply.observed;
    this.registerOutputs({ report: this.report, observedPools: this.observedPools });
  }
}
