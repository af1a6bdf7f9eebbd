// `reprobench status [--stack S] [--watch] [--json]`: the stack's job and model servers on one screen, read
// through the stack's outputs and SSH (cli/stack-access.ts; results/remote/status-probe.sh on the hosts;
// results/status.ts turns what it read into the report).
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { command, type CommandSpec, parseCommand, stackOption, UsageError } from "./command";
import type { StackAccess } from "../stack-access";
import { resolveStack, stackLine } from "../stack-default";
import type { JobProbe, Probe, RouterInput, ServerInput, StatusReport } from "../../results/status";

const root = path.resolve(__dirname, "..", "..");

const HELP = `
The stack's Harbor job and model servers, read through the stack's outputs and SSH (no address typed):
job name and state (running / stopping / finished / stopped / failed, Harbor's PID and systemd unit),
trials finished of total with passed / failed / errored / cancelled and the error types, the mean so far
(Harbor's: a missing reward counts 0; cancelled trials left out), trials running now with their elapsed
time against their agent timeout, an ETA with a likely range (finished trials' durations against their
timeouts, running ones weighed by their elapsed time and budget, pending ones by their timeout tier and
their task's earlier attempts, over the concurrency; results/eta.ts; a task with no finished attempt yet
by its trials in the newest --earlier-jobs other jobs on the runner with the same agent, model and
dataset, such as the 3× smoke run before a 6× one),
per worker and DP rank the running and queued requests and generation throughput (SGLang's Prometheus
/metrics when started with --enable-metrics, else /get_load), the router's in-flight requests per
worker, and the last lines of Harbor's log. A run stack (reprobench:cluster) is read through its owner's
outputs. A destroyed stack shows its last job on the runner.

--watch redraws every --interval seconds until the job ends (a progress bar to leave open); Ctrl-C
stops watching, never the job. It gives up after --max-minutes or after 5 failed reads in a row.`;

/** The probe script, sent over SSH on stdin. */
function probeScript(): string {
  return readFileSync(path.join(root, "results", "remote", "status-probe.sh"), "utf8");
}

async function parseProbe(stdout: string, host: string): Promise<Probe> {
  const { ProbeSchema } = await import("../../results/status");
  const line = stdout.trim().split("\n").pop() ?? "";
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new Error(`host ${host}: the status probe printed no JSON (${JSON.stringify(line.slice(0, 120))})`);
  }
  const parsed = ProbeSchema.safeParse(value);
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    throw new Error(`host ${host}: unexpected status probe output at ${i.path.join(".")}: ${i.message}`);
  }
  return parsed.data;
}

export interface CollectOptions {
  logLines?: number;
  /** How many earlier jobs of the same tasks the ETA may learn from (the probe's default, 3, when unset). */
  earlierJobs?: number;
  timeoutMs?: number;
}

/** Reads every host the status needs (in parallel, one SSH session per host) and builds the report. */
export async function collectStatus(access: StackAccess, opts: CollectOptions = {}): Promise<StatusReport> {
  const { connectionOf, runRemoteScript } = await import("../stack-access");
  const { buildStatus } = await import("../../results/status");
  const envs = new Map<string, Record<string, string>>();
  const envOf = (host: string) => {
    const e = envs.get(host) ?? {};
    envs.set(host, e);
    return e;
  };
  const c = access.cluster;
  const runnerEnv = envOf(c.runner);
  runnerEnv.LOG_LINES = String(opts.logLines ?? 8);
  if (opts.earlierJobs !== undefined) runnerEnv.EARLIER_JOBS = String(opts.earlierJobs);
  if (access.job) {
    Object.assign(runnerEnv, { JOB_DIR: access.job.dir, UNIT: access.job.unit ?? "", LOG_FILE: access.job.log ?? "" });
  } else {
    // No job in the outputs: the runner remembers this stack's last job (harbor-launch.sh writes it).
    Object.assign(runnerEnv, { CURRENT_FILE: path.posix.join(c.harbor.workDir, "runs", "current.d", access.stackId), LOG_DIR: path.posix.join(c.harbor.workDir, "logs") });
  }
  for (const w of c.workers) Object.assign(envOf(w.host), { WORKER_URL: w.url, API_KEY: access.apiKey ?? "" });
  if (c.router) envOf(c.router.host).ROUTER_METRICS_URL = c.router.metricsUrl;

  const script = probeScript();
  const hosts = [...envs.keys()];
  const results = await Promise.allSettled(hosts.map(async (h) => await parseProbe(await runRemoteScript(connectionOf(access, h), script, envs.get(h)!, { timeoutMs: opts.timeoutMs ?? 60_000, secret: ["API_KEY"] }), h)));
  const probes = new Map<string, Probe | { error: string }>();
  hosts.forEach((h, i) => {
    const r = results[i];
    probes.set(h, r.status === "fulfilled" ? r.value : { error: (r.reason as Error).message });
  });
  const runner = probes.get(c.runner)!;
  if ("error" in runner) throw new Error(`cannot read the job on the runner: ${runner.error}`);
  const servers: ServerInput[] = c.workers.map((w) => {
    const p = probes.get(w.host)!;
    return { host: w.host, url: w.url, probe: "error" in p ? p : (p.worker ?? { error: "no worker part in the probe" }) };
  });
  let router: RouterInput | null = null;
  if (c.router) {
    const p = probes.get(c.router.host)!;
    router = { host: c.router.host, url: c.router.metricsUrl, probe: "error" in p ? p : (p.router ?? { error: "no router part in the probe" }) };
  }
  const job: JobProbe | null = runner.job;
  const notes = [...access.notes];
  if (!job && !access.job) notes.push(`stack ${access.stack} has no job: none in its outputs and none recorded on ${c.runner} (run.enabled, then reprobench up --stack ${access.stack})`);
  return buildStatus({
    stack: access.stack,
    cluster: access.owner,
    now: runner.now,
    job,
    recordedPid: access.job?.pid ?? null,
    servers,
    router,
    notes,
    secrets: access.apiKey ? [access.apiKey] : [],
  });
}

