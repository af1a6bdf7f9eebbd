// The simulated cluster's images: what to build, from which inputs, under which tags, and what to push
// to the sim registry. There is no Docker Hub here, so everything descends from a debootstrap base.
//
// Caching: each image is tagged reprobench/<name>:<hash of its inputs> (files, build args and the
// parent's hash). An existing tag means "already built", so a warm `sim up` builds nothing.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, relative } from "node:path";
import { fetchWithin, mustRun, run, lastLines } from "./exec";

/** The registry as the hosts see it (in image references, task.toml, stack config). */
export const REGISTRY_HOST = "registry.sim:5000";
/** The same registry as the control machine reaches it to push (loopback: insecure by default). */
export const REGISTRY_PUSH_HOST = "127.0.0.1:5000";
export const PREPULL_COUNT = 20;
export const IMAGE_LABEL = "io.reprobench.sim";
export const HASH_LABEL = "io.reprobench.input-hash";

export interface ImageSpec {
  /** Short name: the local repository is reprobench/<name>. */
  name: string;
  /** debootstrap: run sim/images/debian-base/build.sh; dockerfile: docker build. */
  kind: "debootstrap" | "dockerfile";
  /** Build context (dockerfile kind). */
  contextDir: string;
  dockerfile: string;
  /** Files and directories whose contents define the image (hashed recursively). */
  hashInputs: string[];
  /** Name of the spec this one is built FROM: its hash is part of ours. */
  parent?: string;
  buildArgs: Record<string, string>;
  /** Further local tags, e.g. the stable names other Dockerfiles use in FROM. */
  extraTags: string[];
  /** Repository in the sim registry (pushed as :latest), if the hosts need this image. */
  push?: string;
  /** argv run before building (e.g. fetching wheels the build installs offline). */
  prepare?: string[];
}

export interface ResolvedImage extends ImageSpec {
  hash: string;
  /** reprobench/<name>:<hash16>: its existence is the cache hit. */
  tag: string;
}

/** Directories under sim/dataset that are Harbor tasks with an environment/Dockerfile. */
export function datasetTaskDirs(root: string): string[] {
  const dataset = join(root, "sim", "dataset");
  if (!existsSync(dataset)) return [];
  return readdirSync(dataset, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(dataset, d.name, "environment", "Dockerfile")))
    .map((d) => d.name)
    .sort();
}

/** Two-digit names prepull-01 … prepull-20. */
export function prepullNames(count = PREPULL_COUNT): string[] {
  return Array.from({ length: count }, (_, i) => `prepull-${String(i + 1).padStart(2, "0")}`);
}

