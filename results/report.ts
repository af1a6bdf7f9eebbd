// `reprobench report`: one Markdown file and one self-contained HTML page (Chart.js inlined, data inlined,
// a CSP that forbids every network fetch) from an AuditReport and the run manifest.
import * as fs from "node:fs";
import * as path from "node:path";
import { costRows, type RunCost } from "./cost";
import { appliedOverrides, duration, int, otherWarnings, pct, scoreLine, supersededLine } from "./format";
import { LoadedManifest, manifestRows } from "./manifest";
import { AuditReport, AuditTrial } from "./schema";
import { CATEGORY_LABELS } from "./taxonomy";
import { type Timeline, TIMELINE_OUTCOMES } from "./timeline";

/** Reads Chart.js's UMD build from node_modules (inlined into the page, so nothing loads at view time). */
export function loadChartJs(): string {
  const entry = require.resolve("chart.js"); // …/chart.js/dist/chart.cjs
  const umd = path.join(path.dirname(entry), "chart.umd.min.js");
  if (!fs.existsSync(umd)) throw new Error(`Chart.js UMD build not found at ${umd}; run npm install`);
  return fs.readFileSync(umd, "utf8");
}

const md = (s: string): string => s.replace(/\|/g, "\\|").replace(/\r?\n/g, " ");

const TOKEN_UNITS = ["k", "M", "B"] as const;

/**
 * A token count at a glance: exact below 1,000; above, in thousands (k), millions (M) or billions (B)
 * rounded to one decimal, a trailing ".0" dropped — 812 → "812", 45_300 → "45.3k", 1_000 → "1k",
 * 2_400_000 → "2.4M". A count that rounds up to 1,000 of a unit is shown in the next one (999_960 →
 * "1M", never "1000k"). Exact counts stay in the tables (`int`).
 */
export function tokenCount(n: number): string {
  if (!Number.isFinite(n)) return "n/a";
  const whole = Math.round(n);
  if (whole < 0) return `-${tokenCount(-whole)}`;
  if (whole < 1000) return String(whole);
  let unit = 0;
  let tenths = Math.round(whole / 100);
  while (tenths >= 10_000 && unit < TOKEN_UNITS.length - 1) {
    unit++;
    tenths = Math.round(whole / (100 * 1000 ** unit));
  }
  return `${(tenths / 10).toFixed(1).replace(/\.0$/, "")}${TOKEN_UNITS[unit]}`;
}

function manifestMarkdown(manifest: LoadedManifest | null): string[] {
  if (!manifest) return ["## Run manifest", "", "no manifest (looked for reprobench-manifest.json in and beside each job dir)", ""];
  const rows = manifestRows(manifest.data);
  return ["## Run manifest", "", `source: \`${manifest.path}\``, "", "| field | value |", "|---|---|", ...rows.map(([k, v]) => `| ${md(k)} | ${md(v)} |`), ""];
}

function trialRow(t: AuditTrial): string {
  return `| ${md(t.task)} | ${t.outcome} | ${t.reward ?? "—"} | ${t.exceptionType ?? ""} | ${t.category ? CATEGORY_LABELS[t.category] : ""}${t.suspectedInfra ? " (suspected infra)" : ""} | ${duration(t.durationSec)} | ${int(t.tokens.input)} / ${int(t.tokens.output)} | \`${md(t.path)}\` |`;
}

/** The timeline as text: its extent and, per wall-clock hour, how the trials that ended in it ended. */
function timelineMarkdown(t: Timeline): string[] {
  if (t.bars.length === 0) return [];
  const out = ["## Timeline", "", `${t.bars.length} trials from ${t.startedAt} over ${duration(t.hours * 3600)} in at most ${t.slots} concurrent slots (all passes; the HTML page draws them per slot).${t.skipped ? ` ${t.skipped} trial(s) without start/finish times left out.` : ""}`, ""];
  out.push(`| hour | ${TIMELINE_OUTCOMES.join(" | ")} |`, `|---|${TIMELINE_OUTCOMES.map(() => "---").join("|")}|`);
  for (const h of t.perHour) out.push(`| ${h.hour}–${h.hour + 1} h | ${TIMELINE_OUTCOMES.map((o) => h.counts[o]).join(" | ")} |`);
  out.push("");
  return out;
}

