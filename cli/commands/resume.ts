// `reprobench resume` (mop-up pass) and `reprobench rerun` (new job for some tasks). Planning and checks
// are pure (results/resume.ts); this file reads the job, prints the plan, writes files, runs Harbor.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { collect, command, type CliCommand, type CommandSpec, parseCommand, type Parsed } from "./command";
import { asRecord, HarborConfig } from "../../results/harbor";
import { readJob } from "../../results/load";
import { shellQuote } from "../../components/transport";
import { planRerun, planResume } from "../../results/resume";
import { defaultMopUpErrorTypes, nonTransientUnscoredTypes } from "../../results/taxonomy";
import { fetchRemoteJob, type RemoteJob, runRemotePass } from "../remote-pass";

/** Where `--stack` finds the stack files and their state (the checkout; tests and benches pass a copy). */
export interface PassContext {
  root: string;
  /** Environment for pulumi (backend, passphrase). */
  env?: Record<string, string>;
}

const checkout: PassContext = { root: path.resolve(__dirname, "..", "..") };

/** "a, b, c" wrapped to lines of at most `width` characters, each indented. */
function wrapList(items: readonly string[], indent: string, width = 100): string {
  const lines: string[] = [];
  let line = "";
  for (const [i, item] of items.entries()) {
    const piece = i < items.length - 1 ? `${item},` : item;
    if (line && indent.length + line.length + 1 + piece.length > width) {
      lines.push(indent + line);
      line = piece;
    } else line = line ? `${line} ${piece}` : piece;
  }
  if (line) lines.push(indent + line);
  return lines.join("\n");
}

const RESUME_USAGE = `usage: reprobench resume <job dir> [--error-type T]… [--n-concurrent N] [--dry-run] [--harbor BIN]
       reprobench resume --stack S [--job NAME] [--wait] [--error-type T]… [--n-concurrent N]`;

const RESUME_HELP = `
${RESUME_USAGE}

Mop-up pass: \`harbor job resume\` deletes the trials whose exception type is in the filter and runs
them again; every other trial is kept.

Default filter: the infra, setup and cancelled types that Harbor 0.21 itself treats as transient, i.e.
that are not in its RetryConfig.exclude_exceptions default (models/job/config.py):
${wrapList(defaultMopUpErrorTypes(), "  ")}
(CancelledError is also Harbor's own resume default, which -f replaces.)
A trial Harbor cancelled after it had recorded another exception (its trial.log says so: a stop in a
timed-out trial's verifier) keeps that exception and no reward; so does a trial the stop's SIGTERM
(KeyboardInterrupt in harbor) interrupted, with no exception and no reward at all. Harbor keeps both as
final; with CancelledError in the filter they are moved to <job dir>.cancelled-trials and run again.
Not re-run unless named with --error-type:
  - unscored, but they fail again the same way until the API key, model name or quota is fixed (fix
    that, then name them):
${wrapList(nonTransientUnscoredTypes(), "    ")}
  - AgentTimeoutError, VerifierTimeoutError and other errors the audit scores: legitimate results.
--error-type replaces the whole default (as Harbor's -f does), so list every type you want.

Refuses, saying why and what to do instead, when config.json's agent (model endpoint, kwargs) or
environment differs from the kept trials' configs, or when Harbor would resolve a different job dir.
Keeps config.json and lock.json consistent (n_concurrent_trials; --n-concurrent changes both, with
backups). --dry-run prints the plan and the command without changing or running anything.

--stack: the job is on that stack's runner (default: the job in its outputs; --job names another,
e.g. one a destroy stopped). The plan is made from the job's JSON files; Harbor then runs on the
runner under the unit reprobench-resume-<job>.service with the stack's API key, its log under
harbor.workDir/logs/; --wait waits for it to exit.`;

const RERUN_USAGE = `usage: reprobench rerun <job dir> <task>… [--job-name NAME] [--api-base URL] [--dry-run] [--harbor BIN]
       reprobench rerun --stack S [--job NAME] <task>… [--job-name NAME] [--api-base URL] [--wait]`;

