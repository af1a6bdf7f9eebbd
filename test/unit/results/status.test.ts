// `reprobench status` without a cluster: the real probe script (results/remote/status-probe.sh, run here
// with bash and jq against a Harbor job directory fixture, a stand-in systemctl on PATH), the report built
// from it, the ETA, the metrics parsers and the --json schema with its documentation.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getLoadRankLoads, parsePrometheus, routerWorkers, sglangRankLoads } from "../../../results/prometheus";
import {
  agentTimeoutSec,
  buildStatus,
  estimateEta,
  type Probe,
  ProbeSchema,
  progressBar,
  renderStatus,
  type StatusReport,
  StatusReportSchema,
} from "../../../results/status";
import { tempDir, writeJob } from "../../fixtures/results/build";

const repoRoot = path.resolve(__dirname, "../../..");
const probeScript = fs.readFileSync(path.join(repoRoot, "results/remote/status-probe.sh"), "utf8");

/** Runs the probe script locally (bash -s, inputs exported first, as over SSH). */
function probe(env: Record<string, string>, pathPrefix: string): Probe {
  const prelude = Object.entries(env).map(([k, v]) => `export ${k}='${v.replace(/'/g, `'\\''`)}'`).join("\n");
  const r = spawnSync("bash", ["-s"], { input: `${prelude}\n${probeScript}`, encoding: "utf8", env: { ...process.env, PATH: `${pathPrefix}:${process.env.PATH}` } });
  if (r.status !== 0) throw new Error(`probe failed: ${r.stderr}`);
  return ProbeSchema.parse(JSON.parse(r.stdout.trim().split("\n").pop()!));
}

/** A systemctl that reports the unit as `state` with MainPID 4242. */
function fakeSystemctl(dir: string, state: string): void {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, "systemctl");
  fs.writeFileSync(file, `#!/bin/sh\nprintf 'ActiveState=%s\\nSubState=running\\nMainPID=4242\\nResult=success\\n' '${state}'\n`, { mode: 0o755 });
}

const MIN = 60_000;

describe("status of a job directory (probe script + report)", () => {
  let root: string;
  let jobDir: string;
  let binActive: string;
  let binGone: string;
  const now = Date.now();
  beforeAll(() => {
    root = tempDir("reprobench-status-");
    const tasks = path.join(root, "tasks");
    // Task dirs with [agent] timeout_sec, as Harbor reads them (task.toml).
    for (const [task, timeout] of [["delta", 900], ["echo", 600], ["foxtrot", 1200]] as const) {
      fs.mkdirSync(path.join(tasks, task), { recursive: true });
      fs.writeFileSync(path.join(tasks, task, "task.toml"), `schema_version = "1.1"\n[verifier]\ntimeout_sec = 60.0\n\n[agent]\ntimeout_sec = ${timeout}.0  # seconds\n`);
    }
    const start = (minutesAgo: number) => new Date(now - minutesAgo * MIN).toISOString();
    const running = (task: string) => ({ task, start: start(0), noResult: true, configPatch: { task: { path: path.join(tasks, task), source: "tasks" } } });
    jobDir = writeJob(path.join(root, "jobs"), {
      name: "run-1",
      config: { n_concurrent_trials: 3 },
      finished: false,
      trials: [
        // Finished: 10, 20 and 30 minutes long, one errored, one cancelled.
        { task: "alpha", reward: 1, start: start(60), durationSec: 600 },
        { task: "bravo", reward: 0, start: start(50), durationSec: 1200 },
        { task: "charlie", exception: "AgentTimeoutError", start: start(40), durationSec: 1800 },
        { task: "golf", reward: 1, exception: "AgentTimeoutError", start: start(40), durationSec: 1800 },
        { task: "hotel", exception: "CancelledError", start: start(30), durationSec: 30 },
        // Running: delta at 6× (agent_timeout_multiplier of the fixture config) of 900 s; echo with an
        // override of 300 s and a 200 s cap; foxtrot under timeout_multiplier 2 only.
        running("delta"),
        { ...running("echo"), configPatch: { ...running("echo").configPatch, agent: { override_timeout_sec: 300, max_timeout_sec: 200 } } },
        { ...running("foxtrot"), configPatch: { ...running("foxtrot").configPatch, agent_timeout_multiplier: null, timeout_multiplier: 2 } },
      ],
    });
    // Harbor's total: 10 trials, so 2 are still pending.
    const result = JSON.parse(fs.readFileSync(path.join(jobDir, "result.json"), "utf8"));
    fs.writeFileSync(path.join(jobDir, "result.json"), JSON.stringify({ ...result, started_at: start(60), n_total_trials: 10 }));
    // The running trials began 5, 12 and 30 minutes ago (their config.json times).
    const dirs = fs.readdirSync(jobDir);
    for (const [task, minutesAgo] of [["delta", 5], ["echo", 12], ["foxtrot", 30]] as const) {
      const d = dirs.find((x) => x.startsWith(`${task}__`))!;
      const t = new Date(now - minutesAgo * MIN);
      fs.utimesSync(path.join(jobDir, d, "config.json"), t, t);
    }
    fs.writeFileSync(path.join(root, "harbor.log"), ["starting", "\x1b[32mtrial alpha done\x1b[0m", "key sk-secret-123 seen", "last line"].join("\n"));
    binActive = path.join(root, "bin-active");
    binGone = path.join(root, "bin-gone");
    fakeSystemctl(binActive, "active");
    fakeSystemctl(binGone, "inactive");
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  const env = () => ({ JOB_DIR: jobDir, UNIT: "reprobench-harbor-run-1.service", LOG_FILE: path.join(root, "harbor.log"), LOG_LINES: "3" });

  it("counts what the trial directories hold while the job runs", () => {
    const p = probe(env(), binActive);
    const r = buildStatus({ stack: "local", cluster: null, now: p.now, job: p.job, servers: [], router: null, secrets: ["sk-secret-123"] });
    const dirs = fs.readdirSync(jobDir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
    const withResult = dirs.filter((d) => fs.existsSync(path.join(jobDir, d, "result.json")));
    expect(r.job).toMatchObject({ name: "run-1", state: "running", pid: 4242, unit: "reprobench-harbor-run-1.service", concurrency: 3 });
    expect(r.trials).toMatchObject({
      total: 10,
      finished: withResult.length,
      running: dirs.length - withResult.length,
      pending: 10 - dirs.length,
      incomplete: 0,
      passed: 2,
      failed: 1,
      errored: 1,
      cancelled: 1,
      errorTypes: { AgentTimeoutError: 2, CancelledError: 1 },
      progress: 0.5,
    });
    // Harbor's mean (missing reward = 0) over the four trials that were not cancelled.
    expect(r.trials.meanSoFar).toBeCloseTo(2 / 4, 10);
    const byTask = Object.fromEntries(r.running.map((x) => [x.task, x]));
    expect(Object.keys(byTask).sort()).toEqual(["delta", "echo", "foxtrot"]);
    expect(byTask.delta.elapsedSec).toBeCloseTo(5 * 60, -1);
    expect(byTask.delta.agentTimeoutSec).toBe(900 * 6);
    expect(byTask.echo.agentTimeoutSec).toBe(200 * 6);
    expect(byTask.foxtrot.agentTimeoutSec).toBe(1200 * 2);
    expect(byTask.foxtrot.overTimeout).toBe(false);
    // Longest-running first.
    expect(r.running.map((x) => x.task)).toEqual(["foxtrot", "echo", "delta"]);
    // ETA (results/eta.ts): the finished trials' durations against their budgets, the running ones as
    // "at least this long", 3 slots; a range around it. The mean of the non-cancelled finished trials
    // (10, 20, 30, 30 min = 22.5 min) is still reported.
    expect(r.eta).not.toBeNull();
    expect(r.eta!.meanTrialSec).toBeCloseTo(22.5 * 60, 6);
    expect(r.eta!.basedOnTrials).toBe(4);
    expect(r.eta!.lowSec).toBeLessThanOrEqual(r.eta!.remainingSec);
    expect(r.eta!.remainingSec).toBeLessThanOrEqual(r.eta!.highSec);
    // foxtrot has run longest; 2 more trials wait for a slot: never less than what it still needs at least.
    expect(r.eta!.remainingSec).toBeGreaterThan(0);
    expect(Date.parse(r.eta!.finishLowAt)).toBeLessThanOrEqual(Date.parse(r.eta!.finishHighAt));
    // The log tail: last 3 lines, colours dropped, the key redacted.
    expect(r.logTail).toEqual(["trial alpha done", "key [redacted] seen", "last line"]);
    expect(StatusReportSchema.parse(r)).toEqual(r);
    const text = renderStatus(r);
    expect(text).toContain("RUNNING (harbor pid 4242");
    expect(text).toContain("5/10 finished · 3 running · 2 pending");
    expect(text).toContain("2 passed · 1 failed · 1 errored · 1 cancelled · mean so far 0.5000");
    expect(text).toContain("AgentTimeoutError ×2, CancelledError ×1");
    expect(text).toMatch(/ETA {6}\S+, likely \S+–\S+ \(≈ .*; from 4 finished and 3 running trials against their timeouts, 3 concurrent\)/);
    expect(text).not.toContain("sk-secret-123");
  });

  it("after harbor is gone without finished_at: stopped (cancelled trials), the open trial dirs are incomplete, no ETA", () => {
    const p = probe(env(), binGone);
    const r = buildStatus({ stack: "local", cluster: null, now: p.now, job: p.job, recordedPid: 31, servers: [], router: null });
    expect(r.job).toMatchObject({ state: "stopped", pid: 4242 });
    expect(r.trials).toMatchObject({ finished: 5, running: 0, incomplete: 3, pending: 2 });
    expect(r.running).toEqual([]);
    expect(r.eta).toBeNull();
  });

  it("finished: finished_at set", () => {
    const file = path.join(jobDir, "result.json");
    const before = fs.readFileSync(file, "utf8");
    try {
      fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(before), finished_at: new Date(now).toISOString() }));
      const p = probe(env(), binGone);
      const r = buildStatus({ stack: "local", cluster: null, now: p.now, job: p.job, servers: [], router: null });
      expect(r.job!.state).toBe("finished");
      expect(r.job!.elapsedSec).toBeCloseTo(3600, -1);
      expect(renderStatus(r)).toContain("FINISHED");
    } finally {
      fs.writeFileSync(file, before);
    }
  });

  it("failed: harbor gone, no finished_at and no sign of a graceful stop", () => {
    const p = probe(env(), binGone);
    const job = { ...p.job!, results: p.job!.results.filter((x) => x.result.exception_info === null || (x.result.exception_info as { exception_type: string }).exception_type !== "CancelledError"), logTail: ["Traceback", "ValueError: boom"] };
    expect(buildStatus({ stack: "s", cluster: null, now: p.now, job, servers: [], router: null }).job!.state).toBe("failed");
  });

  it("a job directory that does not exist yet, and no job at all", () => {
    const p = probe({ JOB_DIR: path.join(root, "jobs", "nope"), UNIT: "u.service" }, binGone);
    expect(p.job).toMatchObject({ exists: false, trials: [], results: [] });
    expect(buildStatus({ stack: "s", cluster: null, now: p.now, job: p.job, servers: [], router: null }).job!.state).toBe("not-started");
    const none = buildStatus({ stack: "s", cluster: null, now: 0, job: null, servers: [], router: null });
    expect(none.job).toBeNull();
    expect(renderStatus(none)).toContain("job: none yet");
  });

  it("finds the last job through the runner's current.d entry when the stack has no outputs", () => {
    const current = path.join(root, "current");
    fs.writeFileSync(current, `run-1 reprobench-harbor-run-1.service ${jobDir} ${root}/harbor.env\n`);
    const p = probe({ CURRENT_FILE: current, LOG_DIR: root }, binGone);
    expect(p.job).toMatchObject({ jobName: "run-1", dir: jobDir, fromCurrentFile: true, log: path.join(root, "run-1.log") });
    const r = buildStatus({ stack: "local", cluster: null, now: p.now, job: p.job, servers: [], router: null });
    expect(r.trials.finished).toBe(5);
    expect(r.notes.join("\n")).toContain("has no job in its outputs");
    expect(probe({ CURRENT_FILE: path.join(root, "missing") }, binGone).job).toBeNull();
  });
});

describe("ETA", () => {
  it("is null before any trial finished and 0 when nothing is left", () => {
    expect(estimateEta({ meanTrialSec: null, concurrency: 4, pending: 10, runningElapsedSec: [] })).toBeNull();
    expect(estimateEta({ meanTrialSec: 600, concurrency: 4, pending: 0, runningElapsedSec: [] })).toBe(0);
  });
  it("spreads the pending work over the concurrency", () => {
    // 8 pending × 600 s over 4 slots, nothing running.
    expect(estimateEta({ meanTrialSec: 600, concurrency: 4, pending: 8, runningElapsedSec: [] })).toBe(1200);
    // Plus what the running ones still need: (600−100) + (600−500) + 8 × 600 = 5400 s over 4 slots.
    expect(estimateEta({ meanTrialSec: 600, concurrency: 4, pending: 8, runningElapsedSec: [100, 500] })).toBe(1350);
  });
  it("is never below the longest remaining running trial, nor below one trial while any is pending", () => {
    expect(estimateEta({ meanTrialSec: 600, concurrency: 25, pending: 0, runningElapsedSec: [10, 590] })).toBe(590);
    expect(estimateEta({ meanTrialSec: 600, concurrency: 25, pending: 1, runningElapsedSec: [] })).toBe(600);
    // A trial past the mean needs "0 more" by this estimate, not a negative time.
    expect(estimateEta({ meanTrialSec: 600, concurrency: 2, pending: 0, runningElapsedSec: [900] })).toBe(0);
  });
});

describe("agent timeout as Harbor computes it", () => {
  it("min(override or task timeout, max) × (agent multiplier, else timeout multiplier, else 1)", () => {
    expect(agentTimeoutSec({ dir: "x", taskTimeoutSec: 900, agentTimeoutMultiplier: 6 })).toBe(5400);
    expect(agentTimeoutSec({ dir: "x", taskTimeoutSec: 900, overrideTimeoutSec: 300, maxTimeoutSec: 200, agentTimeoutMultiplier: 3 })).toBe(600);
    expect(agentTimeoutSec({ dir: "x", taskTimeoutSec: 900, timeoutMultiplier: 2 })).toBe(1800);
    expect(agentTimeoutSec({ dir: "x", taskTimeoutSec: 900 })).toBe(900);
    expect(agentTimeoutSec({ dir: "x", taskTimeoutSec: null })).toBeNull();
  });
});

describe("metrics", () => {
  const sglang = [
    "# HELP sglang:num_running_reqs The number of running requests.",
    "# TYPE sglang:num_running_reqs gauge",
    'sglang:num_running_reqs{model_name="Qwen/Qwen3.8-27B",engine_type="unified",tp_rank="0",pp_rank="0",dp_rank="1"} 3.0',
    'sglang:num_running_reqs{model_name="Qwen/Qwen3.8-27B",engine_type="unified",tp_rank="1",pp_rank="0",dp_rank="1"} 99.0',
    'sglang:num_running_reqs{model_name="Qwen/Qwen3.8-27B",engine_type="unified",tp_rank="0",pp_rank="0",dp_rank="0"} 5.0',
    'sglang:num_queue_reqs{model_name="Qwen/Qwen3.8-27B",engine_type="unified",tp_rank="0",pp_rank="0",dp_rank="0"} 2.0',
    'sglang:gen_throughput{model_name="Qwen/Qwen3.8-27B",engine_type="unified",tp_rank="0",pp_rank="0",dp_rank="0"} 812.5',
    'sglang:num_requests_total{model_name="a \\"quoted\\" name"} 7 1700000000000',
    "garbage line",
  ].join("\n");

  it("parses labels (with escapes), values and optional timestamps; skips what is not a sample", () => {
    const s = parsePrometheus(sglang);
    expect(s).toHaveLength(6);
    expect(s[5]).toEqual({ name: "sglang:num_requests_total", labels: { model_name: 'a "quoted" name' }, value: 7 });
  });

  it("per DP rank: TP rank 0's value, missing series as null", () => {
    expect(sglangRankLoads(parsePrometheus(sglang))).toEqual([
      { dpRank: 0, running: 5, queued: 2, genThroughput: 812.5 },
      { dpRank: 1, running: 3, queued: null, genThroughput: null },
    ]);
    // No DP: no dp_rank label, rank 0.
    expect(sglangRankLoads(parsePrometheus('sglang:num_running_reqs{tp_rank="0"} 4'))).toEqual([{ dpRank: 0, running: 4, queued: null, genThroughput: null }]);
  });

  it("/get_load: num_reqs counts running and waiting", () => {
    expect(getLoadRankLoads([{ dp_rank: 1, num_reqs: 5, num_waiting_reqs: 2, num_tokens: 10 }, { dp_rank: 0, num_reqs: 0, num_waiting_reqs: 0 }])).toEqual([
      { dpRank: 0, running: 0, queued: 0, genThroughput: null },
      { dpRank: 1, running: 3, queued: 2, genThroughput: null },
    ]);
    expect(getLoadRankLoads({ not: "a list" })).toEqual([]);
  });

  it("the router's per-worker gauges, both spellings", () => {
    const text = [
      'smg_worker_requests_active{worker="http://10.0.0.11:30001@0"} 2',
      'smg_worker_health{worker="http://10.0.0.11:30001@0"} 1',
      'smg_worker_health{worker="http://10.0.0.11:30001@1"} 0',
      'sgl_router_running_requests{worker="http://10.0.0.12:30001"} 4',
    ].join("\n");
    expect(routerWorkers(parsePrometheus(text))).toEqual([
      { worker: "http://10.0.0.11:30001@0", active: 2, healthy: true },
      { worker: "http://10.0.0.11:30001@1", active: null, healthy: false },
      { worker: "http://10.0.0.12:30001", active: 4, healthy: null },
    ]);
  });

  it("servers and router in the report: metrics, /get_load fallback, unreachable host", () => {
    const r = buildStatus({
      stack: "s",
      cluster: "owner",
      now: 0,
      job: null,
      servers: [
        { host: "worker-a", url: "http://10.0.0.11:30001", probe: { url: "http://10.0.0.11:30001", source: "metrics", metrics: sglang } },
        { host: "worker-b", url: "http://10.0.0.12:30001", probe: { url: "http://10.0.0.12:30001", source: "get_load", load: [{ dp_rank: 0, num_reqs: 1, num_waiting_reqs: 0 }], metricsStatus: "404" } },
        { host: "worker-c", url: "http://10.0.0.13:30001", probe: { error: "host worker-c (root@10.0.0.13:22) is unreachable over SSH: Connection refused" } },
      ],
      router: { host: "worker-b", url: "http://127.0.0.1:29000/metrics", probe: { url: "http://127.0.0.1:29000/metrics", source: "metrics", metrics: 'smg_worker_requests_active{worker="http://10.0.0.11:30001@0"} 2' } },
    });
    expect(r.servers.map((s) => [s.host, s.source, s.totals.running])).toEqual([["worker-a", "metrics", 8], ["worker-b", "get_load", 1], ["worker-c", "unreachable", null]]);
    expect(r.servers[1].note).toContain("--enable-metrics");
    expect(r.servers[2].note).toContain("unreachable over SSH");
    expect(StatusReportSchema.parse(r)).toEqual(r);
    const text = renderStatus(r);
    expect(text).toContain("worker-a   rank 0: 5 / 2 / 812.5 · rank 1: 3 / ? / ?");
    expect(text).toContain("worker-c   unreachable");
    expect(text).toContain("10.0.0.11:30001@0 2");
  });

  it("progress bar", () => {
    expect(progressBar(0.5, 10)).toBe("[█████░░░░░] 50%");
    expect(progressBar(null, 4)).toBe("[????]");
  });
});

describe("--json schema and its documentation (results/STATUS.md)", () => {
  const doc = fs.readFileSync(path.join(repoRoot, "results/STATUS.md"), "utf8");
  it("documents every field of every object of the report", () => {
    const shape = StatusReportSchema.shape;
    const paths: string[] = [];
    const unwrap = (t: unknown): unknown => {
      let x = t as { _def: { typeName: string; innerType?: unknown; type?: unknown } };
      while (["ZodNullable", "ZodOptional"].includes(x._def.typeName)) x = x._def.innerType as typeof x;
      if (x._def.typeName === "ZodArray") return unwrap(x._def.type);
      return x;
    };
    const walk = (prefix: string, obj: Record<string, unknown>) => {
      for (const [k, v] of Object.entries(obj)) {
        const p = prefix ? `${prefix}.${k}` : k;
        paths.push(p);
        const inner = unwrap(v) as { _def: { typeName: string }; shape?: Record<string, unknown> };
        if (inner._def.typeName === "ZodObject" && inner.shape) walk(p, inner.shape);
      }
    };
    walk("", shape);
    // Arrays are documented as `name[]`.
    const missing = paths.filter((p) => !doc.includes(`\`${p}\``) && !doc.includes(`\`${p}[]\``));
    expect(missing).toEqual([]);
  });
  it("a report that breaks the schema is refused", () => {
    const good: StatusReport = buildStatus({ stack: "s", cluster: null, now: 0, job: null, servers: [], router: null });
    expect(() => StatusReportSchema.parse({ ...good, schemaVersion: 2 })).toThrow();
    expect(() => StatusReportSchema.parse({ ...good, trials: { ...good.trials, extra: 1 } })).toThrow();
  });
});
