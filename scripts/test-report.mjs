// The end of every scripts/test.sh run: each integration suite's wall time (slowest first), each phase's
// time, and one "tests: N passed, N failed" line for the whole run, so what a new suite costs shows in every
// CI log. Reads Vitest's JSON reports (<project>.json: the test counts), suite-times.jsonl (each file's time
// with its hooks, test/helpers/suite-times-reporter.ts) and phases.tsv (name, start, end in epoch seconds)
// from the results directory given as the only argument.
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";

const dir = process.argv[2];
if (!dir) {
  console.error("usage: node scripts/test-report.mjs RESULTS_DIR");
  process.exit(2);
}
const seconds = (ms) => `${Math.round(ms / 1000)} s`;

let passed = 0;
let failed = 0;
let skipped = 0;
const suites = [];
for (const file of readdirSync(dir).filter((f) => f.endsWith(".json")).sort()) {
  const report = JSON.parse(readFileSync(join(dir, file), "utf8"));
  passed += report.numPassedTests;
  failed += report.numFailedTests;
  skipped += report.numPendingTests + (report.numTodoTests || 0);
}
// test/helpers/suite-times-reporter.ts: each file with its hooks (a sim suite's cluster start and teardown).
if (existsSync(join(dir, "suite-times.jsonl"))) {
  for (const line of readFileSync(join(dir, "suite-times.jsonl"), "utf8").split("\n").filter(Boolean)) {
    const t = JSON.parse(line);
    suites.push({ project: t.project, name: t.file, tests: t.tests, bad: t.failed, ms: t.ms, status: t.state });
  }
}

const integration = suites.filter((s) => s.project === "integration").sort((a, b) => b.ms - a.ms);
if (integration.length > 0) {
  const width = Math.max(...integration.map((s) => s.name.length));
  console.log("\nintegration suites (wall time of each file with its hooks, side by side):");
  for (const s of integration) {
    const mark = s.status === "passed" ? "" : `  ${s.status}${s.bad ? ` (${s.bad} failed)` : ""}`;
    console.log(`  ${s.name.padEnd(width)}  ${String(s.tests).padStart(3)} tests  ${seconds(s.ms).padStart(7)}${mark}`);
  }
  const sum = integration.reduce((n, s) => n + s.ms, 0);
  console.log(`  ${"sum of the files' wall times".padEnd(width)}            ${seconds(sum).padStart(7)}`);
}
const unit = suites.filter((s) => s.project === "unit");
if (unit.length > 0) {
  const slowest = [...unit].sort((a, b) => b.ms - a.ms).slice(0, 3).map((s) => `${s.name} ${seconds(s.ms)}`);
  console.log(`\nunit: ${unit.length} files; slowest: ${slowest.join(", ")}`);
}

const phasesFile = join(dir, "phases.tsv");
if (existsSync(phasesFile)) {
  const phases = readFileSync(phasesFile, "utf8")
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [name, start, end] = line.split("\t");
      return { name, start: Number(start), end: Number(end) };
    });
  const first = Math.min(...phases.map((p) => p.start));
  const last = Math.max(...phases.map((p) => p.end));
  console.log("\nphases (start +mm:ss after the first, duration):");
  for (const p of phases) {
    const at = p.start - first;
    console.log(`  ${p.name.padEnd(14)} +${String(Math.floor(at / 60)).padStart(2, "0")}:${String(at % 60).padStart(2, "0")}  ${`${p.end - p.start} s`.padStart(7)}`);
  }
  console.log(`  ${"total".padEnd(14)}         ${`${last - first} s`.padStart(7)}`);
}

console.log(`\ntests: ${passed} passed, ${failed} failed` + (skipped ? `, ${skipped} skipped` : ""));
