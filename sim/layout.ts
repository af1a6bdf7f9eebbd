// Where a sim instance lives and what its parts are called: slots, labels, names, subnets, addresses, ports and state paths (pure).
import { join } from "node:path";
import { simCacheDir } from "./images";
import { HUB_FAULTS_NAME, HUB_HOSTNAME, HUB_PORT, HUB_REQUEST_LOG_NAME } from "./hub-repo";
import { CONDITIONS_FILE_NAME, PROXY_HOSTNAME, PROXY_PORT } from "./outside";
import { MIRROR_HOSTNAME, MIRROR_PORT, QUOTA_FILE_NAME, REGISTRY_USER, REQUEST_LOG_NAME } from "./registry";

export const SIM_LABEL = "io.reprobench.sim";
export const ROLE_LABEL = "io.reprobench.sim.role";
export const HOST_LABEL = "io.reprobench.sim.host";
/** Which cluster a resource belongs to: "default" (what `reprobench sim` manages) or a test instance. */
export const INSTANCE_LABEL = "io.reprobench.sim.instance";
/**
 * The checkout (project root) that made a resource: its .sim/ holds the keys that reach the hosts, so
 * another checkout cannot use them ("Host key verification failed") and must not silently reuse them.
 */
export const CHECKOUT_LABEL = "io.reprobench.sim.checkout";
/**
 * Test and bench instances only: "pid:starttime" of the process that started them. While it runs the
 * instance is in use; once it is gone the instance is stale and the next `simUp` of that name takes it over.
 */
export const LEASE_LABEL = "io.reprobench.sim.lease";
/** The default cluster's network and registry (the values Pulumi.local.yaml is written for). */
export const NETWORK = { name: "reprobench-sim", subnet: "172.31.250.0/24", gateway: "172.31.250.1" } as const;
export const REGISTRY = {
  container: "reprobench-sim-registry",
  /** On the outside network 172.29.240.0/24 (hosts reach it only through proxy.sim). */
  ip: "172.29.240.10",
  hostname: "registry.sim",
  port: 5000,
} as const;
/** Host i (0-based) gets <subnet>.(11+i) and SSH on 127.0.0.1:(2201+i) in the default cluster. */
export const FIRST_HOST_OCTET = 11;
export const FIRST_SSH_PORT = 2201;
export const MAX_HOSTS = 20;
/** Where job results live on the runner host; `sim down` copies them out first. */
export const JOBS_DIR = "/var/lib/reprobench/jobs";
/** Placeholder model directory (tokenizer files only) the local stack's sglang.modelPath points at. */
export const MODEL_DIR = "/var/lib/reprobench/models/sim-placeholder";
/** Where the runner host keeps the wheelhouse (sim/wheelhouse.sh) the local stack installs from. */
export const WHEELS_DIR = "/var/cache/reprobench/wheels";
/**
 * Where the runner host keeps the agent wheelhouse (sim/agent-wheelhouse.sh): mini-swe-agent + litellm[proxy]
 * wheels and `bin/uv`, bind-mounted into task containers so Harbor's mini-swe-agent installs offline.
 */
export const AGENT_WHEELS_DIR = "/var/cache/reprobench/agent-wheels";
/**
 * The unprivileged login of the sim hosts (sim/images/sim-host: NOPASSWD sudo, the docker group), as on
 * clusters that allow no root login; the local stack logs in to worker-a as this user.
 */
export const SUDO_USER = "bench";
/** The host that runs the router and Harbor in the local stack (as in seed 000). */
export const RUNNER_HOST = "worker-b";
/** worker-b's loopback forwarder (seed 000's "user's proxy"), relaying to proxy.sim with the credentials. */
export const FORWARDER_PORT = 27890;
/** Where worker-b's forwarder reads the upstream proxy URL (root-only). */
export const FORWARDER_UPSTREAM_FILE = "/etc/reprobench/sim-proxy-upstream";

/**
 * A cluster instance. The default one is what `reprobench sim` and the local stack use; a test can run
 * a separate instance (own network, subnet, ports, containers, state dir) in slot 1..9 so that it can
 * bring its cluster down without touching the default one someone else may be using.
 */
export interface SimInstance {
  name: string;
  slot: number;
}
export const DEFAULT_INSTANCE: SimInstance = { name: "default", slot: 0 };
/** Test and bench instances take slots 1..MAX_SLOT (subnets 172.31.251-255 and 172.30.250-255). */
export const MAX_SLOT = 11;

