// The parser of the whole command line (cli/program.ts over cli/commands/index.ts), in process: generated
// help for every command, `help <cmd>`, --version, usage errors (exit 2 with the usage) with did-you-mean,
// and which command lines need the Pulumi toolchain (what bin/reprobench asks cli/needs.ts).
import { describe, expect, it } from "vitest";
import { commands } from "../../../cli/commands";
import { command } from "../../../cli/commands/command";
import { needsToolchain, runLine, version } from "../../../cli/program";

async function cli(...argv: string[]) {
  let out = "";
  let err = "";
  const code = await runLine(argv, { out: (t) => void (out += t), err: (t) => void (err += t) });
  return { code, out, err };
}

// Every flag each command had before the parser moved to commander, with its short form where it had one.
const FLAGS: Record<string, string[]> = {
  up: ["-s, --stack", "-r, --refresh", "--diff", "--expect-no-changes", "-t, --target", "--target-dependents", "--exclude", "--exclude-dependents", "--replace", "-p, --parallel", "-m, --message", "-y, --yes", "-f, --skip-preview"],
  preview: ["-s, --stack", "-r, --refresh", "--expect-no-changes", "-t, --target", "--replace", "-p, --parallel", "-m, --message"],
  down: ["-s, --stack", "-r, --refresh", "--diff", "-t, --target", "--exclude", "-p, --parallel", "-m, --message", "-y, --yes", "-f, --skip-preview"],
  audit: ["--overrides", "--json"],
  compare: ["--pass-threshold", "--allow-different-tasks", "--seed", "--resamples", "--level", "--html", "--json"],
  config: ["--require-secrets"],
  report: ["--out", "--overrides"],
  resume: ["--error-type", "--n-concurrent", "--dry-run", "--harbor", "-s, --stack", "--job", "--wait"],
  rerun: ["--job-name", "--api-base", "--dry-run", "--harbor", "-s, --stack", "--job", "--wait"],
  validate: ["--leaderboard", "--dataset", "--json"],
  pack: ["--out", "--agent", "--model", "--metadata", "--previous", "--dataset", "--tb-version"],
  pull: ["-s, --stack", "--job", "--method", "--port", "--identity", "-o, --option", "--ssh"],
  status: ["-s, --stack", "-w, --watch", "--interval", "--max-minutes", "--json", "--log-lines", "--earlier-jobs"],
  logs: ["-s, --stack", "-f, --follow", "-n, --lines"],
  sim: ["--hosts", "--take-over", "--discard-results", "--purge-images", "--json", "--latency-ms", "--bandwidth-kbps", "--fail-fraction", "--fail-with", "--fail-targets", "--seed", "--reset", "--anonymous", "--authenticated", "--window", "--clear-counts", "--counts", "--tasks", "--instance"],
  "forget-host": ["-s, --stack", "-y, --yes"],
  check: ["-s, --stack", "--json"],
};

