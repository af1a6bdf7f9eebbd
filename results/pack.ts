// `reprobench pack`: finished Harbor job folders → a leaderboard submission folder
// (submissions/terminal-bench/<version>/<Agent>__<Model>/ with metadata.yaml and the job folders), copied
// through Harbor 0.21.0's upload allowlist and refused when a file that would be submitted holds a secret or
// a system prompt. Planning, refusals, metadata and the change summary are pure; packSubmission does the I/O.
import * as fs from "node:fs";
import * as path from "node:path";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { asArray, asRecord } from "./harbor";
import { findManifest } from "./manifest";
import {
  checkSubmission,
  DatasetExpectation,
  findSecrets,
  JOB_ALLOWLIST,
  LeaderboardVerdict,
  localDatasetTasks,
  METADATA_FIELDS,
  MODEL_FIELDS,
  readSubmissionTree,
  scopeOf,
  SecretFinding,
  STEP_ALLOWLIST,
  TRIAL_ALLOWLIST,
  TreeEntry,
} from "./leaderboard";

// ---------------------------------------------------------------------------------------------------------
// What goes in

export interface JobCopyPlan {
  /** Files to copy, relative to the job folder. */
  keep: string[];
  /** What stays behind, relative to the job folder: the top-most path of each left-out subtree. */
  leftOut: string[];
}

const isIn = (list: readonly string[], name: string): boolean => list.includes(name);

/**
 * Which files of a job folder Harbor's uploader would archive: the job-level allowlist, and in every trial
 * folder (a child folder with a result.json, as the uploader picks them) the trial allowlist, plus
 * steps/<step>/{agent,verifier,artifacts}. Regular files only: symlinks could point anywhere.
 */
export function planJobCopy(entries: readonly TreeEntry[]): JobCopyPlan {
  const files = new Set(entries.filter((e) => e.kind === "file").map((e) => e.rel));
  const dirs = new Set(entries.filter((e) => e.kind === "dir").map((e) => e.rel));
  const isTrial = (dir: string): boolean => dirs.has(dir) && files.has(`${dir}/result.json`);
  const wanted = (e: TreeEntry): boolean => {
    if (e.kind !== "file" && e.kind !== "dir") return false;
    const p = e.rel.split("/");
    if (p.length === 1) return e.kind === "dir" ? isTrial(p[0]) : isIn(JOB_ALLOWLIST, p[0]);
    if (!isTrial(p[0])) return false;
    if (p[1] === "steps") return p.length === 2 || p.length === 3 ? e.kind === "dir" : isIn(STEP_ALLOWLIST, p[3]);
    return isIn(TRIAL_ALLOWLIST, p[1]);
  };
  const keep: string[] = [];
  const leftOut: string[] = [];
  const dropped = new Set<string>();
  const underDropped = (rel: string): boolean => rel.split("/").some((_, i, p) => i > 0 && dropped.has(p.slice(0, i).join("/")));
  for (const e of entries) {
    if (underDropped(e.rel)) continue;
    if (!wanted(e)) {
      dropped.add(e.rel);
      leftOut.push(e.kind === "dir" ? `${e.rel}/` : e.kind === "file" ? e.rel : `${e.rel} (${e.kind})`);
    } else if (e.kind === "file") keep.push(e.rel);
  }
  return { keep, leftOut };
}

/** Secrets and system prompts in the files a plan would submit (what is left out never leaves the machine). */
export function packFindings(jobName: string, plan: JobCopyPlan, read: (rel: string) => string | null): SecretFinding[] {
  const jobs = new Set([jobName]);
  return plan.keep.flatMap((rel) => {
    const text = read(rel);
    const file = `${jobName}/${rel}`;
    return text === null ? [{ file, field: "(whole file)", kind: "secret" as const, what: "a file too large or unreadable to scan" }] : findSecrets(file, text, scopeOf(file, jobs));
  });
}

/**
 * The refusal message: each finding with its file and field (never the value). The same finding in every
 * trial folder, or every entry of a lock, reads as one line with a count.
 */