const RERUN_HELP = `
${RERUN_USAGE}

Starts a NEW Harbor job, beside the old one, with just these tasks (their exact task refs) and the old
job's settings; --api-base points it at a new model endpoint. Audit both job dirs together afterwards:
per task the newest genuine trial counts (an infra error or cancellation never displaces a result).
--stack: the old job is on that stack's runner (see resume --help); the new job starts there under the
unit reprobench-rerun-<new job>.service.`;

function readJsonFile(file: string): HarborConfig | null {
  if (!fs.existsSync(file)) return null;
  try {
    return asRecord(JSON.parse(fs.readFileSync(file, "utf8")));
  } catch (err) {
    throw new Error(`${file}: not valid JSON (${err instanceof Error ? err.message : String(err)})`);
  }
}

const commandLine = (argv: string[]): string => argv.map((a) => shellQuote(a)).join(" ");

/** The options of the `--stack` form, shared by resume and rerun. */
function remoteOptions(cmd: CliCommand): CliCommand {
  return cmd
    .option("-s, --stack <name>", "the job is on that stack's runner")
    .option("--job <name>", "with --stack: that job (default: the one in the stack's outputs)")
    .option("--wait", "with --stack: wait for the pass on the runner to exit");
}

/** The `--stack` form reads the stack's outputs: it needs the toolchain. */
const remoteToolchain = ({ opts }: Parsed): boolean => opts.stack !== undefined;

/** What is wrong with the `--stack` options of `command`, or null. */
function remoteUsageProblem(command: string, values: { stack?: string; job?: string; wait?: boolean; harbor?: string }): string | null {
  if (values.stack === undefined) {
    const stray = (["job", "wait"] as const).find((k) => values[k] !== undefined);
    return stray ? `reprobench ${command}: --${stray} needs --stack` : null;
  }
  return values.harbor !== undefined ? `reprobench ${command}: --harbor is for a local job dir; with --stack Harbor is the runner's (harbor.venv)` : null;
}

