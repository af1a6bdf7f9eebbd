// The simulated "outside" the sim hosts reach only through the proxy: a PEP 503 package index and a
// dumb-HTTP git server (both static files served by the `<prefix>-outside` container), the network
// conditions the proxy applies, and the proxy credentials. Everything here is deterministic or made once
// per instance; sim/cluster.ts and sim/services.ts wire it into `sim up` / `sim down`.
import { createHash, randomBytes } from "node:crypto";
import { chmodSync, cpSync, existsSync, linkSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mustRun } from "./exec";

export const PROXY_HOSTNAME = "proxy.sim";
export const PROXY_PORT = 3128;
export const PROXY_USER = "reprobench";
export const INDEX_HOSTNAME = "pypi.sim";
export const GIT_HOSTNAME = "git.sim";
export const DATASET_REPO = "terminal-bench-sim.git";
export const INDEX_URL = `http://${INDEX_HOSTNAME}/simple/`;
export const DATASET_GIT_URL = `http://${GIT_HOSTNAME}/${DATASET_REPO}`;
/** The rehearsal dataset (sim/rehearsal), published on demand by `reprobench sim rehearsal`. */
export const REHEARSAL_REPO = "terminal-bench-rehearsal.git";
export const REHEARSAL_GIT_URL = `http://${GIT_HOSTNAME}/${REHEARSAL_REPO}`;
/** Directory of the index tree (http://pypi.sim/rehearsal/…) holding the rehearsal's downloads. */
export const REHEARSAL_DOWNLOADS_DIR = "rehearsal";
/** The task added by the dataset's third (HEAD) commit: a clone without the pin has one task too many. */
export const UNPINNED_TASK = "unpinned-extra";
/** Where the proxy container sees the network conditions file (its directory is bind-mounted). */
export const CONDITIONS_MOUNT = "/etc/reprobench/network";
export const CONDITIONS_FILE_NAME = "conditions.json";

// ---------------------------------------------------------------------------------------------------
// Network conditions

/** How an injected failure looks: the proxy's 502, an overloaded origin's 429 or 503, or a reset connection. */
export const FAIL_WITH = ["502", "503", "429", "reset"] as const;
export type FailWith = (typeof FAIL_WITH)[number];

export interface NetworkConditions {
  /** Delay before each proxied connection is served. */
  latencyMs: number;
  /** Per-connection, per-direction cap in KiB/s; 0 = none. */
  bandwidthKBps: number;
  /** 0..1: share of allowed proxied connections that fail (seeded: reproducible). */
  failFraction: number;
  failWith: FailWith;
  seed: number;
  /**
   * Which connections failFraction may fail: "host:port" (HTTP requests to it and CONNECT tunnels) or
   * absolute http:// URL prefixes such as "http://pypi.sim/rehearsal/" (plain HTTP requests only: a
   * tunnel shows the proxy no URL). Empty: every allowed connection, as before targets existed.
   */
  failTargets: string[];
}

export const NO_FAULTS: NetworkConditions = { latencyMs: 0, bandwidthKBps: 0, failFraction: 0, failWith: "502", seed: 0, failTargets: [] };