export function refusalMessage(findings: readonly SecretFinding[]): string {
  const groups = new Map<string, { first: SecretFinding; n: number }>();
  for (const f of findings) {
    const parts = f.file.split("/");
    const file = parts.length > 2 ? [parts[0], "<trial>", ...parts.slice(2)].join("/") : f.file;
    const key = `${file}\u0000${f.field.replace(/\[\d+\]/g, "[*]").replace(/^line \d+$/, "line")}\u0000${f.what}`;
    const g = groups.get(key);
    if (g) g.n++;
    else groups.set(key, { first: f, n: 1 });
  }
  const lines = [...groups.values()].slice(0, 20).map(({ first: f, n }) => `  ${f.file}: ${f.kind === "secret" ? "secret" : "system prompt"} — ${f.what} at ${f.field}${n > 1 ? ` (and ${n - 1} more like it)` : ""}`);
  const more = groups.size > 20 ? [`  … and ${groups.size - 20} more kinds of finding`] : [];
  return [
    `refusing to pack: ${findings.length} secret(s) or system prompt(s) in files that would be submitted:`,
    ...lines,
    ...more,
    "Remove them from the job (credentials belong in the environment, which Harbor records as ${VAR}; a system prompt field stays empty, not \"REDACTED\") and pack again.",
  ].join("\n");
}

// ---------------------------------------------------------------------------------------------------------
// Names and metadata

const NAME = /^[A-Za-z0-9][A-Za-z0-9.+-]*(?:_[A-Za-z0-9.+-]+)*$/;

/** `<Agent>__<Model>`; each part letters, digits, . + - and single underscores (the "__" separates them). */
export function submissionFolderName(agent: string, model: string): string {
  for (const [flag, v] of [["--agent", agent], ["--model", model]] as const) {
    if (!NAME.test(v)) throw new Error(`${flag} '${v}': use letters, digits, '.', '+', '-' and single '_' (it becomes the folder <Agent>__<Model>)`);
  }
  return `${agent}__${model}`;
}

export interface JobIdentity {
  name: string;
  agent: string | null;
  /** As run (`-m`), e.g. openai/Qwen/Qwen3.8-27B. */
  modelName: string | null;
  modelInfo: { name: string; provider: string | null } | null;
}

/** Agent and model of a job from its config.json and a trial's result.json. */
export function jobIdentity(name: string, config: Record<string, unknown>, trialResult: Record<string, unknown> | null): JobIdentity {
  const agent = asRecord(asArray(config.agents)[0]);
  const info = asRecord(asRecord(trialResult?.agent_info).model_info);
  return {
    name,
    agent: (asRecord(trialResult?.agent_info).name as string | undefined) ?? (agent.name as string | undefined) ?? null,
    modelName: (agent.model_name as string | undefined) ?? null,
    modelInfo: typeof info.name === "string" ? { name: info.name, provider: typeof info.provider === "string" ? info.provider : null } : null,
  };
}

// ---------------------------------------------------------------------------------------------------------
// Which Terminal-Bench version a job ran: the <version> folder of the submission. Read from what the job
// records, never from a folder's name (a checkout can be called anything), and never assumed: a job that
// names no version is refused and the user says it with --tb-version.

/** One place that names the version, e.g. "config.json datasets[0].repo https://…/terminal-bench-2-1.git". */
export interface VersionEvidence {
  version: string;
  source: string;
}

/**
 * Dataset commits whose version is known though their repository may be a mirror of any name. Seed 000's
 * pin of Terminal-Bench 2.1 (harbor-framework/terminal-bench-2-1), the default harbor.datasetCommit.
 */
export const KNOWN_DATASET_COMMITS: Readonly<Record<string, string>> = {
  "7131e4375048a0e408a8fb404b5f499d726b695b": "2.1",
};

