// Reading Harbor job directories from disk into the pure audit/leaderboard inputs.
import * as fs from "node:fs";
import * as path from "node:path";
import { buildAudit, JobInput, trialInput } from "./audit";
import { asRecord, cancelledAfterException, HarborConfig, JobResult, JobResultSchema, mayBeCancelledAfterException, TrialResultSchema } from "./harbor";
import { JobSnapshot, SubmissionSnapshot } from "./leaderboard";
import { Override } from "./overrides";
import { AuditReport } from "./schema";
import { Evidence, scanText } from "./taxonomy";

function readText(file: string): string | null {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return null;
  }
}

function readJson(file: string): { value: unknown } | { error: string } | null {
  const text = readText(file);
  if (text === null) return null;
  try {
    return { value: JSON.parse(text) };
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) };
  }
}

function subdirs(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
}

/** Reads one Harbor job directory. Throws with a clear message when `dir` is not a job directory. */
export function readJob(dir: string): JobInput {
  const abs = path.resolve(dir);
  if (!fs.existsSync(abs) || !fs.statSync(abs).isDirectory()) throw new Error(`${dir}: not a directory`);
  const name = path.basename(abs);
  const warnings: string[] = [];
  const cfg = readJson(path.join(abs, "config.json"));
  const res = readJson(path.join(abs, "result.json"));
  if (!cfg && !res) {
    const jobs = subdirs(abs).filter((d) => fs.existsSync(path.join(abs, d, "config.json")) && fs.existsSync(path.join(abs, d, "lock.json")));
    const hint = jobs.length ? `; it looks like a jobs dir — pass its job dirs instead: ${jobs.map((j) => path.join(dir, j)).join(" ")}` : "";
    throw new Error(`${dir}: not a Harbor job dir (no config.json or result.json)${hint}`);
  }
  let config: HarborConfig | null = null;
  if (cfg && "value" in cfg) config = asRecord(cfg.value);
  else if (cfg) warnings.push(`config.json is not JSON (${cfg.error})`);
  let result: JobResult | null = null;
  if (res && "value" in res) {
    const parsed = JobResultSchema.safeParse(res.value);
    if (parsed.success) result = parsed.data;
    else warnings.push(`result.json does not look like a Harbor JobResult`);
  } else if (res) warnings.push(`result.json is not JSON (${res.error})`);

  const trials: JobInput["trials"] = [];
  const incompleteTrialDirs: string[] = [];
  for (const d of subdirs(abs)) {
    const r = readJson(path.join(abs, d, "result.json"));
    if (r === null) {
      // Trial dirs are the ones Harbor made: they have a config.json. Anything else is not ours to judge.
      if (fs.existsSync(path.join(abs, d, "config.json"))) incompleteTrialDirs.push(d);
      continue;
    }
    if ("error" in r) {
      warnings.push(`${d}/result.json is not JSON (${r.error}); skipped like Harbor does`);
      incompleteTrialDirs.push(d);
      continue;
    }
    const parsed = TrialResultSchema.safeParse(r.value);
    if (!parsed.success) {
      const i = parsed.error.issues[0];
      warnings.push(`${d}/result.json: ${i.path.join(".") || "(root)"}: ${i.message}; skipped`);
      incompleteTrialDirs.push(d);
      continue;
    }
    const t = trialInput(name, d, parsed.data);
    const trialCfg = readJson(path.join(abs, d, "config.json"));
    if (trialCfg && "value" in trialCfg) t.config = asRecord(trialCfg.value);
    // trial.log only where it can matter (an unscored trial with a non-cancel exception): it can be large.
    if (mayBeCancelledAfterException(parsed.data)) t.cancelledAfterException = cancelledAfterException(parsed.data, readText(path.join(abs, d, "trial.log")));
    trials.push(t);
  }
  return { name, dir: abs, config, result, trials, incompleteTrialDirs, warnings };
}

