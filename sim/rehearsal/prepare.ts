// `reprobench sim rehearsal`: publishes the rehearsal dataset on a running sim instance, on demand only
// (`sim up` never does: CI time matters). It generates the tasks (tasks.ts) into the instance's state
// dir, builds one image per task FROM task-base and pushes them to the instance's registry (sim/images.ts),
// serves the downloads tasks' dependencies from the package index, publishes the dataset as its own git
// repository with a deterministic commit, and writes ground-truth.json beside the dataset.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_INSTANCE, instanceLayout, type SimInstance } from "../layout";
import { fetchWithin, run } from "../exec";
import { buildImages, imageSpecs, pullRef, pushImages, resolveImages, type ResolvedImage } from "../images";
import { commitTreeOnce, publishBareRepository, REHEARSAL_GIT_URL, REHEARSAL_REPO, writeRehearsalDownloads } from "../outside";
import { REHEARSAL_DATASET, rehearsalDockerImage, rehearsalDownloads, rehearsalImageSpecs, writeRehearsalDataset } from "./dataset";
import { groundTruth, rehearsalTasks, SEED000_TASK_COUNT, type RehearsalTask } from "./tasks";

/** The rehearsal commit's fixed date: with the fixed identity, the id depends only on the files and the message. */
export const REHEARSAL_COMMIT_DATE = "2025-02-01T00:00:00+00:00";
/** Builds and pushes at once: tiny images, so the engine, not the CPU, is what they wait on. */
export const IMAGE_CONCURRENCY = 4;

export interface RehearsalReport {
  repoUrl: string;
  commit: string;
  taskCount: number;
  /** Absolute path of ground-truth.json (in the instance's state dir, which git ignores). */
  groundTruthFile: string;
  tasks: RehearsalTask[];
  /** The task images as the hosts pull them (registry.sim:5000/reprobench/rehearsal-<task>:latest). */
  images: string[];
  seconds: number;
}

/** Where an instance keeps its rehearsal: `<stateDir>/rehearsal/` (project-relative). */
export function rehearsalStateDir(instance: SimInstance = DEFAULT_INSTANCE): string {
  return `${instanceLayout(instance).stateDir}/rehearsal`;
}

/** The commit message: names what was generated, so two datasets never share a message by accident. */
export function rehearsalCommitMessage(count: number, seed: number): string {
  return `${REHEARSAL_DATASET}: ${count} tasks, seed ${seed}`;
}

/** Writes the dataset into `dir` as a one-commit repository; returns the commit (same count+seed → same id). */
export async function buildRehearsalRepo(dir: string, tasks: readonly RehearsalTask[], seed: number): Promise<string> {
  writeRehearsalDataset(dir, tasks, seed);
  return commitTreeOnce(dir, rehearsalCommitMessage(tasks.length, seed), REHEARSAL_COMMIT_DATE);
}