/** Every image of the sim, parents before children. `taskDirs` are sim/dataset/<dir> names. */
export function imageSpecs(root: string, taskDirs: string[]): ImageSpec[] {
  const images = join(root, "sim", "images");
  const dockerfileSpec = (name: string, dir: string, more: Partial<ImageSpec> = {}): ImageSpec => ({
    name,
    kind: "dockerfile",
    contextDir: dir,
    dockerfile: join(dir, "Dockerfile"),
    hashInputs: [dir],
    buildArgs: {},
    extraTags: [],
    ...more,
  });
  const specs: ImageSpec[] = [
    {
      name: "debian-base",
      kind: "debootstrap",
      contextDir: join(images, "debian-base"),
      dockerfile: "",
      hashInputs: [join(images, "debian-base")],
      buildArgs: { SUITE: "trixie", MIRROR: "http://deb.debian.org/debian", PACKAGES: "python3,ca-certificates" },
      // The double's Dockerfile (and ours) say FROM reprobench/debian-base:trixie.
      extraTags: ["reprobench/debian-base:trixie"],
    },
    dockerfileSpec("sim-host", join(images, "sim-host"), { parent: "debian-base" }),
    dockerfileSpec("sim-registry", join(images, "registry"), { parent: "debian-base" }),
    // The outside: package index + git server (http.server over a static tree), the egress proxy and the
    // fake Hugging Face Hub. Context sim/ (the Dockerfile copies proxy/ and hub/hub.py); only those are hashed.
    dockerfileSpec("sim-outside", join(root, "sim", "proxy"), {
      parent: "debian-base",
      contextDir: join(root, "sim"),
      hashInputs: [join(root, "sim", "proxy"), join(root, "sim", "hub", "hub.py")],
    }),
    dockerfileSpec("sim-probe", join(images, "probe"), { push: "reprobench/sim-probe" }),
    dockerfileSpec("task-base", join(images, "task-base"), {
      parent: "debian-base",
      // The dataset's Dockerfiles say FROM registry.sim:5000/reprobench/task-base:latest; a local tag of
      // that name lets the control machine build them without resolving registry.sim.
      extraTags: [`${REGISTRY_HOST}/reprobench/task-base:latest`],
      push: "reprobench/task-base",
    }),
  ];
  const double = join(root, "sim", "sglang-double");
  if (existsSync(join(double, "Dockerfile"))) {
    specs.push({
      name: "sglang-double",
      kind: "dockerfile",
      // Its Dockerfile copies sim/scenarios too, so the context is sim/.
      contextDir: join(root, "sim"),
      dockerfile: join(double, "Dockerfile"),
      hashInputs: [double, join(root, "sim", "scenarios")],
      parent: "debian-base",
      buildArgs: {},
      extraTags: [],
      push: "reprobench/sglang-double",
      prepare: ["bash", join(double, "fetch-router-wheels.sh")],
    });
  }
  for (const dir of taskDirs) {
    const env = join(root, "sim", "dataset", dir, "environment");
    specs.push(dockerfileSpec(`task-${dir}`, env, { parent: "task-base", push: `reprobench/task-${dir}` }));
  }
  for (const name of prepullNames()) {
    specs.push(
      dockerfileSpec(name, join(images, "prepull"), {
        parent: "debian-base",
        buildArgs: { INDEX: name.slice("prepull-".length) },
        push: `reprobench/${name}`,
      }),
    );
  }
  return specs;
}

/** Every regular file under `path` (or `path` itself), sorted, skipping VCS and editor litter. */
export function listInputFiles(path: string): string[] {
  const st = statSync(path);
  if (st.isFile()) return [path];
  const out: string[] = [];
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    // Downloaded wheels are outputs of a prepare step (pinned by its script, which is hashed): hashing
    // them would give a fresh clone a different hash before and after its first prepare.
    if (entry.name === ".git" || entry.name === "__pycache__" || entry.name.endsWith(".pyc") || entry.name.endsWith(".whl") || entry.name.startsWith(".complete-")) continue;
    const full = join(path, entry.name);
    if (entry.isDirectory()) out.push(...listInputFiles(full));
    else if (entry.isFile()) out.push(full);
  }
  return out.sort();
}

/**
 * Content hash of an image's inputs: relative paths, executable bits and contents of its files, its
 * build args and its parent's hash. Paths are relative to `root` so two checkouts agree.
 */
export function inputHash(spec: ImageSpec, root: string, parentHash: string | undefined, read: (p: string) => Buffer = (p) => readFileSync(p)): string {
  const h = createHash("sha256");
  h.update(`name=${spec.name}\nkind=${spec.kind}\nparent=${parentHash ?? ""}\n`);
  h.update(`dockerfile=${spec.dockerfile ? relative(root, spec.dockerfile) : ""}\n`);
  for (const key of Object.keys(spec.buildArgs).sort()) h.update(`arg ${key}=${spec.buildArgs[key]}\n`);
  const files = [...new Set(spec.hashInputs.flatMap((p) => listInputFiles(p)))].sort();
  for (const file of files) {
    const exec = (statSync(file).mode & 0o111) !== 0 ? "x" : "-";
    const content = read(file);
    h.update(`file ${relative(root, file)} ${exec} ${content.length}\n`);
    h.update(content);
  }
  return h.digest("hex");
}

