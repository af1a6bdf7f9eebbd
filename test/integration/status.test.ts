// Watching a run on the simulated cluster (a sim instance of its own, slot 7), with the real engine and the
// real Harbor: `pulumi up` streams progress lines during the model-load wait and the image pre-pull;
// `reprobench status` (through the stack's outputs and SSH only) while the job runs matches the trial
// directories at that moment, follows the job to its end with --watch, and after a destroy mid-run shows
// the stopped job. --json documents are checked against the schema. The doubles serve Prometheus
// /metrics (--enable-metrics), read per DP rank.
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runStatus } from "../../cli/commands/status";
import { type StatusReport, StatusReportSchema } from "../../results/status";
import { repoRoot } from "../helpers/project";
import { type SimStack, simStack, trialOutcomes } from "../helpers/sim-stack";

let sim: SimStack;
const log = (m: string) => console.log(m);

/** `reprobench status` against the test's project copy (its own backend and passphrase). */
async function status(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await runStatus(["--stack", "local", ...args], {
    root: sim.project.dir,
    env: sim.project.env,
    write: (t) => void (out += t),
    writeErr: (t) => void (err += t),
    isTTY: false,
  });
  return { code, out, err };
}

async function statusJson(): Promise<StatusReport> {
  const r = await status(["--json"]);
  expect(r.code, r.err).toBe(0);
  return StatusReportSchema.parse(JSON.parse(r.out));
}

/** The job directory as it is: trial dirs (those with config.json) with or without result.json, and Harbor's total. */
async function listing(jobDir: string): Promise<{ finished: string[]; open: string[]; total: number | null }> {
  const out = await sim.ssh(
    "worker-b",
    `cd ${jobDir} && for d in */; do d=\${d%/}; [ -f "$d/config.json" ] || continue; if [ -f "$d/result.json" ]; then echo "F $d"; else echo "R $d"; fi; done; echo "T $(jq -r '.n_total_trials // "null"' result.json)"`,
  );
  const lines = out.trim().split("\n");
  const pick = (k: string) => lines.filter((l) => l.startsWith(`${k} `)).map((l) => l.slice(2)).sort();
  const total = pick("T")[0];
  return { finished: pick("F"), open: pick("R"), total: total === "null" ? null : Number(total) };
}

/** A status taken while the directory did not change (listed before and after), with that listing. */
async function consistentStatus(jobDir: string, accept: (r: StatusReport) => boolean, timeoutMs: number): Promise<{ report: StatusReport; dir: Awaited<ReturnType<typeof listing>> }> {
  const deadline = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < deadline) {
    const before = await listing(jobDir);
    const report = await statusJson();
    const after = await listing(jobDir);
    last = `${report.job?.state} ${report.trials.finished}/${report.trials.total} running ${report.trials.running}`;
    if (JSON.stringify(before) === JSON.stringify(after) && accept(report)) return { report, dir: after };
  }
  throw new Error(`no consistent status within ${timeoutMs / 1000}s (last: ${last})`);
}

beforeAll(async () => {
  sim = await simStack(
    { name: "status", slot: 7 },
    {
      extraFiles: { "sim/dataset": path.join(repoRoot, "sim/dataset") },
      baseline: (c) => {
        // Metrics on (not among seed 000's flags; modelServer.extraArgs), and a 75 s model load so the health
        // wait (which reports every 30 s) has something to say.
        c["reprobench:modelServer"] = {
          ...c["reprobench:modelServer"],
          extraArgs: ["--enable-metrics"],
          env: { HOME: "/tmp", HF_HOME: "/tmp/huggingface", SGLANG_DOUBLE_LOAD_SECONDS: "75" },
        };
        // `up` returns once the job runs; agent timeouts are 300 s × 0.3 = 90 s.
        // Two at a time for three trials: one waits, so a status sees finished, running and pending ones.
        c["reprobench:run"] = { ...c["reprobench:run"], waitForCompletion: false, agentTimeoutMultiplier: 0.3, nConcurrentTrials: 2, nConcurrentAgents: 2 };
      },
      log,
    },
  );
});

afterAll(() => sim?.cleanup());

