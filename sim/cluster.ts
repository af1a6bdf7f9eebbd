// The simulated cluster: N host-like containers (systemd, sshd, Docker 26) and a private registry on a
// docker network, reachable from this machine over SSH on loopback — the `local` stack converges them
// exactly as it would converge real GPU hosts. `simUp` is idempotent, `simDown` removes exactly what
// carries our label (after copying benchmark results out), `simStatus` reports each host.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mustRun, run, waitFor, type RunResult } from "./exec";
import {
  buildOutsideTree,
  CONDITIONS_FILE_NAME,
  CONDITIONS_MOUNT,
  DATASET_GIT_URL,
  ensureProxyUrl,
  GIT_HOSTNAME,
  INDEX_HOSTNAME,
  INDEX_URL,
  normalizeConditions,
  PROXY_HOSTNAME,
  PROXY_PORT,
  readConditionsFile,
  scenarioConditions,
  writeConditionsFile,
  type DatasetCommits,
  type NetworkConditions,
} from "./outside";
import {
  ensureRegistryPassword,
  manifestGetCounts,
  MIRROR_HOSTNAME,
  MIRROR_PORT,
  nextQuota,
  pullsInWindow,
  QUOTA_FILE_NAME,
  QUOTA_MAX,
  readQuotaFile,
  readRegistryRequests,
  REGISTRY_PASSWORD_MOUNT,
  REGISTRY_STATE_MOUNT,
  REGISTRY_USER,
  REQUEST_LOG_NAME,
  scenarioQuota,
  writeQuotaFile,
  type RegistryQuota,
  type RegistryRequest,
} from "./registry";
import { MAX_REHEARSAL_TASKS } from "./rehearsal/tasks";
import {
  buildImages,
  datasetTaskDirs,
  HASH_LABEL,
  imageSpecs,
  pullRef,
  pushImages,
  REGISTRY_HOST,
  resolveImages,
  simCacheDir,
  type ResolvedImage,
} from "./images";

export type { NetworkConditions } from "./outside";
export type { ManifestCount, RegistryQuota, RegistryRequest } from "./registry";
export { manifestGetCounts, readRegistryRequests } from "./registry";

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

/** Labels every resource of an instance carries (the owner labels when the plan knows its checkout). */
export function simLabels(plan: InstanceLayout & { root?: string }, extra: Record<string, string> = {}): string[] {
  const labels: Record<string, string> = { [SIM_LABEL]: "1", [INSTANCE_LABEL]: plan.instance.name };
  if (plan.root) labels[CHECKOUT_LABEL] = plan.root;
  if (plan.root && plan.instance.name !== DEFAULT_INSTANCE.name) labels[LEASE_LABEL] = currentLease();
  Object.assign(labels, extra);
  return Object.entries(labels).flatMap(([k, v]) => ["--label", `${k}=${v}`]);
}

/** "pid:starttime" of a running process (starttime tells a reused pid apart), or undefined if none runs. */
export function processLease(pid: number): string | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // Field 22 (starttime), counted after the parenthesised command name, which may contain spaces.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return `${pid}:${fields[19]}`;
}

/** This process's lease. */
export function currentLease(): string {
  return processLease(process.pid) ?? `${process.pid}:?`;
}

/** Whether the process a lease label names still runs. */
export function leaseAlive(lease: string): boolean {
  const pid = Number(lease.split(":")[0]);
  return Number.isInteger(pid) && pid > 0 && processLease(pid) === lease;
}

/**
 * `docker create` for a host: the flags that make systemd + dockerd work in a container on machines
 * where plain --privileged fails (CAP_SYS_RESOURCE is not grantable), a volume of its own for
 * /var/lib/docker (overlay2 cannot nest on the container's overlay root), a fixed IP and SSH on loopback.
 */
export function hostCreateArgs(plan: InstanceLayout & { root?: string }, host: HostPlan, image: string): string[] {
  return [
    "docker", "create",
    "--name", host.container,
    "--hostname", host.name,
    ...simLabels(plan, { [ROLE_LABEL]: "host", [HOST_LABEL]: host.name }),
    "--network", plan.network.name,
    "--ip", host.ip,
    ...outsideHostEntries(plan),
    "-p", `${host.sshHost}:${host.sshPort}:22`,
    "--cap-add=ALL", "--cap-drop=SYS_RESOURCE",
    "--security-opt", "seccomp=unconfined",
    "--security-opt", "apparmor=unconfined",
    "--security-opt", "systempaths=unconfined",
    "-v", "/sys/fs/cgroup:/sys/fs/cgroup:rw",
    "--cgroupns=host",
    "--tmpfs", "/run", "--tmpfs", "/run/lock", "--tmpfs", "/tmp",
    "-v", `${host.volume}:/var/lib/docker`,
    image,
  ];
}

/**
 * /etc/hosts entries of every host: proxy.sim and mirror.sim (both on the cluster network) are reachable;
 * the outside names resolve but are dropped.
 */
export function outsideHostEntries(plan: InstanceLayout): string[] {
  return [
    "--add-host", `${plan.proxy.hostname}:${plan.proxy.ip}`,
    "--add-host", `${plan.registry.hostname}:${plan.registry.ip}`,
    "--add-host", `${INDEX_HOSTNAME}:${plan.outside.ip}`,
    "--add-host", `${GIT_HOSTNAME}:${plan.outside.ip}`,
    "--add-host", `${plan.mirror.hostname}:${plan.mirror.ip}`,
  ];
}

/**
 * The registry: the gate on :5000 in front of docker-registry (the image's CMD). The password file
 * (read-only) and the state directory (quota read, request log appended) are bind-mounted from the
 * state dir: the password is in no argv and no environment `docker inspect` shows.
 */
export function registryRunArgs(plan: InstanceLayout & { root: string }, image: string): string[] {
  return [
    "docker", "run", "-d",
    "--name", plan.registry.container,
    "--hostname", plan.registry.hostname,
    ...simLabels(plan, { [ROLE_LABEL]: "registry" }),
    "--network", plan.outside.network.name,
    "--ip", plan.registry.ip,
    "-p", `${plan.registry.pushHost}:${plan.registry.port}`,
    "-v", `${plan.registry.cacheDir}:/var/lib/docker-registry`,
    "-v", `${join(plan.root, plan.registry.passwordFile)}:${REGISTRY_PASSWORD_MOUNT}:ro`,
    "-v", `${join(plan.root, plan.registry.stateDir)}:${REGISTRY_STATE_MOUNT}`,
    "--restart", "unless-stopped",
    image,
  ];
}

/**
 * The pull-through mirror, created on the outside network (the cluster network is connected before
 * start). Same image as the registry; its entrypoint writes the proxy config with the password (0600).
 */
export function mirrorCreateArgs(plan: InstanceLayout & { root: string }, image: string): string[] {
  return [
    "docker", "create",
    "--name", plan.mirror.container,
    "--hostname", plan.mirror.hostname,
    ...simLabels(plan, { [ROLE_LABEL]: "mirror" }),
    "--network", plan.outside.network.name,
    "--ip", plan.mirror.outsideIp,
    "--add-host", `${plan.registry.hostname}:${plan.registry.ip}`,
    "-v", `${join(plan.root, plan.registry.passwordFile)}:${REGISTRY_PASSWORD_MOUNT}:ro`,
    "--restart", "unless-stopped",
    image,
    "/usr/local/lib/reprobench/entrypoint.sh", "mirror", plan.registry.username, `http://${plan.registry.hostname}:${plan.registry.port}`,
  ];
}

/** The package index + git server: python's http.server over the static tree (read-only). */
export function outsideRunArgs(plan: InstanceLayout & { root?: string }, image: string): string[] {
  return [
    "docker", "run", "-d",
    "--name", plan.outside.container,
    "--hostname", INDEX_HOSTNAME,
    ...simLabels(plan, { [ROLE_LABEL]: "outside" }),
    "--network", plan.outside.network.name,
    "--ip", plan.outside.ip,
    "-v", `${plan.outside.treeDir}:/srv:ro`,
    "--restart", "unless-stopped",
    image,
    "python3", "-m", "http.server", "80", "--bind", "0.0.0.0", "--directory", "/srv",
  ];
}

/**
 * The egress proxy, created on the outside network (the cluster network is connected before start).
 * Its credentials file and the conditions directory are bind-mounted read-only from the state dir.
 */
export function proxyCreateArgs(plan: InstanceLayout & { root: string }, image: string): string[] {
  return [
    "docker", "create",
    "--name", plan.proxy.container,
    "--hostname", plan.proxy.hostname,
    ...simLabels(plan, { [ROLE_LABEL]: "proxy" }),
    "--network", plan.outside.network.name,
    "--ip", plan.proxy.outsideIp,
    "--add-host", `${plan.registry.hostname}:${plan.registry.ip}`,
    "--add-host", `${INDEX_HOSTNAME}:${plan.outside.ip}`,
    "--add-host", `${GIT_HOSTNAME}:${plan.outside.ip}`,
    "-v", `${join(plan.root, plan.proxyUrlFile)}:/etc/reprobench/proxy-url:ro`,
    "-v", `${join(plan.root, plan.networkConditionsFile, "..")}:${CONDITIONS_MOUNT}:ro`,
    "--restart", "unless-stopped",
    image,
    "python3", "/usr/local/lib/reprobench/sim-proxy.py", "--mode", "egress", "--listen", "0.0.0.0", "--port", String(plan.proxy.port),
    "--credentials-file", "/etc/reprobench/proxy-url",
    "--conditions", `${CONDITIONS_MOUNT}/${CONDITIONS_FILE_NAME}`,
  ];
}

