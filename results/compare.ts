// `reprobench compare A B`: two runs (each one job dir or the passes of one run, audited as `audit` does)
// matched task by task — the flips both ways by cause, McNemar's exact test on pass/fail and a paired
// bootstrap CI of the mean-reward difference, run conditions and cost side by side. Pure: audits, job
// configs and manifests in, a Comparison out, and its Markdown rendering (compare-html.ts draws the page).
import { createHash } from "node:crypto";
import type { JobInput } from "./audit";
import { duration, int } from "./format";
import { asArray, asRecord, HARBOR_DEFAULTS, redactSecrets } from "./harbor";
import { costRows, gpuHostsLine, manifestGpuHosts, type RunCost } from "./cost";
import type { AuditReport, AuditTrial } from "./schema";
import { seededUniform } from "./random";

export const COMPARE_SCHEMA_VERSION = 1;
/** A task passes when the mean reward over its counted attempts reaches this (Harbor: missing reward = 0). */
export const DEFAULT_PASS_THRESHOLD = 0.5;
export const DEFAULT_BOOTSTRAP = { seed: 0, resamples: 10_000, level: 0.95 } as const;

/** Why a task side is where it is: passed, or what most of its non-passing attempts ended with. */
export type Cause = "pass" | "timeout" | "infra" | "fail";

export interface TaskSide {
  outcome: "passed" | "failed";
  /** Mean reward over the counted attempts (a missing reward counts 0, as in Harbor's mean). */
  reward: number;
  attempts: number;
  passedAttempts: number;
  /** The attempts' exception types with counts ("AgentTimeoutError ×3, SandboxError"); null when none raised. */
  exception: string | null;
  cause: Cause;
  /** Mean trial duration over the attempts, seconds. */
  durationSec: number | null;
  tokens: { input: number; cache: number; output: number };
}

export const FLIP_GROUPS = ["timeout → pass", "fail → pass", "infra → pass", "pass → fail", "pass → timeout", "pass → infra"] as const;
export type FlipGroup = (typeof FLIP_GROUPS)[number];

export interface TaskComparison {
  task: string;
  a: TaskSide;
  b: TaskSide;
  flip: FlipGroup | null;
}

export interface ConditionRow {
  field: string;
  a: string;
  b: string;
  differs: boolean;
}

export interface SideSummary {
  label: "A" | "B";
  jobs: string[];
  /** Tasks of this side that were compared (the intersection with the other side). */
  tasks: number;
  meanReward: number | null;
  passedTasks: number;
}

export interface Comparison {
  kind: "reprobench.compare";
  schemaVersion: typeof COMPARE_SCHEMA_VERSION;
  generatedAt: string;
  passThreshold: number;
  passRule: string;
  a: SideSummary;
  b: SideSummary;
  tasks: TaskComparison[];
  /** Tasks only one side has (left out of everything; only with allowDifferentTasks). */
  leftOut: { onlyA: string[]; onlyB: string[] };
  flips: { passToFail: string[]; failToPass: string[]; byCause: Record<FlipGroup, string[]> };
  mcnemar: { b: number; c: number; p: number; test: string };
  bootstrap: { diff: number | null; lo: number | null; hi: number | null; level: number; resamples: number; seed: number; method: string };
  conditions: ConditionRow[];
  cost: { a: RunCost | null; b: RunCost | null };
  notes: string[];
}

export interface CompareSide {
  jobs: string[];
  audit: AuditReport;
  /** runConditions() of this side's jobs and manifest. */
  conditions: Record<string, string>;
  cost: RunCost | null;
}

export interface CompareOptions {
  passThreshold?: number;
  allowDifferentTasks?: boolean;
  seed?: number;
  resamples?: number;
  level?: number;
  now?: Date;
}

/** The two sides cover different tasks and the caller did not allow it. */
export class DifferentTasksError extends Error {}

// ---------------------------------------------------------------------------------------------------------
// Statistics

export { seededUniform };


