// `reprobench report <job dir>… [--out DIR] [--overrides FILE]` — Markdown + one self-contained HTML page.
import * as fs from "node:fs";
import * as path from "node:path";
import { command } from "./command";

const HELP = `
Audits the job dirs as \`reprobench audit\` does (newest genuine trial per task; --overrides the same)
and writes DIR/report.md and DIR/report.html (default DIR: ./reprobench-report), with a timeline of
every trial over wall-clock time per concurrency slot, coloured by outcome, and what the run cost
(wall time, trial time by phase, tokens by outcome, GPU-hours of the manifest's worker hosts over the
run's span, tokens per GPU-hour). The HTML page is self-contained: Chart.js and the data are inlined and
its Content-Security-Policy forbids network access. The run manifest (reprobench-manifest.json inside or
beside a job dir) comes last, folded (the scores, the outcome chart and the timeline come first);
without one the report says "no manifest".`;

export const report = command("report", {
  summary: "write a Markdown + self-contained HTML report (charts, manifest) for job dirs",
  define: (cmd) =>
    cmd
      .argument("[job dir...]", "Harbor job dirs of one run")
      .option("--out <dir>", "where report.md and report.html go (default ./reprobench-report)")
      .option("--overrides <file>", "manual verdicts, as audit --overrides")
      .addHelpText("after", HELP),
  async action({ opts, args }) {
    if (args.length === 0) {
      console.error(`reprobench report: give at least one job dir\n\nusage: reprobench report <job dir>… [--out DIR] [--overrides FILE]`);
      return 2;
    }
    const { runCost } = await import("../../results/cost");
    const { auditDirs, readJob } = await import("../../results/load");
    const { findManifest } = await import("../../results/manifest");
    const { parseOverrides } = await import("../../results/overrides");
    const { loadChartJs, renderHtml, renderMarkdown } = await import("../../results/report");
    const { buildTimeline } = await import("../../results/timeline");
    const file = opts.overrides as string | undefined;
    let overrides;
    if (file) {
      if (!fs.existsSync(file)) throw new Error(`--overrides ${file}: no such file`);
      overrides = parseOverrides(fs.readFileSync(file, "utf8"), file);
    }
    const audit = auditDirs(args, { overrides });
    const manifest = findManifest(args);
    const counted = new Set(audit.tasks.flatMap((t) => t.trials.map((x) => x.path)));
    const jobs = args.map(readJob);
    const timeline = buildTimeline(jobs, counted);
    const cost = runCost(jobs, manifest?.data ?? null);
    const out = path.resolve((opts.out as string | undefined) ?? "reprobench-report");
    fs.mkdirSync(out, { recursive: true });
    fs.writeFileSync(path.join(out, "report.md"), renderMarkdown(audit, manifest, timeline, cost));
    fs.writeFileSync(path.join(out, "report.html"), renderHtml(audit, manifest, loadChartJs(), timeline, cost));
    console.log(`wrote ${path.join(out, "report.md")}\nwrote ${path.join(out, "report.html")}${manifest ? "" : "\n(no manifest found)"}`);
    return 0;
  },
});