describe("watching a run (real engine, real Harbor, simulated cluster)", () => {
  let jobDir = "";
  let jobName = "";

  it("up streams progress lines while the workers load and while the task images are pre-pulled", async () => {
    const t0 = Date.now();
    const transcript: string[] = [];
    let buffer = "";
    const up = await sim.stack.up({
      onOutput: (o) => {
        buffer += o;
        const lines = buffer.split("\n");
        buffer = lines.pop() ?? "";
        for (const l of lines) if (l.trim()) transcript.push(`[${String(Math.round((Date.now() - t0) / 1000)).padStart(4)}s] ${l}`);
      },
    });
    expect(up.summary.result).toBe("succeeded");
    jobName = up.outputs.jobName.value as string;
    jobDir = `${up.outputs.jobsDir.value}/${jobName}`;
    const shown = transcript.filter((l) => /progress|server-health|task-images:|harbor-install|harbor-launch|sglang-ready (creat|updat)/.test(l));
    log(`pulumi up transcript (progress lines and the resources they belong to):\n${shown.join("\n")}`);
    // While worker-a's gate waits for /health: "loading, 0m3Xs of 5m00s budget" on that resource's line,
    // before the line that says the resource is created.
    const loading = transcript.findIndex((l) => /worker-a-sglang-ready creating \(\d+s\) server-health\[qwen38-worker-a\]: loading, \dm\d\ds of 5m00s budget/.test(l));
    const created = transcript.findIndex((l) => /worker-a-sglang-ready created/.test(l));
    expect(loading, "a loading line for worker-a").toBeGreaterThanOrEqual(0);
    expect(created).toBeGreaterThan(loading);
    // The pre-pull counts its images up to 3/3 on its own line, before it is created.
    const pulls = transcript.map((l, i) => (/task-images-pull creating \(\d+s\) task-images: \d\/3 images ready or tried/.test(l) ? i : -1)).filter((i) => i >= 0);
    expect(pulls.length).toBeGreaterThanOrEqual(1);
    expect(transcript[pulls[pulls.length - 1]]).toContain("task-images: 3/3 images ready or tried");
    expect(transcript.findIndex((l) => /task-images-pull created/.test(l))).toBeGreaterThan(pulls[0]);
  });

  it("status while the job runs: the numbers are the trial directories' at that moment", async () => {
    // Slower replies keep trials running for a while (every reply 2 s later).
    for (const h of sim.plan.hosts) await sim.ssh(h.name, `curl -fsS -X POST -H 'Content-Type: application/json' -d '{"extra_delay_seconds": 2}' http://${h.ip}:30001/_double/state`);
    const { report: r, dir } = await consistentStatus(jobDir, (x) => x.job?.state === "running" && x.trials.running >= 1 && x.trials.finished >= 1, 240_000);
    expect(r.job).toMatchObject({ name: jobName, state: "running", dir: jobDir, concurrency: 2 });
    expect(r.job!.pid).toBeGreaterThan(0);
    expect(r.trials.total).toBe(dir.total);
    expect(r.trials.finished).toBe(dir.finished.length);
    expect(r.trials.running).toBe(dir.open.length);
    expect(r.trials.pending).toBe(dir.total! - dir.finished.length - dir.open.length);
    expect(r.running.map((x) => x.trial).sort()).toEqual(dir.open);
    for (const x of r.running) {
      expect(x.elapsedSec).toBeGreaterThan(0);
      expect(x.elapsedSec).toBeLessThan(600);
      expect(x.agentTimeoutSec).toBeCloseTo(90, 6);
    }
    expect(r.trials.passed + r.trials.failed + r.trials.errored + r.trials.cancelled).toBe(dir.finished.length);
    // An estimate once a trial has finished: at least what the running trials still need by the mean.
    expect(r.eta).not.toBeNull();
    expect(r.eta!).toMatchObject({ concurrency: 2, basedOnTrials: dir.finished.length });
    expect(r.eta!.remainingSec).toBeGreaterThanOrEqual(0);
    // Per DP rank from the doubles' /metrics; the router's in-flight requests per worker@rank.
    expect(r.servers.map((s) => [s.host, s.source, s.ranks.map((k) => k.dpRank)])).toEqual([["worker-a", "metrics", [0, 1]], ["worker-b", "metrics", [0, 1]]]);
    expect(r.router).toMatchObject({ host: "worker-b", source: "metrics" });
    expect(r.router!.workers.map((w) => w.worker).sort()).toEqual(sim.plan.hosts.flatMap((h) => [0, 1].map((k) => `http://${h.ip}:30001@${k}`)).sort());
    expect(r.logTail.length).toBeGreaterThan(0);
    const text = await status([]);
    expect(text.code).toBe(0);
    expect(text.out).toContain(`job ${jobName}`);
    log(`reprobench status while the job runs:\n${text.out}\ntrial directories then: ${JSON.stringify(dir)}`);
  });

  it("--watch follows the job to its end; the last report matches the job's files", async () => {
    const r = await status(["--watch", "--json", "--interval", "3", "--max-minutes", "10"]);
    expect(r.code, r.err).toBe(0);
    const reports = r.out.trim().split("\n").map((l) => StatusReportSchema.parse(JSON.parse(l)));
    const last = reports[reports.length - 1];
    expect(last.job!.state).toBe("finished");
    expect(reports.slice(0, -1).every((x) => x.job!.state === "running" || x.job!.state === "stopping")).toBe(true);
    for (let i = 1; i < reports.length; i++) expect(reports[i].trials.finished).toBeGreaterThanOrEqual(reports[i - 1].trials.finished);
    const outcomes = Object.values(await trialOutcomes(sim, jobDir));
    const dir = await listing(jobDir);
    expect(last.trials).toMatchObject({
      total: 3,
      finished: dir.finished.length,
      running: 0,
      pending: 0,
      incomplete: 0,
      passed: outcomes.filter((o) => o.reward !== null && o.reward >= 1).length,
      failed: outcomes.filter((o) => o.reward !== null && o.reward < 1).length,
      errored: outcomes.filter((o) => o.reward === null).length,
    });
    const errorTypes: Record<string, number> = {};
    for (const o of outcomes) if (o.exception) errorTypes[o.exception] = (errorTypes[o.exception] ?? 0) + 1;
    expect(last.trials.errorTypes).toEqual(errorTypes);
    const harborMean = Number(await sim.ssh("worker-b", `jq '[.stats.evals[].metrics[0].mean][0]' ${jobDir}/result.json`));
    expect(last.trials.meanSoFar).toBeCloseTo(harborMean, 10);
    expect(last.eta).toBeNull();
    const text = await status([]);
    log(`--watch: ${reports.length} reports, finished counts ${reports.map((x) => x.trials.finished).join(",")}\nreprobench status after the job ended:\n${text.out}`);
    expect(text.out).toContain("FINISHED");
  });

  it("after a destroy mid-run: the stack has no outputs, status shows its last job as stopped", async () => {
    sim.editConfig((c) => (c.run = { ...c.run, jobNamePrefix: "sim-stop" }));
    // Much slower replies (8 s each; the servers are not touched by this up, only the job is new) keep the
    // trials in their agent phase when the destroy comes, also on a loaded machine.
    for (const h of sim.plan.hosts) await sim.ssh(h.name, `curl -fsS -X POST -H 'Content-Type: application/json' -d '{"extra_delay_seconds": 8}' http://${h.ip}:30001/_double/state`);
    const up = await sim.stack.up({ onOutput: () => undefined });
    const stopJob = up.outputs.jobName.value as string;
    const stopDir = `${up.outputs.jobsDir.value}/${stopJob}`;
    expect(stopJob).toMatch(/^sim-stop-/);
    // Bounded wait until a trial's agent runs (its terminal recording has begun, no result yet): that one is cancelled.
    await sim.ssh("worker-b", `for i in $(seq 1 180); do for d in ${stopDir}/*/; do [ -s "$d/agent/recording.cast" ] && [ ! -f "$d/result.json" ] && exit 0; done; sleep 1; done; exit 1`);
    await sim.stack.destroy({ runProgram: true, onOutput: () => undefined });
    const r = await statusJson();
    const dir = await listing(stopDir);
    expect(r.job).toMatchObject({ name: stopJob, state: "stopped", dir: stopDir });
    expect(r.trials).toMatchObject({ finished: dir.finished.length, running: 0, incomplete: dir.open.length });
    expect(r.trials.cancelled).toBeGreaterThanOrEqual(1);
    expect(r.trials.errorTypes.CancelledError).toBe(r.trials.cancelled);
    expect(r.notes.join("\n")).toMatch(/no outputs/);
    // The servers went with the stack.
    expect(r.servers.every((s) => s.source === "unavailable")).toBe(true);
    const text = await status([]);
    log(`reprobench status after destroy mid-run:\n${text.out}`);
    expect(text.out).toContain("STOPPED");
  });
});
