// Integration files start longest first, by the wall times scripts/test.sh prints at the end of every run:
// side by side on a few workers, a long suite started last runs alone at the end (a fresh clone has no
// Vitest results cache, so its default order is by file size). A file missing from the table is new and
// counts as the longest, so it starts early and its time shows in the next table. Unit files keep Vitest's order.
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** Seconds each integration file took side by side (update from the table when a suite changes much). */
export const EXPECTED_SECONDS: Readonly<Record<string, number>> = {
  // Measured 2026-12-02 (scripts/test.sh's table: hooks included) on 2 cores, three side by side.
  "test/integration/cluster.test.ts": 1342,
  "test/integration/rehearsal.test.ts": 936,
  "test/integration/stacks.test.ts": 770,
  "test/integration/profiles-run.test.ts": 695,
  "test/integration/user-path.test.ts": 590,
  "test/integration/nonroot.test.ts": 581,
  "test/integration/status.test.ts": 511,
  "test/integration/run.test.ts": 498,
  "test/integration/examples.test.ts": 407,
  "test/integration/sim.test.ts": 344,
  "test/integration/mswea-local.test.ts": 258,
  "test/integration/sim-ownership.test.ts": 135,
  "test/integration/preview.test.ts": 106,
  "test/integration/plain-pulumi.test.ts": 80,
  "test/integration/cli-stack.test.ts": 65,
  "test/integration/registry.test.ts": 60,
  "test/integration/vllm-double.test.ts": 31,
  // Measured alone 2026-12-05 (15 s): an offline npm ci of the linked layout, two builds, one CLI call.
  "test/integration/linked-install.test.ts": 50,
  "test/integration/router-loopback.test.ts": 11,
};

/** Integration files longest first (unknown ones first of all), ties by name; the order is stable. */
export function longestFirst(files: readonly string[]): string[] {
  const expected = (f: string) => EXPECTED_SECONDS[f] ?? Number.POSITIVE_INFINITY;
  return [...files].sort((a, b) => expected(b) - expected(a) || a.localeCompare(b));
}

export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const isIntegration = (f: TestSpecification) => f.project.name === "integration";
    const others = await super.sort(files.filter((f) => !isIntegration(f)));
    const byPath = new Map(files.filter(isIntegration).map((f) => [relative(this.ctx.config.root, f.moduleId), f]));
    return [...others, ...longestFirst([...byPath.keys()]).map((p) => byPath.get(p)!)];
  }
}