/** P(X ≤ k) for X ~ Binomial(n, 1/2), summed in log space so large n neither overflows nor underflows early. */
export function binomialCdfHalf(k: number, n: number): number {
  if (k < 0) return 0;
  if (k >= n) return 1;
  const ln2n = n * Math.LN2;
  let lnChoose = 0; // ln C(n, 0)
  let sum = Math.exp(-ln2n);
  for (let i = 1; i <= k; i++) {
    lnChoose += Math.log(n - i + 1) - Math.log(i);
    sum += Math.exp(lnChoose - ln2n);
  }
  return Math.min(1, sum);
}

/**
 * McNemar's exact test over the discordant pairs: b = pass → fail, c = fail → pass; under H0 either is
 * Binomial(b + c, 1/2), so the two-sided p = min(1, 2·P(X ≤ min(b, c))), and 1 when nothing flipped.
 */
export function mcnemarExact(b: number, c: number): { b: number; c: number; p: number } {
  const n = b + c;
  return { b, c, p: n === 0 ? 1 : Math.min(1, 2 * binomialCdfHalf(Math.min(b, c), n)) };
}

/** The q-quantile of sorted values, linear between order statistics (position q·(n − 1); numpy's default). */
export function quantileSorted(sorted: ArrayLike<number>, q: number): number {
  const pos = q * (sorted.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

/**
 * Paired bootstrap of the mean of per-task differences: resample tasks with replacement `resamples`
 * times from a seeded generator, take each resample's mean, and the percentile interval of those means.
 */
export function pairedBootstrap(diffs: readonly number[], o: { seed: number; resamples: number; level: number }): { diff: number | null; lo: number | null; hi: number | null } {
  const n = diffs.length;
  if (n === 0) return { diff: null, lo: null, hi: null };
  const random = seededUniform(o.seed);
  const means = new Float64Array(o.resamples);
  for (let r = 0; r < o.resamples; r++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += diffs[Math.floor(random() * n)];
    means[r] = s / n;
  }
  means.sort();
  const alpha = 1 - o.level;
  return { diff: diffs.reduce((a, b) => a + b, 0) / n, lo: quantileSorted(means, alpha / 2), hi: quantileSorted(means, 1 - alpha / 2) };
}

// ---------------------------------------------------------------------------------------------------------
// Per task

function attemptCause(t: AuditTrial): Exclude<Cause, "pass"> {
  if (!t.scored) return "infra"; // infra / setup / cancelled: the run failed, not the model
  if (t.exceptionType === "AgentTimeoutError" || t.category === "agent_timeout_with_reward" || t.category === "agent_timeout_without_reward") return "timeout";
  return "fail";
}

/** One side of one task: its counted attempts summarised. */
export function taskSide(trials: readonly AuditTrial[], passThreshold: number): TaskSide {
  const n = trials.length;
  const reward = n ? trials.reduce((s, t) => s + (t.reward ?? 0), 0) / n : 0;
  const outcome = n > 0 && reward >= passThreshold ? "passed" : "failed";
  const exceptions = new Map<string, number>();
  for (const t of trials) if (t.exceptionType) exceptions.set(t.exceptionType, (exceptions.get(t.exceptionType) ?? 0) + 1);
  let cause: Cause = "pass";
  if (outcome === "failed") {
    const counts = { infra: 0, timeout: 0, fail: 0 };
    for (const t of trials) if (!(t.reward !== null && t.reward >= 1)) counts[attemptCause(t)]++;
    // Ties go to infra first: a flip an infra error may explain must not pass for the model's doing.
    cause = (["infra", "timeout", "fail"] as const).reduce((best, k) => (counts[k] > counts[best] ? k : best), "infra" as Exclude<Cause, "pass">);
    if (counts.infra + counts.timeout + counts.fail === 0) cause = "fail";
  }
  const durations = trials.map((t) => t.durationSec).filter((x): x is number => x !== null);
  return {
    outcome,
    reward,
    attempts: n,
    passedAttempts: trials.filter((t) => t.outcome === "passed").length,
    exception: exceptions.size ? [...exceptions].sort((x, y) => y[1] - x[1] || x[0].localeCompare(y[0])).map(([k, v]) => (v > 1 ? `${k} ×${v}` : k)).join(", ") : null,
    cause,
    durationSec: durations.length ? durations.reduce((a, b) => a + b, 0) / durations.length : null,
    tokens: {
      input: trials.reduce((s, t) => s + t.tokens.input, 0),
      cache: trials.reduce((s, t) => s + t.tokens.cache, 0),
      output: trials.reduce((s, t) => s + t.tokens.output, 0),
    },
  };
}

function flipOf(a: TaskSide, b: TaskSide): FlipGroup | null {
  if (a.outcome === b.outcome) return null;
  return (a.outcome === "passed" ? `pass → ${b.cause}` : `${a.cause} → pass`) as FlipGroup;
}

// ---------------------------------------------------------------------------------------------------------
// Run conditions

const shown = (v: unknown): string => (v === undefined || v === null ? "—" : typeof v === "string" ? v : JSON.stringify(v));

function flatten(value: unknown, prefix: string, out: Record<string, string>): void {
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) flatten(v, prefix ? `${prefix}.${k}` : k, out);
  } else out[prefix] = shown(value);
}

