// Run stacks: a run stack's own keys (cluster, run, hfToken, dataset, sshPrivateKeys), and its run combined with the config
// of the stack that owns the cluster (that stack's clusterConfig output or its stack file).
import { posix } from "node:path";
import { RUN_STACK_KEYS, type ReprobenchConfig, type RunStackConfig, runStackSchema } from "./schema";
import { type ConfigProblem, configKey, dedupe, errorMap, issueProblems, problem } from "./problems";
import { type ParseResult, parseConfig } from "./parse";
import { datasetSourceProblems } from "./rules/dataset";

/** True when a stack's raw config names a cluster owner: a run stack. */
export function isRunStack(raw: Record<string, unknown>): boolean {
  return raw !== null && typeof raw === "object" && raw.cluster !== undefined;
}

export type RunStackParseResult = { ok: true; config: RunStackConfig } | { ok: false; problems: ConfigProblem[] };

/**
 * Validates a run stack's own config: `cluster`, `run`, `hfToken`, `dataset` and `sshPrivateKeys`. Anything else belongs to the owner
 * of the cluster and is refused naming that stack, so a run stack can never be taken to change the cluster.
 */
export function parseRunStackConfig(raw: Record<string, unknown>): RunStackParseResult {
  const owner = typeof raw.cluster === "string" ? `'${raw.cluster}'` : "named by reprobench:cluster";
  const foreign = Object.keys(raw).filter((k) => !(RUN_STACK_KEYS as readonly string[]).includes(k));
  const problems: ConfigProblem[] = foreign.map((k) => ({
    key: configKey([k]),
    message: `set by the cluster's owner stack ${owner}; a run stack (reprobench:cluster) sets only ${RUN_STACK_KEYS.map((r) => `reprobench:${r}`).join(", ")}`,
  }));
  const own = Object.fromEntries(Object.entries(raw).filter(([k]) => !foreign.includes(k)));
  const parsed = runStackSchema.safeParse(own, { errorMap });
  if (!parsed.success) problems.push(...dedupe(parsed.error.issues.flatMap((i) => issueProblems(i, own, runStackSchema))));
  else if (parsed.data.dataset !== undefined) {
    const d = parsed.data.dataset;
    problems.push(...datasetSourceProblems(d.repo, d.commit, { repo: ["dataset", "repo"], commit: ["dataset", "commit"], repoLabel: "dataset.repo" }));
  }
  return problems.length > 0 || !parsed.success ? { ok: false, problems } : { ok: true, config: parsed.data };
}

/**
 * Where a run stack's own dataset lives on the runner unless dataset.dir says: beside the owner's
 * harbor.datasetDir, in datasets/<project>.<stack> (/var/lib/reprobench/datasets/reprobench.<stack> with the
 * defaults), so no two stacks of any project share one.
 */
export function defaultRunDatasetDir(ownerDatasetDir: string, stackId: string): string {
  return posix.join(posix.dirname(ownerDatasetDir), "datasets", stackId);
}

/** How `dir` stands to `other`: the same directory, inside it, holding it, or apart (null). */
function pathRelation(dir: string, other: string): "is" | "is inside" | "holds" | null {
  if (dir === other) return "is";
  if (dir.startsWith(`${other}/`)) return "is inside";
  if (other.startsWith(`${dir}/`)) return "holds";
  return null;
}

/**
 * Why `dir` cannot hold a run stack's own dataset on the owner's runner, or null: it must be apart from the
 * owner's harbor.datasetDir (and the .clone/.new working copies harbor-dataset.sh makes beside it, as it makes
 * them beside `dir`), which its dataset step would replace, and from the owner's venv, jobs dir and tool
 * bundle; it may lie inside harbor.workDir, not be it or hold it.
 */
export function runDatasetDirProblem(dir: string, owner: ReprobenchConfig, ownerStack: string): string | null {
  const copies = (d: string) => [d, `${d}.clone`, `${d}.new`];
  const ownerDataset = owner.harbor.datasetDir;
  for (const mine of copies(dir)) {
    for (const theirs of copies(ownerDataset)) {
      const relation = pathRelation(mine, theirs);
      if (relation === null) continue;
      const subject = mine === dir ? "it" : `its working copy ${mine}`;
      const object = theirs === ownerDataset ? "the owner's harbor.datasetDir" : `${theirs}, the working copy of the owner's harbor.datasetDir`;
      return `${subject} ${relation} ${object} ${JSON.stringify(ownerDataset)} (stack '${ownerStack}'), which this stack's dataset step would replace; expected a directory of this stack's own`;
    }
  }
  const others: [string, string, boolean][] = [
    ["harbor.venv", owner.harbor.venv, true],
    ["harbor.jobsDir", owner.harbor.jobsDir, true],
    ["toolBundle.hostDir", owner.toolBundle.hostDir, true],
    ["harbor.workDir", owner.harbor.workDir, false],
  ];
  for (const [key, other, insideRefused] of others) {
    const relation = pathRelation(dir, other);
    if (relation === null || (relation === "is inside" && !insideRefused)) continue;
    return `it ${relation} the owner's ${key} ${JSON.stringify(other)} (stack '${ownerStack}'); expected a directory of this stack's own${insideRefused ? "" : ", which may lie inside it"}`;
  }
  return null;
}

/**
 * The config a run stack's job is rendered from: the owner's (as its `clusterConfig` output recorded it,
 * secrets as placeholders) with this stack's `run` and `hfToken`, checked by the same rules as any stack.
 * With this stack's own `dataset`, its harbor.dataset* are that dataset's (in `dir`, by default
 * defaultRunDatasetDir of `stackId`, "<project>.<stack>"), so the job, its spec and its task count follow
 * it; everything else of harbor.* stays the owner's.
 */
export function combineWithCluster(ownerConfig: Record<string, unknown>, runStack: RunStackConfig, runRaw: Record<string, unknown>, stackId: string): ParseResult {
  const combined: Record<string, unknown> = { ...ownerConfig, run: runRaw.run ?? {} };
  // The owner's manifest form writes null for absent secrets; absent is what the schema takes.
  for (const key of ["proxyUpstream", "hfToken"]) if (combined[key] === null) delete combined[key];
  delete combined.hfToken;
  if (runStack.hfToken !== undefined) combined.hfToken = runStack.hfToken;
  // No warnings: an owner brought up before a key's rename records it under the old name, which this
  // stack's user cannot change (the owner's own preview and up warn).
  const result: ParseResult = { ...parseConfig(combined, { requireSecrets: false }), warnings: [] };
  const dataset = runStack.dataset;
  if (!result.ok || dataset === undefined) return result;
  const owner = result.config;
  const dir = dataset.dir ?? defaultRunDatasetDir(owner.harbor.datasetDir, stackId);
  const bad = runDatasetDirProblem(dir, owner, runStack.cluster);
  if (bad !== null) {
    const got = dataset.dir !== undefined ? `got ${JSON.stringify(dir)}` : `missing, and its default ${JSON.stringify(dir)} cannot be used`;
    return { ok: false, problems: [problem(["dataset", "dir"], `${got}: ${bad}${dataset.dir === undefined ? " (set reprobench:dataset.dir)" : ""}`)], warnings: [] };
  }
  const harbor = { ...owner.harbor, datasetRepo: dataset.repo, datasetCommit: dataset.commit, datasetDir: dir, datasetTasksSubdir: dataset.tasksSubdir, expectedTaskCount: dataset.expectedTaskCount };
  return { ok: true, config: { ...owner, harbor }, warnings: [] };
}
