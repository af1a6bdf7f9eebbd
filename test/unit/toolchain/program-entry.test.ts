// The reprobench program's entry point. package.json serves the components as a library ("exports":
// dist/components), and Pulumi's Node.js runtime takes "exports" before "main" for a project's program
// (@pulumi/pulumi cmd/run/run.js) unless Pulumi.yaml names one: a project without it would run the library,
// register nothing, and so delete every resource of an existing stack.
import { existsSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import YAML from "yaml";

const REPO = path.resolve(__dirname, "../../..");

describe("the program's entry point", () => {
  it("is named in Pulumi.yaml (infra/index.ts), not left to package.json, whose exports are the library", () => {
    const project = YAML.parse(readFileSync(path.join(REPO, "Pulumi.yaml"), "utf8")) as { main?: string };
    const pkg = JSON.parse(readFileSync(path.join(REPO, "package.json"), "utf8")) as { exports?: Record<string, { default?: string }> };
    expect(project.main).toBe("infra/index.ts");
    expect(existsSync(path.join(REPO, project.main ?? ""))).toBe(true);
    expect(pkg.exports?.["."]?.default).toBe("./dist/components/index.js");
  });

  it("of each example is named the same way, or has no package exports to be mistaken for it", () => {
    for (const example of ["own-program"]) {
      const dir = path.join(REPO, "examples", example);
      const pkg = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as { main?: string; exports?: unknown };
      expect(pkg.exports, example).toBeUndefined();
      expect(existsSync(path.join(dir, pkg.main ?? "index.js")), example).toBe(true);
    }
  });
});
