// The containers beside the hosts (registry, mirror, index/git server, hub, egress proxy), each (re)created when its image, password or networks call for it.
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { containerHash, containerNetworks, containerState, docker, tryDocker } from "./docker";
import { hubRunArgs, mirrorCreateArgs, outsideRunArgs, proxyCreateArgs, registryRunArgs } from "./docker-args";
import { fetchWithin, waitFor } from "./exec";
import type { HubRepo } from "./hub-repo";
import type { ClusterPlan } from "./layout";
import type { Log } from "./log";
import { GIT_HOSTNAME, INDEX_HOSTNAME } from "./outside";
import { seedRegistryStorage } from "./registry-seed";

/** The other instances' registry storages, the default instance's first (`bin/reprobench up` fills it). */
function registrySeedCandidates(own: string): string[] {
  const parent = dirname(own);
  const others = existsSync(parent) ? readdirSync(parent).filter((d) => !d.includes(".seeding-")).map((d) => join(parent, d)) : [];
  const first = join(parent, "default");
  return [first, ...others.filter((d) => d !== first && d !== own).sort()];
}

/**
 * The registry (gate + docker-registry), recreated when its image changed or its password file was
 * (re)made (a bind-mounted file keeps its old inode); its storage is a cache dir, so nothing is lost.
 */
export async function ensureRegistry(plan: ClusterPlan, image: string, wantHash: string | undefined, freshPassword: boolean, log: Log): Promise<void> {
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
    // Only a shortcut: when seeding fails (a sibling removed meanwhile, a file system without hard links),
    // the registry starts empty and sim up pushes everything, as without it.
    try {
      const seed = await seedRegistryStorage(registry.cacheDir, registrySeedCandidates(registry.cacheDir));
      if (seed) log(`registry storage ${registry.cacheDir} seeded from ${seed} (blobs linked, tags copied)`);
    } catch (err) {
      log(`note: seeding registry storage ${registry.cacheDir} failed (${(err as Error).message}); every image is pushed`);
    }
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
        const res = await fetchWithin(`http://${registry.pushHost}/v2/`, { method: "HEAD" }, 3000);
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
export async function ensureMirror(plan: ClusterPlan, image: string, wantHash: string | undefined, freshPassword: boolean, log: Log): Promise<void> {
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
export async function ensureOutsideServer(plan: ClusterPlan, image: string, wantHash: string | undefined, log: Log): Promise<void> {
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

/**
 * The fake Hugging Face Hub (hub.sim), recreated when its image changed (it holds no state: its repos are a
 * cache, its faults file and request log are in the state dir). Once (re)started, waits until it listens.
 */
export async function ensureHub(plan: ClusterPlan, image: string, wantHash: string | undefined, repo: HubRepo, log: Log): Promise<void> {
  const { hub } = plan;
  let state = await containerState(hub.container);
  if (state !== undefined && (await containerHash(hub.container)) !== wantHash) {
    await docker(["rm", "-f", hub.container], 120_000);
    state = undefined;
  }
  mkdirSync(join(plan.root, hub.stateDir), { recursive: true, mode: 0o700 });
  if (state === undefined) {
    await docker(hubRunArgs(plan, image).slice(1));
    log(`started ${hub.hostname} (${hub.container}, ${hub.ip}): ${repo.repo} at ${repo.revision} (${repo.files} files, ${repo.bytes} bytes) from ${hub.treeDir}; faults ${hub.faultsFile}, requests logged to ${hub.requestLog}`);
  } else if (state !== "running") {
    await docker(["start", hub.container]);
  } else {
    return; // running already: a warm `sim up` costs two inspects
  }
  let last = "";
  await waitFor(
    `${hub.hostname} (${hub.container}) to listen`,
    async () => {
      const r = await tryDocker(["logs", hub.container], 10_000);
      if (/hub: listening on/.test(r.stdout)) return true;
      last = (r.stderr || r.stdout).trim().split("\n").slice(-3).join(" | ");
      return undefined;
    },
    { timeoutMs: 30_000, lastError: () => last },
  );
}

/** The egress proxy, recreated when its image changed or its credentials file was (re)made. */
export async function ensureProxy(plan: ClusterPlan, image: string, wantHash: string | undefined, freshCredentials: boolean, log: Log): Promise<void> {
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
