// The simulated cluster: N host-like containers (systemd, sshd, Docker 26) and a private registry on a
// docker network, reachable from this machine over SSH on loopback — the `local` stack converges them
// exactly as it would converge real GPU hosts. `simUp` is idempotent, `simDown` removes exactly what
// carries our label (after copying benchmark results out), `simStatus` reports each host.
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { clusterImages, clusterJson, type ClusterImages } from "./cluster-json";
import { containerHash, containerState, docker, ensureDockerEngine, existingHosts, listSimResources, tryDocker } from "./docker";
import { fetchWithin, run } from "./exec";
import { createHost, provisionHost, waitHostReady, waitSystemd } from "./hosts";
import { ensureHubRepo, HUB_ENDPOINT } from "./hub-repo";
import { buildImages, datasetTaskDirs, imageSpecs, pushImages, resolveImages, simCacheDir } from "./images";
import { DEFAULT_INSTANCE, instanceLayout, JOBS_DIR, planCluster, SIM_LABEL, SUDO_USER, type ClusterPlan, type SimInstance } from "./layout";
import { currentLease, leaseAlive } from "./lease";
import { defaultLog, type Log } from "./log";
import { bridgeNames, ensureEgressDrop, ensureNetwork, removeEgressDrop } from "./networks";
import { buildOutsideTree, DATASET_GIT_URL, ensureProxyUrl, GIT_HOSTNAME, INDEX_HOSTNAME, INDEX_URL, readConditionsFile, scenarioConditions, writeConditionsFile } from "./outside";
import { ForeignInstanceError, foreignInstanceMessage, instanceResources, judgeOwnership, legacyHostKeysMatch, type Ownership } from "./ownership";
import { ensureRegistryPassword, scenarioQuota, writeQuotaFile, type RegistryQuota } from "./registry";
import { ensureHub, ensureMirror, ensureOutsideServer, ensureProxy, ensureRegistry } from "./services";
import { readRegistryQuota } from "./settings";
import { ensureKeys, knownHostsText, sshRun } from "./ssh";

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

/**
 * Harbor's wheelhouse, the agents' and modelServer.download's pinned client (sim/wheelhouse.sh,
 * sim/agent-wheelhouse.sh, sim/hf-wheelhouse.sh) on this machine, filled once and then cached; the scripts
 * lock, so instances brought up side by side wait for one fill.
 */
export async function fillWheelhouses(root: string, log: Log = defaultLog): Promise<void> {
  const env = { ...process.env, HF_WHEELHOUSE: simCacheDir("hf-wheelhouse") };
  for (const script of ["wheelhouse.sh", "agent-wheelhouse.sh", "hf-wheelhouse.sh"]) {
    const filled = await run(["bash", join(root, "sim", script)], { timeoutMs: 1_200_000, env });
    if (filled.code === 0) continue;
    const why = filled.stderr.trim().split("\n").slice(-5).join("\n");
    // Only modelServer.download needs these: without them the rest of the sim works as before.
    if (script === "hf-wheelhouse.sh") log(`note: sim/${script} failed, so ${INDEX_HOSTNAME} lacks modelServer.download's pinned huggingface_hub: ${why}`);
    else throw new Error(`sim/${script} failed: ${why}`);
  }
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
  await fillWheelhouses(root, log);
  // The package index (with modelServer.download's pinned client merged in where it cannot change what
  // Harbor resolves), the dataset repository and the hub's model repo, served from the outside network.
  const tree = await buildOutsideTree(root, plan.outside.treeDir, [
    { dir: simCacheDir("wheelhouse") },
    { dir: simCacheDir("agent-wheelhouse"), only: /^uv-0\.13\.9-/ },
    { dir: simCacheDir("hf-wheelhouse"), extra: true },
  ]);
  for (const w of tree.skippedWheels) log(`note: ${w.file} is not on ${INDEX_HOSTNAME}: ${w.reason}`);
  const hubRepo = await ensureHubRepo(root, plan.hub.treeDir);
  await ensureOutsideServer(plan, images.outsideImage, outsideHash, log);
  await ensureHub(plan, images.outsideImage, outsideHash, hubRepo, log);
  await ensureProxy(plan, images.outsideImage, outsideHash, !hadProxyUrl, log);
  log(`outside: ${INDEX_URL} (${tree.wheels} wheels), ${DATASET_GIT_URL} (pinned ${tree.commits.pinned}, HEAD ${tree.commits.head}), ${HUB_ENDPOINT} (${hubRepo.repo} at ${hubRepo.revision}); conditions ${JSON.stringify(readConditionsFile(conditionsFile))}`);
  for (const host of plan.hosts) {
    await waitSystemd(host, log);
    await provisionHost(plan, host, proxyUrl, log);
  }
  for (const host of plan.hosts) await waitHostReady(plan, host, proxyUrl, log, !olderHosts.has(host.name));

  writeFileSync(join(root, plan.clusterFile), `${JSON.stringify(clusterJson(plan, images, { ...tree, hub: hubRepo }), null, 2)}\n`);
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
  for (const f of ["id_ed25519", "id_ed25519.pub", "known_hosts", "cluster.json", "hosts", "proxy-url", "network", "registry-password", "registry", "hub"]) rmSync(join(state, f), { recursive: true, force: true });
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
    rmSync(layout.hub.treeDir, { recursive: true, force: true });
    // The rehearsal's dataset and ground truth describe images and a repository that are gone now.
    rmSync(join(state, "rehearsal"), { recursive: true, force: true });
    removeEmptyDirs(state, root);
  }
  log(`removed ${before.containers.length} container(s), ${before.volumes.length} volume(s), ${before.networks.length} network(s)${purgedImages.length ? `, ${purgedImages.length} image tag(s)` : ""}`);
  return { removed: before, savedResults, purgedImages };
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
  /** The fake Hugging Face Hub (absent in reports of older code). */
  hub?: { name: string; state: string };
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
      const catalog = await fetchWithin(`http://${plan.registry.pushHost}/v2/_catalog?n=1000`, {}, 5000, (res) => res.json() as Promise<{ repositories?: string[] }>);
      repositories = catalog.repositories?.length;
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
        const r = await sshRun(plan, host, "docker version --format '{{.Server.Version}}'", { timeoutMs: 20_000 });
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
    hub: { name: `${plan.hub.hostname} (${plan.hub.ip})`, state: (await containerState(plan.hub.container)) ?? "absent" },
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
  if (report.hub) lines.push(`hub ${report.hub.name}: ${report.hub.state}`);
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