/** The Markdown report: conditions, scores, timeline, taxonomy with evidence, verdicts, per-task table, warnings, then the manifest. */
export function renderMarkdown(r: AuditReport, manifest: LoadedManifest | null, timeline?: Timeline, cost?: RunCost): string {
  const out: string[] = ["# Terminal-Bench run report", "", `generated ${r.generatedAt} from ${r.jobs.map((j) => `\`${j.name}\``).join(", ")}`, ""];
  out.push("## Run conditions", "");
  out.push(r.runConditions.leaderboardComparable ? "Leaderboard defaults (timeout multiplier 1.0, no overrides)." : "**A reproduction, not a leaderboard submission:**");
  for (const d of r.runConditions.deviations) out.push(`- ${d}`);
  out.push("", "## Scores", "", "| | score |", "|---|---|", `| raw | ${scoreLine(r.scores.raw)} |`);
  if (r.overrides.length) out.push(`| corrected (${appliedOverrides(r).length} manual verdicts) | ${scoreLine(r.scores.corrected)} |`);
  const raw = r.scores.raw;
  out.push("", `${raw.nTasks} tasks, ${raw.nTrials} counted trials (${r.selection.attemptsPerTask} per task): ${raw.passed} passed, ${raw.failed} failed, ${raw.errored} errored, ${raw.unscored} left out of the pass rate as infra/setup/cancelled.`, "");
  out.push(`Selection: ${r.selection.rule}. ${supersededLine(r)}.`, "");
  out.push("## Tokens and time", "", "| | input | cache | output |", "|---|---|---|---|");
  out.push(`| counted trials | ${int(r.tokens.chosen.input)} | ${int(r.tokens.chosen.cache)} | ${int(r.tokens.chosen.output)} |`);
  out.push(`| all trials, all passes | ${int(r.tokens.allTrials.input)} | ${int(r.tokens.allTrials.cache)} | ${int(r.tokens.allTrials.output)} |`, "");
  const d = r.durations;
  out.push(`Wall clock ${duration(d.wallClockSec)}; trial duration median ${duration(d.trialSec.median)}, p90 ${duration(d.trialSec.p90)}, max ${duration(d.trialSec.max)}.`, "");
  if (cost) out.push("## Cost", "", "Every trial of every pass (superseded ones ran too).", "", "| | |", "|---|---|", ...costRows(cost).map((c) => `| ${md(c.what)} | ${md(c.value)} |`), "");
  if (timeline) out.push(...timelineMarkdown(timeline));
  out.push("## Failure taxonomy", "", "| category | trials |", "|---|---|", ...r.taxonomy.map((c) => `| ${CATEGORY_LABELS[c.category]} | ${c.count} |`), "");
  const withEvidence = r.tasks.flatMap((t) => t.trials).filter((t) => t.evidence.length > 0);
  if (withEvidence.length) {
    out.push("### Evidence", "");
    for (const t of withEvidence) {
      out.push(`- **${md(t.task)}** (${t.outcome}${t.exceptionType ? `, ${t.exceptionType}` : ""}${t.suspectedInfra ? ", suspected infra" : ""})`);
      for (const e of t.evidence) out.push(`  - \`${e.file}:${e.line}\` ${e.signature}: \`${e.text.replace(/`/g, "'")}\``);
    }
    out.push("");
  }
  if (r.overrides.length) {
    out.push("## Manual verdicts", "", "| task | raw | verdict | reason | evidence |", "|---|---|---|---|---|");
    for (const o of r.overrides) {
      const verdict = o.status === "applied" ? o.verdict : `${o.verdict} — **not applied** (${o.status})`;
      out.push(`| ${md(o.task)} | ${o.rawOutcomes.join("/") || "—"} | ${verdict} | ${md(o.reason)} | ${md(o.evidence.join("; "))} |`);
    }
    const notes = r.overrides.filter((o) => o.note).map((o) => `- ${md(o.note!)}`);
    if (notes.length) out.push("", ...notes);
    out.push("");
  }
  const superseded = r.tasks.flatMap((t) => t.superseded.map((s) => ({ task: t.task, ...s })));
  if (superseded.length) {
    out.push("## Superseded trials", "", "Not counted. `unscored-after-genuine`: an infra/setup/cancelled attempt that came after a genuine result, which still counts.", "");
    out.push("| task | trial | outcome | exception | reason | counted instead / replaced by |", "|---|---|---|---|---|---|");
    for (const s of superseded) out.push(`| ${md(s.task)} | \`${md(s.path)}\` | ${s.outcome} | ${s.exceptionType ?? ""} | ${s.reason} | ${s.by ? `\`${md(s.by)}\`` : ""} |`);
    out.push("");
  }
  out.push("## Per task", "", "| task | outcome | reward | exception | category | duration | tokens in / out | trial |", "|---|---|---|---|---|---|---|---|");
  for (const t of r.tasks) for (const trial of t.trials) out.push(trialRow(trial));
  const warnings = otherWarnings(r);
  if (warnings.length) out.push("", "## Warnings", "", ...warnings.map((w) => `- ${w}`));
  // Last: a long list (every server argument of every worker) that only a reader checking the setup wants.
  out.push("", ...manifestMarkdown(manifest));
  return `${out.join("\n").trimEnd()}\n`;
}

/** HTML-escapes text (the compare page shares it). */
export const esc = (s: string): string => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** Data the page's charts draw, one entry per task (attempts aggregated). */
export function chartData(r: AuditReport) {
  const mean = (xs: (number | null)[]): number => {
    const v = xs.filter((x): x is number => x !== null);
    return v.length ? v.reduce((a, b) => a + b, 0) / v.length : 0;
  };
  return {
    tasks: r.tasks.map((t) => t.task),
    outcomes: {
      passed: r.tasks.map((t) => t.trials.filter((x) => x.outcome === "passed").length),
      failed: r.tasks.map((t) => t.trials.filter((x) => x.outcome === "failed").length),
      errored: r.tasks.map((t) => t.trials.filter((x) => x.outcome === "errored").length),
    },
    minutes: {
      environmentSetup: r.tasks.map((t) => mean(t.trials.map((x) => x.phases.environmentSetup)) / 60),
      agentSetup: r.tasks.map((t) => mean(t.trials.map((x) => x.phases.agentSetup)) / 60),
      agentExecution: r.tasks.map((t) => mean(t.trials.map((x) => x.phases.agentExecution)) / 60),
      verifier: r.tasks.map((t) => mean(t.trials.map((x) => x.phases.verifier)) / 60),
    },
    tokens: {
      input: r.tasks.map((t) => t.trials.reduce((s, x) => s + x.tokens.input, 0)),
      output: r.tasks.map((t) => t.trials.reduce((s, x) => s + x.tokens.output, 0)),
    },
    taxonomy: { labels: r.taxonomy.map((c) => CATEGORY_LABELS[c.category]), counts: r.taxonomy.map((c) => c.count) },
  };
}

// Runs in the browser. Plain ES2017, no imports: Chart is the global from the inlined UMD build.
const PAGE_SCRIPT = `
(function () {
  var data = JSON.parse(document.getElementById("chart-data").textContent);
  Chart.defaults.animation = false;
  Chart.defaults.font.size = 11;
  var many = data.tasks.length > 30;
  var xTicks = { autoSkip: false, maxRotation: 90, minRotation: many ? 90 : 0, font: { size: many ? 8 : 11 } };
  function bar(id, datasets, yTitle, yTicks) {
    return new Chart(document.getElementById(id), {
      type: "bar",
      data: { labels: data.tasks, datasets: datasets },
      options: { responsive: true, maintainAspectRatio: false,
        scales: { x: { stacked: true, ticks: xTicks }, y: { stacked: true, ticks: yTicks || {}, title: { display: true, text: yTitle } } },
        plugins: { legend: { position: "top" } } }
    });
  }
  bar("chart-outcomes", [
    { label: "passed", data: data.outcomes.passed, backgroundColor: "#2e9d5b" },
    { label: "failed", data: data.outcomes.failed, backgroundColor: "#d64545" },
    { label: "errored (no reward)", data: data.outcomes.errored, backgroundColor: "#9aa0a6" }
  ], "trials", { precision: 0, stepSize: 1 });
  bar("chart-durations", [
    { label: "environment setup", data: data.minutes.environmentSetup, backgroundColor: "#8e7cc3" },
    { label: "agent setup", data: data.minutes.agentSetup, backgroundColor: "#f6b26b" },
    { label: "agent execution", data: data.minutes.agentExecution, backgroundColor: "#3d85c6" },
    { label: "verifier", data: data.minutes.verifier, backgroundColor: "#6aa84f" }
  ], "minutes (mean per trial)");
  new Chart(document.getElementById("chart-tokens"), {
    type: "bar",
    data: { labels: data.tasks, datasets: [
      { label: "input tokens", data: data.tokens.input, backgroundColor: "#3d85c6", yAxisID: "y" },
      { label: "output tokens", data: data.tokens.output, backgroundColor: "#e69138", yAxisID: "y2" }
    ] },
    options: { responsive: true, maintainAspectRatio: false, scales: {
      x: { ticks: xTicks },
      y: { position: "left", title: { display: true, text: "input" } },
      y2: { position: "right", grid: { drawOnChartArea: false }, title: { display: true, text: "output" } } } }
  });
  new Chart(document.getElementById("chart-taxonomy"), {
    type: "bar",
    data: { labels: data.taxonomy.labels, datasets: [{ label: "trials", data: data.taxonomy.counts,
      backgroundColor: ["#d64545", "#cc0000", "#e69138", "#f6b26b", "#c27ba0", "#674ea7", "#8e7cc3", "#9aa0a6", "#444444"] }] },
    options: { indexAxis: "y", responsive: true, maintainAspectRatio: false, plugins: { legend: { display: false } },
      scales: { x: { ticks: { precision: 0 }, title: { display: true, text: "counted trials" } } } }
  });
  var tl = JSON.parse(document.getElementById("timeline-data").textContent);
  if (tl.bars.length) {
    var colours = { "passed": "#2e9d5b", "failed": "#d64545", "agent timeout": "#8e7cc3", "errored": "#e69138", "cancelled": "#b8bcc2" };
    var slots = [];
    for (var i = 0; i < tl.slots; i++) slots.push("slot " + (i + 1));
    // h:mm, or m:ss for runs shorter than half an hour.
    var short = tl.hours < 0.5;
    var hm = function (h) { var u = Math.round(h * (short ? 3600 : 60)); return Math.floor(u / 60) + ":" + String(u % 60).padStart(2, "0"); };
    var sets = tl.outcomes.map(function (o) {
      var bars = tl.bars.filter(function (b) { return b.outcome === o; });
      return { label: o, data: bars.map(function (b) { return { x: [b.start, b.end], y: "slot " + (b.slot + 1), b: b }; }),
        backgroundColor: bars.map(function (b) { return b.counted ? colours[o] : colours[o] + "66"; }),
        borderColor: bars.map(function (b) { return b.counted ? "#ffffff" : colours[o]; }), borderWidth: 1,
        borderSkipped: false, barPercentage: 0.9, categoryPercentage: 1.0, grouped: false };
    });
    new Chart(document.getElementById("chart-timeline"), {
      type: "bar",
      data: { labels: slots, datasets: sets },
      options: { indexAxis: "y", responsive: true, maintainAspectRatio: false,
        scales: { x: { type: "linear", min: 0, max: tl.hours || 1 / 60, ticks: { callback: function (v) { return hm(v); } },
            title: { display: true, text: "wall clock (" + (short ? "m:ss" : "h:mm") + " since " + tl.startedAt.replace("T", " ").replace(/\\.\\d+Z$/, "Z") + ")" } },
          y: { stacked: true, ticks: { autoSkip: false, font: { size: tl.slots > 30 ? 8 : 11 } } } },
        plugins: { legend: { position: "top" }, tooltip: { callbacks: { label: function (c) { var b = c.raw.b;
          return b.trial + " (" + b.outcome + (b.exceptionType ? ", " + b.exceptionType : "") + (b.counted ? "" : ", superseded") + "): " + hm(b.start) + "–" + hm(b.end); } } } } }
    });
  }
  document.body.setAttribute("data-charts", "ready");
})();
`;

/** The report page's stylesheet (the compare page shares it). */
export const STYLE = `
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px; color: #1f2328; }
h1 { margin: 0 0 4px; font-size: 22px; } h2 { margin: 28px 0 8px; font-size: 17px; border-bottom: 1px solid #d0d7de; }
.muted { color: #656d76; } .banner { padding: 8px 12px; border-radius: 6px; margin: 12px 0; }
.repro { background: #fff4e5; border: 1px solid #f0b429; } .ok { background: #e8f5e9; border: 1px solid #66bb6a; }
.cards { display: flex; gap: 12px; flex-wrap: wrap; } .card { border: 1px solid #d0d7de; border-radius: 8px; padding: 10px 14px; min-width: 180px; }
.card b { display: block; font-size: 22px; } table { border-collapse: collapse; margin: 6px 0; font-size: 12px; }
td, th { border: 1px solid #d0d7de; padding: 3px 7px; text-align: left; vertical-align: top; } th { background: #f6f8fa; }
.chart { position: relative; height: 340px; margin: 8px 0 18px; } .chart.small { height: 260px; max-width: 720px; }
summary { cursor: pointer; } details > table { margin-top: 8px; }
code { font-size: 11px; } .passed { color: #1a7f37; } .failed { color: #cf222e; } .errored { color: #656d76; }
`;

/**
 * The self-contained HTML page. `chartJs` is the Chart.js UMD source (see loadChartJs). Order: run
 * conditions and scores, the outcome chart, the timeline, the other charts, the per-task tables, warnings,
 * then the run manifest folded away in a closed <details>.
 */
export function renderHtml(r: AuditReport, manifest: LoadedManifest | null, chartJs: string, timeline?: Timeline, cost?: RunCost): string {
  const raw = r.scores.raw;
  const cor = r.scores.corrected;
  const card = (title: string, value: string, sub: string): string => `<div class="card"><span class="muted">${esc(title)}</span><b>${esc(value)}</b><span class="muted">${esc(sub)}</span></div>`;
  // At the end and folded (a <details>, closed): at full size it is hundreds of rows, every server argument of
  // every worker, which would otherwise push the scores and charts off the first screen.
  const manifestHtml = (() => {
    if (!manifest) return `<p><b>no manifest</b> <span class="muted">(looked for reprobench-manifest.json in and beside each job dir)</span></p>`;
    const mRows = manifestRows(manifest.data);
    const groups = [...new Set(mRows.map(([k]) => k.split(".")[0]))];
    return `<details id="manifest-details"><summary>${mRows.length} fields from <code>${esc(manifest.path)}</code> <span class="muted">(${esc(groups.join(", "))})</span></summary><table>${mRows.map(([k, v]) => `<tr><th>${esc(k)}</th><td>${esc(v)}</td></tr>`).join("")}</table></details>`;
  })();
  const conditions = r.runConditions.leaderboardComparable
    ? `<div class="banner ok">Leaderboard defaults: timeout multiplier 1.0, no timeout or resource overrides.</div>`
    : `<div class="banner repro"><b>A reproduction, not a leaderboard submission.</b><ul>${r.runConditions.deviations.map((d) => `<li>${esc(d)}</li>`).join("")}</ul></div>`;
  const evidence = r.tasks
    .flatMap((t) => t.trials)
    .filter((t) => t.evidence.length)
    .map((t) => `<tr><td>${esc(t.task)}</td><td class="${t.outcome}">${t.outcome}${t.suspectedInfra ? " (suspected infra)" : ""}</td><td>${t.evidence.map((e) => `<code>${esc(e.file)}:${e.line}</code> ${esc(e.signature)}<br><code>${esc(e.text)}</code>`).join("<br>")}</td></tr>`)
    .join("");
  const verdicts = r.overrides
    .map(
      (o) =>
        `<tr><td>${esc(o.task)}</td><td>${esc(o.rawOutcomes.join("/") || "—")}</td><td>${esc(o.verdict)}${o.note ? `<br><b>not applied</b> (${esc(o.status)}): ${esc(o.note)}` : ""}</td><td>${esc(o.reason)}</td><td>${esc(o.evidence.join("; "))}</td></tr>`,
    )
    .join("");
  const rows = r.tasks
    .flatMap((t) => t.trials)
    .map(
      (t) =>
        `<tr><td>${esc(t.task)}</td><td class="${t.outcome}">${t.outcome}</td><td>${t.reward ?? "—"}</td><td>${esc(t.exceptionType ?? "")}</td><td>${t.category ? esc(CATEGORY_LABELS[t.category]) : ""}</td><td>${duration(t.durationSec)}</td><td>${int(t.tokens.input)} / ${int(t.tokens.output)}</td><td><code>${esc(t.path)}</code></td></tr>`,
    )
    .join("");
  // JSON inside <script>: escape "<" so no string in the data can close the element.
  const data = JSON.stringify(chartData(r)).replace(/</g, "\\u003c");
  const tl = timeline ?? { startedAt: null, slots: 0, hours: 0, bars: [], skipped: 0, perHour: [] };
  const tlData = JSON.stringify({ ...tl, outcomes: TIMELINE_OUTCOMES }).replace(/</g, "\\u003c");
  const tlHeight = Math.max(160, 16 * tl.slots + 90);
  const timelineHtml = tl.bars.length
    ? `<h2 id="timeline">Timeline</h2><p class="muted">every trial of every pass over wall-clock time, one row per concurrency slot (assigned in start order: the lowest slot free at a trial's start), coloured by outcome; pale bars are trials a later pass superseded.${tl.skipped ? ` ${tl.skipped} trial(s) without start/finish times left out.` : ""}</p><div class="chart" style="height:${tlHeight}px"><canvas id="chart-timeline"></canvas></div>`
    : "";
  const safeLib = chartJs.replace(/<\/script/gi, "<\\/script");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<title>Terminal-Bench run report — ${esc(r.jobs.map((j) => j.name).join(", "))}</title>
<style>${STYLE}</style></head>
<body>
<h1>Terminal-Bench run report</h1>
<div class="muted">generated ${esc(r.generatedAt)} from ${r.jobs.map((j) => `<code>${esc(j.name)}</code>${j.complete ? "" : " (not finished)"}`).join(", ")} · <a href="#manifest">run manifest</a> at the end</div>
${conditions}
<h2 id="scores">Scores</h2>
<div class="cards">
${card("raw score (Harbor mean)", pct(raw.mean), `${raw.passed}/${raw.nTrials} passed`)}
${r.overrides.length ? card("corrected score", pct(cor.mean), `${cor.passed}/${cor.nTrials} passed, ${cor.excluded} excluded`) : ""}
${card("pass rate, infra errors excluded", pct(raw.passRate), `${raw.passed}/${raw.scored} scored trials`)}
${card("outcomes", `${raw.passed} / ${raw.failed} / ${raw.errored}`, "passed / failed / errored")}
${card("tokens (counted trials)", `${tokenCount(r.tokens.chosen.input)} in`, `${tokenCount(r.tokens.chosen.output)} out`)}
${card("wall clock", duration(r.durations.wallClockSec), `trial median ${duration(r.durations.trialSec.median)}`)}
${cost ? card("GPU-hours", cost.gpu.gpuHours === null ? "unknown" : cost.gpu.gpuHours.toFixed(1), cost.tokensPerGpuHour ? `${tokenCount(cost.tokensPerGpuHour.input)} in / ${tokenCount(cost.tokensPerGpuHour.output)} out per GPU-hour` : (cost.gpu.note ?? "")) : ""}
</div>
<h2 id="outcomes">Outcome per task</h2><div class="chart"><canvas id="chart-outcomes"></canvas></div>
${timelineHtml}
<h2>Duration per task</h2><div class="chart"><canvas id="chart-durations"></canvas></div>
${cost ? `<h2 id="cost">Cost</h2><p class="muted">every trial of every pass (superseded ones ran too)</p><table>${costRows(cost).map((c) => `<tr><th>${esc(c.what)}</th><td>${esc(c.value)}</td></tr>`).join("")}</table>` : ""}
<h2>Tokens per task</h2><div class="chart"><canvas id="chart-tokens"></canvas></div>
<h2 id="taxonomy">Failure taxonomy</h2><div class="chart small"><canvas id="chart-taxonomy"></canvas></div>
${evidence ? `<h3>Evidence from the logs</h3><table><tr><th>task</th><th>outcome</th><th>file:line, signature, line</th></tr>${evidence}</table>` : ""}
${verdicts ? `<h2 id="verdicts">Manual verdicts</h2><table><tr><th>task</th><th>raw</th><th>verdict</th><th>reason</th><th>evidence</th></tr>${verdicts}</table>` : ""}
<h2 id="per-task">Per task</h2>
<table><tr><th>task</th><th>outcome</th><th>reward</th><th>exception</th><th>category</th><th>duration</th><th>tokens in / out</th><th>trial</th></tr>${rows}</table>
${otherWarnings(r).length ? `<h2 id="warnings">Warnings</h2><ul>${otherWarnings(r).map((w) => `<li>${esc(w)}</li>`).join("")}</ul>` : ""}
<h2 id="manifest">Run manifest</h2>
${manifestHtml}
<script type="application/json" id="chart-data">${data}</script>
<script type="application/json" id="timeline-data">${tlData}</script>
<script>${safeLib}</script>
<script>${PAGE_SCRIPT}</script>
</body></html>
`;
}