/** "type base64" without the comment: the exact line the stack pins. */
export function publicKeyLine(pubFileText: string): string {
  const parts = pubFileText.trim().split(/\s+/);
  if (parts.length < 2 || !parts[0].startsWith("ssh-")) throw new Error(`not an OpenSSH public key line: ${JSON.stringify(pubFileText.slice(0, 40))}`);
  return `${parts[0]} ${parts[1]}`;
}

/** known_hosts for OpenSSH: non-default ports are written as [host]:port. */
export function knownHostsText(hosts: HostPlan[], keyLines: Record<string, string>): string {
  return hosts.map((h) => `[${h.sshHost}]:${h.sshPort} ${keyLines[h.name]}\n`).join("");
}

/** ssh argv that trusts only the pinned host key and only our generated client key (as root, or `user`). */
export function sshArgs(plan: ClusterPlan, host: HostPlan, command: string, user = "root"): string[] {
  return [
    "ssh",
    "-i", join(plan.root, plan.privateKeyFile),
    "-o", "IdentitiesOnly=yes",
    "-o", "BatchMode=yes",
    "-o", "StrictHostKeyChecking=yes",
    "-o", `UserKnownHostsFile=${join(plan.root, plan.knownHostsFile)}`,
    "-o", "GlobalKnownHostsFile=/dev/null",
    "-o", "ConnectTimeout=5",
    "-o", "LogLevel=ERROR",
    "-p", String(host.sshPort),
    `${user}@${host.sshHost}`,
    command,
  ];
}

export interface ClusterImages {
  hostImage: string;
  registryImage: string;
  /** Runs the index/git server and the egress proxy. */
  outsideImage: string;
  /** Registry references (registry.sim:5000/…:latest) by role. */
  sglangDouble?: string;
  taskBase: string;
  tasks: Record<string, string>;
  prepull: string[];
  probe: string;
}

export function clusterImages(images: ResolvedImage[]): ClusterImages {
  const get = (name: string) => images.find((i) => i.name === name);
  const must = (name: string) => {
    const i = get(name);
    if (!i) throw new Error(`internal: image ${name} is not planned`);
    return i;
  };
  const ref = (name: string) => pullRef(must(name).push ?? `reprobench/${name}`);
  const tasks: Record<string, string> = {};
  for (const i of images) if (i.name.startsWith("task-") && i.name !== "task-base") tasks[i.name.slice("task-".length)] = pullRef(i.push ?? i.name);
  const double = get("sglang-double");
  return {
    hostImage: must("sim-host").tag,
    registryImage: must("sim-registry").tag,
    outsideImage: must("sim-outside").tag,
    sglangDouble: double ? pullRef(double.push ?? "reprobench/sglang-double") : undefined,
    taskBase: ref("task-base"),
    tasks,
    prepull: images.filter((i) => i.name.startsWith("prepull-")).map((i) => pullRef(i.push ?? i.name)),
    probe: ref("sim-probe"),
  };
}

/** What tests and the lead read: .sim/cluster.json. Paths are project-relative. */
export function clusterJson(plan: ClusterPlan, images: ClusterImages, outside?: { commits: DatasetCommits; harborSha256?: string; wheels: number }): object {
  return {
    instance: plan.instance.name,
    network: { name: plan.network.name, subnet: plan.network.subnet, gateway: plan.network.gateway },
    outside: {
      network: { name: plan.outside.network.name, subnet: plan.outside.network.subnet },
      indexUrl: INDEX_URL,
      wheelsUrl: `http://${INDEX_HOSTNAME}/files/`,
      asciinemaWheelUrl: `http://${INDEX_HOSTNAME}/files/asciinema-2.4.0-py3-none-any.whl`,
      harborWheelSha256: outside?.harborSha256,
      wheels: outside?.wheels,
      gitUrl: DATASET_GIT_URL,
      datasetPinnedCommit: outside?.commits.pinned,
      datasetHeadCommit: outside?.commits.head,
      server: { container: plan.outside.container, ip: plan.outside.ip, hostnames: [INDEX_HOSTNAME, GIT_HOSTNAME] },
      proxy: { host: plan.proxy.hostname, ip: plan.proxy.ip, port: plan.proxy.port, container: plan.proxy.container, forwarder: `${RUNNER_HOST} 127.0.0.1:${FORWARDER_PORT}` },
      proxyUrlFile: plan.proxyUrlFile,
      networkConditionsFile: plan.networkConditionsFile,
    },
    registry: {
      host: REGISTRY_HOST,
      pushHost: plan.registry.pushHost,
      ip: plan.registry.ip,
      container: plan.registry.container,
      username: plan.registry.username,
      passwordFile: plan.registry.passwordFile,
      quotaFile: plan.registry.quotaFile,
      requestLog: plan.registry.requestLog,
      mirror: {
        host: `${plan.mirror.hostname}:${plan.mirror.port}`,
        ip: plan.mirror.ip,
        outsideIp: plan.mirror.outsideIp,
        container: plan.mirror.container,
      },
    },
    privateKeyFile: plan.privateKeyFile,
    knownHostsFile: plan.knownHostsFile,
    resultsDir: plan.resultsDir,
    modelDir: MODEL_DIR,
    jobsDir: JOBS_DIR,
    hosts: plan.hosts.map((h) => ({
      name: h.name,
      container: h.container,
      ip: h.ip,
      sshHost: h.sshHost,
      sshPort: h.sshPort,
      user: "root",
      hostKeyFile: h.hostKeyFile,
      dockerVolume: h.volume,
    })),
    images,
  };
}

export interface SimArgs {
  action: "up" | "down" | "status" | "network" | "registry" | "rehearsal";
  /** network: the fields to change (the rest keep their current values). */
  conditions?: Partial<NetworkConditions>;
  /** network/registry --reset: start from the scenario's `network` / `registry` section. */
  reset?: boolean;
  /** registry: the limits to change. */
  quota?: Partial<RegistryQuota>;
  /** registry --clear-counts: the gate forgets the pulls counted so far. */
  clearCounts?: boolean;
  /** registry --counts: manifest requests per repository:reference and client/account, from the log. */
  counts?: boolean;
  hosts?: number;
  /** rehearsal: the dataset's task count and seed, and which instance (by name) to publish it on. */
  rehearsal?: { tasks?: number; seed?: number; instance?: string };
  /** up: take over a cluster another checkout started (its job results are copied here first). */
  takeOver: boolean;
  discardResults: boolean;
  purgeImages: boolean;
  json: boolean;
}

export const SIM_USAGE = [
  "usage: reprobench sim up [--hosts N] [--take-over]",
  "                                                start (or complete) the simulated cluster; idempotent.",
  "                                                --take-over: the cluster was started by another checkout;",
  "                                                copy its job results here and recreate it for this one",
  "       reprobench sim down [--discard-results] [--purge-images]",
  "                                                remove everything `sim up` made (job results are copied",
  "                                                to .sim/results/<host>/ first unless --discard-results);",
  "                                                images and the registry cache stay unless --purge-images",
  "       reprobench sim status [--json]           state of the registry, mirror, proxy and each host",
  "       reprobench sim network [--latency-ms N] [--bandwidth-kbps N] [--fail-fraction F]",
  "                              [--fail-with 502|503|429|reset] [--seed N] [--fail-targets T,T…] [--reset]",
  "                                                the egress proxy's network conditions (applied to new",
  "                                                connections at once); --fail-targets: only connections to",
  "                                                these host:port or http:// URL prefixes may fail",
  "                                                (e.g. http://pypi.sim/rehearsal/; '' = every connection);",
  "                                                --reset: back to the `network` section of",
  "                                                sim/scenarios/sim-default.json first",
  "       reprobench sim registry [--anonymous N] [--authenticated M] [--window SECONDS] [--reset]",
  "                               [--clear-counts] [--counts] [--json]",
  "                                                the registry's pull limits (Docker Hub's: a pull is a",
  "                                                manifest GET, counted per client IP anonymously and per",
  "                                                account with credentials, in a sliding window); prints",
  "                                                them. --reset: back to the `registry` section of",
  "                                                sim/scenarios/sim-default.json first; --clear-counts:",
  "                                                forget the pulls counted so far; --counts: manifest GETs,",
  "                                                HEADs and 429s per repository:reference and client/user",
  "                                                since the last clear, from the gate's request log",
  `       reprobench sim rehearsal [--tasks N] [--seed S] [--instance NAME]`,
  "                                                generate the rehearsal dataset (seed 000's run in",
  `                                                miniature: 89 tasks unless --tasks, 1 to ${MAX_REHEARSAL_TASKS}; seed 0),`,
  "                                                build and push its task images and publish it as",
  "                                                http://git.sim/terminal-bench-rehearsal.git on the running",
  "                                                cluster (the default one, or the test instance NAME);",
  "                                                prints the repository, commit, task count and the path of",
  "                                                its ground-truth.json",
].join("\n");

const REGISTRY_FLAGS: Record<string, "anonymousPulls" | "authenticatedPulls" | "windowSeconds"> = {
  "--anonymous": "anonymousPulls",
  "--authenticated": "authenticatedPulls",
  "--window": "windowSeconds",
};

const NETWORK_FLAGS: Record<string, keyof NetworkConditions> = {
  "--latency-ms": "latencyMs",
  "--bandwidth-kbps": "bandwidthKBps",
  "--fail-fraction": "failFraction",
  "--fail-with": "failWith",
  "--seed": "seed",
};