export interface InstanceLayout {
  instance: SimInstance;
  /** Project-relative. */
  stateDir: string;
  containerPrefix: string;
  network: { name: string; subnet: string; gateway: string; prefix: string };
  /**
   * cacheDir holds the registry's storage. It is a cache like the images (kept by `sim down`, removed
   * by `sim down --purge-images`): without it every warm `sim up` re-pushes ~26 images (~30 s).
   * The pull limits (sim/images/registry/registry-gate.py): `username` with the password in
   * `passwordFile` (0600) pulls as an account; `quotaFile` (the limits, `sim registry`) and `requestLog`
   * (JSON lines) are in `stateDir`, bind-mounted into the container. Paths are project-relative.
   */
  registry: {
    container: string;
    cacheDir: string;
    ip: string;
    hostname: string;
    port: number;
    pushHost: string;
    username: string;
    passwordFile: string;
    stateDir: string;
    quotaFile: string;
    requestLog: string;
  };
  /**
   * The pull-through mirror of registry.sim (`mirror.sim:5000`): on the cluster network (ip; the hosts
   * reach it directly) and on the outside network (outsideIp; it reaches registry.sim directly), pulling
   * as `registry.username`.
   */
  mirror: { container: string; ip: string; outsideIp: string; hostname: string; port: number };
  /**
   * The outside network (registry, package index, git server) the hosts reach only through the proxy,
   * and the container serving the index and the git repository (static files from `treeDir`, a cache).
   */
  outside: { network: { name: string; subnet: string; gateway: string; prefix: string }; container: string; ip: string; treeDir: string };
  /** The egress proxy: on the outside network (outsideIp) and on the cluster network (ip, proxy.sim). */
  proxy: { container: string; ip: string; outsideIp: string; hostname: string; port: number };
  /**
   * The fake Hugging Face Hub (sim/hub/hub.py) on the outside network, `hub.sim:80`: its repos are in
   * `treeDir` (a cache beside the outside tree, hub.py's --root); `faultsFile` (read at every request) and `requestLog`
   * (JSON lines) are in `stateDir`, bind-mounted into the container. Paths but treeDir are project-relative.
   */
  hub: { container: string; ip: string; hostname: string; port: number; treeDir: string; stateDir: string; faultsFile: string; requestLog: string };
  /** Project-relative: the proxy URL with credentials (0600) and the conditions file the proxy reads. */
  proxyUrlFile: string;
  networkConditionsFile: string;
  firstSshPort: number;
}