const LOG_EXTENSIONS = /\.(txt|log|pane|out|err)$/;
const MAX_LOG_BYTES = 64 * 1024 * 1024;

/** Lists the trial's text logs (trial.log, exception.txt, verifier/*.txt, agent/*.pane …). */
export function trialLogFiles(trialDir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string, depth: number): void => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(path.join(trialDir, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory() && depth < 3) walk(r, depth + 1);
      else if (e.isFile() && LOG_EXTENSIONS.test(e.name)) out.push(r);
    }
  };
  walk("", 0);
  return out;
}

/** Scans one trial's logs for infra/setup signatures; evidence paths are "<job>/<trial>/<file>". */
export function scanTrialEvidence(jobDir: string, trialPath: string): Evidence[] {
  const trialDirName = trialPath.split("/").slice(1).join("/");
  const trialDir = path.join(jobDir, trialDirName);
  const hits: Evidence[] = [];
  for (const rel of trialLogFiles(trialDir)) {
    const file = path.join(trialDir, rel);
    if (fs.statSync(file).size > MAX_LOG_BYTES) continue;
    hits.push(...scanText(fs.readFileSync(file, "utf8"), `${trialPath}/${rel}`));
  }
  return hits;
}

export interface AuditDirsOptions {
  overrides?: readonly Override[];
  now?: Date;
}

/**
 * Reads the job dirs and audits them. Logs are scanned lazily: for counted trials that did not cleanly
 * pass, and for unrewarded trials whose logs decide whether they are genuine results or infra errors.
 */
export function auditDirs(dirs: readonly string[], opts: AuditDirsOptions = {}): AuditReport {
  const jobs = dirs.map(readJob);
  const names = new Map<string, string>();
  for (const j of jobs) {
    const prev = names.get(j.name);
    if (prev && prev !== j.dir) throw new Error(`two job dirs share the name '${j.name}' (${prev}, ${j.dir}); evidence paths would be ambiguous`);
    names.set(j.name, j.dir);
  }
  const jobDirByName = new Map(jobs.map((j) => [j.name, j.dir]));
  return buildAudit(jobs, {
    evidenceFor: (t) => scanTrialEvidence(jobDirByName.get(t.job)!, t.path),
    overrides: opts.overrides,
    now: opts.now,
  });
}

/** Reads a leaderboard submission dir (`<agent>__<model>/metadata.yaml` + job dirs). */
export function readSubmission(dir: string): SubmissionSnapshot {
  const abs = path.resolve(dir);
  if (!fs.existsSync(abs) || !fs.statSync(abs).isDirectory()) throw new Error(`${dir}: not a directory`);
  const jobs: JobSnapshot[] = [];
  for (const d of subdirs(abs)) {
    const jobDir = path.join(abs, d);
    if (!fs.existsSync(path.join(jobDir, "config.json")) && !fs.existsSync(path.join(jobDir, "result.json"))) continue;
    const cfg = readJson(path.join(jobDir, "config.json"));
    const topLevelFiles = fs
      .readdirSync(jobDir, { withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => e.name);
    const trials = subdirs(jobDir)
      .filter((t) => fs.existsSync(path.join(jobDir, t, "config.json")) || fs.existsSync(path.join(jobDir, t, "result.json")))
      .map((t) => {
        const tc = readJson(path.join(jobDir, t, "config.json"));
        return {
          dir: t,
          resultText: readText(path.join(jobDir, t, "result.json")),
          trajectoryText: readText(path.join(jobDir, t, "agent", "trajectory.json")),
          config: tc && "value" in tc ? asRecord(tc.value) : null,
        };
      });
    jobs.push({
      name: d,
      config: cfg && "value" in cfg ? asRecord(cfg.value) : null,
      resultText: readText(path.join(jobDir, "result.json")),
      topLevelFiles,
      trials,
    });
  }
  return { dirName: path.basename(abs), metadataText: readText(path.join(abs, "metadata.yaml")), jobs };
}