function datasetText(d: Record<string, unknown>): string {
  // A checkout's path is plumbing (each stack has its own, datasets/<project>.<stack>), like api_base: not
  // a condition of the run. What it holds is the "dataset commit" row's.
  if (typeof d.path === "string") return "local checkout";
  if (typeof d.git_url === "string") return `${d.git_url}${d.git_commit_id ? `@${d.git_commit_id}` : ""}`;
  if (typeof d.name === "string") return `${d.name}${d.version ? `@${d.version}` : ""}`;
  return shown(d);
}

function fingerprint(map: Record<string, unknown>): string {
  const entries = Object.entries(map).map(([k, v]) => `${k}=${shown(v)}`).sort();
  return createHash("sha256").update(entries.join("\n")).digest("hex").slice(0, 12);
}

/**
 * What a side ran under, field → value: agent, model, sampling kwargs, attempts, concurrency, the timeout
 * multipliers (Harbor's default shown when the config leaves one out), the dataset and its commit, Harbor,
 * the server and task image digests and the GPUs (the last ones from the run manifest). Several jobs with
 * different values show them all, joined by " | ".
 */
export function runConditions(jobs: readonly JobInput[], manifest: Record<string, unknown> | null): Record<string, string> {
  const perJob = jobs.map((j) => {
    const c = j.config ?? {};
    const agents = asArray(c.agents).map(asRecord);
    const out: Record<string, string> = {
      agent: agents.map((a) => shown(a.name)).join(", ") || "—",
      model: agents.map((a) => shown(a.model_name)).join(", ") || "—",
      "attempts per task": shown(c.n_attempts ?? HARBOR_DEFAULTS.n_attempts),
      "concurrent trials": shown(c.n_concurrent_trials ?? HARBOR_DEFAULTS.n_concurrent_trials),
      timeout_multiplier: shown(c.timeout_multiplier ?? HARBOR_DEFAULTS.timeout_multiplier),
    };
    for (const k of ["agent_timeout_multiplier", "verifier_timeout_multiplier", "agent_setup_timeout_multiplier", "environment_build_timeout_multiplier"]) {
      out[k] = c[k] === undefined || c[k] === null ? "= timeout_multiplier" : shown(c[k]);
    }
    const kwargs: Record<string, string> = {};
    // api_base is plumbing (each cluster has its own address), not a condition of the run.
    for (const a of agents) flatten(redactSecrets({ ...asRecord(a.kwargs), api_base: undefined }), "", kwargs);
    for (const [k, v] of Object.entries(kwargs)) if (k !== "api_base") out[`sampling: ${k}`] = v;
    out.dataset = asArray(c.datasets).map((d) => datasetText(asRecord(d))).join(", ") || "—";
    const gitCommit = asArray(c.datasets).map((d) => asRecord(d).git_commit_id).find((x) => typeof x === "string");
    out["dataset commit"] = shown(asRecord(manifest?.dataset).identity ?? asRecord(asRecord(manifest?.config).harbor).datasetCommit ?? gitCommit ?? "unknown (no manifest)");
    return out;
  });
  const merged: Record<string, string> = {};
  for (const key of [...new Set(perJob.flatMap((o) => Object.keys(o)))]) merged[key] = [...new Set(perJob.map((o) => o[key] ?? "—"))].join(" | ");
  if (manifest) {
    merged.harbor = shown(asRecord(manifest.harbor).version ?? "—");
    const serverImages = asRecord(manifest.serverImages);
    merged["model server images"] = [...new Set(Object.values(serverImages).map(shown))].sort().join(", ") || "—";
    const images = asRecord(manifest.images);
    merged["task images"] = Object.keys(images).length ? `${Object.keys(images).length} image(s), digests fingerprint ${fingerprint(images)}` : "—";
    const workers = Object.values(asRecord(manifest.workers)).map(asRecord);
    merged["served model path"] = [...new Set(workers.map((w) => shown(w.model_path)))].join(", ") || "—";
    merged.GPUs = gpuHostsLine(manifestGpuHosts(manifest));
  } else {
    for (const k of ["harbor", "model server images", "task images", "GPUs"]) merged[k] = "unknown (no manifest)";
  }
  return merged;
}

