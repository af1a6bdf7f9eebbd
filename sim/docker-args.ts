// The argv of the `docker create` / `docker run` that make each container of an instance, with the labels it carries (pure).
import { join } from "node:path";
import { currentLease } from "./lease";
import { CHECKOUT_LABEL, DEFAULT_INSTANCE, HOST_LABEL, INSTANCE_LABEL, LEASE_LABEL, ROLE_LABEL, SIM_LABEL, type HostPlan, type InstanceLayout } from "./layout";
import { HUB_FAULTS_NAME, HUB_REQUEST_LOG_NAME, HUB_ROOT_MOUNT, HUB_SCRIPT_IN_IMAGE, HUB_STATE_MOUNT } from "./hub-repo";
import { CONDITIONS_FILE_NAME, CONDITIONS_MOUNT, GIT_HOSTNAME, INDEX_HOSTNAME } from "./outside";
import { REGISTRY_PASSWORD_MOUNT, REGISTRY_STATE_MOUNT } from "./registry";

/** Labels every resource of an instance carries (the owner labels when the plan knows its checkout). */
export function simLabels(plan: InstanceLayout & { root?: string }, extra: Record<string, string> = {}): string[] {
  const labels: Record<string, string> = { [SIM_LABEL]: "1", [INSTANCE_LABEL]: plan.instance.name };
  if (plan.root) labels[CHECKOUT_LABEL] = plan.root;
  if (plan.root && plan.instance.name !== DEFAULT_INSTANCE.name) labels[LEASE_LABEL] = currentLease();
  Object.assign(labels, extra);
  return Object.entries(labels).flatMap(([k, v]) => ["--label", `${k}=${v}`]);
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
    "--add-host", `${plan.hub.hostname}:${plan.hub.ip}`,
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
 * The fake Hugging Face Hub (sim/hub/hub.py, in the sim-outside image) as hub.sim:80 on the outside network:
 * its repos read-only from the hub tree (a cache), the faults file and the request log in the state dir.
 */
export function hubRunArgs(plan: InstanceLayout & { root: string }, image: string): string[] {
  return [
    "docker", "run", "-d",
    "--name", plan.hub.container,
    "--hostname", plan.hub.hostname,
    ...simLabels(plan, { [ROLE_LABEL]: "hub" }),
    "--network", plan.outside.network.name,
    "--ip", plan.hub.ip,
    "-v", `${plan.hub.treeDir}:${HUB_ROOT_MOUNT}:ro`,
    "-v", `${join(plan.root, plan.hub.stateDir)}:${HUB_STATE_MOUNT}`,
    "--restart", "unless-stopped",
    image,
    "python3", HUB_SCRIPT_IN_IMAGE, "serve", "--root", HUB_ROOT_MOUNT, "--listen", "0.0.0.0", "--port", String(plan.hub.port),
    "--faults", `${HUB_STATE_MOUNT}/${HUB_FAULTS_NAME}`, "--log", `${HUB_STATE_MOUNT}/${HUB_REQUEST_LOG_NAME}`,
  ];
}

/** The destinations the egress proxy lets through (host:port, as sim-proxy.py's --allow takes them). */
export function egressAllow(plan: InstanceLayout): string[] {
  return [`${plan.registry.hostname}:${plan.registry.port}`, `${INDEX_HOSTNAME}:80`, `${GIT_HOSTNAME}:80`, `${plan.hub.hostname}:${plan.hub.port}`];
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
    "--add-host", `${plan.hub.hostname}:${plan.hub.ip}`,
    "-v", `${join(plan.root, plan.proxyUrlFile)}:/etc/reprobench/proxy-url:ro`,
    "-v", `${join(plan.root, plan.networkConditionsFile, "..")}:${CONDITIONS_MOUNT}:ro`,
    "--restart", "unless-stopped",
    image,
    "python3", "/usr/local/lib/reprobench/sim-proxy.py", "--mode", "egress", "--listen", "0.0.0.0", "--port", String(plan.proxy.port),
    "--credentials-file", "/etc/reprobench/proxy-url",
    "--conditions", `${CONDITIONS_MOUNT}/${CONDITIONS_FILE_NAME}`,
    "--allow", egressAllow(plan).join(","),
  ];
}
