// `reprobench up|preview|down`: argument parsing, the run-location summary, and the per-checkout copy of
// a stack file that Pulumi gets as --config-file (so it never writes into the tracked one).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseStackArgs, pulumiExitCode, runLocation } from "../../../cli/commands/stack";
import { pulumiStderr, refreshStackConfigCopy, STACK_CONFIG_DIR } from "../../../cli/pulumi-stack";

describe("parseStackArgs", () => {
  it("leaves the stack to the default (cli/stack-default.ts); preview always diffs", () => {
    expect(parseStackArgs([], "up")).toMatchObject({ stack: undefined, yes: false, refresh: false, diff: false, target: [] });
    expect(parseStackArgs([], "preview").diff).toBe(true);
  });

  it("maps pulumi's flags, long, short and --flag=value (short flags take -tVALUE or -t VALUE)", () => {
    const a = parseStackArgs(["-s", "prod", "--refresh", "--target", "urn:a", "-t", "urn:b", "--parallel=4", "-m", "why", "--yes", "-f"], "up");
    expect(a).toMatchObject({ stack: "prod", yes: true, refresh: true, target: ["urn:a", "urn:b"], parallel: 4, message: "why" });
    expect(parseStackArgs(["--stack=dev", "--expect-no-changes", "--replace", "urn:w"], "preview")).toMatchObject({ stack: "dev", expectNoChanges: true, replace: ["urn:w"] });
    expect(parseStackArgs(["-y"], "down").yes).toBe(true);
  });

  it("names what it refuses", () => {
    expect(() => parseStackArgs(["--stack"], "up")).toThrow("Option '-s, --stack <name>' argument missing");
    expect(() => parseStackArgs(["--stack", "a/b"], "up")).toThrow('invalid stack name "a/b"');
    expect(() => parseStackArgs(["--replace", "urn:x"], "down")).toThrow(/Unknown option '--replace'/);
    expect(() => parseStackArgs(["--yes"], "preview")).toThrow(/Unknown option '--yes'/);
    expect(() => parseStackArgs(["--parallel", "0"], "up")).toThrow(/--parallel: got '0'; expected a positive integer/);
    expect(() => parseStackArgs(["--refesh"], "up")).toThrow(/Did you mean --refresh\?/);
  });
});

describe("runLocation", () => {
  it("prints the job's results and log; nothing without a job", () => {
    const text = runLocation("local", { jobName: "sim-terminus2-1", jobsDir: "/var/lib/reprobench/jobs", jobLog: "/var/log/j.log", jobState: "succeeded" });
    expect(text).toContain("results: /var/lib/reprobench/jobs/sim-terminus2-1");
    expect(text).toContain("log: /var/log/j.log");
    expect(text).toContain("sim down copies the jobs directory");
    expect(runLocation("prod", { jobName: "run disabled" })).toBeUndefined();
  });
});

describe("refreshStackConfigCopy", () => {
  let root = "";
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("copies the tracked files byte for byte into the ignored state dir, and refreshes over Pulumi's edits", () => {
    root = mkdtempSync(join(tmpdir(), "reprobench-stackcopy-"));
    writeFileSync(join(root, "Pulumi.yaml"), "name: reprobench\nruntime: nodejs\n");
    const tracked = "# comment\nconfig:\n  reprobench:run:\n    agentTimeoutMultiplier: 1.0\n";
    writeFileSync(join(root, "Pulumi.local.yaml"), tracked);
    const copy = refreshStackConfigCopy(root, "local");
    expect(copy).toEqual({ dir: join(root, STACK_CONFIG_DIR), file: join(root, STACK_CONFIG_DIR, "Pulumi.local.yaml") });
    expect(readFileSync(copy.file, "utf8")).toBe(tracked);
    expect(readFileSync(join(copy.dir, "Pulumi.yaml"), "utf8")).toContain("name: reprobench");
    // What Pulumi does to the file it is given (salt, re-serialised numbers) never reaches the tracked one…
    writeFileSync(copy.file, "encryptionsalt: v1:abc\nconfig:\n  reprobench:run:\n    agentTimeoutMultiplier: 1\n");
    expect(readFileSync(join(root, "Pulumi.local.yaml"), "utf8")).toBe(tracked);
    // …and a user's edit of the tracked file reaches the next operation.
    writeFileSync(join(root, "Pulumi.local.yaml"), tracked.replace("1.0", "3.0"));
    expect(readFileSync(refreshStackConfigCopy(root, "local").file, "utf8")).toContain("agentTimeoutMultiplier: 3.0");
    expect(STACK_CONFIG_DIR.startsWith(".pulumi-state/")).toBe(true); // ignored by .gitignore
  });

  it("names a stack without a file", () => {
    root = mkdtempSync(join(tmpdir(), "reprobench-stackcopy-"));
    expect(() => refreshStackConfigCopy(root, "nope")).toThrow(`no stack file Pulumi.nope.yaml in ${root}`);
  });
});

describe("pulumiStderr", () => {
  it("takes the stderr part of an Automation API error", () => {
    const e = new Error("code: 255\n stdout: Updating…\n stderr: error: no Pulumi.yaml project file found\n err?: Error: x\n");
    expect(pulumiStderr(e)).toBe("error: no Pulumi.yaml project file found");
    expect(pulumiStderr(new Error("plain"))).toBe("plain");
  });
});

describe("pulumiExitCode", () => {
  it("finds pulumi's exit code in both shapes of Automation API errors", () => {
    expect(pulumiExitCode(new Error("code: 255\n stdout: \n stderr: error\n err?: \n"))).toBe(255);
    expect(pulumiExitCode(new Error("code: -2\n stdout: \n stderr: Command failed with exit code 255: pulumi up --yes\n err?: Error: Command failed with exit code 255"))).toBe(255);
    expect(pulumiExitCode(new Error("code: -2\n stdout: \n stderr: spawn pulumi ENOENT\n err?: "))).toBeUndefined();
  });
});