/** Adds hashes and cache tags, parents first (a spec whose parent is unknown is an error). */
export function resolveImages(specs: ImageSpec[], root: string, read?: (p: string) => Buffer): ResolvedImage[] {
  const byName = new Map<string, ResolvedImage>();
  for (const spec of specs) {
    let parentHash: string | undefined;
    if (spec.parent !== undefined) {
      const parent = byName.get(spec.parent);
      if (!parent) throw new Error(`image ${spec.name}: parent image ${spec.parent} is not defined before it`);
      parentHash = parent.hash;
    }
    const hash = inputHash(spec, root, parentHash, read);
    byName.set(spec.name, { ...spec, hash, tag: `reprobench/${spec.name}:${hash.slice(0, 16)}` });
  }
  return [...byName.values()];
}

/** Reference the hosts pull (registry.sim:5000/<repo>:latest). */
export function pullRef(repo: string): string {
  return `${REGISTRY_HOST}/${repo}:latest`;
}

/** Reference the control machine pushes (127.0.0.1:5000/<repo>:latest for the default cluster). */
export function pushRef(repo: string, pushHost = REGISTRY_PUSH_HOST): string {
  return `${pushHost}/${repo}:latest`;
}

/** The `docker build` argv for a dockerfile-kind image (labels carry the hash for `sim status`). */
export function dockerBuildArgs(image: ResolvedImage, parentTag: string | undefined): string[] {
  const args = ["docker", "build", "--label", `${IMAGE_LABEL}=1`, "--label", `${HASH_LABEL}=${image.hash}`, "-t", image.tag, "-f", image.dockerfile];
  const buildArgs = { ...image.buildArgs };
  // Prepull images take their base by argument, pinned to the exact debian-base build.
  if (image.name.startsWith("prepull-") && parentTag) buildArgs.BASE = parentTag;
  for (const key of Object.keys(buildArgs).sort()) args.push("--build-arg", `${key}=${buildArgs[key]}`);
  args.push(image.contextDir);
  return args;
}

/** True when the registry already holds exactly the local image (its digest is one of ours). */
export function registryUpToDate(localRepoDigests: string[], repo: string, remoteDigest: string | undefined): boolean {
  if (!remoteDigest) return false;
  // A manifest digest names its content exactly: the image pushed as that digest to any sim registry (the
  // one whose storage seeded this one, sim/registry-seed.ts) is the image this registry holds.
  return localRepoDigests.some((d) => d.endsWith(`/${repo}@${remoteDigest}`));
}

/** The sim's caches live outside the repo: ~/.cache/reprobench/<name>. */
export function simCacheDir(name: string): string {
  return join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "reprobench", name);
}

export function buildLogDir(): string {
  return simCacheDir("sim-build-logs");
}

/** Every local tag → image ID, from one `docker images` call (per-image inspects add up on warm runs). */
async function localTags(): Promise<Map<string, string>> {
  const out = await mustRun(["docker", "images", "--no-trunc", "--format", "{{.Repository}}:{{.Tag}} {{.ID}}"], { timeoutMs: 60_000 });
  const tags = new Map<string, string>();
  for (const line of out.split("\n")) {
    const [ref, id] = line.trim().split(" ");
    if (ref && id && !ref.endsWith(":<none>")) tags.set(ref, id);
  }
  return tags;
}

/** Points `target` at the image `source` names, unless it already does. */
async function ensureTag(tags: Map<string, string>, source: string, target: string): Promise<void> {
  if (tags.get(target) !== undefined && tags.get(target) === tags.get(source)) return;
  await mustRun(["docker", "tag", source, target], { timeoutMs: 30_000 });
  const id = tags.get(source);
  if (id) tags.set(target, id);
}

// The legacy builder needs nothing beyond the engine; BuildKit would need buildx on the control machine.
const buildEnv = { ...process.env, DOCKER_BUILDKIT: "0" };

export interface BuildReport {
  built: string[];
  cached: string[];
}