function conditionRows(a: Record<string, string>, b: Record<string, string>): ConditionRow[] {
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
  return keys.map((field) => {
    const va = a[field] ?? "—";
    const vb = b[field] ?? "—";
    return { field, a: va, b: vb, differs: va !== vb };
  });
}

// ---------------------------------------------------------------------------------------------------------
// The comparison

/** A preview of a list of names: the first few and how many more. */
function some(names: readonly string[], max = 5): string {
  return names.length <= max ? names.join(", ") : `${names.slice(0, max).join(", ")}, … (${names.length - max} more)`;
}

/** Compares side B against side A. Throws DifferentTasksError for different task sets unless allowed. */
export function compareRuns(a: CompareSide, b: CompareSide, opts: CompareOptions = {}): Comparison {
  const passThreshold = opts.passThreshold ?? DEFAULT_PASS_THRESHOLD;
  const boot = { seed: opts.seed ?? DEFAULT_BOOTSTRAP.seed, resamples: opts.resamples ?? DEFAULT_BOOTSTRAP.resamples, level: opts.level ?? DEFAULT_BOOTSTRAP.level };
  const byTaskA = new Map(a.audit.tasks.map((t) => [t.task, t.trials]));
  const byTaskB = new Map(b.audit.tasks.map((t) => [t.task, t.trials]));
  const onlyA = [...byTaskA.keys()].filter((t) => !byTaskB.has(t)).sort();
  const onlyB = [...byTaskB.keys()].filter((t) => !byTaskA.has(t)).sort();
  const common = [...byTaskA.keys()].filter((t) => byTaskB.has(t)).sort();
  const notes: string[] = [];
  if (onlyA.length || onlyB.length) {
    const what = [onlyA.length ? `${onlyA.length} task(s) only in A (${some(onlyA)})` : "", onlyB.length ? `${onlyB.length} task(s) only in B (${some(onlyB)})` : ""].filter(Boolean).join(" and ");
    if (!opts.allowDifferentTasks) {
      throw new DifferentTasksError(`the runs cover different task sets: ${what}. A paired comparison needs the same tasks; pass --allow-different-tasks to compare the ${common.length} task(s) both have`);
    }
    notes.push(`different task sets: compared the ${common.length} task(s) both have; left out ${onlyA.length + onlyB.length}: ${what}`);
  }
  if (common.length === 0) throw new DifferentTasksError("the runs have no task in common: nothing to compare");

  const tasks: TaskComparison[] = common.map((task) => {
    const sa = taskSide(byTaskA.get(task)!, passThreshold);
    const sb = taskSide(byTaskB.get(task)!, passThreshold);
    return { task, a: sa, b: sb, flip: flipOf(sa, sb) };
  });
  const byCause = Object.fromEntries(FLIP_GROUPS.map((g) => [g, tasks.filter((t) => t.flip === g).map((t) => t.task)])) as Record<FlipGroup, string[]>;
  const passToFail = tasks.filter((t) => t.a.outcome === "passed" && t.b.outcome === "failed").map((t) => t.task);
  const failToPass = tasks.filter((t) => t.a.outcome === "failed" && t.b.outcome === "passed").map((t) => t.task);
  const infraFlips = byCause["infra → pass"].length + byCause["pass → infra"].length;
  if (infraFlips) notes.push(`${infraFlips} flip(s) are infra/setup/cancelled errors on the failing side (the run failed, not the model): a mop-up pass (reprobench resume) would decide them; the statistics count them as Harbor's mean does (no reward = 0)`);
  const attemptsA = new Set(tasks.map((t) => t.a.attempts));
  const attemptsB = new Set(tasks.map((t) => t.b.attempts));
  if (attemptsA.size > 1 || attemptsB.size > 1) notes.push("tasks have different numbers of counted attempts; each task's rewards are averaged over its own attempts first");

  const mean = (xs: number[]) => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : null);
  const bs = pairedBootstrap(
    tasks.map((t) => t.b.reward - t.a.reward),
    boot,
  );
  const summary = (label: "A" | "B", side: CompareSide, pick: (t: TaskComparison) => TaskSide): SideSummary => ({
    label,
    jobs: side.jobs,
    tasks: tasks.length,
    meanReward: mean(tasks.map((t) => pick(t).reward)),
    passedTasks: tasks.filter((t) => pick(t).outcome === "passed").length,
  });
  return {
    kind: "reprobench.compare",
    schemaVersion: COMPARE_SCHEMA_VERSION,
    generatedAt: (opts.now ?? new Date()).toISOString(),
    passThreshold,
    passRule: `a task passes when its mean reward over its counted attempts is ≥ ${passThreshold} (a missing reward counts 0)`,
    a: summary("A", a, (t) => t.a),
    b: summary("B", b, (t) => t.b),
    tasks,
    leftOut: { onlyA, onlyB },
    flips: { passToFail, failToPass, byCause },
    mcnemar: { ...mcnemarExact(passToFail.length, failToPass.length), test: "McNemar's exact test (two-sided; binomial on the discordant tasks, b = pass → fail, c = fail → pass)" },
    bootstrap: { ...bs, ...boot, method: `paired bootstrap over tasks of the mean-reward difference B − A (each task's attempts averaged first), percentile interval, ${boot.resamples} resamples, seed ${boot.seed}` },
    conditions: conditionRows(a.conditions, b.conditions),
    cost: { a: a.cost, b: b.cost },
    notes,
  };
}

