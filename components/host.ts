// A host handle: one object per host of a cluster, made once, that every component placed on the host
// takes instead of loose connection, provider and login fields (pulumi-eks's NodeGroup takes its
// `cluster` the same way). BenchCluster makes them from its claims (HostAccess); a run stack makes them
// from its owner's outputs, without a claim or an engine of its own.
import * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import type { RestartGuardSettings } from "./restart-guard";
import type { HostConnectionInput } from "./transport";

/** One host as the components reach it. */
export interface ClusterHost {
  /** The host's name in the cluster (worker-a); messages name it. */
  readonly name: string;
  /** SSH connection (its private key a secret). */
  readonly connection: pulumi.Input<HostConnectionInput>;
  /** The host's Docker engine over the same SSH (HostAccess); absent on a host this program has not claimed. */
  readonly dockerProvider?: docker.Provider;
  /** "uid:gid" of the SSH login (HostAccess.loginUser); absent on a host this program has not claimed. */
  readonly loginUser?: pulumi.Output<string>;
  /** HTTP(S)_PROXY/NO_PROXY of the host's proxy for its outbound scripts (hosts[].proxy); secret. Absent: none. */
  readonly proxyEnv?: pulumi.Input<Record<string, string>>;
  /**
   * The cluster's restart guard: a change that restarts what running trials use on this host is first
   * checked against the jobs on the cluster's runner. Absent: no guard.
   */
  readonly restartGuard?: RestartGuardSettings;
}

/**
 * A component's options with the host's Docker engine among its providers, so that the component's
 * `docker` children (`{ parent: this }`) use it. A provider for docker the caller passed wins.
 */
export function onHost(host: ClusterHost, opts: pulumi.ComponentResourceOptions | undefined): pulumi.ComponentResourceOptions {
  if (!host.dockerProvider) return opts ?? {};
  const given = opts?.providers;
  const list = given === undefined ? [] : Array.isArray(given) ? given : Object.values(given);
  if (list.some((p) => docker.Provider.isInstance(p))) return opts ?? {};
  return { ...opts, providers: [...list, host.dockerProvider] };
}

/** The login's "uid:gid" of a host whose containers run as the login; fails naming a host not claimed here. */
export function loginUserOf(host: ClusterHost): pulumi.Output<string> {
  if (!host.loginUser) throw new Error(`host ${host.name}: its containers run as the SSH login (user: ssh-user), but this program has not claimed the host (no HostAccess), so its uid:gid is unknown`);
  return host.loginUser;
}