/** "2", "v2.1", "2.1.0" → "2.0", "2.1", "2.1"; anything else → null. */
function majorMinor(text: string): string | null {
  const m = /^v?(\d+)(?:\.(\d+))?(?:\.\d+)*$/.exec(text.trim());
  return m ? `${m[1]}.${m[2] ?? "0"}` : null;
}

/**
 * The version a dataset's name, repository or URL spells: terminal-bench-2-1(.git), terminal-bench-2.1,
 * org/terminal-bench-2-1@ref, https://huggingface.co/datasets/harborframework/terminal-bench-2.1 → 2.1;
 * terminal-bench-2 (Terminal-Bench 2.0's own repository name) → 2.0. Only the last path segment counts,
 * and it must be exactly that: terminal-bench-sim or terminal-bench-2-leaderboard name no version.
 */
export function tbVersionFromName(nameOrUrl: string): string | null {
  const last = nameOrUrl.trim().replace(/[?#].*$/, "").replace(/\/+$/, "").split(/[/:]/).pop() ?? "";
  const segment = last.replace(/@.*$/, "").replace(/\.git$/, "");
  const m = /^terminal-bench[-_.]?(\d+)(?:[-_.](\d+))?$/i.exec(segment);
  return m ? `${m[1]}.${m[2] ?? "0"}` : null;
}

/** `[dataset]` name and version of a Harbor dataset.toml, read with no TOML library (two string keys). */
export function datasetTomlVersion(text: string): string | null {
  const section = /^\s*\[dataset\]\s*$([\s\S]*?)(?=^\s*\[|(?![\s\S]))/m.exec(text)?.[1] ?? "";
  const key = (k: string): string | null => new RegExp(`^\\s*${k}\\s*=\\s*["']([^"']*)["']`, "m").exec(section)?.[1] ?? null;
  const name = key("name");
  if (name === null) return null;
  const [bare, ref] = name.split("@");
  const version = key("version");
  if (/^(?:[\w.-]+\/)?terminal-bench$/i.test(bare)) return majorMinor(version ?? ref ?? "");
  return tbVersionFromName(bare);
}

/** The origin URL and checked-out commit of the git checkout at dir or its parent (a tasks subfolder). */
function gitCheckout(dir: string): { url: string | null; commit: string | null; at: string } | null {
  for (const at of [dir, path.dirname(dir)]) {
    const gitDir = path.join(at, ".git");
    let config: string;
    try {
      config = fs.readFileSync(path.join(gitDir, "config"), "utf8");
    } catch {
      continue;
    }
    const origin = /\[remote "origin"\]([^[]*)/.exec(config)?.[1] ?? "";
    const url = /^\s*url\s*=\s*(\S+)/m.exec(origin)?.[1] ?? null;
    let commit: string | null = null;
    try {
      const head = fs.readFileSync(path.join(gitDir, "HEAD"), "utf8").trim();
      commit = /^[0-9a-f]{40}$/.test(head) ? head : null;
    } catch {
      // no HEAD: the URL alone may still tell
    }
    return { url, commit, at };
  }
  return null;
}

/** What a readable local dataset folder says about its version: its dataset.toml, its git origin or commit. */
export function localDatasetVersion(dir: string, label: string): VersionEvidence[] {
  const found: VersionEvidence[] = [];
  for (const at of [dir, path.dirname(dir)]) {
    const toml = path.join(at, "dataset.toml");
    let text: string;
    try {
      text = fs.readFileSync(toml, "utf8");
    } catch {
      continue;
    }
    const version = datasetTomlVersion(text);
    if (version) found.push({ version, source: `${label}: ${toml}` });
    break;
  }
  const git = gitCheckout(dir);
  const fromUrl = git?.url ? tbVersionFromName(git.url) : null;
  if (git && fromUrl) found.push({ version: fromUrl, source: `${label}: git origin ${git.url} of ${git.at}` });
  const fromCommit = git?.commit ? KNOWN_DATASET_COMMITS[git.commit] : undefined;
  if (git && fromCommit) found.push({ version: fromCommit, source: `${label}: ${git.at} is checked out at ${git.commit}` });
  return found;
}

export interface JobRecords {
  name: string;
  config: Record<string, unknown>;
  /** config.json of one trial, or null. */
  trialConfig: Record<string, unknown> | null;
  /** The run manifest reprobench wrote beside the job (reprobench-manifest.json), or null. */
  manifest: Record<string, unknown> | null;
}

/**
 * Every record of a job that names its Terminal-Bench version: the job config's dataset (a registry name and
 * version, a repository, or a local path whose dataset.toml or git checkout is readable here), a trial's
 * task git URL, and the run manifest's dataset repository and commit.
 */
export function jobVersionEvidence(job: JobRecords): VersionEvidence[] {
  const found: VersionEvidence[] = [];
  const add = (version: string | null | undefined, source: string): void => {
    if (version) found.push({ version, source });
  };
  asArray(job.config.datasets).forEach((entry, i) => {
    const d = asRecord(entry);
    const at = `config.json datasets[${i}]`;
    if (typeof d.name === "string") {
      const [bare, ref] = d.name.split("@");
      const declared = typeof d.version === "string" ? d.version : typeof d.ref === "string" ? d.ref : ref;
      // A registry name: "terminal-bench" with a version (terminal-bench@2.0), or a name that spells it.
      if (/^(?:[\w.-]+\/)?terminal-bench$/i.test(bare)) add(declared ? majorMinor(declared) : null, `${at}.name/version ${bare}@${declared ?? "?"}`);
      else add(tbVersionFromName(bare), `${at}.name ${d.name}`);
    }
    if (typeof d.repo === "string") add(tbVersionFromName(d.repo), `${at}.repo ${d.repo}`);
    if (typeof d.path === "string") found.push(...localDatasetVersion(d.path, `${at}.path`));
  });
  const task = asRecord(job.trialConfig?.task);
  if (typeof task.git_url === "string") add(tbVersionFromName(task.git_url), `a trial's task.git_url ${task.git_url}`);
  if (typeof task.git_commit_id === "string") add(KNOWN_DATASET_COMMITS[task.git_commit_id], `a trial's task.git_commit_id ${task.git_commit_id}`);
  if (job.manifest) {
    const harbor = asRecord(asRecord(job.manifest.config).harbor);
    if (typeof harbor.datasetRepo === "string") add(tbVersionFromName(harbor.datasetRepo), `run manifest config.harbor.datasetRepo ${harbor.datasetRepo}`);
    const identity = asRecord(job.manifest.dataset).identity ?? harbor.datasetCommit;
    if (typeof identity === "string") add(KNOWN_DATASET_COMMITS[identity], `run manifest dataset commit ${identity}`);
  }
  return found;
}

const describeEvidence = (e: readonly VersionEvidence[]): string => e.map((x) => `${x.version} (${x.source})`).join("; ");

/**
 * The submission's <version> folder. --tb-version wins (a note says so when the jobs name another); else
 * every job must name one version, consistently; else pack refuses, naming --tb-version.
 */
export function resolveTbVersion(jobs: readonly { name: string; evidence: readonly VersionEvidence[] }[], explicit: string | undefined): { version: string; notes: string[] } {
  if (explicit !== undefined && !/^\d+\.\d+$/.test(explicit)) throw new Error(`--tb-version '${explicit}': expected <major>.<minor>, e.g. 2.1`);
  const perJob = jobs.map((j) => ({ ...j, versions: [...new Set(j.evidence.map((e) => e.version))] }));
  const torn = perJob.find((j) => j.versions.length > 1);
  const named = [...new Set(perJob.flatMap((j) => j.versions))];
  if (explicit !== undefined) {
    const other = named.filter((v) => v !== explicit);
    return { version: explicit, notes: other.length ? [`the jobs name Terminal-Bench ${other.join(", ")} (${describeEvidence(perJob.flatMap((j) => j.evidence))}); packed under ${explicit} as --tb-version says`] : [] };
  }
  if (torn) throw new Error(`job ${torn.name} names more than one Terminal-Bench version: ${describeEvidence(torn.evidence)}; pass the right one with --tb-version`);
  const silent = perJob.filter((j) => j.versions.length === 0);
  if (named.length > 1) {
    throw new Error(`the jobs ran different Terminal-Bench versions (${perJob.filter((j) => j.versions.length).map((j) => `${j.name}: ${j.versions[0]}`).join(", ")}); one submission is one version — pack them separately, or pass --tb-version`);
  }
  if (named.length === 0) {
    throw new Error(
      `cannot tell which Terminal-Bench version ${silent.length === 1 ? `job ${silent[0].name}` : `the jobs (${silent.map((j) => j.name).join(", ")})`} ran: ` +
        "the job config names no registry dataset or repository that says it, its dataset path has no readable dataset.toml or git checkout here, " +
        "and no run manifest (reprobench-manifest.json beside the job, as `reprobench pull` copies it) names a known repository or commit. " +
        "Pass it with --tb-version <major.minor> (e.g. --tb-version 2.1); it names the folder submissions/terminal-bench/<version>/",
    );
  }
  const notes = silent.length ? [`job(s) ${silent.map((j) => j.name).join(", ")} name no version; packed under ${named[0]}, which the other jobs name`] : [];
  return { version: named[0], notes };
}

/** The jobs must be one agent and one model: else the odd one is named. */
export function checkSameRun(ids: readonly JobIdentity[]): void {
  const [first] = ids;
  for (const id of ids.slice(1)) {
    if (id.agent !== first.agent || id.modelName !== first.modelName) {
      throw new Error(`job ${id.name} ran ${id.agent} with ${id.modelName}, job ${first.name} ran ${first.agent} with ${first.modelName}: one submission is one agent and one model`);
    }
  }
}

export interface MetadataResult {
  yaml: string;
  /** Required fields that could not be filled. */
  missing: string[];
}

/** metadata.yaml from the user's file (checked), or filled from the jobs with the fields the README requires. */
export function buildMetadata(id: JobIdentity, agent: string, model: string, fileText?: string): MetadataResult {
  if (fileText !== undefined) {
    let meta: Record<string, unknown>;
    try {
      meta = asRecord(parseYaml(fileText));
    } catch (err) {
      throw new Error(`--metadata: not YAML (${err instanceof Error ? err.message.split("\n")[0] : String(err)})`);
    }
    return { yaml: fileText.endsWith("\n") ? fileText : `${fileText}\n`, missing: missingMetadata(meta) };
  }
  const provider = id.modelInfo?.provider ?? (id.modelName?.includes("/") ? id.modelName.split("/")[0] : null);
  const modelName = id.modelInfo?.name ?? (id.modelName && provider ? id.modelName.slice(provider.length + 1) : id.modelName);
  const meta = {
    agent_url: "",
    agent_display_name: agent,
    agent_org_display_name: "",
    models: [{ model_name: modelName ?? "", model_provider: provider ?? "", model_display_name: model, model_org_display_name: "" }],
  };
  return { yaml: stringifyYaml(meta), missing: missingMetadata(meta) };
}

function missingMetadata(meta: Record<string, unknown>): string[] {
  const filled = (v: unknown): boolean => typeof v === "string" && v.trim() !== "";
  const missing: string[] = METADATA_FIELDS.filter((f) => !filled(meta[f]));
  const models = asArray(meta.models).map(asRecord);
  if (models.length === 0) missing.push("models");
  models.forEach((m, i) => MODEL_FIELDS.forEach((f) => !filled(m[f]) && missing.push(`models[${i}].${f}`)));
  return missing;
}

// ---------------------------------------------------------------------------------------------------------
// The change from the previous submission

const pct = (x: number | null): string => (x === null ? "n/a" : `${(x * 100).toFixed(1)}%`);
const hw = (x: number | null): string => (x === null ? "n/a" : `±${(x * 100).toFixed(1)}`);

/** Seed 004's "what changed" table as lines: passing trials, points, each CI, and the job folders replaced. */
export function changeLines(previous: LeaderboardVerdict, next: LeaderboardVerdict): string[] {
  const p = previous.score;
  const n = next.score;
  const points = p.score !== null && n.score !== null ? (n.score - p.score) * 100 : null;
  const sign = (x: number): string => (x >= 0 ? `+${x}` : `${x}`);
  const replaced = previous.jobs.filter((j) => !next.jobs.includes(j));
  return [
    `previous: ${previous.jobs.join(", ") || "(no job)"} — ${p.passed}/${p.trials} passing, score ${pct(p.score)}`,
    `change: ${sign(n.passed - p.passed)} passing trials, ${points === null ? "n/a" : `${points >= 0 ? "+" : ""}${points.toFixed(1)}`} points (${pct(p.score)} → ${pct(n.score)}), zero-reward ${p.zeroReward} → ${n.zeroReward}`,
    `95% CI half-width change (pp): binomial ${hw(p.ci.binomial)} → ${hw(n.ci.binomial)}, clustered by task ${hw(p.ci.clusteredByTask)} → ${hw(n.ci.clusteredByTask)}, over attempt-runs ${hw(p.ci.attemptRuns)} → ${hw(n.ci.attemptRuns)}`,
    replaced.length ? `replaces job folder(s): ${replaced.join(", ")} (by ${next.jobs.join(", ")})` : `replaces no job folder (the previous one had ${previous.jobs.join(", ")})`,
  ];
}

// ---------------------------------------------------------------------------------------------------------
// Doing it

export interface PackOptions {
  jobDirs: string[];
  out: string;
  agent: string;
  model: string;
  metadataFile?: string;
  previous?: string;
  /** The <version> folder; default: the version the jobs' records name (resolveTbVersion), else pack refuses. */
  tbVersion?: string;
  dataset?: DatasetExpectation;
}

export interface PackResult {
  dest: string;
  verdict: LeaderboardVerdict;
  /** Per job folder, what was left out. */
  leftOut: Record<string, string[]>;
  previous: LeaderboardVerdict | null;
  notes: string[];
}

function readJsonFile(file: string): Record<string, unknown> | null {
  try {
    return asRecord(JSON.parse(fs.readFileSync(file, "utf8")));
  } catch {
    return null;
  }
}

/** Refuses anything that is not a finished Harbor job folder, with a hint when it is a jobs folder. */
function assertJobDir(dir: string): void {
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new Error(`${dir}: not a directory`);
  if (fs.existsSync(path.join(dir, "config.json")) && fs.existsSync(path.join(dir, "result.json"))) return;
  const jobs = fs.readdirSync(dir).filter((d) => fs.existsSync(path.join(dir, d, "config.json")) && fs.existsSync(path.join(dir, d, "result.json")));
  const hint = jobs.length ? `; it holds job folders — pass them instead: ${jobs.map((j) => path.join(dir, j)).join(" ")}` : "";
  throw new Error(`${dir}: not a Harbor job folder (no config.json and result.json)${hint}`);
}

/**
 * Packs the jobs into OUT/submissions/terminal-bench/<version>/<Agent>__<Model>/. Nothing is written when a
 * check refuses; the tree is built in a temporary folder inside OUT, validated, and renamed into place
 * (an existing submission folder of the same name is replaced whole).
 */
export function packSubmission(o: PackOptions): PackResult {
  if (o.jobDirs.length === 0) throw new Error("give at least one job folder");
  const folder = submissionFolderName(o.agent, o.model);
  const names = new Map<string, string>();
  const ids: JobIdentity[] = [];
  const plans = new Map<string, { dir: string; plan: JobCopyPlan }>();
  const records = new Map<string, JobRecords>();
  for (const dir of o.jobDirs.map((d) => path.resolve(d))) {
    assertJobDir(dir);
    const name = path.basename(dir);
    if (names.has(name)) throw new Error(`two job folders are named ${name} (${names.get(name)}, ${dir}); one submission folder cannot hold both`);
    names.set(name, dir);
    const tree = readSubmissionTree(dir);
    const plan = planJobCopy(tree.entries);
    const config = readJsonFile(path.join(dir, "config.json"));
    if (!config) throw new Error(`${dir}/config.json: not JSON`);
    const firstTrial = plan.keep.find((r) => /^[^/]+\/result\.json$/.test(r));
    ids.push(jobIdentity(name, config, firstTrial ? readJsonFile(path.join(dir, firstTrial)) : null));
    const trialConfig = firstTrial ? readJsonFile(path.join(dir, path.dirname(firstTrial), "config.json")) : null;
    records.set(name, { name, config, trialConfig, manifest: findManifest([dir])?.data ?? null });
    const findings = packFindings(name, plan, (rel) => tree.read(rel));
    if (findings.length) throw new Error(refusalMessage(findings));
    plans.set(name, { dir, plan });
  }
  checkSameRun(ids);
  if (o.metadataFile !== undefined && !fs.existsSync(o.metadataFile)) throw new Error(`--metadata ${o.metadataFile}: no such file`);
  const meta = buildMetadata(ids[0], o.agent, o.model, o.metadataFile === undefined ? undefined : fs.readFileSync(o.metadataFile, "utf8"));
  if (meta.missing.length) {
    const from = o.metadataFile ? `--metadata ${o.metadataFile}` : "the jobs' configs";
    throw new Error(`metadata.yaml: ${meta.missing.join(", ")} missing (not in ${from}); fill them in and pass the file with --metadata:\n${meta.yaml}`);
  }
  const metaFindings = findSecrets("metadata.yaml", meta.yaml, "full");
  if (metaFindings.length) throw new Error(refusalMessage(metaFindings));
  const notes: string[] = [];
  // A dataset folder given for validation may say the version too (its dataset.toml or git checkout).
  const datasetDir = o.dataset && fs.existsSync(o.dataset.label) && fs.statSync(o.dataset.label).isDirectory() ? path.resolve(o.dataset.label) : null;
  const fromDatasetOption = datasetDir ? localDatasetVersion(datasetDir, "--dataset") : [];
  const resolved = resolveTbVersion(
    [...records.values()].map((r) => ({ name: r.name, evidence: [...jobVersionEvidence(r), ...fromDatasetOption] })),
    o.tbVersion,
  );
  const version = resolved.version;
  notes.push(...resolved.notes);

  const previous = o.previous ? checkSubmission(readSubmissionTree(o.previous), { localDatasetTasks }) : null;

  const out = path.resolve(o.out);
  fs.mkdirSync(out, { recursive: true });
  const dest = path.join(out, "submissions", "terminal-bench", version, folder);
  const tmp = fs.mkdtempSync(path.join(out, ".reprobench-pack-"));
  try {
    const staged = path.join(tmp, "submissions", "terminal-bench", version, folder);
    fs.mkdirSync(staged, { recursive: true });
    fs.writeFileSync(path.join(staged, "metadata.yaml"), meta.yaml);
    for (const [name, { dir, plan }] of plans) {
      for (const rel of plan.keep) {
        const to = path.join(staged, name, rel);
        fs.mkdirSync(path.dirname(to), { recursive: true });
        fs.copyFileSync(path.join(dir, rel), to);
      }
    }
    const verdict = checkSubmission(readSubmissionTree(staged), { dataset: o.dataset, localDatasetTasks });
    fs.mkdirSync(path.dirname(dest), { recursive: true });
    if (fs.existsSync(dest)) {
      notes.push(`replaced the existing ${path.relative(out, dest)}`);
      fs.renameSync(dest, path.join(tmp, "replaced"));
    }
    fs.renameSync(staged, dest);
    return { dest, verdict, leftOut: Object.fromEntries([...plans].map(([n, p]) => [n, p.plan.leftOut])), previous, notes };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
