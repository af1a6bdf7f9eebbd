// The thin CLI wrappers, end to end on fixture trees (Harbor and ssh replaced by recording stand-ins).
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { audit } from "../../../cli/commands/audit";
import { pull } from "../../../cli/commands/pull";
import { report } from "../../../cli/commands/report";
import { rerun, resume } from "../../../cli/commands/resume";
import { validate } from "../../../cli/commands/validate";
import { AuditReportSchema } from "../../../results/schema";
import { at, MULTI_PASS_OVERRIDES, tempDir, writeJob, writeMultiPassScenario } from "../../fixtures/results/build";
import { writeSubmissionTree } from "../../helpers/harbor-tree";

const FAKE_HARBOR = path.join(__dirname, "../../fixtures/results/fake-harbor.sh");
const FAKE_SSH = path.join(__dirname, "../../fixtures/results/fake-ssh.sh");

let root: string;
let out: string[];
let err: string[];
beforeAll(() => {
  root = tempDir();
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

function capture(): void {
  out = [];
  err = [];
  vi.spyOn(console, "log").mockImplementation((...a: unknown[]) => void out.push(a.join(" ")));
  vi.spyOn(console, "error").mockImplementation((...a: unknown[]) => void err.push(a.join(" ")));
}

const harborLog = (file: string) => {
  const lines = fs.readFileSync(file, "utf8").trim().split("\n");
  return { cwd: lines[0].slice(4), telemetry: lines[1].slice(10), args: lines.slice(2).map((l) => l.slice(4)) };
};

describe("audit / report", () => {
  it("audit --json emits the versioned schema; no args is a usage error", async () => {
    const dirs = writeMultiPassScenario(path.join(root, "a", "jobs"));
    const overrides = path.join(root, "a", "overrides.yaml");
    fs.writeFileSync(overrides, MULTI_PASS_OVERRIDES);
    capture();
    expect(await audit.run([...dirs, "--overrides", overrides, "--json"])).toBe(0);
    const doc = AuditReportSchema.parse(JSON.parse(out.join("\n")));
    expect(doc.scores.corrected.passed).toBe(4);
    capture();
    expect(await audit.run([])).toBe(2);
    expect(err[0]).toMatch(/give at least one job dir/);
    await expect(audit.run([dirs[0], "--overrides", "/nonexistent.yaml"])).rejects.toThrow("--overrides /nonexistent.yaml: no such file");
    await expect(audit.run(["--bogus"])).rejects.toThrow(/Unknown option '--bogus'/);
  });

  it("report writes report.md and a self-contained report.html", async () => {
    const dirs = writeMultiPassScenario(path.join(root, "r", "jobs"));
    const dest = path.join(root, "r", "out");
    capture();
    expect(await report.run([...dirs, "--out", dest])).toBe(0);
    expect(out.join("\n")).toContain("(no manifest found)");
    expect(fs.readFileSync(path.join(dest, "report.md"), "utf8")).toContain("# Terminal-Bench run report");
    expect(fs.statSync(path.join(dest, "report.html")).size).toBeGreaterThan(150_000); // Chart.js is inside
  });
});

describe("resume / rerun", () => {
  const trials = [
    { task: "a", reward: 1, start: at(0) },
    { task: "b", exception: "CancelledError", start: at(0) },
    { task: "c", exception: "ReadTimeout", start: at(0) },
  ];

  it("--dry-run prints the plan and the command and changes nothing", async () => {
    const jobDir = writeJob(path.join(root, "dry", "jobs"), { name: "run1", trials });
    const before = fs.readFileSync(path.join(jobDir, "lock.json"), "utf8");
    capture();
    expect(await resume.run([jobDir, "--n-concurrent", "30", "--dry-run"])).toBe(0);
    const text = out.join("\n");
    expect(text).toContain("trials Harbor will delete and re-run: 2 (CancelledError 1, ReadTimeout 1)");
    expect(text).toContain("edit lock.json: n_concurrent_trials 25 → 30 (--n-concurrent)");
    expect(text).toMatch(new RegExp(`command \\(cwd ${path.dirname(jobDir)}\\): HARBOR_TELEMETRY=0 harbor job resume -p ${jobDir} -f `));
    expect(fs.readFileSync(path.join(jobDir, "lock.json"), "utf8")).toBe(before);
  });

  it("runs harbor from the right cwd with -p absolute, after syncing config.json/lock.json with backups", async () => {
    const jobDir = writeJob(path.join(root, "run", "jobs"), { name: "run1", trials });
    const log = path.join(root, "run", "harbor.log");
    process.env.FAKE_HARBOR_LOG = log;
    capture();
    expect(await resume.run([jobDir, "--n-concurrent", "30", "--error-type", "ReadTimeout", "--error-type", "CancelledError", "--harbor", FAKE_HARBOR])).toBe(0);
    delete process.env.FAKE_HARBOR_LOG;
    const h = harborLog(log);
    expect(h.cwd).toBe(path.dirname(jobDir));
    expect(h.telemetry).toBe("0");
    expect(h.args).toEqual(["job", "resume", "-p", jobDir, "-f", "ReadTimeout", "-f", "CancelledError"]);
    expect(JSON.parse(fs.readFileSync(path.join(jobDir, "config.json"), "utf8")).n_concurrent_trials).toBe(30);
    expect(JSON.parse(fs.readFileSync(path.join(jobDir, "lock.json"), "utf8")).n_concurrent_trials).toBe(30);
    const backups = fs.readdirSync(jobDir).filter((f) => f.includes(".bak-"));
    expect(backups.sort().map((b) => b.split(".bak-")[0])).toEqual(["config.json", "lock.json"]);
  });

  it("moves the trials a stop cut short beside the job dir, logs and all, before Harbor re-runs them", async () => {
    const jobDir = writeJob(path.join(root, "cut", "jobs"), {
      name: "run1",
      trials: [...trials, { task: "d", exception: "AgentTimeoutError", start: at(0) }, { task: "e", start: at(0) }],
    });
    const cut = fs.readdirSync(jobDir).find((d) => d.startsWith("d__"))!;
    const interrupted = fs.readdirSync(jobDir).find((d) => d.startsWith("e__"))!;
    fs.appendFileSync(path.join(jobDir, cut, "trial.log"), `Trial ${cut} cancelled\n`);
    const log = path.join(root, "cut", "harbor.log");
    process.env.FAKE_HARBOR_LOG = log;
    capture();
    expect(await resume.run([jobDir, "--harbor", FAKE_HARBOR])).toBe(0);
    delete process.env.FAKE_HARBOR_LOG;
    const printed = out.join("\n");
    expect(printed).toContain(`trials a stop cut short, without a reward, moved to ${jobDir}.cancelled-trials and re-run: 2`);
    expect(printed).toContain(`${cut}  AgentTimeoutError, then cancelled`);
    expect(printed).toContain(`${interrupted}  interrupted, no exception recorded`);
    expect(fs.existsSync(path.join(jobDir, interrupted))).toBe(false);
    expect(fs.existsSync(path.join(`${jobDir}.cancelled-trials`, interrupted, "result.json"))).toBe(true);
    expect(fs.existsSync(path.join(jobDir, cut))).toBe(false);
    expect(fs.readFileSync(path.join(`${jobDir}.cancelled-trials`, cut, "trial.log"), "utf8")).toContain(`Trial ${cut} cancelled`);
    expect(fs.existsSync(path.join(`${jobDir}.cancelled-trials`, cut, "result.json"))).toBe(true);
    expect(harborLog(log).args.slice(0, 4)).toEqual(["job", "resume", "-p", jobDir]);
  });

  it("refuses a set-aside whose target exists before editing or moving anything", async () => {
    const jobDir = writeJob(path.join(root, "cut-taken", "jobs"), { name: "run1", trials: [...trials, { task: "d", exception: "AgentTimeoutError", start: at(0) }] });
    const cut = fs.readdirSync(jobDir).find((d) => d.startsWith("d__"))!;
    fs.appendFileSync(path.join(jobDir, cut, "trial.log"), `Trial ${cut} cancelled\n`);
    fs.mkdirSync(path.join(`${jobDir}.cancelled-trials`, cut), { recursive: true });
    const lock = fs.readFileSync(path.join(jobDir, "lock.json"), "utf8");
    capture();
    await expect(resume.run([jobDir, "--n-concurrent", "30", "--harbor", "/nonexistent/harbor"])).rejects.toThrow(/already exist/);
    expect(fs.existsSync(path.join(jobDir, cut, "result.json"))).toBe(true);
    expect(fs.readFileSync(path.join(jobDir, "lock.json"), "utf8")).toBe(lock);
    expect(fs.readdirSync(jobDir).filter((f) => f.includes(".bak-"))).toEqual([]);
  });

  it("refuses with exit 1 when the endpoint changed, before touching anything", async () => {
    const jobDir = writeJob(path.join(root, "moved", "jobs"), { name: "run1", trials });
    const cfgFile = path.join(jobDir, "config.json");
    const cfg = JSON.parse(fs.readFileSync(cfgFile, "utf8"));
    cfg.agents[0].kwargs.api_base = "http://10.9.9.9:30000/v1";
    fs.writeFileSync(cfgFile, JSON.stringify(cfg));
    capture();
    expect(await resume.run([jobDir, "--harbor", "/nonexistent/harbor"])).toBe(1);
    expect(err.join("\n")).toMatch(/refusing to resume .*\n.*no longer matches/);
    expect(err.join("\n")).toContain("agents[0].kwargs.api_base");
  });

  it("--help says which error types a mop-up re-runs by default and which it leaves alone, and why", async () => {
    capture();
    expect(await resume.run(["--help"])).toBe(0);
    const help = out.join("\n");
    expect(help).toContain("that are not in its RetryConfig.exclude_exceptions default (models/job/config.py):");
    const defaults = help.slice(help.indexOf("(models/job/config.py):"), help.indexOf("Not re-run unless named"));
    expect(defaults).toMatch(/CancelledError,[\s\S]*NetworkConnectionError,[\s\S]*SandboxError,/);
    expect(defaults).not.toMatch(/AgentAuthenticationError|ModelNotFoundError|ApiUsageLimitError|AgentTimeoutError/);
    const left = help.slice(help.indexOf("Not re-run unless named"));
    expect(left).toContain("fail again the same way until the API key, model name or quota is fixed");
    expect(left).toContain("AgentAuthenticationError, ApiKeyRejectedError, ApiUsageLimitError, ModelNotFoundError");
    expect(help.split("\n").every((l) => l.length <= 104)).toBe(true);
  });

  it("a missing harbor binary is a clear error", async () => {
    const jobDir = writeJob(path.join(root, "nobin", "jobs"), { name: "run1", trials });
    capture();
    await expect(resume.run([jobDir, "--harbor", "/nonexistent/harbor"])).rejects.toThrow("'/nonexistent/harbor' not found");
  });

  it("rerun writes the new job config beside the old job and runs harbor run", async () => {
    const jobsDir = path.join(root, "rr", "jobs");
    const jobDir = writeJob(jobsDir, { name: "run1", trials });
    const log = path.join(root, "rr", "harbor.log");
    process.env.FAKE_HARBOR_LOG = log;
    capture();
    expect(await rerun.run([jobDir, "c", "--job-name", "run1-fix", "--api-base", "http://10.9.9.9:30000/v1", "--harbor", FAKE_HARBOR])).toBe(0);
    delete process.env.FAKE_HARBOR_LOG;
    const cfg = JSON.parse(fs.readFileSync(path.join(jobsDir, "run1-fix.job.json"), "utf8"));
    expect(cfg.tasks).toEqual([{ path: "/data/tb21/tasks/c" }]);
    expect(cfg.agents[0].kwargs.api_base).toBe("http://10.9.9.9:30000/v1");
    expect(harborLog(log).args).toEqual(["run", "-c", path.join(jobsDir, "run1-fix.job.json"), "--job-name", "run1-fix", "--jobs-dir", jobsDir, "-y"]);
    expect(out.join("\n")).toContain(`reprobench audit ${jobDir} ${path.join(jobsDir, "run1-fix")}`);
  });
});

describe("validate / pull", () => {
  it("validate exits 0 for a submission and 1 for a reproduction", async () => {
    const mini = { tasks: 3, dataset: { path: "/data/tb-mini/tasks" } };
    capture();
    expect(await validate.run(["--leaderboard", writeSubmissionTree(path.join(root, "v-ok"), mini)])).toBe(0);
    expect(out[0]).toMatch(/^SUBMISSION: /);
    capture();
    expect(await validate.run(["--leaderboard", writeSubmissionTree(path.join(root, "v-6x"), { ...mini, runConfig: { agent_timeout_multiplier: 6 } })])).toBe(1);
    expect(out[0]).toMatch(/^REPRODUCTION: a reproduction, not a leaderboard submission: job config\.json: agent_timeout_multiplier is 6/);
    expect(out.join("\n")).toMatch(/✗ \[run-conditions\] trial config\.json: agent_timeout_multiplier is 6 .* … \(15 in all\) \(source: README, INTEGRITY\)/);
  });

  it("pull --method tar copies the job dir", async () => {
    const remote = writeJob(path.join(root, "p", "remote"), { name: "job-9", trials: [{ task: "a", reward: 1, start: at(0) }] });
    const local = path.join(root, "p", "local");
    capture();
    expect(await pull.run(["runner", remote, local, "--method", "tar", "--ssh", FAKE_SSH])).toBe(0);
    expect(out.join("\n")).toMatch(/tar over ssh → .*job-9: \d+ file\(s\) fetched/);
    expect(fs.existsSync(path.join(local, "job-9", "result.json"))).toBe(true);
    await expect(pull.run(["--", "-oProxyCommand=x", remote, local])).rejects.toThrow("ssh target '-oProxyCommand=x'");
  });
});