const ended = (r: StatusReport): boolean => !r.job || !["running", "stopping"].includes(r.job.state);

export interface StatusRunContext {
  root: string;
  env?: Record<string, string>;
  write(text: string): void;
  writeErr(text: string): void;
  isTTY: boolean;
  /** Waits between refreshes (injected in tests). */
  wait?(ms: number): Promise<void>;
}

const spec = (ctx: StatusRunContext): CommandSpec => ({
  summary: "the stack's job and servers on one screen (trials, ETA, per-rank load, log tail); --watch, --json",
  define: (cmd) =>
    stackOption(cmd)
      .option("-w, --watch", "redraw every --interval seconds until the job ends")
      .option("--interval <secs>", "seconds between redraws with --watch", "5")
      .option("--max-minutes <n>", "stop watching after this long (the job goes on)", "1440")
      .option("--json", "the report as JSON (schema: results/STATUS.md, schemaVersion 1); with --watch one JSON document per line per refresh")
      .option("--log-lines <n>", "lines of Harbor's log to show", "8")
      .option("--earlier-jobs <n>", "earlier jobs of the same tasks (agent, model, dataset) on the runner the ETA learns from; 0: none", "3")
      .addHelpText("after", HELP),
  toolchain: () => true,
  action: ({ opts }) => statusAction(opts, ctx),
});

/** The command body, with the project and I/O injectable (tests run it against a project copy). */
export async function runStatus(args: string[], ctx: StatusRunContext): Promise<number> {
  const parsed = parseCommand("status", spec(ctx), args);
  return parsed ? statusAction(parsed.opts, ctx) : 0;
}

async function statusAction(o: Record<string, unknown>, ctx: StatusRunContext): Promise<number> {
  const values = { stack: o.stack as string | undefined, watch: Boolean(o.watch), interval: o.interval as string, "max-minutes": o.maxMinutes as string, json: Boolean(o.json), "log-lines": o.logLines as string, "earlier-jobs": o.earlierJobs as string };
  const choice = resolveStack(values.stack, ctx.root, { ...process.env, ...ctx.env });
  ctx.writeErr(`${stackLine(choice)}\n`);
  const { renderStatus } = await import("../../results/status");
  const interval = Number(values.interval);
  const maxMinutes = Number(values["max-minutes"]);
  const logLines = Number(values["log-lines"]);
  if (!(interval >= 1 && interval <= 3600)) throw new UsageError(`--interval: got '${values.interval}'; expected seconds from 1 to 3600`);
  if (!(maxMinutes > 0)) throw new UsageError(`--max-minutes: got '${values["max-minutes"]}'; expected a positive number`);
  if (!Number.isInteger(logLines) || logLines < 0 || logLines > 1000) throw new UsageError(`--log-lines: got '${values["log-lines"]}'; expected an integer from 0 to 1000`);
  const earlierJobs = Number(values["earlier-jobs"]);
  if (!/^\d+$/.test(values["earlier-jobs"]) || earlierJobs > 100) throw new UsageError(`--earlier-jobs: got '${values["earlier-jobs"]}'; expected an integer from 0 to 100`);
  const { stackAccess } = await import("../stack-access");
  const access = await stackAccess(choice.stack, { root: ctx.root, env: ctx.env });
  const show = (r: StatusReport, first: boolean) => {
    if (values.json) ctx.write(values.watch ? `${JSON.stringify(r)}\n` : `${JSON.stringify(r, null, 2)}\n`);
    else if (values.watch && ctx.isTTY) ctx.write(`\x1b[H\x1b[2J${renderStatus(r)}(watching every ${interval}s; Ctrl-C stops watching, not the job)\n`);
    else ctx.write(`${first ? "" : "\n"}${renderStatus(r)}`);
  };
  if (!values.watch) {
    show(await collectStatus(access, { logLines, earlierJobs }), true);
    return 0;
  }
  const wait = ctx.wait ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const deadline = Date.now() + maxMinutes * 60_000;
  let failures = 0;
  for (let first = true; ; first = false) {
    try {
      const report = await collectStatus(access, { logLines, earlierJobs });
      failures = 0;
      show(report, first);
      if (ended(report)) return 0;
    } catch (err) {
      failures++;
      ctx.writeErr(`reprobench status: ${(err as Error).message} (attempt ${failures} of 5)\n`);
      if (failures >= 5) return 1;
    }
    if (Date.now() + interval * 1000 > deadline) {
      ctx.writeErr(`reprobench status: stopped watching after ${maxMinutes} minutes (--max-minutes); the job goes on\n`);
      return 0;
    }
    await wait(interval * 1000);
  }
}

export const status = command(
  "status",
  spec({
    root,
    write: (t) => void process.stdout.write(t),
    writeErr: (t) => void process.stderr.write(t),
    isTTY: Boolean(process.stdout.isTTY),
  }),
);
