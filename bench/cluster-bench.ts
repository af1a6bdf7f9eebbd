// Benchmark (not a test): the cluster on the simulated hosts through the real engine.
// Prints the first `up` wall time, a no-op `up` and its ratio to the first, how many resources the
// no-op changed (must be 0), and the destroy time.   node --import tsx bench/cluster-bench.ts
import * as path from "node:path";
import { writeFileSync, readFileSync } from "node:fs";
import YAML from "yaml";
import { simUp } from "../sim/cluster";
import { repoRoot, testProject } from "../test/helpers/project";

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const start = process.hrtime.bigint();
  const value = await fn();
  return [value, Number(process.hrtime.bigint() - start) / 1e9];
}

async function main(): Promise<void> {
  await simUp({ root: repoRoot, log: () => undefined });
  const project = await testProject({ ".sim": path.join(repoRoot, ".sim") });
  try {
    const stack = await project.stack("local", "Pulumi.local.yaml");
    // Cluster only: the run-level resources have their own benchmark.
    const file = path.join(project.dir, "Pulumi.local.yaml");
    const doc = YAML.parse(readFileSync(file, "utf8"));
    doc.config["reprobench:run"] = { enabled: false };
    writeFileSync(file, YAML.stringify(doc));

    const quiet = { onOutput: () => undefined };
    const [first, firstSecs] = await timed(() => stack.up(quiet));
    const [noop, noopSecs] = await timed(() => stack.up(quiet));
    const changes = Object.entries(noop.summary.resourceChanges ?? {}).filter(([k]) => k !== "same").reduce((n, [, v]) => n + (v ?? 0), 0);
    const [, destroySecs] = await timed(() => stack.destroy(quiet));
    const created = first.summary.resourceChanges?.create ?? 0;
    console.log(`first up:      ${firstSecs.toFixed(1)} s (${created} resources created)`);
    console.log(`no-op up:      ${noopSecs.toFixed(1)} s (ratio to first: ${(noopSecs / firstSecs).toFixed(2)})`);
    console.log(`no-op changes: ${changes}`);
    console.log(`destroy:       ${destroySecs.toFixed(1)} s`);
    if (changes !== 0) process.exitCode = 1;
  } finally {
    project.cleanup();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