/** Why `target` cannot be a failTargets entry, or undefined when it can (sim-proxy.py checks the same). */
export function failTargetProblem(target: unknown): string | undefined {
  if (typeof target !== "string") return "expected a string";
  if (/^https:\/\//i.test(target)) return 'https:// goes through a CONNECT tunnel, where the proxy sees only host:port: use "host:443"';
  const hostPort = /^([a-z0-9]([a-z0-9.-]*[a-z0-9])?):(\d{1,5})$/i.exec(target);
  if (hostPort) return Number(hostPort[3]) >= 1 && Number(hostPort[3]) <= 65535 ? undefined : `port ${hostPort[3]} is not 1..65535`;
  if (/^http:\/\/[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:\d{1,5})?(\/[^\s]*)?$/i.test(target)) return undefined;
  return 'expected "host:port" or an absolute http:// URL prefix such as "http://pypi.sim/rehearsal/"';
}

/** Checks and completes a (partial) conditions object; throws naming the bad field. */
export function normalizeConditions(input: Partial<NetworkConditions>, base: NetworkConditions = NO_FAULTS, where = "network conditions"): NetworkConditions {
  const out: NetworkConditions = { ...base };
  const known = new Set(Object.keys(NO_FAULTS).concat("comment"));
  for (const key of Object.keys(input)) if (!known.has(key)) throw new Error(`${where}: unknown key '${key}'; expected ${Object.keys(NO_FAULTS).join(", ")}`);
  const int = (key: "latencyMs" | "bandwidthKBps" | "seed", min: number) => {
    const v = input[key];
    if (v === undefined) return;
    if (typeof v !== "number" || !Number.isInteger(v) || v < min) throw new Error(`${where}: ${key}: got ${JSON.stringify(v)}; expected an integer >= ${min}`);
    out[key] = v;
  };
  int("latencyMs", 0);
  int("bandwidthKBps", 0);
  int("seed", 0);
  if (input.failFraction !== undefined) {
    const v = input.failFraction;
    if (typeof v !== "number" || !(v >= 0 && v <= 1)) throw new Error(`${where}: failFraction: got ${JSON.stringify(v)}; expected a number from 0 to 1`);
    out.failFraction = v;
  }
  if (input.failWith !== undefined) {
    if (!(FAIL_WITH as readonly string[]).includes(input.failWith)) throw new Error(`${where}: failWith: got ${JSON.stringify(input.failWith)}; expected one of ${FAIL_WITH.map((f) => `"${f}"`).join(", ")}`);
    out.failWith = input.failWith;
  }
  if (input.failTargets !== undefined) {
    const v: unknown = input.failTargets;
    if (!Array.isArray(v)) throw new Error(`${where}: failTargets: got ${JSON.stringify(v)}; expected a list of "host:port" or http:// URL prefixes ([] = every connection)`);
    for (const target of v) {
      const problem = failTargetProblem(target);
      if (problem) throw new Error(`${where}: failTargets: got ${JSON.stringify(target)}; ${problem}`);
    }
    out.failTargets = [...new Set(v as string[])];
  }
  return out;
}

/** One top-level section of sim/scenarios/sim-default.json ({} when absent), and the file's path for messages. */
export function scenarioSection<T>(root: string, key: string): { section: Partial<T>; file: string } {
  const file = join(root, "sim", "scenarios", "sim-default.json");
  const scenario = JSON.parse(readFileSync(file, "utf8")) as Record<string, Partial<T> | undefined>;
  return { section: scenario[key] ?? {}, file };
}

/** The `network` section of sim/scenarios/sim-default.json (all zero = no faults). */
export function scenarioConditions(root: string): NetworkConditions {
  const { section, file } = scenarioSection<NetworkConditions>(root, "network");
  return normalizeConditions(section, NO_FAULTS, `${file}: network`);
}

/**
 * Writes a JSON file atomically: a rename in its directory, so a process watching a bind mount of it (the
 * proxy, the registry gate) sees a new mtime and never half a file.
 */
export function writeJsonAtomically(file: string, value: unknown): void {
  mkdirSync(join(file, ".."), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, `${JSON.stringify(value, null, 2)}\n`);
  renameSync(tmp, file);
}

/** Writes the conditions the proxy applies (checked first: the proxy would keep its old ones otherwise). */
export function writeConditionsFile(file: string, conditions: NetworkConditions): void {
  writeJsonAtomically(file, normalizeConditions(conditions, NO_FAULTS, file));
}

export function readConditionsFile(file: string): NetworkConditions | undefined {
  if (!existsSync(file)) return undefined;
  return normalizeConditions(JSON.parse(readFileSync(file, "utf8")) as Partial<NetworkConditions>, NO_FAULTS, file);
}

// ---------------------------------------------------------------------------------------------------
// Credentials

/** `http://reprobench:<hex>@proxy.sim:3128`, made once (0600) and kept until `sim down`. */
export function ensureProxyUrl(file: string): string {
  if (existsSync(file)) {
    chmodSync(file, 0o600);
    return readFileSync(file, "utf8").trim();
  }
  mkdirSync(join(file, ".."), { recursive: true, mode: 0o700 });
  const url = `http://${PROXY_USER}:${randomBytes(16).toString("hex")}@${PROXY_HOSTNAME}:${PROXY_PORT}`;
  writeFileSync(file, `${url}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return url;
}

// ---------------------------------------------------------------------------------------------------
// The dataset's git history

const GIT_IDENTITY = { name: "reprobench sim", email: "sim@reprobench.test" };
const COMMITS = [
  { date: "2025-01-01T00:00:00+00:00", message: "hello-file and sum-numbers", tasks: ["hello-file", "sum-numbers"] },
  { date: "2025-01-02T00:00:00+00:00", message: "sha-preimage: the third task (the pinned commit)", tasks: ["sha-preimage"] },
  { date: "2025-01-03T00:00:00+00:00", message: `${UNPINNED_TASK}: a fourth task after the pin`, tasks: [UNPINNED_TASK] },
];

/** A small generated task that exists only at the dataset's HEAD (never built, never pinned). */
export function unpinnedTaskFiles(): Record<string, { text: string; mode: number }> {
  return {
    "task.toml": {
      mode: 0o644,
      text: [
        'schema_version = "1.1"',
        "",
        "[task]",
        `name = "reprobench-sim/${UNPINNED_TASK}"`,
        'description = "Added after the pinned commit: a clone of HEAD has four tasks, the pinned dataset three."',
        'keywords = ["reprobench", "sim"]',
        "",
        "[environment]",
        `docker_image = "registry.sim:5000/reprobench/task-${UNPINNED_TASK}:latest"`,
        "",
      ].join("\n"),
    },
    "instruction.md": { mode: 0o644, text: "This task is not part of the pinned dataset; a run that sees it cloned HEAD instead of the pin.\n" },
    "environment/Dockerfile": { mode: 0o644, text: "FROM registry.sim:5000/reprobench/task-base:latest\nWORKDIR /app\n" },
    "tests/test.sh": { mode: 0o755, text: "#!/usr/bin/env bash\necho 0 > /logs/verifier/reward.txt\n" },
    "solution/solve.sh": { mode: 0o755, text: "#!/usr/bin/env bash\ntrue\n" },
  };
}

/** Environment for git with a fixed identity and date and no user or system config: same files → same ids. */
function fixedGitEnv(home: string, date: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_AUTHOR_NAME: GIT_IDENTITY.name,
    GIT_AUTHOR_EMAIL: GIT_IDENTITY.email,
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_NAME: GIT_IDENTITY.name,
    GIT_COMMITTER_EMAIL: GIT_IDENTITY.email,
    GIT_COMMITTER_DATE: date,
    TZ: "UTC",
    LC_ALL: "C",
  };
}

/** git in `dir` with fixedGitEnv and settings that keep ids independent of this machine's config. */
function fixedGit(dir: string, args: string[], date: string): Promise<string> {
  return mustRun(["git", "-c", "core.fileMode=true", "-c", "core.autocrlf=false", "-c", "commit.gpgSign=false", ...args], { cwd: dir, env: fixedGitEnv(dir, date), timeoutMs: 60_000 });
}

/**
 * Makes `dir` (a work tree with files, no .git yet) a repository with one commit of everything in it,
 * with the fixed identity and `date`; returns the commit id (a function of the files and the message).
 */
export async function commitTreeOnce(dir: string, message: string, date: string): Promise<string> {
  await fixedGit(dir, ["init", "-q", "-b", "main"], date);
  await fixedGit(dir, ["add", "-A", "--", "."], date);
  await fixedGit(dir, ["commit", "-q", "-m", message], date);
  return (await fixedGit(dir, ["rev-parse", "HEAD"], date)).trim();
}

/**
 * Publishes the repository in `work` as the bare `<tree>/<name>` for dumb HTTP (one pack, `git
 * update-server-info`), unless it is already there at `head`. Staged beside it and renamed into place.
 */
export async function publishBareRepository(work: string, tree: string, name: string, head: string): Promise<void> {
  const bare = join(tree, name);
  const have = existsSync(join(bare, "HEAD")) ? (await mustRun(["git", "--git-dir", bare, "rev-parse", "HEAD"], { timeoutMs: 30_000 }).catch(() => "")).trim() : "";
  // One pack, not loose objects: a dumb-HTTP clone then makes a handful of requests (refs, the pack list,
  // the .idx and the .pack) instead of one per object, as a smart server's single pack response would.
  const packs = join(bare, "objects", "info", "packs");
  const packed = existsSync(packs) && readFileSync(packs, "utf8").includes(".pack");
  if (have === head && packed) return;
  const home = mkdtempSync(join(tmpdir(), "reprobench-git-home-"));
  try {
    const env = fixedGitEnv(home, COMMITS[0].date);
    const staged = join(tree, `.${name}.new`);
    rmSync(staged, { recursive: true, force: true });
    mkdirSync(tree, { recursive: true });
    await mustRun(["git", "clone", "-q", "--bare", "--no-hardlinks", work, staged], { timeoutMs: 60_000, env });
    await mustRun(["git", "--git-dir", staged, "repack", "-a", "-d", "-q"], { timeoutMs: 60_000, env });
    await mustRun(["git", "--git-dir", staged, "update-server-info"], { timeoutMs: 30_000, env });
    rmSync(bare, { recursive: true, force: true });
    renameSync(staged, bare);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

export interface DatasetCommits {
  /** Commit 2: hello-file, sum-numbers, sha-preimage. */
  pinned: string;
  /** Commit 3: plus unpinned-extra. */
  head: string;
}

/**
 * Builds the dataset repository (work tree with `.git`) in `dir` from sim/dataset with the fixed
 * 3-commit history; same sim/dataset → same commit ids on every machine.
 */
export async function buildDatasetRepo(root: string, dir: string): Promise<DatasetCommits> {
  const dataset = join(root, "sim", "dataset");
  mkdirSync(dir, { recursive: true });
  const git = (args: string[], date = COMMITS[0].date) => fixedGit(dir, args, date);
  await git(["init", "-q", "-b", "main"]);
  const ids: string[] = [];
  for (const [n, commit] of COMMITS.entries()) {
    const paths: string[] = [];
    if (n === 0 && existsSync(join(dataset, "README.md"))) {
      copyFileSync(join(dataset, "README.md"), join(dir, "README.md"));
      paths.push("README.md");
    }
    for (const task of commit.tasks) {
      if (task === UNPINNED_TASK) {
        for (const [rel, f] of Object.entries(unpinnedTaskFiles())) {
          mkdirSync(join(dir, task, rel, ".."), { recursive: true });
          writeFileSync(join(dir, task, rel), f.text);
          chmodSync(join(dir, task, rel), f.mode);
        }
      } else {
        if (!existsSync(join(dataset, task))) throw new Error(`sim/dataset/${task} is missing (the dataset's commit ${n + 1} adds it)`);
        cpSync(join(dataset, task), join(dir, task), { recursive: true, filter: (src) => !/(__pycache__|\.pyc$)/.test(src) });
      }
      paths.push(task);
    }
    await git(["add", "--", ...paths], commit.date);
    await git(["commit", "-q", "-m", commit.message], commit.date);
    ids.push((await git(["rev-parse", "HEAD"], commit.date)).trim());
  }
  return { pinned: ids[1], head: ids[2] };
}

