// The integration order: longest first by the measured table, new files before all, a stable order for ties,
// and every file of test/integration in the table (a suite renamed or added shows here).
import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { EXPECTED_SECONDS, longestFirst } from "../../helpers/longest-first";

const REPO = resolve(__dirname, "../../..");

describe("longestFirst", () => {
  it("orders by expected seconds, longest first, with an unknown (new) file first of all", () => {
    expect(longestFirst(["test/integration/registry.test.ts", "test/integration/cluster.test.ts", "test/integration/new.test.ts", "test/integration/run.test.ts"])).toEqual([
      "test/integration/new.test.ts",
      "test/integration/cluster.test.ts",
      "test/integration/run.test.ts",
      "test/integration/registry.test.ts",
    ]);
  });

  it("breaks ties by name, so the order never depends on how the files were listed", () => {
    expect(longestFirst(["b.test.ts", "a.test.ts"])).toEqual(["a.test.ts", "b.test.ts"]);
    expect(longestFirst(["a.test.ts", "b.test.ts"])).toEqual(["a.test.ts", "b.test.ts"]);
  });

  it("knows every integration file there is, and none that is gone", () => {
    const files = readdirSync(join(REPO, "test/integration")).filter((f) => f.endsWith(".test.ts")).map((f) => `test/integration/${f}`).sort();
    expect(Object.keys(EXPECTED_SECONDS).sort()).toEqual(files);
  });
});