// ---------------------------------------------------------------------------------------------------------
// Markdown

const md = (s: string): string => s.replace(/\|/g, "\\|").replace(/\r?\n/g, " ");
const r4 = (x: number | null): string => (x === null ? "n/a" : x.toFixed(4));
const signed = (x: number | null): string => (x === null ? "n/a" : `${x >= 0 ? "+" : ""}${x.toFixed(4)}`);

/** "p = 0.0213" with enough digits for small values. */
export function pValue(p: number): string {
  return p >= 0.001 ? p.toFixed(4) : p.toExponential(2);
}

/** The two labelled statistics as sentences (Markdown and HTML share them). */
export function statisticsLines(c: Comparison): { mcnemar: string; bootstrap: string } {
  const m = c.mcnemar;
  const bs = c.bootstrap;
  return {
    mcnemar: `McNemar's exact test (pass/fail per task; ${c.passRule}): b = ${m.b} pass → fail, c = ${m.c} fail → pass, two-sided p = ${pValue(m.p)}`,
    bootstrap: `Paired bootstrap, mean-reward difference B − A over ${c.tasks.length} tasks (attempts averaged per task first): ${signed(bs.diff)}, ${Math.round(bs.level * 100)}% CI [${signed(bs.lo)}, ${signed(bs.hi)}] (percentile interval, ${bs.resamples} resamples, seed ${bs.seed})`,
  };
}

function sideCell(s: TaskSide): string {
  return `${s.outcome} (${s.passedAttempts}/${s.attempts})`;
}

