// Audit benchmark (not a test): synthesise 89 tasks × 5 trials × 3 passes in Harbor's layout, audit it,
// print the wall time. Run: node --import tsx bench/audit-bench.ts [tasks] [trials] [passes]
import * as fs from "node:fs";
import * as path from "node:path";
import { performance } from "node:perf_hooks";
import { auditDirs } from "../results/load";
import { loadChartJs, renderHtml, renderMarkdown } from "../results/report";
import { tempDir, writeSyntheticRun } from "../test/fixtures/results/build";

function main(): void {
  const [tasks, trials, passes] = [89, 5, 3].map((d, i) => Number(process.argv[2 + i] ?? d));
  const root = tempDir("reprobench-audit-bench-");
  try {
    let t0 = performance.now();
    const dirs = writeSyntheticRun(path.join(root, "jobs"), tasks, trials, passes);
    const writeMs = performance.now() - t0;
    const nTrials = tasks * trials * passes;

    t0 = performance.now();
    let report = auditDirs(dirs);
    const firstMs = performance.now() - t0;
    const runs: number[] = [];
    for (let i = 0; i < 3; i++) {
      t0 = performance.now();
      report = auditDirs(dirs);
      runs.push(performance.now() - t0);
    }
    t0 = performance.now();
    const json = JSON.stringify(report);
    const md = renderMarkdown(report, null);
    const html = renderHtml(report, null, loadChartJs());
    const renderMs = performance.now() - t0;

    const sorted = [...runs].sort((a, b) => a - b);
    const scanned = report.tasks.flatMap((t) => t.trials).filter((t) => !(t.outcome === "passed" && t.exceptionType === null)).length;
    console.log(`synthetic run: ${tasks} tasks × ${trials} trials × ${passes} passes = ${nTrials} trial dirs (written in ${writeMs.toFixed(0)} ms)`);
    console.log(`audit: counted ${report.scores.raw.nTrials} trials (${report.selection.attemptsPerTask}/task), logs scanned for ${scanned}, ${report.taxonomy.reduce((s, c) => s + c.count, 0)} in the taxonomy`);
    console.log(`audit wall time: first run ${firstMs.toFixed(0)} ms; then min ${sorted[0].toFixed(0)} ms, median ${sorted[1].toFixed(0)} ms, max ${sorted[2].toFixed(0)} ms over 3 warm runs`);
    console.log(`render: JSON ${(json.length / 1024).toFixed(0)} KiB, Markdown ${(md.length / 1024).toFixed(0)} KiB, HTML ${(html.length / 1024).toFixed(0)} KiB in ${renderMs.toFixed(0)} ms`);
    console.log(`score: mean ${report.scores.raw.mean?.toFixed(4)}, pass rate ${report.scores.raw.passRate?.toFixed(4)}`);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

main();
