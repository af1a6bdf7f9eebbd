// Human-readable renderings of an AuditReport (terminal text and Markdown share these helpers).
import { AuditReport, Score } from "./schema";
import { CATEGORY_LABELS } from "./taxonomy";

export const pct = (x: number | null): string => (x === null ? "n/a" : `${(x * 100).toFixed(2)}%`);
export const int = (n: number): string => n.toLocaleString("en-US");

export function duration(sec: number | null): string {
  if (sec === null) return "n/a";
  const s = Math.round(sec);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (h > 0) return `${h}h${String(m).padStart(2, "0")}m`;
  if (m > 0) return `${m}m${String(s % 60).padStart(2, "0")}s`;
  return `${s}s`;
}

/** "61/89 = 68.54% (mean 0.6854)" — passed over counted trials, then the Harbor mean. */
export function scoreLine(s: Score): string {
  const mean = s.mean === null ? "n/a" : s.mean.toFixed(4);
  return `${s.passed}/${s.nTrials} passed, mean ${mean} (${pct(s.mean)}); pass rate ${s.passed}/${s.scored} = ${pct(s.passRate)} over scored trials`;
}

/** Verdicts that changed the corrected score (an override whose trial no longer counts is not one). */
export function appliedOverrides(r: AuditReport): AuditReport["overrides"] {
  return r.overrides.filter((o) => o.status === "applied");
}

/** "3 superseded trials, 2 of them infra/setup/cancelled attempts that came after a genuine result". */
export function supersededLine(r: AuditReport): string {
  const all = r.tasks.flatMap((t) => t.superseded);
  const keptOut = all.filter((s) => s.reason === "unscored-after-genuine").length;
  return `${all.length} superseded trial(s), ${keptOut} of them infra/setup/cancelled attempts that came after a genuine result (which still counts)`;
}

/** One manual verdict as a line: the raw outcome it corrects, or why it was not applied. */
export function overrideLine(o: AuditReport["overrides"][number]): string {
  if (o.status === "applied") return `${o.task}: ${o.rawOutcomes.join("/")} → ${o.verdict}: ${o.reason} [evidence: ${o.evidence.join("; ")}]`;
  return `${o.task}: ${o.verdict} NOT APPLIED (${o.status}): ${o.note}`;
}

/** The warnings a rendering shows in its own section: unapplied-verdict notes already appear with their verdict. */
export function otherWarnings(r: AuditReport): string[] {
  const notes = new Set(r.overrides.map((o) => o.note));
  return r.warnings.filter((w) => !notes.has(w));
}

/** The terminal summary printed by `reprobench audit`. */
export function renderAuditText(r: AuditReport): string {
  const out: string[] = [];
  const raw = r.scores.raw;
  out.push(`jobs: ${r.jobs.map((j) => `${j.name}${j.complete ? "" : " (not finished)"}`).join(", ")}`);
  out.push(`tasks: ${raw.nTasks}, counted trials: ${raw.nTrials} (${r.selection.attemptsPerTask} per task, newest genuine trial wins); ${supersededLine(r)}`);
  out.push(`outcomes: ${raw.passed} passed, ${raw.failed} failed, ${raw.errored} errored (${raw.unscored} infra/setup/cancelled, left out of the pass rate)`);
  out.push(`raw score:       ${scoreLine(raw)}`);
  const applied = appliedOverrides(r);
  if (r.overrides.length) {
    const notApplied = r.overrides.length - applied.length;
    out.push(`corrected score: ${scoreLine(r.scores.corrected)} (${applied.length} manual verdict(s) applied${notApplied ? `, ${notApplied} not applied` : ""}, ${r.scores.corrected.excluded} excluded)`);
  }
  out.push(
    r.runConditions.leaderboardComparable
      ? "run conditions: leaderboard defaults"
      : `run conditions: a REPRODUCTION, not leaderboard-comparable — ${r.runConditions.deviations.join("; ")}`,
  );
  out.push(`tokens (counted trials): in ${int(r.tokens.chosen.input)} (cache ${int(r.tokens.chosen.cache)}), out ${int(r.tokens.chosen.output)}; all passes: in ${int(r.tokens.allTrials.input)}, out ${int(r.tokens.allTrials.output)}`);
  out.push(`durations: wall clock ${duration(r.durations.wallClockSec)}, trial median ${duration(r.durations.trialSec.median)}, p90 ${duration(r.durations.trialSec.p90)}, max ${duration(r.durations.trialSec.max)}`);

  if (r.taxonomy.length) {
    out.push("", "failure taxonomy:");
    for (const c of r.taxonomy) out.push(`  ${CATEGORY_LABELS[c.category].padEnd(32)} ${String(c.count).padStart(4)}`);
  }
  const notable = r.tasks.flatMap((t) => t.trials).filter((t) => t.category !== null);
  if (notable.length) {
    out.push("", "trials needing a look (task, outcome, exception, category, evidence):");
    for (const t of notable) {
      const flag = t.suspectedInfra ? " [suspected infra]" : "";
      out.push(`  ${t.task}: ${t.outcome}${t.reward !== null ? ` (reward ${t.reward})` : ""}, ${t.exceptionType ?? "no exception"}, ${CATEGORY_LABELS[t.category!]}${flag}  (${t.path})`);
      for (const e of t.evidence.slice(0, 3)) out.push(`      ${e.file}:${e.line} [${e.signature}] ${e.text}`);
      if (t.evidence.length > 3) out.push(`      … ${t.evidence.length - 3} more`);
    }
  }
  if (r.overrides.length) {
    out.push("", "manual verdicts:");
    for (const o of r.overrides) out.push(`  ${overrideLine(o)}`);
  }
  const keptOut = r.tasks.flatMap((t) => t.superseded).filter((s) => s.reason === "unscored-after-genuine");
  if (keptOut.length) {
    out.push("", "not counted: infra/setup/cancelled attempts after a genuine result (which counts instead):");
    for (const s of keptOut) out.push(`  ${s.path}: ${s.exceptionType ?? s.outcome}${s.by ? ` (counted: ${s.by})` : ""}`);
  }
  const warnings = otherWarnings(r);
  if (warnings.length) {
    out.push("", "warnings:");
    for (const w of warnings) out.push(`  - ${w}`);
  }
  return out.join("\n");
}
