// A Vitest reporter that appends, for every test file, the time it took with its hooks, import and setup
// (Vitest's JSON report times only the tests themselves: a sim suite's beforeAll, which brings up its
// cluster, and its teardown were left out) to the JSON-lines file REPROBENCH_SUITE_TIMES names.
// scripts/test-report.mjs prints the table from it.
import { appendFileSync } from "node:fs";
import { relative } from "node:path";
import type { Reporter, TestModule } from "vitest/node";

export interface SuiteTime {
  project: string;
  file: string;
  ms: number;
  state: string;
  tests: number;
  failed: number;
}

export default class SuiteTimesReporter implements Reporter {
  onTestModuleEnd(module: TestModule): void {
    const out = process.env.REPROBENCH_SUITE_TIMES;
    if (!out) return;
    const d = module.diagnostic();
    const tests = [...module.children.allTests()];
    const line: SuiteTime = {
      project: module.project.name,
      file: relative(module.project.globalConfig.root, module.moduleId),
      ms: Math.round(d.prepareDuration + d.setupDuration + d.collectDuration + d.duration),
      state: module.state(),
      tests: tests.length,
      failed: tests.filter((t) => t.result().state === "failed").length,
    };
    appendFileSync(out, `${JSON.stringify(line)}\n`);
  }
}