/** Builds every image that is not cached yet, in order; tags each with its extra tags. */
export async function buildImages(images: ResolvedImage[], root: string, log: (m: string) => void): Promise<BuildReport> {
  const report: BuildReport = { built: [], cached: [] };
  const byName = new Map(images.map((i) => [i.name, i]));
  mkdirSync(buildLogDir(), { recursive: true });
  const tags = await localTags();
  for (const image of images) {
    if (tags.has(image.tag)) {
      report.cached.push(image.tag);
    } else {
      const logFile = join(buildLogDir(), `${image.name}.log`);
      const started = Date.now();
      log(`building ${image.tag} (log: ${logFile})`);
      if (image.prepare) await mustRun(image.prepare, { timeoutMs: 15 * 60_000, cwd: root });
      const result =
        image.kind === "debootstrap"
          ? await run(["bash", join(image.contextDir, "build.sh")], {
              timeoutMs: 30 * 60_000,
              env: { ...process.env, IMAGE: image.tag, INPUT_HASH: image.hash, ...image.buildArgs },
            })
          : await run(dockerBuildArgs(image, image.parent ? byName.get(image.parent)?.tag : undefined), { timeoutMs: 30 * 60_000, env: buildEnv });
      writeFileSync(logFile, `${result.stdout}\n${result.stderr}`);
      if (result.code !== 0) throw new Error(`building image ${image.name} failed (exit ${result.code}); last lines of ${logFile}:\n${lastLines(result.stdout + result.stderr, 15)}`);
      log(`built ${image.tag} in ${((Date.now() - started) / 1000).toFixed(1)}s`);
      report.built.push(image.tag);
      tags.set(image.tag, (await mustRun(["docker", "image", "inspect", "--format", "{{.Id}}", image.tag], { timeoutMs: 30_000 })).trim());
    }
    for (const extra of image.extraTags) await ensureTag(tags, image.tag, extra);
  }
  return report;
}

/** Digest of <repo>:latest in the sim registry, or undefined when absent. */
export async function remoteDigest(repo: string, pushHost = REGISTRY_PUSH_HOST): Promise<string | undefined> {
  // A busy machine can make a HEAD time out; that is "unknown", not "absent": ask again (bounded)
  // rather than re-push an image that is already there.
  for (let attempt = 1; attempt <= 3; attempt++) {
    try {
      const res = await fetchWithin(
        `http://${pushHost}/v2/${repo}/manifests/latest`,
        { method: "HEAD", headers: { Accept: "application/vnd.docker.distribution.manifest.v2+json, application/vnd.oci.image.manifest.v1+json" } },
        20_000,
      );
      if (res.ok) return res.headers.get("docker-content-digest") ?? undefined;
      if (res.status === 404) return undefined;
    } catch {
      // timeout or connection error: try again
    }
  }
  return undefined;
}

/** Pushes every image that has a registry repository and is not already there, unchanged. */
export async function pushImages(images: ResolvedImage[], log: (m: string) => void, pushHost = REGISTRY_PUSH_HOST): Promise<{ pushed: string[]; upToDate: string[] }> {
  const pushed: string[] = [];
  const upToDate: string[] = [];
  const toPush = images.filter((i): i is ResolvedImage & { push: string } => i.push !== undefined);
  if (toPush.length === 0) return { pushed, upToDate };
  const tags = await localTags();
  for (const image of toPush) await ensureTag(tags, image.tag, pushRef(image.push, pushHost));
  // One inspect for all local digests, and the registry's digests in parallel: a warm run checks 26
  // images in well under a second.
  const refs = toPush.map((i) => pushRef(i.push, pushHost));
  const localDigests = (await mustRun(["docker", "image", "inspect", "--format", "{{json .RepoDigests}}", ...refs], { timeoutMs: 60_000 }))
    .trim()
    .split("\n")
    .map((line) => (JSON.parse(line) as string[] | null) ?? []);
  const remote = await Promise.all(toPush.map((i) => remoteDigest(i.push, pushHost)));
  for (const [n, image] of toPush.entries()) {
    if (registryUpToDate(localDigests[n], image.push, remote[n])) {
      upToDate.push(pullRef(image.push));
      continue;
    }
    await mustRun(["docker", "push", refs[n]], { timeoutMs: 15 * 60_000 });
    log(`pushed ${pullRef(image.push)}`);
    pushed.push(pullRef(image.push));
  }
  return { pushed, upToDate };
}
