// The sim's Hugging Face Hub (sim/hub/hub.py on the outside network as hub.sim, reached only through the
// egress proxy like pypi.sim and git.sim): its names, the repo it serves and how that repo is made. The repo
// is built once per machine and content (sim/models/hf_model.py's "small" spec → `hub.py add-repo`) into a
// shared cache and hard-linked into each instance's hub tree, so a warm `sim up` only checks a stamp.
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, linkSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { mustRun } from "./exec";
import { simCacheDir } from "./images";

export const HUB_HOSTNAME = "hub.sim";
export const HUB_PORT = 80;
/** modelServer.download.endpoint for the sim (HF_ENDPOINT). */
export const HUB_ENDPOINT = `http://${HUB_HOSTNAME}`;
export const HUB_FAULTS_NAME = "faults.json";
export const HUB_REQUEST_LOG_NAME = "requests.jsonl";
/** Where the hub container sees its repos (read-only) and its state dir (faults file, request log). */
export const HUB_ROOT_MOUNT = "/srv/hub";
export const HUB_STATE_MOUNT = "/etc/reprobench/hub";
/** Where the sim-outside image carries hub.py (sim/proxy/Dockerfile). */
export const HUB_SCRIPT_IN_IMAGE = "/usr/local/lib/reprobench/hub.py";

/** The repo hub.sim serves: hf_model.py's "small" spec (17.6 MB, 2 shards), shards of seeded random bytes. */
export const HUB_REPO = "reprobench/small-qwen3";
export const HUB_MODEL_SPEC = "small";
export const HUB_FILL = "random";
/**
 * Its commit: `hub.py add-repo` derives it from the repo id and the files, so the same generator gives it on
 * every machine (test/unit/sim/hub-repo.test.ts builds the repo and compares; docs/sim.md pins it).
 */
export const HUB_REVISION = "3d076eb6d47ef4ca761c96a4d3b32a4f5db39384";

/** The files whose contents define the repo (relative to the project root). */
export function hubRepoInputs(root: string): string[] {
  const tokenizer = join(root, "sim", "sglang-double", "tiny-model");
  return [join(root, "sim", "models", "hf_model.py"), join(root, "sim", "hub", "hub.py"), ...(existsSync(tokenizer) ? readdirSync(tokenizer).sort().map((f) => join(tokenizer, f)) : [])];
}

/** Hash of what the repo is built from: the generator, hub.py, the tokenizer files, spec, repo id and fill. */
export function hubRepoHash(root: string, read: (p: string) => Buffer = (p) => readFileSync(p)): string {
  const h = createHash("sha256");
  h.update(`repo=${HUB_REPO}\nspec=${HUB_MODEL_SPEC}\nfill=${HUB_FILL}\n`);
  for (const file of hubRepoInputs(root)) {
    const content = read(file);
    h.update(`file ${relative(root, file)} ${content.length}\n`);
    h.update(content);
  }
  return h.digest("hex");
}

export interface HubRepo {
  repo: string;
  revision: string;
  files: number;
  bytes: number;
  /** false: the instance's tree already held this revision. */
  changed: boolean;
}

interface AddRepoResult {
  repo: string;
  revision: string;
  files: { path: string; size: number }[];
}

/** Every regular file under `dir`, relative, sorted. */
function filesUnder(dir: string, base = dir): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(full, base));
    else if (entry.isFile()) out.push(relative(base, full));
  }
  return out.sort();
}

/** The repo built once per content under `cache` (staged and renamed: side-by-side `sim up`s build it at most twice, never half). */
async function buildShared(root: string, cache: string, hash: string): Promise<string> {
  const dir = join(cache, hash.slice(0, 16));
  if (existsSync(join(dir, "result.json"))) return dir;
  mkdirSync(cache, { recursive: true });
  const staged = join(cache, `.${hash.slice(0, 16)}.tmp-${process.pid}`);
  rmSync(staged, { recursive: true, force: true });
  mkdirSync(staged, { recursive: true });
  try {
    const model = join(staged, "model");
    await mustRun(["python3", join(root, "sim", "models", "hf_model.py"), "write", "--out", model, "--spec", HUB_MODEL_SPEC, "--tokenizer-dir", join(root, "sim", "sglang-double", "tiny-model")], { timeoutMs: 120_000 });
    const out = await mustRun(["python3", join(root, "sim", "hub", "hub.py"), "add-repo", "--root", join(staged, "root"), "--repo", HUB_REPO, "--from", model, "--fill", HUB_FILL], { timeoutMs: 120_000 });
    rmSync(model, { recursive: true, force: true });
    const result = JSON.parse(out.trim().split("\n").pop() ?? "") as AddRepoResult;
    writeFileSync(join(staged, "result.json"), `${JSON.stringify({ repo: result.repo, revision: result.revision, files: result.files.map((f) => ({ path: f.path, size: f.size })) }, null, 2)}\n`);
    try {
      renameSync(staged, dir);
    } catch (err) {
      if (!existsSync(join(dir, "result.json"))) throw err;
    }
  } finally {
    rmSync(staged, { recursive: true, force: true });
  }
  return dir;
}

/**
 * Makes `hubDir` (hub.py's --root for one instance) serve HUB_REPO at the commit its inputs give: built
 * once per machine and content in the cache dir `sim-hub-build`, then hard-linked in (copied across file
 * systems), repo.json last. Earlier revisions stay (a stack pinned to one keeps working until `sim down
 * --purge-images`). Idempotent; a warm call reads two small files.
 */
export async function ensureHubRepo(root: string, hubDir: string, cache = simCacheDir("sim-hub-build")): Promise<HubRepo> {
  const hash = hubRepoHash(root);
  const stampFile = join(hubDir, ".reprobench-hub.json");
  const stamp = existsSync(stampFile) ? (JSON.parse(readFileSync(stampFile, "utf8")) as { hash?: string } & Partial<HubRepo>) : undefined;
  if (stamp?.hash === hash && stamp.revision && existsSync(join(hubDir, HUB_REPO, stamp.revision))) {
    return { repo: HUB_REPO, revision: stamp.revision, files: stamp.files ?? 0, bytes: stamp.bytes ?? 0, changed: false };
  }
  const shared = await buildShared(root, cache, hash);
  const result = JSON.parse(readFileSync(join(shared, "result.json"), "utf8")) as AddRepoResult;
  const from = join(shared, "root");
  const rels = filesUnder(from);
  // The revision's files first, repo.json (which points main at it) last: hub.py never sees a ref to a half-linked commit.
  for (const rel of [...rels.filter((r) => !r.endsWith("repo.json")), ...rels.filter((r) => r.endsWith("repo.json"))]) {
    const src = join(from, rel);
    const dest = join(hubDir, rel);
    if (existsSync(dest) && statSync(dest).ino === statSync(src).ino) continue;
    mkdirSync(join(dest, ".."), { recursive: true });
    const tmp = `${dest}.tmp-${process.pid}`;
    rmSync(tmp, { force: true });
    try {
      linkSync(src, tmp);
    } catch {
      copyFileSync(src, tmp);
    }
    renameSync(tmp, dest);
  }
  const report = { repo: HUB_REPO, revision: result.revision, files: result.files.length, bytes: result.files.reduce((n, f) => n + f.size, 0) };
  writeFileSync(stampFile, `${JSON.stringify({ hash, ...report }, null, 2)}\n`);
  return { ...report, changed: true };
}