/** Runs Harbor with inherited stdio; resolves to its exit code. */
function runHarbor(argv: string[], cwd: string, env: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { cwd, env: { ...process.env, ...env }, stdio: "inherit" });
    child.on("error", (err: NodeJS.ErrnoException) =>
      reject(err.code === "ENOENT" ? new Error(`'${argv[0]}' not found: install Harbor or pass --harbor /path/to/harbor (or use --dry-run)`) : err),
    );
    child.on("exit", (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

function warnMissingKey(config: HarborConfig): void {
  const usesLiteLlm = (Array.isArray(config.agents) ? config.agents : []).some((a) => /terminus/.test(String(asRecord(a).name ?? "")));
  if (usesLiteLlm && !process.env.OPENAI_API_KEY) {
    console.error("warning: OPENAI_API_KEY is not set; Terminus-2 reads it from Harbor's own environment (any value for a keyless router)");
  }
}

function backup(file: string, stamp: string): string {
  const copy = `${file}.bak-${stamp}`;
  fs.copyFileSync(file, copy);
  return copy;
}

const resumeSpec = (ctx: PassContext): CommandSpec => ({
  summary: "mop-up pass over transient infra errors and cancelled trials via harbor job resume (checks first)",
  define: (cmd) =>
    remoteOptions(
      cmd
        .argument("[job dir]", "the local job dir (not with --stack)")
        .option("--error-type <type>", "re-run trials with this exception type (repeatable; replaces the default filter)", collect)
        .option("--n-concurrent <n>", "trials at once (changes config.json and lock.json, with backups)")
        .option("--dry-run", "print the plan and the command; change and run nothing")
        .option("--harbor <bin>", "the harbor program (local job dir only)"),
    ).addHelpText("after", RESUME_HELP),
  toolchain: remoteToolchain,
  action: (p) => resumeAction(p, ctx),
});

type ResumeValues = { stack?: string; job?: string; wait?: boolean; "error-type"?: string[]; "n-concurrent"?: string; "dry-run"?: boolean; harbor?: string };

export const resume = command("resume", resumeSpec(checkout));

/** `reprobench resume` with the stack files and state of `ctx`. */
export async function runResume(args: string[], ctx: PassContext): Promise<number> {
  const parsed = parseCommand("resume", resumeSpec(ctx), args);
  return parsed ? resumeAction(parsed, ctx) : 0;
}

async function resumeAction({ opts, args: positionals }: Parsed, ctx: PassContext): Promise<number> {
  const values: ResumeValues = {
    stack: opts.stack as string | undefined,
    job: opts.job as string | undefined,
    wait: opts.wait as boolean | undefined,
    "error-type": opts.errorType as string[] | undefined,
    "n-concurrent": opts.nConcurrent as string | undefined,
    "dry-run": opts.dryRun as boolean | undefined,
    harbor: opts.harbor as string | undefined,
  };
  const problem = remoteUsageProblem("resume", values);
  if (problem) {
    console.error(`${problem}\n\n${RESUME_USAGE}`);
    return 2;
  }
  if (values.stack !== undefined ? positionals.length !== 0 : positionals.length !== 1) {
    console.error(`reprobench resume: give exactly one job dir, or --stack (without a dir)\n\n${RESUME_USAGE}`);
    return 2;
  }
  if (values.stack !== undefined) console.error(`stack: ${values.stack}`);
  const remote = values.stack !== undefined ? await fetchRemoteJob(ctx, values.stack, values.job) : undefined;
  try {
    return await resumeJob(ctx, remote, positionals[0], values);
  } finally {
    remote?.dispose();
  }
}

async function resumeJob(
  ctx: PassContext,
  remote: RemoteJob | undefined,
  dir: string | undefined,
  values: { "error-type"?: string[]; "n-concurrent"?: string; "dry-run"?: boolean; harbor?: string; wait?: boolean },
): Promise<number> {
  const jobDir = remote ? remote.remoteDir : path.resolve(dir!);
  const job = remote ? remote.job : readJob(jobDir);
  const config = readJsonFile(path.join(job.dir, "config.json"));
  if (!config) throw new Error(`${jobDir}/config.json is missing: Harbor cannot resume a job without it (it would start over)`);
  const lock = readJsonFile(path.join(job.dir, "lock.json"));
  let nConcurrent: number | undefined;
  if (values["n-concurrent"] !== undefined) {
    nConcurrent = Number(values["n-concurrent"]);
    if (!Number.isInteger(nConcurrent) || nConcurrent < 1) throw new Error(`--n-concurrent '${values["n-concurrent"]}' must be a positive integer`);
  }
  const plan = planResume(
    {
      jobDir,
      config,
      lock,
      trials: job.trials.map((t) => ({
        dir: t.path.split("/").slice(1).join("/"),
        task: t.task,
        exceptionType: t.exceptionType,
        config: t.config,
        cancelledAfterException: t.cancelledAfterException,
        interruptedWithoutRecord: t.interruptedWithoutRecord,
      })),
      incompleteTrialDirs: job.incompleteTrialDirs,
    },
    { errorTypes: values["error-type"], nConcurrent, harborBin: values.harbor },
  );

  const byType = new Map<string, number>();
  for (const t of plan.trialsToRerun) byType.set(t.exceptionType, (byType.get(t.exceptionType) ?? 0) + 1);
  console.log(`job: ${jobDir} (${job.trials.length} trials with result.json, ${job.incompleteTrialDirs.length} without)`);
  console.log(`filter: ${plan.errorTypes.join(", ")}`);
  console.log(`trials Harbor will delete and re-run: ${plan.trialsToRerun.length}${byType.size ? ` (${[...byType].map(([t, n]) => `${t} ${n}`).join(", ")})` : ""}`);
  for (const t of plan.trialsToRerun.slice(0, 20)) console.log(`  ${t.dir}  ${t.exceptionType}`);
  if (plan.trialsToRerun.length > 20) console.log(`  … ${plan.trialsToRerun.length - 20} more`);
  if (plan.trialsToSetAside.length) {
    console.log(`trials a stop cut short, without a reward, moved to ${plan.setAsideDir} and re-run: ${plan.trialsToSetAside.length}`);
    for (const t of plan.trialsToSetAside.slice(0, 20)) {
      console.log(`  ${t.dir}  ${t.exceptionType === null ? "interrupted, no exception recorded" : `${t.exceptionType}, then cancelled`}`);
    }
  }
  if (plan.keptNonTransient.length) console.log(`kept (would fail the same way again): ${plan.keptNonTransient.length}`);
  for (const e of plan.edits) console.log(`edit ${e.file}: ${e.key} ${JSON.stringify(e.from)} → ${JSON.stringify(e.to)} (${e.why})`);
  for (const w of plan.warnings) console.error(`warning: ${w}`);
  if (plan.refusal) {
    console.error(`\nrefusing to resume ${jobDir}:\n${plan.refusal}`);
    return 1;
  }
  console.log(`command (cwd ${plan.cwd}): HARBOR_TELEMETRY=0 ${commandLine(plan.argv)}`);
  if (values["dry-run"]) return 0;

  const edited = [...new Set(plan.edits.map((e) => e.file))].map((file) => ({ file, content: `${JSON.stringify(file === "config.json" ? plan.config : plan.lock, null, 4)}\n` }));
  if (remote) {
    const files = edited.map((e) => ({ path: path.posix.join(jobDir, e.file), content: e.content }));
    const moves = plan.trialsToSetAside.map((t) => ({ from: path.posix.join(jobDir, t.dir), to: path.posix.join(plan.setAsideDir, t.dir) }));
    const ran = await runRemotePass(remote, { kind: "resume", jobName: job.name, jobDir, argv: plan.argv, cwd: plan.cwd, files, moves, wait: values.wait === true });
    return reportRemotePass(ran, values.wait === true, remote.access.stack);
  }
  // Every set-aside target is checked before anything is edited or moved: a refusal changes nothing.
  const taken = plan.trialsToSetAside.map((t) => path.join(plan.setAsideDir, t.dir)).filter((to) => fs.existsSync(to));
  if (taken.length) throw new Error(`${taken.join(", ")} already exist(s): set aside by an earlier resume; move them away, then resume again`);
  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace(/\..*$/, "");
  for (const { file, content } of edited) {
    const abs = path.join(jobDir, file);
    console.log(`backup ${backup(abs, stamp)}`);
    fs.writeFileSync(abs, content);
  }
  for (const t of plan.trialsToSetAside) {
    const to = path.join(plan.setAsideDir, t.dir);
    fs.mkdirSync(plan.setAsideDir, { recursive: true });
    fs.renameSync(path.join(jobDir, t.dir), to);
    console.log(`moved ${t.dir} to ${plan.setAsideDir}/`);
  }
  warnMissingKey(plan.config);
  return runHarbor(plan.argv, plan.cwd, plan.env);
}

/** What a pass on the runner did, and how to follow it. */
function reportRemotePass(ran: { unit: string; log: string; exitStatus: string | null; logTail: string }, waited: boolean, stack: string): number {
  if (!waited) {
    console.log(`started ${ran.unit} on the runner; log ${ran.log} (reprobench status --stack ${stack} follows the job)`);
    return 0;
  }
  const status = ran.exitStatus === null || ran.exitStatus === "" ? 0 : Number(ran.exitStatus);
  console.log(`${ran.unit} exited with status ${Number.isFinite(status) ? status : ran.exitStatus}; log ${ran.log}`);
  if (status !== 0 && ran.logTail) console.error(`the log's last lines:\n${ran.logTail.replace(/^/gm, "  | ")}`);
  return Number.isFinite(status) ? status : 1;
}

const rerunSpec = (ctx: PassContext): CommandSpec => ({
  summary: "start a new Harbor job with just the given tasks, for audit to merge",
  define: (cmd) =>
    remoteOptions(
      cmd
        .argument("[job dir and tasks...]", "the old job dir (not with --stack), then the tasks")
        .option("--job-name <name>", "the new job's name")
        .option("--api-base <url>", "point the new job at this model endpoint")
        .option("--dry-run", "print the plan, the command and the new config; run nothing")
        .option("--harbor <bin>", "the harbor program (local job dir only)"),
    ).addHelpText("after", RERUN_HELP),
  toolchain: remoteToolchain,
  action: (p) => rerunAction(p, ctx),
});

export const rerun = command("rerun", rerunSpec(checkout));

/** `reprobench rerun` with the stack files and state of `ctx`. */
export async function runRerun(args: string[], ctx: PassContext): Promise<number> {
  const parsed = parseCommand("rerun", rerunSpec(ctx), args);
  return parsed ? rerunAction(parsed, ctx) : 0;
}

async function rerunAction({ opts, args: positionals }: Parsed, ctx: PassContext): Promise<number> {
  const values = {
    stack: opts.stack as string | undefined,
    job: opts.job as string | undefined,
    wait: opts.wait as boolean | undefined,
    "job-name": opts.jobName as string | undefined,
    "api-base": opts.apiBase as string | undefined,
    "dry-run": opts.dryRun as boolean | undefined,
    harbor: opts.harbor as string | undefined,
  };
  const problem = remoteUsageProblem("rerun", values);
  if (problem) {
    console.error(`${problem}\n\n${RERUN_USAGE}`);
    return 2;
  }
  const minimum = values.stack !== undefined ? 1 : 2;
  if (positionals.length < minimum) {
    console.error(`reprobench rerun: give ${values.stack !== undefined ? "" : "a job dir and "}at least one task\n\n${RERUN_USAGE}`);
    return 2;
  }
  if (values.stack !== undefined) console.error(`stack: ${values.stack}`);
  const remote = values.stack !== undefined ? await fetchRemoteJob(ctx, values.stack, values.job) : undefined;
  try {
    const [dir, ...tasks] = remote ? [remote.remoteDir, ...positionals] : positionals;
    return await rerunJob(ctx, remote, dir, tasks, values);
  } finally {
    remote?.dispose();
  }
}

async function rerunJob(
  ctx: PassContext,
  remote: RemoteJob | undefined,
  dir: string,
  tasks: string[],
  values: { "job-name"?: string; "api-base"?: string; "dry-run"?: boolean; harbor?: string; wait?: boolean },
): Promise<number> {
  const jobDir = remote ? dir : path.resolve(dir);
  const job = remote ? remote.job : readJob(jobDir);
  if (!job.config) throw new Error(`${jobDir}/config.json is missing or not JSON; the rerun copies its settings`);
  const plan = planRerun(jobDir, job.config, job.trials, tasks, { jobName: values["job-name"], apiBase: values["api-base"], harborBin: values.harbor });
  console.log(`new job: ${path.join(plan.jobsDir, plan.jobName)} (${tasks.length} task(s))`);
  console.log(`config: ${plan.configFile}`);
  console.log(`command: HARBOR_TELEMETRY=0 ${commandLine(plan.argv)}`);
  if (values["dry-run"]) {
    console.log(JSON.stringify(plan.config, null, 2));
    return 0;
  }
  if (remote) {
    const files = [{ path: plan.configFile, content: `${JSON.stringify(plan.config, null, 2)}\n` }];
    const ran = await runRemotePass(remote, { kind: "rerun", jobName: plan.jobName, jobDir: path.posix.join(plan.jobsDir, plan.jobName), argv: plan.argv, cwd: plan.jobsDir, files, wait: values.wait === true });
    const code = reportRemotePass(ran, values.wait === true, remote.access.stack);
    console.log(`${values.wait === true ? "now" : "when it finishes"}: reprobench pull --stack ${remote.access.stack} --job ${plan.jobName}, then audit both job dirs`);
    return code;
  }
  if (fs.existsSync(path.join(plan.jobsDir, plan.jobName))) throw new Error(`${path.join(plan.jobsDir, plan.jobName)} already exists; pick another --job-name`);
  fs.writeFileSync(plan.configFile, `${JSON.stringify(plan.config, null, 2)}\n`);
  warnMissingKey(plan.config);
  const code = await runHarbor(plan.argv, plan.jobsDir, plan.env);
  console.log(`when it finishes: reprobench audit ${shellQuote(jobDir)} ${shellQuote(path.join(plan.jobsDir, plan.jobName))}`);
  return code;
}