/** The flips, group by group, one line per task. */
function flipLines(c: Comparison): string[] {
  const byTask = new Map(c.tasks.map((t) => [t.task, t]));
  const out: string[] = [];
  for (const g of FLIP_GROUPS) {
    const names = c.flips.byCause[g];
    if (!names.length) continue;
    out.push(`### ${g} (${names.length})`, "");
    for (const n of names) {
      const t = byTask.get(n)!;
      out.push(`- ${md(n)}: reward ${r4(t.a.reward)} → ${r4(t.b.reward)}; A ${t.a.exception ?? "no exception"}, B ${t.b.exception ?? "no exception"}`);
    }
    out.push("");
  }
  return out.length ? out : ["No task flipped.", ""];
}

export function renderCompareMarkdown(c: Comparison): string {
  const out: string[] = ["# Run comparison", "", `generated ${c.generatedAt}`, "", `- **A**: ${c.a.jobs.map((j) => `\`${j}\``).join(", ")}`, `- **B**: ${c.b.jobs.map((j) => `\`${j}\``).join(", ")}`, ""];
  out.push("## Scores", "", "| | A | B |", "|---|---|---|");
  out.push(`| tasks compared | ${c.a.tasks} | ${c.b.tasks} |`);
  out.push(`| mean reward over tasks | ${r4(c.a.meanReward)} | ${r4(c.b.meanReward)} |`);
  out.push(`| tasks passed (mean reward ≥ ${c.passThreshold}) | ${c.a.passedTasks} | ${c.b.passedTasks} |`, "");
  const s = statisticsLines(c);
  out.push(`- ${s.bootstrap}.`, `- ${s.mcnemar}.`, "");
  for (const n of c.notes) out.push(`Note: ${n}.`, "");
  out.push(`## Flips (${c.flips.failToPass.length} fail → pass, ${c.flips.passToFail.length} pass → fail)`, "");
  out.push("Cause: what most of the failing side's attempts ended with — timeout (AgentTimeoutError), infra (infra/setup/cancelled, not scored), fail (anything else).", "");
  out.push(...flipLines(c));
  const differing = c.conditions.filter((r) => r.differs).length;
  out.push(`## Run conditions (${differing} differ)`, "", "| | A | B | |", "|---|---|---|---|");
  for (const r of c.conditions) out.push(`| ${md(r.field)} | ${md(r.a)} | ${md(r.b)} | ${r.differs ? "**differs**" : ""} |`);
  out.push("");
  out.push("## Cost", "");
  if (c.cost.a && c.cost.b) {
    const ra = costRows(c.cost.a);
    const rb = costRows(c.cost.b);
    out.push("| | A | B |", "|---|---|---|", ...ra.map((row, i) => `| ${md(row.what)} | ${md(row.value)} | ${md(rb[i].value)} |`), "");
  } else out.push("not computed", "");
  out.push("## Per task", "", "| task | A → B | reward A → B | exception A | exception B | duration A / B | tokens in/out A | tokens in/out B |", "|---|---|---|---|---|---|---|---|");
  for (const t of c.tasks) {
    const flip = t.flip ? ` **${t.flip}**` : "";
    out.push(
      `| ${md(t.task)} | ${sideCell(t.a)} → ${sideCell(t.b)}${flip} | ${r4(t.a.reward)} → ${r4(t.b.reward)} | ${md(t.a.exception ?? "")} | ${md(t.b.exception ?? "")} | ${duration(t.a.durationSec)} / ${duration(t.b.durationSec)} | ${int(t.a.tokens.input)} / ${int(t.a.tokens.output)} | ${int(t.b.tokens.input)} / ${int(t.b.tokens.output)} |`,
    );
  }
  if (c.leftOut.onlyA.length || c.leftOut.onlyB.length) {
    out.push("", "## Left out", "", `only in A: ${c.leftOut.onlyA.join(", ") || "none"}`, "", `only in B: ${c.leftOut.onlyB.join(", ") || "none"}`);
  }
  return `${out.join("\n").trimEnd()}\n`;
}

/** The `--json` document: the comparison as is (tasks, flips, mcnemar, bootstrap, conditions, cost). */
export function compareJson(c: Comparison): string {
  return JSON.stringify(c, null, 2);
}
