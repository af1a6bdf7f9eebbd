// `reprobench status [--stack S] [--watch] [--json]`: the stack's job and model servers on one screen, read
// through the stack's outputs and SSH (cli/stack-access.ts; results/remote/status-probe.sh on the hosts;
// results/status.ts turns what it read into the report).
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { parseArgs } from "node:util";
import type { Command } from "./command";
import type { StackAccess } from "../stack-access";
import { buildStatus, type JobProbe, type Probe, ProbeSchema, renderStatus, type RouterInput, type ServerInput, type StatusReport } from "../../results/status";

const root = path.resolve(__dirname, "..", "..");

const HELP = `usage: reprobench status [--stack NAME] [--watch [--interval SECS] [--max-minutes N]] [--json] [--log-lines N]

The stack's Harbor job and model servers, read through the stack's outputs and SSH (no address typed):
job name and state (running / stopping / finished / stopped / failed, Harbor's PID and systemd unit),
trials finished of total with passed / failed / errored / cancelled and the error types, the mean so far
(Harbor's: a missing reward counts 0; cancelled trials left out), trials running now with their elapsed
time against their agent timeout, an ETA with a likely range (finished trials' durations against their
timeouts, running ones weighed by their elapsed time and budget, pending ones by their timeout tier and
their task's earlier attempts, over the concurrency; results/eta.ts),
per worker and DP rank the running and queued requests and generation throughput (SGLang's Prometheus
/metrics when started with --enable-metrics, else /get_load), the router's in-flight requests per
worker, and the last lines of Harbor's log. A run stack (reprobench:cluster) is read through its owner's
outputs. A destroyed stack shows its last job on the runner.

  --stack NAME     stack (default local)
  --watch          redraw every --interval seconds (default 5) until the job ends (a progress bar to
                   leave open); Ctrl-C stops watching, never the job. Gives up after --max-minutes
                   (default 1440) or after 5 failed reads in a row
  --json           the report as JSON (schema: results/STATUS.md, schemaVersion 1); with --watch one
                   JSON document per line per refresh
  --log-lines N    lines of Harbor's log to show (default 8)`;

/** The probe script, sent over SSH on stdin. */
function probeScript(): string {
  return readFileSync(path.join(root, "results", "remote", "status-probe.sh"), "utf8");
}

function parseProbe(stdout: string, host: string): Probe {
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
  timeoutMs?: number;
}

/** Reads every host the status needs (in parallel, one SSH session per host) and builds the report. */
export async function collectStatus(access: StackAccess, opts: CollectOptions = {}): Promise<StatusReport> {
  const { connectionOf, runRemoteScript } = await import("../stack-access");
  const envs = new Map<string, Record<string, string>>();
  const envOf = (host: string) => {
    const e = envs.get(host) ?? {};
    envs.set(host, e);
    return e;
  };
  const c = access.cluster;
  const runnerEnv = envOf(c.runner);
  runnerEnv.LOG_LINES = String(opts.logLines ?? 8);
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
  const results = await Promise.allSettled(hosts.map(async (h) => parseProbe(await runRemoteScript(connectionOf(access, h), script, envs.get(h)!, { timeoutMs: opts.timeoutMs ?? 60_000, secret: ["API_KEY"] }), h)));
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

/** The command body, with the project and I/O injectable (tests run it against a project copy). */
export async function runStatus(args: string[], ctx: StatusRunContext): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      stack: { type: "string", short: "s", default: "local" },
      watch: { type: "boolean", short: "w" },
      interval: { type: "string", default: "5" },
      "max-minutes": { type: "string", default: "1440" },
      json: { type: "boolean" },
      "log-lines": { type: "string", default: "8" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    ctx.write(`${HELP}\n`);
    return 0;
  }
  if (positionals.length) {
    ctx.writeErr(`reprobench status: unexpected argument '${positionals[0]}'\n\n${HELP}\n`);
    return 2;
  }
  const interval = Number(values.interval);
  const maxMinutes = Number(values["max-minutes"]);
  const logLines = Number(values["log-lines"]);
  if (!(interval >= 1 && interval <= 3600)) throw new Error(`--interval: got '${values.interval}'; expected seconds from 1 to 3600`);
  if (!(maxMinutes > 0)) throw new Error(`--max-minutes: got '${values["max-minutes"]}'; expected a positive number`);
  if (!Number.isInteger(logLines) || logLines < 0 || logLines > 1000) throw new Error(`--log-lines: got '${values["log-lines"]}'; expected an integer from 0 to 1000`);
  const { stackAccess } = await import("../stack-access");
  const access = await stackAccess(values.stack!, { root: ctx.root, env: ctx.env });
  const show = (r: StatusReport, first: boolean) => {
    if (values.json) ctx.write(values.watch ? `${JSON.stringify(r)}\n` : `${JSON.stringify(r, null, 2)}\n`);
    else if (values.watch && ctx.isTTY) ctx.write(`\x1b[H\x1b[2J${renderStatus(r)}(watching every ${interval}s; Ctrl-C stops watching, not the job)\n`);
    else ctx.write(`${first ? "" : "\n"}${renderStatus(r)}`);
  };
  if (!values.watch) {
    show(await collectStatus(access, { logLines }), true);
    return 0;
  }
  const wait = ctx.wait ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const deadline = Date.now() + maxMinutes * 60_000;
  let failures = 0;
  for (let first = true; ; first = false) {
    try {
      const report = await collectStatus(access, { logLines });
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

export const status: Command = {
  summary: "the stack's job and servers on one screen (trials, ETA, per-rank load, log tail); --watch, --json",
  run: (args) =>
    runStatus(args, {
      root,
      write: (t) => void process.stdout.write(t),
      writeErr: (t) => void process.stderr.write(t),
      isTTY: Boolean(process.stdout.isTTY),
    }),
};
