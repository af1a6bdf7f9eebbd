// The offline Node.js language host's pure parts: which provider plugins a program needs (read from the
// packages' own `pulumi` blocks) and the argv it hands @pulumi/pulumi's cmd/run. Importing main.ts
// starts no server (it only listens when run as the main module).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { requiredPackages, runArgs } from "../../../scripts/plugins/language-nodejs/main";

const REPO = resolve(__dirname, "../../..");
const scratch = mkdtempSync(join(tmpdir(), "reprobench-language-host-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface PulumiBlock {
  resource?: boolean;
  name?: string;
  version?: string;
  server?: string;
}
const packageJson = (dir: string) => JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version: string; pulumi?: PulumiBlock };

/** Writes node_modules-style package directories: { "node_modules/x": {package.json fields} }. */
function tree(root: string, packages: Record<string, Record<string, unknown>>): string {
  for (const [dir, pkg] of Object.entries(packages)) {
    mkdirSync(join(root, dir), { recursive: true });
    writeFileSync(join(root, dir, "package.json"), JSON.stringify(pkg));
  }
  return root;
}

describe("requiredPackages (this repository)", () => {
  const found = requiredPackages(REPO);

  it.each(["command", "random"])("lists @pulumi/%s exactly as its package.json pulumi block says", (name) => {
    const block = packageJson(join(REPO, "node_modules/@pulumi", name)).pulumi!;
    expect(block.resource).toBe(true);
    const entry = found.find((p) => p.name === block.name);
    expect(entry).toEqual({ name: block.name, version: block.version, server: block.server });
  });

  it("pins the versions package.json depends on (command 1.2.1, random 4.21.2 as installed)", () => {
    const deps = (JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { dependencies: Record<string, string> }).dependencies;
    for (const name of ["command", "random"]) {
      expect(found.find((p) => p.name === name)?.version).toBe(deps[`@pulumi/${name}`]);
    }
  });

  it("lists exactly the resource packages among the dependencies, sorted, and not the SDK itself", () => {
    const deps = Object.keys((JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { dependencies: Record<string, string> }).dependencies);
    const resourceDeps = deps
      .map((d) => packageJson(join(REPO, "node_modules", d)).pulumi)
      .filter((b): b is PulumiBlock => b?.resource === true)
      .map((b) => b.name);
    expect(found.map((p) => p.name)).toEqual([...resourceDeps].sort());
    expect(found.map((p) => p.name)).not.toContain("pulumi");
  });
});

describe("requiredPackages (fixture programs)", () => {
  it("walks dependencies transitively, takes name/version/server from the pulumi block, strips a leading v", () => {
    const root = tree(join(scratch, "transitive"), {
      ".": { name: "prog", dependencies: { lib: "1", "@pulumi/aws": "6" } },
      "node_modules/lib": { name: "lib", version: "1.0.0", dependencies: { "@acme/pulumi-thing": "2" } },
      "node_modules/@acme/pulumi-thing": {
        name: "@acme/pulumi-thing",
        version: "2.0.0",
        pulumi: { resource: true, name: "thing", version: "v2.0.0-alpha.1", server: "https://plugins.acme.test/" },
      },
      "node_modules/@pulumi/aws": { name: "@pulumi/aws", version: "v6.1.0", pulumi: { resource: true } },
    });
    expect(requiredPackages(root)).toEqual([
      { name: "aws", version: "6.1.0", server: undefined },
      { name: "thing", version: "2.0.0-alpha.1", server: "https://plugins.acme.test/" },
    ]);
  });

  it("uses pluginDownloadURL when no server is given", () => {
    const root = tree(join(scratch, "download-url"), {
      ".": { name: "prog", dependencies: { p: "1" } },
      "node_modules/p": { name: "p", version: "1.0.0", pulumi: { resource: true, name: "p", pluginDownloadURL: "github://api.github.com/acme" } },
    });
    expect(requiredPackages(root)).toEqual([{ name: "p", version: "1.0.0", server: "github://api.github.com/acme" }]);
  });

  it("ignores packages without pulumi.resource, missing dependencies, and the program's own block", () => {
    const root = tree(join(scratch, "ignored"), {
      ".": { name: "prog", pulumi: { resource: true, name: "prog", version: "9.9.9" }, dependencies: { plain: "1", absent: "1", sdk: "1" } },
      "node_modules/plain": { name: "plain", version: "1.0.0" },
      "node_modules/sdk": { name: "sdk", version: "3.0.0", pulumi: { comment: "deployment-time only" } },
    });
    expect(requiredPackages(root)).toEqual([]);
  });

  it("resolves like Node (nested node_modules first) and keeps both versions when two are in use", () => {
    const root = tree(join(scratch, "nested"), {
      ".": { name: "prog", dependencies: { a: "1", prov: "1" } },
      "node_modules/a": { name: "a", version: "1.0.0", dependencies: { prov: "2" } },
      "node_modules/a/node_modules/prov": { name: "prov", version: "2.0.0", pulumi: { resource: true, name: "prov" } },
      "node_modules/prov": { name: "prov", version: "1.0.0", pulumi: { resource: true, name: "prov" } },
    });
    expect(requiredPackages(root).map((p) => `${p.name}@${p.version}`).sort()).toEqual(["prov@1.0.0", "prov@2.0.0"]);
  });

  it("terminates on dependency cycles and symlinked duplicates, listing each package once", () => {
    const root = tree(join(scratch, "cycle"), {
      ".": { name: "prog", dependencies: { a: "1", b: "1", alias: "1" } },
      "node_modules/a": { name: "a", version: "1.0.0", dependencies: { b: "1" }, pulumi: { resource: true, name: "a" } },
      "node_modules/b": { name: "b", version: "1.0.0", dependencies: { a: "1", prog: "1" } },
    });
    symlinkSync(join(root, "node_modules/a"), join(root, "node_modules/alias"));
    symlinkSync(root, join(root, "node_modules/prog"));
    expect(requiredPackages(root)).toEqual([{ name: "a", version: "1.0.0", server: undefined }]);
  });

  it("a program without package.json needs nothing", () => {
    const root = join(scratch, "empty");
    mkdirSync(root, { recursive: true });
    expect(requiredPackages(root)).toEqual([]);
  });
});