const SIM_ACTIONS: readonly SimArgs["action"][] = ["up", "down", "status", "network", "registry", "rehearsal"];
const REHEARSAL_FLAGS = ["--tasks", "--seed", "--instance"] as const;

/** `--fail-targets a,b`: the list ('' clears it: every connection may fail again). */
export function parseFailTargets(value: string): string[] {
  return value
    .split(",")
    .map((t) => t.trim())
    .filter((t) => t !== "");
}

/** Parses `sim` arguments; throws an Error naming the bad argument. */
export function parseSimArgs(args: string[]): SimArgs {
  const [action, ...rest] = args;
  if (!SIM_ACTIONS.includes(action as SimArgs["action"])) {
    const expected = `expected ${SIM_ACTIONS.slice(0, -1).join(", ")} or ${SIM_ACTIONS[SIM_ACTIONS.length - 1]}`;
    throw new Error(action === undefined ? `missing subcommand; ${expected}` : `unknown subcommand '${action}'; ${expected}`);
  }
  const out: SimArgs = { action: action as SimArgs["action"], takeOver: false, discardResults: false, purgeImages: false, json: false };
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    const flag = arg.split("=")[0];
    // Before the network flags: --seed is an option of both (the proxy's failure sequence, the dataset's shuffle).
    if (out.action === "rehearsal" && (REHEARSAL_FLAGS as readonly string[]).includes(flag)) {
      const value = arg.includes("=") ? arg.slice(flag.length + 1) : rest[++i];
      if (flag === "--instance") {
        if (value === undefined || !/^[a-z][a-z0-9-]{0,15}$/.test(value)) throw new Error(`--instance: got ${value === undefined ? "no value" : `'${value}'`}; expected an instance name (lower-case letters, digits and '-', starting with a letter)`);
        out.rehearsal = { ...out.rehearsal, instance: value };
        continue;
      }
      const [min, max] = flag === "--tasks" ? [1, MAX_REHEARSAL_TASKS] : [0, 2 ** 31 - 1];
      if (value === undefined) throw new Error(`${flag}: missing value; expected an integer from ${min} to ${max}`);
      if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) throw new Error(`${flag}: got '${value}'; expected an integer from ${min} to ${max}`);
      out.rehearsal = { ...out.rehearsal, [flag === "--tasks" ? "tasks" : "seed"]: Number(value) };
      continue;
    }
    if (flag === "--fail-targets") {
      if (action !== "network") throw new Error(`${flag} is not an option of 'sim ${action}'`);
      const value = arg.includes("=") ? arg.slice(flag.length + 1) : rest[++i];
      if (value === undefined) throw new Error(`${flag}: missing value; expected host:port or http:// URL prefixes, comma-separated ('' for every connection)`);
      const failTargets = parseFailTargets(value);
      normalizeConditions({ failTargets }, undefined, flag);
      out.conditions = { ...out.conditions, failTargets };
      continue;
    }
    if (flag in NETWORK_FLAGS) {
      if (action !== "network") throw new Error(`${flag} is not an option of 'sim ${action}'`);
      const value = arg.includes("=") ? arg.slice(flag.length + 1) : rest[++i];
      if (value === undefined) throw new Error(`${flag}: missing value`);
      const key = NETWORK_FLAGS[flag];
      const parsed = key === "failWith" ? value : /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
      // Throws naming the flag when the value is out of range.
      normalizeConditions({ [key]: parsed } as Partial<NetworkConditions>, undefined, flag);
      out.conditions = { ...out.conditions, [key]: parsed };
      continue;
    }
    if (flag in REGISTRY_FLAGS) {
      if (action !== "registry") throw new Error(`${flag} is not an option of 'sim ${action}'`);
      const value = arg.includes("=") ? arg.slice(flag.length + 1) : rest[++i];
      const key = REGISTRY_FLAGS[flag];
      const min = key === "windowSeconds" ? 1 : 0;
      if (value === undefined) throw new Error(`${flag}: missing value; expected an integer from ${min} to ${QUOTA_MAX}`);
      if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > QUOTA_MAX) throw new Error(`${flag}: got '${value}'; expected an integer from ${min} to ${QUOTA_MAX}`);
      out.quota = { ...out.quota, [key]: Number(value) };
      continue;
    }
    if (arg === "--reset") {
      if (action !== "network" && action !== "registry") throw new Error(`--reset is not an option of 'sim ${action}'`);
      out.reset = true;
      continue;
    }
    if (arg === "--clear-counts" || arg === "--counts") {
      if (action !== "registry") throw new Error(`${arg} is not an option of 'sim ${action}'`);
      if (arg === "--counts") out.counts = true;
      else out.clearCounts = true;
      continue;
    }
    const allowed = (flag: string, actions: SimArgs["action"][]) => {
      if (!actions.includes(out.action)) throw new Error(`${flag} is not an option of 'sim ${action}'`);
    };
    if (arg === "--hosts" || arg.startsWith("--hosts=")) {
      allowed("--hosts", ["up"]);
      const value = arg.includes("=") ? arg.slice("--hosts=".length) : rest[++i];
      if (value === undefined) throw new Error("--hosts: missing value; expected an integer from 1 to 20");
      if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > MAX_HOSTS) {
        throw new Error(`--hosts: got '${value}'; expected an integer from 1 to ${MAX_HOSTS}`);
      }
      out.hosts = Number(value);
    } else if (arg === "--take-over") {
      allowed(arg, ["up"]);
      out.takeOver = true;
    } else if (arg === "--discard-results") {
      allowed(arg, ["down"]);
      out.discardResults = true;
    } else if (arg === "--purge-images") {
      allowed(arg, ["down"]);
      out.purgeImages = true;
    } else if (arg === "--json") {
      allowed(arg, ["status", "registry"]);
      out.json = true;
    } else {
      throw new Error(`unknown argument '${arg}' for 'sim ${action}'`);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Effects: docker, ssh, files.

type Log = (message: string) => void;

async function docker(args: string[], timeoutMs = 60_000): Promise<string> {
  return mustRun(["docker", ...args], { timeoutMs });
}

async function tryDocker(args: string[], timeoutMs = 60_000): Promise<RunResult> {
  return run(["docker", ...args], { timeoutMs });
}

/**
 * Whether a resource with these labels belongs to `instance`. Resources made before instances existed
 * carry no instance label: they are the default cluster's.
 */
export function belongsTo(instance: SimInstance, instanceLabel: string): boolean {
  return (instanceLabel || DEFAULT_INSTANCE.name) === instance.name;
}

/** Names of an instance's containers / volumes / networks (everything with the sim label). */
export async function listSimResources(instance: SimInstance = DEFAULT_INSTANCE): Promise<{ containers: string[]; volumes: string[]; networks: string[] }> {
  const filter = `label=${SIM_LABEL}`;
  const format = `{{.Name}} {{.Label "${INSTANCE_LABEL}"}}`;
  const mine = (out: string) =>
    out
      .split("\n")
      .map((l) => l.trim().split(" "))
      .filter(([name, label]) => name && belongsTo(instance, label ?? ""))
      .map(([name]) => name)
      .sort();
  return {
    containers: mine(await docker(["ps", "-a", "--filter", filter, "--format", format.replace(".Name", ".Names")])),
    volumes: mine(await docker(["volume", "ls", "--filter", filter, "--format", format])),
    networks: mine(await docker(["network", "ls", "--filter", filter, "--format", format])),
  };
}

/** Starts dockerd via scripts/dockerd.sh when no engine answers (fresh machines, CI). */
export async function ensureDockerEngine(root: string, log: Log): Promise<void> {
  if ((await run(["docker", "info"], { timeoutMs: 20_000 })).code === 0) return;
  log("no docker engine answers; running scripts/dockerd.sh");
  await mustRun(["bash", join(root, "scripts", "dockerd.sh")], { timeoutMs: 10 * 60_000, inheritStderr: true });
}

async function containerState(name: string): Promise<string | undefined> {
  const r = await tryDocker(["inspect", "--type", "container", "--format", "{{.State.Status}}", name], 20_000);
  return r.code === 0 ? r.stdout.trim() : undefined;
}

/** Generates a key pair once; later calls keep it (host keys must stay stable across `sim up`). */
async function ensureKeyPair(privatePath: string, comment: string): Promise<void> {
  if (existsSync(privatePath) && existsSync(`${privatePath}.pub`)) return;
  mkdirSync(join(privatePath, ".."), { recursive: true });
  rmSync(privatePath, { force: true });
  rmSync(`${privatePath}.pub`, { force: true });
  await mustRun(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", privatePath], { timeoutMs: 30_000 });
  chmodSync(privatePath, 0o600);
}

async function ensureKeys(plan: ClusterPlan): Promise<Record<string, string>> {
  const abs = (p: string) => join(plan.root, p);
  mkdirSync(abs(plan.stateDir), { recursive: true, mode: 0o700 });
  await ensureKeyPair(abs(plan.privateKeyFile), "reprobench-sim");
  const keyLines: Record<string, string> = {};
  for (const host of plan.hosts) {
    await ensureKeyPair(abs(host.hostPrivateKeyFile), "");
    // The .pub is rewritten as the bare "ssh-ed25519 AAAA…" line the stack pins.
    const line = publicKeyLine(readFileSync(abs(host.hostKeyFile), "utf8"));
    writeFileSync(abs(host.hostKeyFile), `${line}\n`);
    keyLines[host.name] = line;
  }
  return keyLines;
}

async function ensureNetwork(plan: ClusterPlan, network: { name: string; subnet: string; gateway: string }, bridge: string): Promise<void> {
  const { name, subnet, gateway } = network;
  const r = await tryDocker(["network", "inspect", "--format", "{{range .IPAM.Config}}{{.Subnet}}{{end}}", name], 20_000);
  if (r.code === 0) {
    if (r.stdout.trim() !== subnet) throw new Error(`docker network ${name} exists with subnet ${r.stdout.trim()}; expected ${subnet} (run \`reprobench sim down\`)`);
    return;
  }
  await docker(["network", "create", ...simLabels(plan), "--subnet", subnet, "--gateway", gateway, "-o", `com.docker.network.bridge.name=${bridge}`, name]);
}

/** Linux bridge names of an instance's networks (at most 15 characters). */
export function bridgeNames(instance: SimInstance): { cluster: string; outside: string } {
  return { cluster: `rbsim${instance.slot}`, outside: `rbsim${instance.slot}-out` };
}

/** The comment that tags an instance's egress rule in DOCKER-USER. */
export function egressComment(instance: SimInstance): string {
  return `reprobench-sim-egress:${instance.name}`;
}

/** DOCKER-USER rule: the cluster network reaches nothing but its own subnet (the proxy is on it). */
export function egressDropRule(bridge: string, subnet: string, instance: SimInstance): string[] {
  return ["DOCKER-USER", "-i", bridge, "!", "-d", subnet, "-m", "comment", "--comment", egressComment(instance), "-j", "DROP"];
}

/** The bridge a docker network uses (our name, or docker's br-<id> for networks made before we named them). */
async function networkBridge(name: string): Promise<string | undefined> {
  const r = await tryDocker(["network", "inspect", "--format", `{{.Id}} {{index .Options "com.docker.network.bridge.name"}}`, name], 20_000);
  if (r.code !== 0) return undefined;
  const [id, bridge] = r.stdout.trim().split(" ");
  return bridge || `br-${id.slice(0, 12)}`;
}

/** Drops the cluster network's traffic to anything outside its subnet; warns (and goes on) without iptables. */
async function ensureEgressDrop(plan: ClusterPlan, log: Log): Promise<void> {
  const bridge = await networkBridge(plan.network.name);
  if (!bridge) return;
  const rule = egressDropRule(bridge, plan.network.subnet, plan.instance);
  if ((await run(["iptables", "-w", "-C", ...rule], { timeoutMs: 20_000 })).code === 0) return;
  await removeEgressDrop(plan.instance, () => undefined); // a rule for an older bridge of this instance
  const added = await run(["iptables", "-w", "-I", ...rule], { timeoutMs: 20_000 });
  if (added.code !== 0) {
    log(`warning: cannot add the iptables rule that keeps ${plan.network.name} from reaching anything beyond ${plan.network.subnet} (${(added.stderr.trim() || `exit ${added.code}`).split("\n")[0]}); the hosts can still reach the machine's other networks`);
  }
}

/** Removes an instance's DOCKER-USER egress rules (by their comment). */
async function removeEgressDrop(instance: SimInstance, log: Log): Promise<void> {
  const listed = await run(["iptables", "-w", "-S", "DOCKER-USER"], { timeoutMs: 20_000 });
  if (listed.code !== 0) return;
  for (const line of listed.stdout.split("\n")) {
    // `iptables -S` quotes comments: -A DOCKER-USER ! -d 172.31.251.0/24 -i rbsim1 -m comment --comment "reprobench-sim-egress:itest" -j DROP
    const args = line.trim().split(/\s+/).map((a) => a.replace(/^"(.*)"$/, "$1"));
    if (args[0] !== "-A" || args[1] !== "DOCKER-USER" || args[args.indexOf("--comment") + 1] !== egressComment(instance)) continue;
    const r = await run(["iptables", "-w", "-D", ...args.slice(1)], { timeoutMs: 20_000 });
    if (r.code !== 0) log(`warning: could not remove iptables rule '${line}': ${r.stderr.trim()}`);
  }
}

/** Networks a container is attached to (empty when it does not exist). */
async function containerNetworks(name: string): Promise<string[]> {
  const r = await tryDocker(["inspect", "--type", "container", "--format", "{{range $k, $v := .NetworkSettings.Networks}}{{$k}} {{end}}", name], 20_000);
  return r.code === 0 ? r.stdout.trim().split(/\s+/).filter(Boolean) : [];
}

async function containerHash(name: string): Promise<string> {
  return (await docker(["inspect", "--type", "container", "--format", `{{index .Config.Labels "${HASH_LABEL}"}}`, name])).trim();
}

/**
 * The registry (gate + docker-registry), recreated when its image changed or its password file was
 * (re)made (a bind-mounted file keeps its old inode); its storage is a cache dir, so nothing is lost.
 */
async function ensureRegistry(plan: ClusterPlan, image: string, wantHash: string | undefined, freshPassword: boolean, log: Log): Promise<void> {
  const { registry } = plan;
  let state = await containerState(registry.container);
  if (state !== undefined && !(await containerNetworks(registry.container)).includes(plan.outside.network.name)) {
    // Made before the outside network existed: its storage is a cache, so it is simply recreated there.
    log(`moving registry ${registry.hostname} to the outside network ${plan.outside.network.name} (${registry.ip})`);
    await docker(["rm", "-f", registry.container], 120_000);
    state = undefined;
  }
  if (state !== undefined && (freshPassword || (await containerHash(registry.container)) !== wantHash)) {
    log(`recreating registry ${registry.hostname} (${freshPassword ? "new pull password" : "its image changed"}; its storage ${registry.cacheDir} stays)`);
    await docker(["rm", "-f", registry.container], 120_000);
    state = undefined;
  }
  if (state === undefined) {
    mkdirSync(registry.cacheDir, { recursive: true });
    mkdirSync(join(plan.root, registry.stateDir), { recursive: true, mode: 0o700 });
    await docker(registryRunArgs(plan, image).slice(1));
    log(`started registry ${registry.hostname} (${registry.ip}, pushed to via ${registry.pushHost}; pull limits in ${registry.quotaFile}, requests logged to ${registry.requestLog})`);
  } else if (state !== "running") {
    await docker(["start", registry.container]);
  }
  let last = "";
  // HEAD /v2/ is served anonymously and forwarded: 200 means the gate and the registry behind it answer.
  await waitFor(
    `the registry on ${registry.pushHost}`,
    async () => {
      try {
        const res = await fetch(`http://${registry.pushHost}/v2/`, { method: "HEAD", signal: AbortSignal.timeout(3000) });
        if (res.ok) return true;
        last = `HTTP ${res.status}`;
      } catch (err) {
        last = String(err);
      }
      return undefined;
    },
    { timeoutMs: 60_000, lastError: () => last },
  );
}

/**
 * The pull-through mirror, recreated when its image or the password changed or it lacks a network. Its
 * storage is the container's own (removed with it). It asks registry.sim for its token realm at start,
 * so it starts after the registry answers.
 */
async function ensureMirror(plan: ClusterPlan, image: string, wantHash: string | undefined, freshPassword: boolean, log: Log): Promise<void> {
  const { mirror } = plan;
  let state = await containerState(mirror.container);
  if (state !== undefined) {
    const networks = await containerNetworks(mirror.container);
    const stale = freshPassword || (await containerHash(mirror.container)) !== wantHash || !networks.includes(plan.network.name) || !networks.includes(plan.outside.network.name);
    if (stale) {
      await docker(["rm", "-f", mirror.container], 120_000);
      state = undefined;
    }
  }
  if (state === undefined) {
    await docker(mirrorCreateArgs(plan, image).slice(1));
    await docker(["network", "connect", "--ip", mirror.ip, plan.network.name, mirror.container]);
    await docker(["start", mirror.container]);
    log(`started mirror ${mirror.hostname}:${mirror.port} (${mirror.ip} on ${plan.network.name}, ${mirror.outsideIp} on ${plan.outside.network.name}), a pull-through cache of ${plan.registry.hostname}:${plan.registry.port} pulling as ${plan.registry.username}`);
  } else if (state !== "running") {
    await docker(["start", mirror.container]);
  }
}

/** The index/git server, recreated when its image changed (it holds no state: the tree is a cache). */
async function ensureOutsideServer(plan: ClusterPlan, image: string, wantHash: string | undefined, log: Log): Promise<void> {
  const { outside } = plan;
  let state = await containerState(outside.container);
  if (state !== undefined && (await containerHash(outside.container)) !== wantHash) {
    await docker(["rm", "-f", outside.container], 120_000);
    state = undefined;
  }
  if (state === undefined) {
    await docker(outsideRunArgs(plan, image).slice(1));
    log(`started ${INDEX_HOSTNAME} + ${GIT_HOSTNAME} (${outside.container}, ${outside.ip}, files in ${outside.treeDir})`);
  } else if (state !== "running") {
    await docker(["start", outside.container]);
  }
}

/** The egress proxy, recreated when its image changed or its credentials file was (re)made. */
async function ensureProxy(plan: ClusterPlan, image: string, wantHash: string | undefined, freshCredentials: boolean, log: Log): Promise<void> {
  const { proxy } = plan;
  let state = await containerState(proxy.container);
  if (state !== undefined && (freshCredentials || (await containerHash(proxy.container)) !== wantHash)) {
    await docker(["rm", "-f", proxy.container], 120_000);
    state = undefined;
  }
  if (state === undefined) {
    await docker(proxyCreateArgs(plan, image).slice(1));
    await docker(["network", "connect", "--ip", proxy.ip, plan.network.name, proxy.container]);
    await docker(["start", proxy.container]);
    log(`started proxy ${proxy.hostname}:${proxy.port} (${proxy.ip} on ${plan.network.name}, ${proxy.outsideIp} on ${plan.outside.network.name})`);
  } else if (state !== "running") {
    await docker(["start", proxy.container]);
  }
}

async function createHost(plan: ClusterPlan, host: HostPlan, image: string): Promise<void> {
  const abs = (p: string) => join(plan.root, p);
  await docker(["volume", "create", ...simLabels(plan), host.volume]);
  await docker(hostCreateArgs(plan, host, image).slice(1));
  // Keys go in before first boot, so sshd starts with the pinned host key and our client key.
  await docker(["cp", abs(host.hostPrivateKeyFile), `${host.container}:/etc/ssh/ssh_host_ed25519_key`]);
  await docker(["cp", abs(host.hostKeyFile), `${host.container}:/etc/ssh/ssh_host_ed25519_key.pub`]);
  await docker(["cp", abs(`${plan.privateKeyFile}.pub`), `${host.container}:/root/.ssh/authorized_keys`]);
  // Owned by root (docker cp), in bench's own 0700 .ssh: sshd's StrictModes accepts that.
  await docker(["cp", abs(`${plan.privateKeyFile}.pub`), `${host.container}:/home/${SUDO_USER}/.ssh/authorized_keys`]);
}

/**
 * Host setup that needs a running container (idempotent): the placeholder model directory the local
 * stack mounts as its model, and on the runner host the simulated upstream proxy (sim/proxy/) that
 * stands in for the user's proxy on 127.0.0.1:27890 in seed 000.
 */
async function provisionHost(plan: ClusterPlan, host: HostPlan, proxyUrl: string): Promise<void> {
  const model = join(plan.root, "sim", "sglang-double", "tiny-model");
  if (existsSync(model)) {
    await docker(["exec", host.container, "mkdir", "-p", MODEL_DIR]);
    await docker(["cp", `${model}/.`, `${host.container}:${MODEL_DIR}`]);
  }
  const proxy = join(plan.root, "sim", "proxy");
  if (host.name === runnerOf(plan).name && existsSync(join(proxy, "sim-proxy.py")) && existsSync(join(proxy, "reprobench-sim-proxy.service"))) {
    await docker(["exec", host.container, "mkdir", "-p", "/usr/local/lib/reprobench"]);
    await docker(["cp", join(proxy, "sim-proxy.py"), `${host.container}:/usr/local/lib/reprobench/sim-proxy.py`]);
    await docker(["cp", join(proxy, "reprobench-sim-proxy.service"), `${host.container}:/etc/systemd/system/reprobench-sim-proxy.service`]);
    // The upstream URL (credentials) goes through stdin into a root-only file, never onto a command line.
    await mustRun(["docker", "exec", "-i", host.container, "sh", "-c", `install -d -m 0700 -o root -g root ${FORWARDER_UPSTREAM_FILE.replace(/\/[^/]+$/, "")} && umask 077 && cat > ${FORWARDER_UPSTREAM_FILE}.new && mv ${FORWARDER_UPSTREAM_FILE}.new ${FORWARDER_UPSTREAM_FILE}`], { input: `${proxyUrl}\n`, timeoutMs: 30_000 });
    await docker(["exec", host.container, "systemctl", "daemon-reload"]);
    await docker(["exec", host.container, "systemctl", "enable", "reprobench-sim-proxy.service"]);
    await docker(["exec", host.container, "systemctl", "restart", "reprobench-sim-proxy.service"]);
    // Harbor and the asciinema wheel install from here (harbor.pipFindLinks, toolBundle.asciinemaWheelUrl),
    // and task containers install mini-swe-agent from the agent wheelhouse: the sim hosts cannot be
    // assumed to reach PyPI. Each is copied once per content.
    for (const [cache, target] of [["wheelhouse", WHEELS_DIR], ["agent-wheelhouse", AGENT_WHEELS_DIR]] as const) {
      const wheels = simCacheDir(cache);
      if (!existsSync(wheels)) continue;
      const stamp = readdirSync(wheels).filter((f) => f.endsWith(".whl")).sort().join("\n");
      const have = (await tryDocker(["exec", host.container, "cat", `${target}/.reprobench-stamp`])).stdout;
      if (have !== stamp) {
        await docker(["exec", host.container, "mkdir", "-p", target]);
        await docker(["cp", `${wheels}/.`, `${host.container}:${target}`], 600_000);
        await mustRun(["docker", "exec", "-i", host.container, "sh", "-c", `cat > ${target}/.reprobench-stamp`], { input: stamp });
      }
    }
  }
}

async function waitSystemd(host: HostPlan, log: Log): Promise<void> {
  let last = "";
  const systemd = await waitFor(
    `systemd on ${host.name}`,
    async () => {
      const r = await tryDocker(["exec", host.container, "systemctl", "is-system-running"], 15_000);
      last = (r.stdout + r.stderr).trim();
      return last === "running" || last === "degraded" ? last : undefined;
    },
    { timeoutMs: 120_000, lastError: () => last },
  );
  if (systemd === "degraded") {
    const failed = await tryDocker(["exec", host.container, "systemctl", "--failed", "--no-legend", "--plain"], 15_000);
    log(`warning: ${host.name}: systemd is degraded; failed units: ${failed.stdout.trim().replace(/\s+/g, " ")}`);
  }
}

/** The host that runs the router, Harbor and the loopback forwarder. */
function runnerOf(plan: ClusterPlan): HostPlan {
  return plan.hosts.find((h) => h.name === RUNNER_HOST) ?? plan.hosts[plan.hosts.length - 1];
}

async function waitHostReady(plan: ClusterPlan, host: HostPlan, proxyUrl: string, log: Log, currentImage: boolean): Promise<void> {
  const started = Date.now();
  let last = "";
  const ssh = (command: string, timeoutMs = 30_000) => run(sshArgs(plan, host, command), { timeoutMs });
  await waitFor(
    `sshd on ${host.name} (127.0.0.1:${host.sshPort})`,
    async () => {
      const r = await ssh("true", 15_000);
      last = r.stderr.trim();
      return r.code === 0 ? true : undefined;
    },
    { timeoutMs: 60_000, lastError: () => last },
  );
  await waitFor(
    `docker info over SSH on ${host.name}`,
    async () => {
      const r = await ssh("docker info --format '{{.ServerVersion}}'", 20_000);
      last = (r.stderr || r.stdout).trim();
      return r.code === 0 ? true : undefined;
    },
    { timeoutMs: 90_000, lastError: () => last },
  );
  // The local stack logs in to worker-a as the sudo user: it must log in, sudo without a password and
  // use the Docker socket (a host from an older image has no such user: simUp notes it).
  if (currentImage) {
    const login = await run(sshArgs(plan, host, "sudo -n true && docker version --format '{{.Server.Version}}'", SUDO_USER), { timeoutMs: 30_000 });
    if (login.code !== 0) {
      throw new Error(`${host.name}: the user ${SUDO_USER} (NOPASSWD sudo, docker group; Pulumi.local.yaml logs in to worker-a as it) cannot log in, sudo or use docker there: ${(login.stderr || login.stdout).trim().split("\n").slice(-2).join(" ")}`);
    }
  }
  // The outside is reachable only through the proxy: through it the registry answers, directly it must
  // not (a sim friendlier than a real cluster would hide missing proxy settings). The URL with the
  // credentials travels on stdin and into curl's environment, never onto a command line.
  // HEAD /v2/: GET would get the gate's 401 challenge; HEAD is served anonymously, by the registry behind it.
  const registryUrl = `http://${plan.registry.hostname}:${plan.registry.port}/v2/`;
  const viaProxy = `IFS= read -r u; export http_proxy="$u"; curl -fsS -I -o /dev/null --max-time 20 ${registryUrl}`;
  await waitFor(
    `${registryUrl} through ${plan.proxy.hostname}:${plan.proxy.port} from ${host.name}`,
    async () => {
      const r = await run(sshArgs(plan, host, viaProxy), { input: `${proxyUrl}\n`, timeoutMs: 40_000 });
      last = (r.stderr || r.stdout).trim();
      return r.code === 0 ? true : undefined;
    },
    { timeoutMs: 60_000, lastError: () => last },
  );
  const direct = await ssh(`curl --noproxy '*' --connect-timeout 3 --max-time 6 -sS -o /dev/null ${registryUrl}`, 30_000);
  if (direct.code === 0) {
    throw new Error(`${host.name}: a direct request to ${registryUrl} succeeded; the sim hosts must reach the outside network (${plan.outside.network.subnet}) only through ${plan.proxy.hostname}:${plan.proxy.port}`);
  }
  const why = (direct.stderr.trim().split("\n")[0] || `exit ${direct.code}`).slice(0, 120);
  let forwarder = "";
  if (host.name === runnerOf(plan).name) {
    await waitFor(
      `the forwarder 127.0.0.1:${FORWARDER_PORT} on ${host.name}`,
      async () => {
        const r = await ssh(`curl -fsS -I -o /dev/null --max-time 20 -x http://127.0.0.1:${FORWARDER_PORT} ${registryUrl}`, 40_000);
        last = (r.stderr || r.stdout).trim();
        return r.code === 0 ? true : undefined;
      },
      { timeoutMs: 60_000, lastError: () => last },
    );
    forwarder = `; through the forwarder 127.0.0.1:${FORWARDER_PORT} OK`;
  }
  // The mirror is on the cluster network: reached directly, never through the proxy.
  const mirrorUrl = `http://${plan.mirror.hostname}:${plan.mirror.port}/v2/`;
  await waitFor(
    `${mirrorUrl} (direct) from ${host.name}`,
    async () => {
      const r = await ssh(`curl --noproxy '*' -fsS -o /dev/null --max-time 10 ${mirrorUrl}`, 30_000);
      last = (r.stderr || r.stdout).trim();
      return r.code === 0 ? true : undefined;
    },
    { timeoutMs: 60_000, lastError: () => last },
  );
  log(`${host.name}: direct ${registryUrl} refused (${why}); through ${plan.proxy.hostname}:${plan.proxy.port} OK${forwarder}; ${mirrorUrl} direct OK`);
  log(`${host.name} ready (${host.ip}, ssh 127.0.0.1:${host.sshPort}) in ${((Date.now() - started) / 1000).toFixed(1)}s`);
}

/** Existing host containers of an instance: container name → host name. */
async function existingHosts(instance: SimInstance): Promise<Map<string, string>> {
  const out = await docker(["ps", "-a", "--filter", `label=${ROLE_LABEL}=host`, "--format", `{{.Names}} {{.Label "${HOST_LABEL}"}} {{.Label "${INSTANCE_LABEL}"}}`]);
  const hosts = new Map<string, string>();
  for (const line of out.split("\n")) {
    const [container, host, label] = line.trim().split(" ");
    if (container && host && belongsTo(instance, label ?? "")) hosts.set(container, host);
  }
  return hosts;
}

export interface UpReport {
  plan: ClusterPlan;
  images: ClusterImages;
  built: string[];
  pushed: string[];
  createdHosts: string[];
  seconds: number;
}

export interface SimOptions {
  /** Project root: .sim/ and sim/ are under it. */
  root: string;
  instance?: SimInstance;
  log?: Log;
}

const defaultLog: Log = (m) => console.error(`sim: ${m}`);

// ---------------------------------------------------------------------------------------------------
// Ownership: whose instance is it? Two checkouts on one machine share docker, so an instance's name
// (containers, ports, subnet) can already be taken by another checkout or an earlier test process.

/** One docker resource of an instance with the owner labels it carries ("" when it has none). */
export interface OwnedResource {
  kind: "container" | "volume" | "network";
  name: string;
  checkout: string;
  lease: string;
}

export type Ownership =
  /** Nothing of the instance exists. */
  | { state: "free" }
  /** Made by this checkout (test and bench instances: by this process). */
  | { state: "ours" }
  /** Nobody can still use it (its process exited, its checkout is gone): taken over without asking. */
  | { state: "stale"; reason: string }
  /** Someone else's: refused unless the caller asked to take it over. */
  | { state: "foreign"; owner?: string; reason: string };

export interface OwnershipFacts {
  /** This process's lease ("pid:starttime"). */
  ownLease: string;
  leaseAlive(lease: string): boolean;
  checkoutExists(path: string): boolean;
  /** Default instance, host containers without a checkout label: whether their host keys are this checkout's. */
  legacyHostKeysMatch?: boolean;
}

/** Decides whose an instance is from its resources' labels (pure; simUp acts on the answer). */
export function judgeOwnership(instance: SimInstance, root: string, resources: OwnedResource[], facts: OwnershipFacts): Ownership {
  if (resources.length === 0) return { state: "free" };
  const pidOf = (lease: string) => lease.split(":")[0];
  if (instance.name !== DEFAULT_INSTANCE.name) {
    const foreign = resources.filter((r) => r.lease !== facts.ownLease);
    if (foreign.length === 0) return { state: "ours" };
    const live = foreign.find((r) => r.lease && facts.leaseAlive(r.lease));
    if (live) {
      return {
        state: "foreign",
        owner: live.checkout || undefined,
        reason: `it is in use by process ${pidOf(live.lease)}${live.checkout ? ` (checkout ${live.checkout})` : ""}, which started it and still runs`,
      };
    }
    const leases = [...new Set(foreign.map((r) => r.lease).filter(Boolean))];
    const checkouts = [...new Set(foreign.map((r) => r.checkout).filter(Boolean))];
    return {
      state: "stale",
      reason: leases.length > 0
        ? `it was left by process ${leases.map(pidOf).join(", ")}${checkouts.length ? ` of ${checkouts.join(", ")}` : ""}, which has exited`
        : "it carries no owner lease (made before leases existed)",
    };
  }
  const other = resources.find((r) => r.checkout && r.checkout !== root);
  if (other) {
    if (!facts.checkoutExists(other.checkout)) return { state: "stale", reason: `it was started by the checkout ${other.checkout}, which no longer exists` };
    return { state: "foreign", owner: other.checkout, reason: `it was started by the checkout ${other.checkout}` };
  }
  if (facts.legacyHostKeysMatch === false) {
    return {
      state: "foreign",
      reason: "it was started by another checkout: its hosts' SSH host keys are not the ones in this checkout's .sim/hosts/ (its containers predate the owner label, so which checkout is unknown)",
    };
  }
  return { state: "ours" };
}

/** An instance someone else is using (another checkout's cluster, a running test's instance). */
export class ForeignInstanceError extends Error {
  constructor(
    message: string,
    readonly ownership: Extract<Ownership, { state: "foreign" }>,
  ) {
    super(message);
    this.name = "ForeignInstanceError";
  }
}

/** What to tell the user who cannot use a foreign instance. */
export function foreignInstanceMessage(instance: SimInstance, ownership: Extract<Ownership, { state: "foreign" }>, containers: string[]): string {
  const what = `${instance.name === DEFAULT_INSTANCE.name ? "the simulated cluster" : `sim instance '${instance.name}'`} (${containers.join(", ") || "its network and volumes"})`;
  if (instance.name !== DEFAULT_INSTANCE.name) {
    return `${what} cannot be used: ${ownership.reason}. Test and bench instances belong to the process that starts them; wait for that run to end or stop it (it is taken over once the process has exited).`;
  }
  const where = ownership.owner ? ` in ${ownership.owner}` : "";
  const keys = ownership.owner ? `${ownership.owner}/.sim` : "that checkout's .sim/";
  return [
    `${what} cannot be used from this checkout: ${ownership.reason}. The SSH keys that reach its hosts are in ${keys}, so here every connection would fail with "Host key verification failed".`,
    "Either:",
    `  - use it from that checkout${where};`,
    ownership.owner
      ? `  - remove it there: (cd ${ownership.owner} && ./bin/reprobench sim down)   # copies its job results to ${ownership.owner}/.sim/results/ first;`
      : "  - remove it from the checkout that started it: ./bin/reprobench sim down there;",
    "  - or take it over from here: ./bin/reprobench sim up --take-over   # copies its job results to .sim/results/ here, then recreates the hosts with this checkout's keys (the other checkout's local stack then points at hosts that are gone).",
  ].join("\n");
}

async function instanceResources(instance: SimInstance): Promise<OwnedResource[]> {
  const format = (name: string) => `${name}\t{{.Label "${INSTANCE_LABEL}"}}\t{{.Label "${CHECKOUT_LABEL}"}}\t{{.Label "${LEASE_LABEL}"}}`;
  const filter = ["--filter", `label=${SIM_LABEL}`];
  const parse = (kind: OwnedResource["kind"], out: string) =>
    out
      .split("\n")
      .filter((l) => l.trim())
      .map((l) => l.split("\t"))
      .filter(([name, label]) => name && belongsTo(instance, label ?? ""))
      .map(([name, , checkout, lease]): OwnedResource => ({ kind, name, checkout: checkout ?? "", lease: lease ?? "" }));
  return [
    ...parse("container", await docker(["ps", "-a", ...filter, "--format", format("{{.Names}}")])),
    ...parse("volume", await docker(["volume", "ls", ...filter, "--format", format("{{.Name}}")])),
    ...parse("network", await docker(["network", "ls", ...filter, "--format", format("{{.Name}}")])),
  ];
}

/** Whether every host container (without a checkout label) has this checkout's host key for its name. */
async function legacyHostKeysMatch(root: string, instance: SimInstance, resources: OwnedResource[]): Promise<boolean> {
  const legacy = new Set(resources.filter((r) => r.kind === "container" && !r.checkout).map((r) => r.name));
  const hosts = [...(await existingHosts(instance))].filter(([container]) => legacy.has(container));
  const tmp = mkdtempSync(join(tmpdir(), "reprobench-hostkey-"));
  try {
    for (const [container, host] of hosts) {
      const ours = join(root, instanceLayout(instance).stateDir, "hosts", host, "ssh_host_ed25519_key.pub");
      if (!existsSync(ours)) return false;
      // `docker cp` works on stopped containers too.
      const theirs = join(tmp, host);
      if ((await tryDocker(["cp", `${container}:/etc/ssh/ssh_host_ed25519_key.pub`, theirs], 30_000)).code !== 0) return false;
      if (publicKeyLine(readFileSync(theirs, "utf8")) !== publicKeyLine(readFileSync(ours, "utf8"))) return false;
    }
    return true;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** Looks at who owns the instance; takes stale ones over, and foreign ones when asked; refuses otherwise. */
export async function claimInstance(options: SimOptions & { takeOver?: boolean }): Promise<Ownership> {
  const log = options.log ?? defaultLog;
  const instance = options.instance ?? DEFAULT_INSTANCE;
  const resources = await instanceResources(instance);
  const needsKeys = instance.name === DEFAULT_INSTANCE.name && resources.some((r) => r.kind === "container" && !r.checkout);
  const ownership = judgeOwnership(instance, options.root, resources, {
    ownLease: currentLease(),
    leaseAlive,
    checkoutExists: (p) => existsSync(join(p, "Pulumi.yaml")),
    legacyHostKeysMatch: needsKeys ? await legacyHostKeysMatch(options.root, instance, resources) : undefined,
  });
  if (ownership.state === "free" || ownership.state === "ours") return ownership;
  const containers = resources.filter((r) => r.kind === "container").map((r) => r.name).sort();
  if (ownership.state === "foreign" && !options.takeOver) throw new ForeignInstanceError(foreignInstanceMessage(instance, ownership, containers), ownership);
  log(`taking over sim instance '${instance.name}' (${containers.join(", ") || "network and volumes"}): ${ownership.reason}`);
  // Test instances are disposable; the default cluster's job results are copied out first, as by `sim down`.
  await simDown({ root: options.root, instance, log, discardResults: instance.name !== DEFAULT_INSTANCE.name });
  return ownership;
}

export async function simUp(options: SimOptions & { hosts?: number; takeOver?: boolean }): Promise<UpReport> {
  const log = options.log ?? defaultLog;
  const instance = options.instance ?? DEFAULT_INSTANCE;
  const started = Date.now();
  const root = options.root;
  await ensureDockerEngine(root, log);
  // Before any build: an instance this checkout cannot reach fails here, with whose it is.
  await claimInstance({ ...options, log });
  const hostCount = options.hosts ?? Math.max(2, (await existingHosts(instance)).size);
  const plan = planCluster(root, hostCount, instance);

  const resolved = resolveImages(imageSpecs(root, datasetTaskDirs(root)), root);
  if (!resolved.some((i) => i.name === "sglang-double")) log("warning: sim/sglang-double/Dockerfile is missing; the SGLang double is not built");
  const { built } = await buildImages(resolved, root, log);
  const images = clusterImages(resolved);

  await ensureNetwork(plan, plan.network, bridgeNames(instance).cluster);
  await ensureNetwork(plan, plan.outside.network, bridgeNames(instance).outside);
  await ensureEgressDrop(plan, log);
  // The pull password once per instance (0600); the limits start from the scenario (and stay as
  // `sim registry` left them on later runs).
  const passwordFile = join(root, plan.registry.passwordFile);
  const hadPassword = existsSync(passwordFile) ? readFileSync(passwordFile, "utf8").trim() : undefined;
  const freshPassword = ensureRegistryPassword(passwordFile) !== hadPassword;
  const quotaFile = join(root, plan.registry.quotaFile);
  if (!existsSync(quotaFile)) writeQuotaFile(quotaFile, scenarioQuota(root));
  const registryHash = resolved.find((i) => i.name === "sim-registry")?.hash;
  await ensureRegistry(plan, images.registryImage, registryHash, freshPassword, log);
  await ensureMirror(plan, images.registryImage, registryHash, freshPassword, log);
  const { pushed } = await pushImages(resolved, log, plan.registry.pushHost);

  const keyLines = await ensureKeys(plan);
  // Credentials once per instance; the conditions file starts from the scenario (and stays as
  // `sim network` left it on later runs).
  const hadProxyUrl = existsSync(join(root, plan.proxyUrlFile));
  const proxyUrl = ensureProxyUrl(join(root, plan.proxyUrlFile));
  const conditionsFile = join(root, plan.networkConditionsFile);
  if (!existsSync(conditionsFile)) writeConditionsFile(conditionsFile, scenarioConditions(root));
  const outsideHash = resolved.find((i) => i.name === "sim-outside")?.hash;
  writeFileSync(join(root, plan.knownHostsFile), knownHostsText(plan.hosts, keyLines));

  const createdHosts: string[] = [];
  const olderHosts = new Set<string>();
  const lackMirrorEntry = new Set<string>();
  const wantHash = resolved.find((i) => i.name === "sim-host")?.hash;
  for (const host of plan.hosts) {
    const state = await containerState(host.container);
    if (state === undefined) {
      await createHost(plan, host, images.hostImage);
      createdHosts.push(host.name);
    } else {
      const extraHosts = await docker(["inspect", "--type", "container", "--format", "{{json .HostConfig.ExtraHosts}}", host.container]);
      if (!extraHosts.includes(`${plan.proxy.hostname}:${plan.proxy.ip}`)) {
        throw new Error(`${host.name} (${host.container}) was created before the sim's outside network and proxy (its /etc/hosts has no ${plan.proxy.hostname}): run \`reprobench sim down\` (job results are copied out first) and \`reprobench sim up\``);
      }
      const hash = await containerHash(host.container);
      if (hash !== wantHash) {
        olderHosts.add(host.name);
        log(`note: ${host.name} runs an older host image (it may lack the ${SUDO_USER} login the local stack uses on worker-a); \`sim down\` + \`sim up\` recreates it`);
      }
      if (!extraHosts.includes(`${plan.mirror.hostname}:${plan.mirror.ip}`)) lackMirrorEntry.add(host.name);
    }
    if (state !== "running") await docker(["start", host.container]);
    if (lackMirrorEntry.has(host.name)) {
      // Made before the mirror: its /etc/hosts gets the entry now (again after each restart, by `sim up`).
      const added = await docker(["exec", host.container, "sh", "-c", `grep -q '[[:space:]]${plan.mirror.hostname}$' /etc/hosts || { echo '${plan.mirror.ip}\t${plan.mirror.hostname}' >> /etc/hosts && echo added; }`]);
      if (added.includes("added")) log(`note: ${host.name} was created before ${plan.mirror.hostname}; added it to its /etc/hosts (\`sim down\` + \`sim up\` makes it permanent)`);
    }
  }
  for (const script of ["wheelhouse.sh", "agent-wheelhouse.sh"]) {
    const filled = await run(["bash", join(root, "sim", script)], { timeoutMs: 1_200_000 });
    if (filled.code !== 0) throw new Error(`sim/${script} failed: ${filled.stderr.trim().split("\n").slice(-5).join("\n")}`);
  }
  // The package index and the dataset repository, served from the outside network.
  const tree = await buildOutsideTree(root, plan.outside.treeDir, [{ dir: simCacheDir("wheelhouse") }, { dir: simCacheDir("agent-wheelhouse"), only: /^uv-0\.13\.9-/ }]);
  await ensureOutsideServer(plan, images.outsideImage, outsideHash, log);
  await ensureProxy(plan, images.outsideImage, outsideHash, !hadProxyUrl, log);
  log(`outside: ${INDEX_URL} (${tree.wheels} wheels), ${DATASET_GIT_URL} (pinned ${tree.commits.pinned}, HEAD ${tree.commits.head}); conditions ${JSON.stringify(readConditionsFile(conditionsFile))}`);
  for (const host of plan.hosts) {
    await waitSystemd(host, log);
    await provisionHost(plan, host, proxyUrl);
  }
  for (const host of plan.hosts) await waitHostReady(plan, host, proxyUrl, log, !olderHosts.has(host.name));

  writeFileSync(join(root, plan.clusterFile), `${JSON.stringify(clusterJson(plan, images, tree), null, 2)}\n`);
  const seconds = (Date.now() - started) / 1000;
  log(`cluster up in ${seconds.toFixed(1)}s: ${plan.hosts.map((h) => h.name).join(", ")}; ${built.length} image(s) built, ${pushed.length} pushed; see ${plan.clusterFile}`);
  return { plan, images, built, pushed, createdHosts, seconds };
}

export interface DownReport {
  removed: { containers: string[]; volumes: string[]; networks: string[] };
  /** Host name → project-relative directory the job results were copied to. */
  savedResults: Record<string, string>;
  purgedImages: string[];
}

/** Copies a host's job results to <stateDir>/results/<host>/jobs; returns that path, or undefined if none. */
async function rescueResults(root: string, stateDir: string, container: string, host: string): Promise<string | undefined> {
  const rel = `${stateDir}/results/${host}/jobs`;
  const dest = join(root, rel);
  const merging = existsSync(dest);
  mkdirSync(join(dest, ".."), { recursive: true });
  // `src/.` copies the contents into an existing directory (results of earlier downs are kept).
  const r = await tryDocker(["cp", merging ? `${container}:${JOBS_DIR}/.` : `${container}:${JOBS_DIR}`, dest], 10 * 60_000);
  if (r.code !== 0) {
    if (/could not find the file|no such container:path|not found/i.test(r.stderr)) {
      // Undo the directories made for the copy (results/<host>, results) when they stayed empty.
      removeEmptyDirs(join(dest, ".."), join(root, stateDir));
      return undefined;
    }
    throw new Error(`copying ${JOBS_DIR} out of ${host} failed, so nothing was removed (use --discard-results to drop the results): ${r.stderr.trim()}`);
  }
  return rel;
}

/** Removes `dir` and then its parents up to (not including) `stopAt`, as long as each is empty. */
function removeEmptyDirs(dir: string, stopAt: string): void {
  let current = dir;
  while (current.startsWith(stopAt) && current !== stopAt && existsSync(current) && readdirSync(current).length === 0) {
    rmSync(current, { recursive: true, force: true });
    current = join(current, "..");
  }
}

export async function simDown(options: SimOptions & { discardResults?: boolean; purgeImages?: boolean }): Promise<DownReport> {
  const log = options.log ?? defaultLog;
  const instance = options.instance ?? DEFAULT_INSTANCE;
  const root = options.root;
  const layout = instanceLayout(instance);
  const before = await listSimResources(instance);
  const savedResults: Record<string, string> = {};

  // Results first: if a copy fails, nothing has been removed yet.
  if (!options.discardResults) {
    for (const [container, host] of await existingHosts(instance)) {
      const saved = await rescueResults(root, layout.stateDir, container, host);
      if (saved) {
        savedResults[host] = saved;
        log(`copied ${host}:${JOBS_DIR} to ${saved} before removing ${host}`);
      }
    }
  }
  for (const c of before.containers) await docker(["rm", "-f", "-v", c], 120_000);
  for (const v of before.volumes) await docker(["volume", "rm", "-f", v], 120_000);
  for (const n of before.networks) await docker(["network", "rm", n], 60_000);
  await removeEgressDrop(instance, log);

  // Files `sim up` made; <stateDir>/results (benchmark results) stays.
  const state = join(root, layout.stateDir);
  for (const f of ["id_ed25519", "id_ed25519.pub", "known_hosts", "cluster.json", "hosts", "proxy-url", "network", "registry-password", "registry"]) rmSync(join(state, f), { recursive: true, force: true });
  removeEmptyDirs(state, root);

  const purgedImages: string[] = [];
  if (options.purgeImages) {
    const refs = (await docker(["images", "--filter", `label=${SIM_LABEL}`, "--format", "{{.Repository}}:{{.Tag}}"]))
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l && !l.endsWith(":<none>"));
    for (const ref of refs) {
      if ((await tryDocker(["rmi", ref], 120_000)).code === 0) purgedImages.push(ref);
    }
    rmSync(layout.registry.cacheDir, { recursive: true, force: true });
    rmSync(layout.outside.treeDir, { recursive: true, force: true });
    // The rehearsal's dataset and ground truth describe images and a repository that are gone now.
    rmSync(join(state, "rehearsal"), { recursive: true, force: true });
    removeEmptyDirs(state, root);
  }
  log(`removed ${before.containers.length} container(s), ${before.volumes.length} volume(s), ${before.networks.length} network(s)${purgedImages.length ? `, ${purgedImages.length} image tag(s)` : ""}`);
  return { removed: before, savedResults, purgedImages };
}

/** The proxy's current network conditions (undefined when `sim up` has not made the file yet). */
export function readNetworkConditions(options: { root: string; instance?: SimInstance }): NetworkConditions | undefined {
  return readConditionsFile(join(options.root, instanceLayout(options.instance).networkConditionsFile));
}

/**
 * Changes the proxy's network conditions: `partial` over the current ones (or over the scenario's
 * `network` section with `reset`). The proxy applies them to every new connection; returns the result.
 */
export function setNetworkConditions(options: { root: string; instance?: SimInstance }, partial: Partial<NetworkConditions>, opts: { reset?: boolean } = {}): NetworkConditions {
  const base = opts.reset ? scenarioConditions(options.root) : (readNetworkConditions(options) ?? scenarioConditions(options.root));
  const next = normalizeConditions(partial, base);
  writeConditionsFile(join(options.root, instanceLayout(options.instance).networkConditionsFile), next);
  return next;
}

/** The registry's current pull limits (undefined when `sim up` has not made the file yet). */
export function readRegistryQuota(options: { root: string; instance?: SimInstance }): RegistryQuota | undefined {
  return readQuotaFile(join(options.root, instanceLayout(options.instance).registry.quotaFile));
}

/**
 * Changes the registry's pull limits: `partial` over the current ones (over the scenario's `registry`
 * section with `reset`); `clearCounts` makes the gate forget the pulls counted so far. The gate applies
 * them to the next request; returns the result.
 */
export function setRegistryQuota(options: { root: string; instance?: SimInstance }, partial: Partial<RegistryQuota>, opts: { reset?: boolean; clearCounts?: boolean } = {}): RegistryQuota {
  const next = nextQuota(readRegistryQuota(options), scenarioQuota(options.root), partial, opts);
  writeQuotaFile(join(options.root, instanceLayout(options.instance).registry.quotaFile), next);
  return next;
}

/** The gate's request log of an instance (empty before the first request). */
export function registryRequests(options: { root: string; instance?: SimInstance }): RegistryRequest[] {
  return readRegistryRequests(join(options.root, instanceLayout(options.instance).registry.requestLog));
}

/**
 * `sim registry --counts`: manifest GETs/HEADs/429s per repository:reference and client/account since the
 * last `--clear-counts`, and the pulls each principal has used in the current window.
 */
export function registryCounts(options: { root: string; instance?: SimInstance }, now = new Date()) {
  const quota = readRegistryQuota(options) ?? scenarioQuota(options.root);
  const records = registryRequests(options);
  return { quota, since: quota.countsSince ?? null, rows: manifestGetCounts(records, { since: quota.countsSince }), inWindow: pullsInWindow(records, quota, now) };
}

export interface HostStatus {
  name: string;
  container: string;
  ip: string;
  sshPort: number;
  container_state: string;
  systemd: string;
  ssh: boolean;
  docker: string;
}

export interface StatusReport {
  registry: { name: string; state: string; repositories: number | undefined; quota?: RegistryQuota };
  /** The pull-through mirror (absent in reports of older code). */
  mirror?: { name: string; state: string };
  /** The egress proxy and the index/git server (absent in reports of older code). */
  proxy?: { name: string; state: string };
  outside?: { name: string; state: string };
  hosts: HostStatus[];
}

export async function simStatus(options: SimOptions): Promise<StatusReport> {
  const instance = options.instance ?? DEFAULT_INSTANCE;
  const existing = await existingHosts(instance);
  const names = new Set(existing.values());
  const plan = planCluster(options.root, Math.max(1, names.size), instance);
  const registryState = (await containerState(plan.registry.container)) ?? "absent";
  let repositories: number | undefined;
  if (registryState === "running") {
    try {
      const res = await fetch(`http://${plan.registry.pushHost}/v2/_catalog?n=1000`, { signal: AbortSignal.timeout(5000) });
      repositories = ((await res.json()) as { repositories?: string[] }).repositories?.length;
    } catch {
      repositories = undefined;
    }
  }
  const keysPresent = existsSync(join(options.root, plan.privateKeyFile)) && existsSync(join(options.root, plan.knownHostsFile));
  const hosts: HostStatus[] = [];
  for (const host of plan.hosts.filter((h) => names.has(h.name))) {
    const state = (await containerState(host.container)) ?? "absent";
    let systemd = "-";
    let ssh = false;
    let dockerVersion = "-";
    if (state === "running") {
      const s = await tryDocker(["exec", host.container, "systemctl", "is-system-running"], 15_000);
      systemd = (s.stdout.trim() || s.stderr.trim() || "unknown").split("\n")[0];
      if (keysPresent) {
        const r = await run(sshArgs(plan, host, "docker version --format '{{.Server.Version}}'"), { timeoutMs: 20_000 });
        ssh = r.code !== 255; // 255: ssh itself failed; anything else means sshd let us in
        dockerVersion = r.code === 0 ? r.stdout.trim() : "down";
      }
    }
    hosts.push({ name: host.name, container: host.container, ip: host.ip, sshPort: host.sshPort, container_state: state, systemd, ssh, docker: dockerVersion });
  }
  return {
    registry: { name: `${plan.registry.hostname} (${plan.registry.ip})`, state: registryState, repositories, quota: readRegistryQuota(options) },
    mirror: { name: `${plan.mirror.hostname}:${plan.mirror.port} (${plan.mirror.ip})`, state: (await containerState(plan.mirror.container)) ?? "absent" },
    proxy: { name: `${plan.proxy.hostname}:${plan.proxy.port} (${plan.proxy.ip})`, state: (await containerState(plan.proxy.container)) ?? "absent" },
    outside: { name: `${INDEX_HOSTNAME} + ${GIT_HOSTNAME} (${plan.outside.ip})`, state: (await containerState(plan.outside.container)) ?? "absent" },
    hosts,
  };
}

export function formatStatus(report: StatusReport): string {
  const q = report.registry.quota;
  const limits = q ? `; pull limits ${q.anonymousPulls} anonymous (per IP) / ${q.authenticatedPulls} authenticated per ${q.windowSeconds}s` : "";
  const lines = [`registry ${report.registry.name}: ${report.registry.state}${report.registry.repositories !== undefined ? `, ${report.registry.repositories} repositories` : ""}${limits}`];
  if (report.mirror) lines.push(`mirror ${report.mirror.name}: ${report.mirror.state}`);
  if (report.proxy) lines.push(`proxy ${report.proxy.name}: ${report.proxy.state}`);
  if (report.outside) lines.push(`index/git ${report.outside.name}: ${report.outside.state}`);
  if (report.hosts.length === 0) {
    lines.push("no hosts (run `reprobench sim up`)");
    return lines.join("\n");
  }
  const header = ["HOST", "IP", "SSH", "CONTAINER", "SYSTEMD", "SSH-OK", "DOCKER"];
  const rows = report.hosts.map((h) => [h.name, h.ip, `127.0.0.1:${h.sshPort}`, h.container_state, h.systemd, h.ssh ? "yes" : "no", h.docker]);
  const widths = header.map((_, i) => Math.max(header[i].length, ...rows.map((r) => r[i].length)));
  for (const row of [header, ...rows]) lines.push(row.map((c, i) => c.padEnd(widths[i])).join("  ").trimEnd());
  return lines.join("\n");
}