/** The commit a dataset of `count` tasks and `seed` gets, computed in a temporary directory. */
export async function rehearsalCommit(count: number, seed: number): Promise<string> {
  const tmp = mkdtempSync(join(tmpdir(), "reprobench-rehearsal-"));
  try {
    return await buildRehearsalRepo(join(tmp, "repo"), rehearsalTasks({ count, seed }), seed);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * The instance a name refers to, from its state: `sim up` wrote <stateDir>/cluster.json with the registry's
 * push port (127.0.0.1:5000+slot), the only place the slot of a running test instance is recorded.
 */
export function instanceByName(root: string, name: string): SimInstance {
  if (name === DEFAULT_INSTANCE.name) return DEFAULT_INSTANCE;
  const file = join(root, ".sim", "instances", name, "cluster.json");
  if (!existsSync(file)) throw new Error(`sim instance '${name}' is not up here (no ${file}; \`sim up\` of that instance writes it)`);
  const pushHost = (JSON.parse(readFileSync(file, "utf8")) as { registry?: { pushHost?: string } }).registry?.pushHost ?? "";
  const slot = Number(/^127\.0\.0\.1:(\d+)$/.exec(pushHost)?.[1]) - instanceLayout().registry.port;
  const instance = { name, slot };
  instanceLayout(instance); // throws for a slot out of range
  return instance;
}

/** Throws, saying what is missing, unless the instance's cluster.json, outside server and registry are up. */
async function requireUp(root: string, instance: SimInstance): Promise<void> {
  const layout = instanceLayout(instance);
  const what = instance.name === DEFAULT_INSTANCE.name ? "the simulated cluster" : `sim instance '${instance.name}'`;
  if (!existsSync(join(root, layout.stateDir, "cluster.json"))) throw new Error(`${what} is not up (no ${layout.stateDir}/cluster.json): run \`reprobench sim up\` first`);
  const state = await run(["docker", "inspect", "--type", "container", "--format", "{{.State.Status}}", layout.outside.container], { timeoutMs: 20_000 });
  if (state.code !== 0 || state.stdout.trim() !== "running") throw new Error(`${what}: its package index and git server ${layout.outside.container} is ${state.code === 0 ? state.stdout.trim() : "absent"}: run \`reprobench sim up\``);
  try {
    const res = await fetchWithin(`http://${layout.registry.pushHost}/v2/`, { method: "HEAD" }, 10_000);
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
  } catch (err) {
    throw new Error(`${what}: its registry does not answer on ${layout.registry.pushHost} (${(err as Error).message}): run \`reprobench sim up\``);
  }
}

/** `items` in `n` interleaved groups, so the groups are about equally long. */
function groups<T>(items: readonly T[], n: number): T[][] {
  const out: T[][] = Array.from({ length: Math.max(1, Math.min(n, items.length)) }, () => []);
  items.forEach((item, i) => out[i % out.length].push(item));
  return out;
}

/** Builds (cached by input hash, like `sim up`) and pushes the task images, a few at a time. */
async function buildAndPush(root: string, images: ResolvedImage[], base: ResolvedImage[], pushHost: string, log: (m: string) => void): Promise<{ built: number; pushed: number; buildSeconds: number; pushSeconds: number }> {
  const started = Date.now();
  // task-base (and debian-base) first: normally cached; this also sets the FROM tag the Dockerfiles name.
  await buildImages(base, root, log);
  const built = await Promise.all(groups(images, IMAGE_CONCURRENCY).map((g) => buildImages(g, root, log)));
  const buildSeconds = (Date.now() - started) / 1000;
  const pushStarted = Date.now();
  const pushed = await Promise.all(groups(images, IMAGE_CONCURRENCY).map((g) => pushImages(g, log, pushHost)));
  return {
    built: built.reduce((n, r) => n + r.built.length, 0),
    pushed: pushed.reduce((n, r) => n + r.pushed.length, 0),
    buildSeconds,
    pushSeconds: (Date.now() - pushStarted) / 1000,
  };
}

/**
 * Publishes the rehearsal dataset on a running instance (default: the default cluster): dataset and
 * ground-truth.json under `<stateDir>/rehearsal/`, one image per task in the instance's registry, the
 * downloads under http://pypi.sim/rehearsal/ and the repository http://git.sim/terminal-bench-rehearsal.git
 * (replacing an earlier rehearsal's). Same count and seed → same tasks, same commit.
 */
export async function prepareRehearsal(opts: { root: string; instance?: SimInstance; count?: number; seed?: number; log?: (m: string) => void }): Promise<RehearsalReport> {
  const started = Date.now();
  const { root } = opts;
  const instance = opts.instance ?? DEFAULT_INSTANCE;
  const count = opts.count ?? SEED000_TASK_COUNT;
  const seed = opts.seed ?? 0;
  const log = opts.log ?? ((m: string) => console.error(`sim rehearsal: ${m}`));
  const tasks = rehearsalTasks({ count, seed }); // throws for a bad count or seed before anything is touched
  await requireUp(root, instance);
  const layout = instanceLayout(instance);

  const stateDir = join(root, rehearsalStateDir(instance));
  const datasetDir = join(stateDir, "dataset");
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  writeRehearsalDataset(datasetDir, tasks, seed);

  // The chain task-base needs (its hash is part of every task image's), then one spec per task.
  const chain = imageSpecs(root, []).filter((s) => s.name === "debian-base" || s.name === "task-base");
  const resolved = resolveImages([...chain, ...rehearsalImageSpecs(datasetDir, tasks)], root);
  const base = resolved.filter((i) => i.name === "debian-base" || i.name === "task-base");
  const taskImages = resolved.filter((i) => !base.includes(i));
  const images = await buildAndPush(root, taskImages, base, layout.registry.pushHost, log);
  log(`${tasks.length} task images: ${images.built} built in ${images.buildSeconds.toFixed(1)}s, ${images.pushed} pushed to ${layout.registry.pushHost} in ${images.pushSeconds.toFixed(1)}s`);

  // Downloads before the repository: a clone of the new commit must never find its dependencies missing.
  writeRehearsalDownloads(layout.outside.treeDir, rehearsalDownloads(tasks));
  const tmp = mkdtempSync(join(tmpdir(), "reprobench-rehearsal-"));
  let commit: string;
  try {
    const work = join(tmp, "repo");
    commit = await buildRehearsalRepo(work, tasks, seed);
    await publishBareRepository(work, layout.outside.treeDir, REHEARSAL_REPO, commit);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }

  const groundTruthFile = join(stateDir, "ground-truth.json");
  const truth = groundTruth(tasks, { dataset: REHEARSAL_DATASET, commit, repoUrl: REHEARSAL_GIT_URL, seed });
  writeFileSync(groundTruthFile, `${JSON.stringify({ ...truth, images: Object.fromEntries(tasks.map((t) => [t.name, rehearsalDockerImage(t.name)])) }, null, 2)}\n`);
  const seconds = (Date.now() - started) / 1000;
  log(`published ${REHEARSAL_GIT_URL} at ${commit} (${tasks.length} tasks, seed ${seed}) in ${seconds.toFixed(1)}s; ground truth in ${groundTruthFile}`);
  return { repoUrl: REHEARSAL_GIT_URL, commit, taskCount: tasks.length, groundTruthFile, tasks, images: taskImages.map((i) => pullRef(i.push!)), seconds };
}