describe("runArgs", () => {
  const runScript = require.resolve("@pulumi/pulumi/cmd/run", { paths: [REPO] });
  const runSource = readFileSync(runScript, "utf8");
  // cmd/run parses its argv with minimist; use the very copy it loads.
  const minimist = createRequire(runScript)("minimist") as (
    args: string[],
    opts: { boolean: string[]; string: string[]; stopEarly: boolean; unknown: () => boolean },
  ) => Record<string, unknown> & { _: string[] };
  // The options cmd/run passes to minimist (checked against its source below).
  const STRING_FLAGS = ["organization", "project", "root-directory", "stack", "parallel", "pwd", "monitor", "engine", "tracing"];
  const parseLikeCmdRun = (argv: string[]) => minimist(argv, { boolean: ["dry-run"], string: STRING_FLAGS, stopEarly: true, unknown: () => true });

  const request = {
    runScript,
    nodeArgs: ["--max-old-space-size=4096", "--enable-source-maps"],
    monitor: "127.0.0.1:40001",
    engine: "127.0.0.1:40002",
    project: "reprobench",
    stack: "prod",
    organization: "organization",
    pwd: "/work/dir with space",
    root: "/work/root=dir",
    dryRun: true,
    parallel: 16,
    program: ".",
    args: ["--not-a-run-flag", "-x", "plain"],
  };

  it("still parses its argv the way this test does", () => {
    expect(runSource).toMatch(/boolean:\s*\["dry-run"\]/);
    for (const flag of STRING_FLAGS) expect(runSource).toContain(`"${flag}"`);
    expect(runSource).toContain("stopEarly: true");
  });

  it("builds node options, the run script, the documented flags, then the program and its args", () => {
    expect(runArgs(request)).toEqual([
      "--max-old-space-size=4096",
      "--enable-source-maps",
      runScript,
      "--monitor=127.0.0.1:40001",
      "--engine=127.0.0.1:40002",
      "--project=reprobench",
      "--stack=prod",
      "--pwd=/work/dir with space",
      "--root-directory=/work/root=dir",
      "--organization=organization",
      "--dry-run",
      "--parallel=16",
      ".",
      "--not-a-run-flag",
      "-x",
      "plain",
    ]);
  });

  it("uses only flags cmd/run documents in its usage text", () => {
    const usage = runSource.slice(runSource.indexOf("function usage()"), runSource.indexOf("function printErrorUsageAndExit"));
    const documented = new Set([...usage.matchAll(/--([a-z-]+)[=\s]/g)].map((m) => m[1]));
    const argv = runArgs(request);
    const flagsUsed = argv.slice(argv.indexOf(runScript) + 1, argv.indexOf(".")).map((a) => /^--([a-z-]+)/.exec(a)?.[1]);
    expect(flagsUsed.length).toBeGreaterThan(0);
    for (const flag of flagsUsed) expect(documented.has(flag!), `--${flag} in usage`).toBe(true);
  });

  it("round-trips through cmd/run's own parser: every value intact, program args left to the program", () => {
    const argv = runArgs(request);
    const parsed = parseLikeCmdRun(argv.slice(argv.indexOf(runScript) + 1));
    expect(parsed).toMatchObject({
      monitor: request.monitor,
      engine: request.engine,
      project: request.project,
      stack: request.stack,
      pwd: request.pwd,
      "root-directory": request.root,
      organization: request.organization,
      "dry-run": true,
      parallel: "16",
    });
    expect(parsed._).toEqual([".", ...request.args]);
  });

  it("omits --dry-run, --parallel and --organization when off / zero / empty", () => {
    const argv = runArgs({ ...request, nodeArgs: [], dryRun: false, parallel: 0, organization: "", args: [] });
    expect(argv[0]).toBe(runScript);
    expect(argv.some((a) => a.startsWith("--dry-run") || a.startsWith("--parallel") || a.startsWith("--organization"))).toBe(false);
    const parsed = parseLikeCmdRun(argv.slice(1));
    expect(parsed["dry-run"]).toBe(false);
    expect(parsed.parallel).toBeUndefined();
    expect(parsed._).toEqual(["."]);
  });

  it("passes an absolute program path and values that look like flags through unharmed", () => {
    const program = join(dirname(REPO), "prog", "index.ts");
    const argv = runArgs({ ...request, nodeArgs: [], stack: "-weird", project: "--project", program });
    const parsed = parseLikeCmdRun(argv.slice(1));
    expect(parsed.stack).toBe("-weird");
    expect(parsed.project).toBe("--project");
    expect(parsed._[0]).toBe(program);
  });
});