export function instanceLayout(instance: SimInstance = DEFAULT_INSTANCE): InstanceLayout {
  const isDefault = instance.name === DEFAULT_INSTANCE.name;
  if (isDefault ? instance.slot !== 0 : !Number.isInteger(instance.slot) || instance.slot < 1 || instance.slot > MAX_SLOT) {
    throw new Error(`sim instance '${instance.name}': got slot ${instance.slot}; expected ${isDefault ? "0 for the default instance" : `an integer from 1 to ${MAX_SLOT} (0 is the default cluster's)`}`);
  }
  if (!/^[a-z][a-z0-9-]{0,15}$/.test(instance.name)) {
    throw new Error(`sim instance name: got '${instance.name}'; expected lower-case letters, digits and '-' (at most 16, starting with a letter)`);
  }
  // 172.31.250-255 for the default and slots 1..5, then 172.30.250-255 (clear of docker's 172.17-19).
  const prefix = instance.slot <= 5 ? `172.31.${250 + instance.slot}` : `172.30.${244 + instance.slot}`;
  const containerPrefix = isDefault ? "reprobench-sim" : `reprobench-sim-${instance.name}`;
  const outside = `172.29.${240 + instance.slot}`;
  const stateDir = isDefault ? ".sim" : `.sim/instances/${instance.name}`;
  return {
    instance,
    stateDir,
    containerPrefix,
    network: { name: containerPrefix, subnet: `${prefix}.0/24`, gateway: `${prefix}.1`, prefix },
    outside: {
      network: { name: `${containerPrefix}-outside`, subnet: `${outside}.0/24`, gateway: `${outside}.1`, prefix: outside },
      container: `${containerPrefix}-outside`,
      ip: `${outside}.20`,
      treeDir: simCacheDir(join("sim-outside", instance.name)),
    },
    proxy: { container: `${containerPrefix}-proxy`, ip: `${prefix}.3`, outsideIp: `${outside}.3`, hostname: PROXY_HOSTNAME, port: PROXY_PORT },
    hub: {
      container: `${containerPrefix}-hub`,
      ip: `${outside}.40`,
      hostname: HUB_HOSTNAME,
      port: HUB_PORT,
      treeDir: simCacheDir(join("sim-hub", instance.name)),
      stateDir: `${stateDir}/hub`,
      faultsFile: `${stateDir}/hub/${HUB_FAULTS_NAME}`,
      requestLog: `${stateDir}/hub/${HUB_REQUEST_LOG_NAME}`,
    },
    proxyUrlFile: `${stateDir}/proxy-url`,
    networkConditionsFile: `${stateDir}/network/${CONDITIONS_FILE_NAME}`,
    registry: {
      container: `${containerPrefix}-registry`,
      cacheDir: simCacheDir(join("sim-registry", instance.name)),
      ip: `${outside}.10`,
      hostname: REGISTRY.hostname,
      port: REGISTRY.port,
      pushHost: `127.0.0.1:${REGISTRY.port + instance.slot}`,
      username: REGISTRY_USER,
      passwordFile: `${stateDir}/registry-password`,
      stateDir: `${stateDir}/registry`,
      quotaFile: `${stateDir}/registry/${QUOTA_FILE_NAME}`,
      requestLog: `${stateDir}/registry/${REQUEST_LOG_NAME}`,
    },
    mirror: { container: `${containerPrefix}-mirror`, ip: `${prefix}.4`, outsideIp: `${outside}.30`, hostname: MIRROR_HOSTNAME, port: MIRROR_PORT },
    firstSshPort: FIRST_SSH_PORT + 100 * instance.slot,
  };
}

export interface HostPlan {
  name: string;
  container: string;
  ip: string;
  sshHost: string;
  sshPort: number;
  volume: string;
  /** Project-relative paths, as Pulumi.local.yaml references them. */
  hostKeyFile: string;
  hostPrivateKeyFile: string;
}

export interface ClusterPlan extends InstanceLayout {
  root: string;
  privateKeyFile: string;
  knownHostsFile: string;
  clusterFile: string;
  resultsDir: string;
  hosts: HostPlan[];
}

/** worker-a, worker-b, … (the names seed 000 and the local stack use). */
export function hostName(index: number): string {
  if (!Number.isInteger(index) || index < 0 || index >= MAX_HOSTS) throw new Error(`host index ${index} out of range 0..${MAX_HOSTS - 1}`);
  return `worker-${String.fromCharCode("a".charCodeAt(0) + index)}`;
}

export function planCluster(root: string, hostCount: number, instance: SimInstance = DEFAULT_INSTANCE): ClusterPlan {
  if (!Number.isInteger(hostCount) || hostCount < 1 || hostCount > MAX_HOSTS) {
    throw new Error(`--hosts: got ${hostCount}; expected an integer from 1 to ${MAX_HOSTS}`);
  }
  const layout = instanceLayout(instance);
  const stateDir = layout.stateDir;
  const hosts = Array.from({ length: hostCount }, (_, i): HostPlan => {
    const name = hostName(i);
    return {
      name,
      container: `${layout.containerPrefix}-${name}`,
      ip: `${layout.network.prefix}.${FIRST_HOST_OCTET + i}`,
      sshHost: "127.0.0.1",
      sshPort: layout.firstSshPort + i,
      volume: `${layout.containerPrefix}-${name}-docker`,
      hostKeyFile: `${stateDir}/hosts/${name}/ssh_host_ed25519_key.pub`,
      hostPrivateKeyFile: `${stateDir}/hosts/${name}/ssh_host_ed25519_key`,
    };
  });
  return {
    ...layout,
    root,
    privateKeyFile: `${stateDir}/id_ed25519`,
    knownHostsFile: `${stateDir}/known_hosts`,
    clusterFile: `${stateDir}/cluster.json`,
    resultsDir: `${stateDir}/results`,
    hosts,
  };
}

/**
 * Whether a resource with these labels belongs to `instance`. Resources made before instances existed
 * carry no instance label: they are the default cluster's.
 */
export function belongsTo(instance: SimInstance, instanceLabel: string): boolean {
  return (instanceLabel || DEFAULT_INSTANCE.name) === instance.name;
}
