// Benchmark (not a test): the cluster on the simulated hosts through the real engine.
// Prints the first `up` wall time, a no-op `up` and its ratio to the first, how many resources the
// no-op changed (must be 0), the destroy time, and the `preview --diff` lines of a one-worker change.
//   node --import tsx bench/cluster-bench.ts
import * as path from "node:path";
import { writeFileSync, readFileSync } from "node:fs";
import YAML from "yaml";
import { simDown, simUp } from "../sim/cluster";
import { pointAtSimInstance, repoRoot, testProject } from "../test/helpers/project";

// A cluster instance of its own: never the default one a user's local stack may be using.
const instance = { name: "bench", slot: 3 };

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const start = process.hrtime.bigint();
  const value = await fn();
  return [value, Number(process.hrtime.bigint() - start) / 1e9];
}

async function main(): Promise<void> {
  const { plan } = await simUp({ root: repoRoot, instance, log: () => undefined });
  const project = await testProject({ ".sim": path.join(repoRoot, ".sim") });
  try {
    const stack = await project.stack("local", "Pulumi.local.yaml");
    // Cluster only: the run-level resources have their own benchmark.
    const file = path.join(project.dir, "Pulumi.local.yaml");
    const doc = YAML.parse(readFileSync(file, "utf8"));
    doc.config["reprobench:run"] = { enabled: false };
    pointAtSimInstance(doc, plan);
    writeFileSync(file, YAML.stringify(doc));

    const quiet = { onOutput: () => undefined };
    const [first, firstSecs] = await timed(() => stack.up(quiet));
    const [noop, noopSecs] = await timed(() => stack.up(quiet));
    const changes = Object.entries(noop.summary.resourceChanges ?? {}).filter(([k]) => k !== "same").reduce((n, [, v]) => n + (v ?? 0), 0);
    // One worker's flag: what a reviewer sees.
    doc.config["reprobench:modelServer"] = { ...doc.config["reprobench:modelServer"], overrides: { "worker-b": { maxRunningRequests: 4 } } };
    writeFileSync(file, YAML.stringify(doc));
    const diff: string[] = [];
    const preview = await stack.preview({ diff: true, color: "never", onOutput: (o) => diff.push(o) });
    const [, destroySecs] = await timed(() => stack.destroy({ ...quiet, runProgram: true }));
    const created = first.summary.resourceChanges?.create ?? 0;
    console.log(`first up:      ${firstSecs.toFixed(1)} s (${created} resources created)`);
    console.log(`no-op up:      ${noopSecs.toFixed(1)} s (ratio to first: ${(noopSecs / firstSecs).toFixed(2)})`);
    console.log(`no-op changes: ${changes}`);
    console.log(`destroy:       ${destroySecs.toFixed(1)} s`);
    console.log(`\npreview --diff of modelServer.overrides.worker-b.maxRunningRequests 5 → 4 (${JSON.stringify(preview.changeSummary)}):`);
    // The changed lines only (the unchanged script text is long).
    const lines = diff.join("").split("\n");
    const start = lines.findIndex((l) => l.includes("worker-b-sglang-container"));
    console.log(lines.slice(Math.max(0, start - 1), start + 120).filter((l) => /^\s*[~+-] |urn=|\[\d+\]: .*=>/.test(l)).join("\n"));
  } finally {
    project.cleanup();
    await simDown({ root: repoRoot, instance, discardResults: true, log: () => undefined });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