describe("help", () => {
  it("lists every command with its summary; no command is a usage error", async () => {
    const r = await cli("--help");
    expect(r.code).toBe(0);
    for (const [name, c] of Object.entries(commands)) expect(r.out).toMatch(new RegExp(`\\n  ${name} .*${c.summary.slice(0, 20).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
    expect(r.out).toContain("help [command]");
    const none = await cli();
    expect(none.code).toBe(2);
    expect(none.err).toContain("usage: reprobench <command>");
  });

  it.each(Object.keys(FLAGS))("%s --help and help %s list every flag, exit 0", async (name) => {
    const a = await cli(name, "--help");
    const b = await cli("help", name);
    expect(a.code).toBe(0);
    expect(b).toEqual(a);
    expect(a.out).toMatch(new RegExp(`^usage: reprobench ${name} `));
    for (const flag of [...FLAGS[name], "-h, --help"]) expect(a.out).toContain(flag);
    // 104 columns for what commander lays out; the commands' own texts keep their lines (at most 107).
    expect(a.out.split("\n").filter((l) => l.length > 107)).toEqual([]);
  });

  it("has a test for every registered command's flags", () => {
    expect(Object.keys(commands).sort()).toEqual(Object.keys(FLAGS).sort());
  });

  it("keeps the commands' own texts", async () => {
    expect((await cli("resume", "--help")).out).toContain("that are not in its RetryConfig.exclude_exceptions default (models/job/config.py):");
    expect((await cli("pull", "-h")).out).toContain("reprobench pull --stack NAME [DIR]");
    expect((await cli("sim", "--help")).out).toContain("reprobench sim rehearsal [--tasks N]");
    expect((await cli("status", "--help")).out).toContain("ETA with a likely range");
  });

  it("--version and -V print package.json's version", async () => {
    expect(version()).toMatch(/^\d+\.\d+\.\d+/);
    expect(await cli("--version")).toEqual({ code: 0, out: `${version()}\n`, err: "" });
    expect((await cli("-V")).out).toBe(`${version()}\n`);
  });
});

describe("usage errors exit 2 with the usage, and suggest what was meant", () => {
  it.each([
    [["updd"], /Unknown command 'updd'\n\(Did you mean up\?\)/, "usage: reprobench <command>"],
    [["up", "--stak", "prod"], /Unknown option '--stak'\n\(Did you mean --stack\?\)/, "usage: reprobench up"],
    [["audit", "--jsn", "x"], /Did you mean --json\?/, "usage: reprobench audit"],
    [["status", "--stack"], /Option '-s, --stack <name>' argument missing/, "usage: reprobench status"],
    [["up", "--parallel", "zero"], /--parallel: got 'zero'; expected a positive integer/, "usage: reprobench up"],
    [["preview", "--yes"], /Unknown option '--yes'/, "usage: reprobench preview"],
    [["forget-host"], /Missing required argument 'host'/, "usage: reprobench forget-host"],
    [["logs", "a", "b"], /Too many arguments/, "usage: reprobench logs"],
    [["sim"], /Missing required argument 'action'/, "usage: reprobench sim"],
  ])("%j", async (argv, message, usage) => {
    const r = await cli(...argv);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(new RegExp(`^reprobench${argv[0] in commands ? ` ${argv[0]}` : ""}: `));
    expect(r.err).toMatch(message);
    expect(r.err).toContain(usage);
    expect(r.out).toBe("");
  });

  it("the commands' own argument checks exit 2 too (sim's values, a job dir missing)", async () => {
    const sim = await cli("sim", "down", "--hosts", "2");
    expect(sim).toMatchObject({ code: 2, err: expect.stringContaining("--hosts is not an option of 'sim down'") });
    const audit = await cli("audit");
    expect(audit.code).toBe(2);
    const status = await cli("status", "--stack", "local", "--earlier-jobs", "all");
    expect(status).toMatchObject({ code: 2, err: expect.stringContaining("--earlier-jobs: got 'all'; expected an integer from 0 to 100") });
  });
});

describe("needsToolchain", () => {
  it.each([
    [["up"], true],
    [["down", "-s", "prod", "-y"], true],
    [["preview", "--stack=dev"], true],
    [["status"], true],
    [["logs", "router"], true],
    [["forget-host", "worker-a"], true],
    [["check", "-s", "prod"], true],
    [["resume", "--stack", "prod", "--job", "j", "--wait"], true],
    [["resume", "-s", "prod"], true],
    [["rerun", "--stack=prod", "task-a"], true],
    [["pull", "-s", "prod"], true],
    [["pull", "runner", "/r/j", "out"], false],
    [["resume", "jobs/j"], false],
    [["rerun", "jobs/j", "--", "--stack"], false],
    [["audit", "jobs/j"], false],
    [["sim", "up"], false],
    [["config", "validate", "Pulumi.local.yaml"], false],
    [["up", "--help"], false],
    [["help", "up"], false],
    [["status", "--stack", "dev", "-h"], false],
    [["resume", "--stack", "prod", "--help"], false],
    [["--version"], false],
    [["up", "--bogus"], false],
    [["nope"], false],
    [[], false],
  ])("%j → %s", async (argv, expected) => {
    expect(await needsToolchain(argv)).toBe(expected);
  });
});

describe("adding a command", () => {
  it("is one spec: the parser gives it help, usage errors, its action and its toolchain decision", async () => {
    const ran: unknown[] = [];
    const hello = command("hello", {
      summary: "say hello",
      define: (cmd) => cmd.argument("<who>").option("-s, --stack <name>", "stack").option("--loud", "shout"),
      toolchain: ({ opts }) => opts.stack !== undefined,
      action: async ({ opts, args }) => (ran.push({ opts, args }), 0),
    });
    const table = { hello };
    const io = { out: () => undefined, err: () => undefined };
    expect(await runLine(["hello", "world", "--loud"], io, table)).toBe(0);
    expect(ran).toEqual([{ opts: { loud: true }, args: ["world"] }]);
    expect(await runLine(["hello", "--lod", "x"], io, table)).toBe(2);
    expect(await needsToolchain(["hello", "x", "-s", "prod"], table)).toBe(true);
    expect(await needsToolchain(["hello", "x"], table)).toBe(false);
    expect(await hello.run(["x"])).toBe(0);
    await expect(hello.run([])).rejects.toThrow(/Missing required argument 'who'/);
  });
});