/** The dataset's pinned commit (2) and HEAD (3), computed in a temporary directory. */
export async function datasetCommits(root: string): Promise<DatasetCommits> {
  const tmp = mkdtempSync(join(tmpdir(), "reprobench-dataset-"));
  try {
    return await buildDatasetRepo(root, join(tmp, "repo"));
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------------
// The static tree the outside container serves

/** PEP 503 name normalization. */
export function normalizeName(name: string): string {
  return name.replace(/[-_.]+/g, "-").toLowerCase();
}

/** Distribution name of a wheel file (the part before the first '-'). */
export function wheelProject(file: string): string {
  return normalizeName(file.split("-")[0]);
}

const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** index.html texts of a PEP 503 simple index: "" → the root page, <project> → its page. */
export function simpleIndexPages(wheels: { file: string; sha256: string }[]): Record<string, string> {
  const byProject = new Map<string, { file: string; sha256: string }[]>();
  for (const w of [...wheels].sort((a, b) => a.file.localeCompare(b.file))) {
    const p = wheelProject(w.file);
    byProject.set(p, [...(byProject.get(p) ?? []), w]);
  }
  const page = (title: string, links: string[]) => `<!DOCTYPE html>\n<html><head><meta name="pypi:repository-version" content="1.0"><title>${escapeHtml(title)}</title></head><body>\n${links.join("\n")}\n</body></html>\n`;
  const pages: Record<string, string> = {};
  const projects = [...byProject.keys()].sort();
  pages[""] = page("Simple index", projects.map((p) => `<a href="/simple/${p}/">${p}</a><br>`));
  for (const p of projects) {
    pages[p] = page(`Links for ${p}`, byProject.get(p)!.map((w) => `<a href="/files/${encodeURIComponent(w.file)}#sha256=${w.sha256}">${escapeHtml(w.file)}</a><br>`));
  }
  return pages;
}

/** The version part of a wheel's file name (`name-version(-build)?-py-abi-plat.whl`). */
export function wheelVersion(file: string): string {
  return file.split("-")[1] ?? "";
}

/**
 * Compares two plain PEP 440 versions (dotted numbers, optionally `.postN`): <0, 0, >0; undefined for
 * anything else (pre-releases, dev, local versions), which callers treat as "cannot tell".
 */
export function compareVersions(a: string, b: string): number | undefined {
  const parse = (v: string) => {
    const m = /^(\d+(?:\.\d+)*)(?:\.post(\d+))?$/.exec(v);
    return m ? { release: m[1].split(".").map(Number), post: m[2] === undefined ? -1 : Number(m[2]) } : undefined;
  };
  const x = parse(a);
  const y = parse(b);
  if (!x || !y) return undefined;
  for (let i = 0; i < Math.max(x.release.length, y.release.length); i++) {
    const d = (x.release[i] ?? 0) - (y.release[i] ?? 0);
    if (d !== 0) return d;
  }
  return x.post - y.post;
}

/**
 * Which wheels of an extra wheelhouse can join the index beside `base`'s without changing what a resolver
 * picks from it (pip and uv take the highest version that fits): a file `base` has is served already; a
 * project `base` lacks is added; a project `base` has is added only in a version older than every one of
 * base's (so Harbor's install still gets the version it got before); anything else is skipped, with why.
 */
export function mergeableWheels(base: string[], extra: string[]): { add: string[]; already: string[]; skipped: { file: string; reason: string }[] } {
  const baseFiles = new Set(base);
  const versions = new Map<string, string[]>();
  for (const f of base) versions.set(wheelProject(f), [...(versions.get(wheelProject(f)) ?? []), wheelVersion(f)]);
  const add: string[] = [];
  const already: string[] = [];
  const skipped: { file: string; reason: string }[] = [];
  for (const file of [...extra].sort()) {
    if (baseFiles.has(file)) {
      already.push(file);
      continue;
    }
    const project = wheelProject(file);
    const have = versions.get(project);
    if (!have) {
      add.push(file);
      continue;
    }
    const v = wheelVersion(file);
    const olderThanAll = have.every((h) => (compareVersions(v, h) ?? 0) < 0);
    if (olderThanAll) add.push(file);
    else skipped.push({ file, reason: `${project} ${v} is not older than the index's ${have.join(", ")}: serving it could change what the base wheelhouse's installs resolve` });
  }
  return { add, already, skipped };
}

function sha256File(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

/**
 * Replaces `<tree>/rehearsal/` with exactly `files` (paths under the tree → text), served by the outside
 * container at once (it serves the tree live). Staged beside it and renamed into place.
 */
export function writeRehearsalDownloads(tree: string, files: Record<string, string>): void {
  const dir = join(tree, REHEARSAL_DOWNLOADS_DIR);
  const staged = join(tree, `.${REHEARSAL_DOWNLOADS_DIR}.new`);
  rmSync(staged, { recursive: true, force: true });
  mkdirSync(staged, { recursive: true });
  for (const [rel, text] of Object.entries(files)) {
    if (!rel.startsWith(`${REHEARSAL_DOWNLOADS_DIR}/`) || rel.includes("..")) throw new Error(`rehearsal download ${rel}: expected a path under ${REHEARSAL_DOWNLOADS_DIR}/`);
    const path = join(staged, rel.slice(REHEARSAL_DOWNLOADS_DIR.length + 1));
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, text);
  }
  rmSync(dir, { recursive: true, force: true });
  renameSync(staged, dir);
}

function writeIfChanged(path: string, text: string): void {
  if (existsSync(path) && readFileSync(path, "utf8") === text) return;
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
}

export interface OutsideTree {
  wheels: number;
  harborSha256?: string;
  commits: DatasetCommits;
  /** Wheels of `extra` wheel dirs left out of the index (mergeableWheels), with why. */
  skippedWheels: { file: string; reason: string }[];
}

/**
 * A wheel directory of the index. `only` filters its files; `extra` marks one merged beside the earlier
 * dirs without changing what they resolve to (mergeableWheels): e.g. the modelServer.download client's pins.
 */
export interface WheelDir {
  dir: string;
  only?: RegExp;
  extra?: boolean;
}

/**
 * Fills `tree` (served at / by the outside container): files/<wheel> (hard links into the wheel caches,
 * copies across file systems; a file name once, the first dir's), simple/…/index.html with #sha256= fragments, and the bare dataset
 * repository terminal-bench-sim.git prepared for dumb HTTP (one pack, `git update-server-info`). Idempotent.
 */
export async function buildOutsideTree(root: string, tree: string, wheelDirs: WheelDir[]): Promise<OutsideTree> {
  const files = join(tree, "files");
  mkdirSync(files, { recursive: true });
  const wheels: { file: string; sha256: string }[] = [];
  const skippedWheels: { file: string; reason: string }[] = [];
  for (const { dir, only, extra } of wheelDirs) {
    if (!existsSync(dir)) continue;
    let names = readdirSync(dir).filter((f) => f.endsWith(".whl") && (!only || only.test(f))).sort();
    if (extra) {
      const merge = mergeableWheels(wheels.map((w) => w.file), names);
      skippedWheels.push(...merge.skipped);
      names = merge.add;
    } else {
      names = names.filter((f) => !wheels.some((w) => w.file === f));
    }
    for (const file of names) {
      const src = join(dir, file);
      const dest = join(files, file);
      if (!existsSync(dest) || statSync(dest).size !== statSync(src).size) {
        rmSync(dest, { force: true });
        try {
          linkSync(src, dest);
        } catch {
          copyFileSync(src, dest);
        }
      }
      wheels.push({ file, sha256: sha256File(dest) });
    }
  }
  for (const [project, html] of Object.entries(simpleIndexPages(wheels))) writeIfChanged(join(tree, "simple", project, "index.html"), html);

  const tmp = mkdtempSync(join(tmpdir(), "reprobench-dataset-"));
  try {
    const work = join(tmp, "repo");
    const commits = await buildDatasetRepo(root, work);
    await publishBareRepository(work, tree, DATASET_REPO, commits.head);
    const harbor = wheels.find((w) => /^harbor-0\.21\.0-/.test(w.file));
    return { wheels: wheels.length, harborSha256: harbor?.sha256, commits, skippedWheels };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
