// `reprobench report <job dir>… [--out DIR] [--overrides FILE]` — Markdown + one self-contained HTML page.
import * as fs from "node:fs";
import * as path from "node:path";
import { parseArgs } from "node:util";
import type { Command } from "./command";
import { runCost } from "../../results/cost";
import { auditDirs, readJob } from "../../results/load";
import { findManifest } from "../../results/manifest";
import { parseOverrides } from "../../results/overrides";
import { loadChartJs, renderHtml, renderMarkdown } from "../../results/report";
import { buildTimeline } from "../../results/timeline";

const HELP = `usage: reprobench report <job dir>… [--out DIR] [--overrides FILE]

Audits the job dirs as \`reprobench audit\` does (newest genuine trial per task; --overrides the same)
and writes DIR/report.md and DIR/report.html (default DIR: ./reprobench-report), with a timeline of
every trial over wall-clock time per concurrency slot, coloured by outcome, and what the run cost
(wall time, trial time by phase, tokens by outcome, GPU-hours of the manifest's worker hosts over the
run's span, tokens per GPU-hour). The HTML page is
self-contained: Chart.js and the data are inlined and its Content-Security-Policy forbids network
access. The run manifest (reprobench-manifest.json inside or beside a job dir) comes last,
folded (the scores, the outcome chart and the timeline come first); without one the report says "no
manifest".`;

export const report: Command = {
  summary: "write a Markdown + self-contained HTML report (charts, manifest) for job dirs",
  async run(args) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { out: { type: "string" }, overrides: { type: "string" }, help: { type: "boolean", short: "h" } },
    });
    if (values.help) {
      console.log(HELP);
      return 0;
    }
    if (positionals.length === 0) {
      console.error(`reprobench report: give at least one job dir\n\n${HELP}`);
      return 2;
    }
    let overrides;
    if (values.overrides) {
      if (!fs.existsSync(values.overrides)) throw new Error(`--overrides ${values.overrides}: no such file`);
      overrides = parseOverrides(fs.readFileSync(values.overrides, "utf8"), values.overrides);
    }
    const audit = auditDirs(positionals, { overrides });
    const manifest = findManifest(positionals);
    const counted = new Set(audit.tasks.flatMap((t) => t.trials.map((x) => x.path)));
    const jobs = positionals.map(readJob);
    const timeline = buildTimeline(jobs, counted);
    const cost = runCost(jobs, manifest?.data ?? null);
    const out = path.resolve(values.out ?? "reprobench-report");
    fs.mkdirSync(out, { recursive: true });
    fs.writeFileSync(path.join(out, "report.md"), renderMarkdown(audit, manifest, timeline, cost));
    fs.writeFileSync(path.join(out, "report.html"), renderHtml(audit, manifest, loadChartJs(), timeline, cost));
    console.log(`wrote ${path.join(out, "report.md")}\nwrote ${path.join(out, "report.html")}${manifest ? "" : "\n(no manifest found)"}`);
    return 0;
  },
};
