// A rehearsal of seed 000's run on a sim instance of its own (bench/rehearsal.ts at full scale, the
// integration suite reduced): the rehearsal dataset (sim/rehearsal/) published on the instance, the
// cluster stack `local` up without a job, the address-pool pitfall on the runner before and after the
// stack's pools, then a run stack `rehearsal` with the dataset of its own and the fault timeline fired by
// the job's progress (sim/rehearsal/timeline.ts): proxy failures, a killed server, a graceful stop
// (destroy). Then a `reprobench resume --stack` pass, a `reprobench rerun --stack` of the tasks the audit
// finds infra-hit, `reprobench audit` over every pass (raw, and corrected with the verdicts file) held
// against the ground truth, and the leak check on the runner. Everything it measures comes back as data.
import * as fs from "node:fs";
import * as path from "node:path";
import YAML from "yaml";
import { runRerun, runResume } from "../../cli/commands/resume";
import { ROLE_LABEL } from "../../components/container-spec";
import { runStatus } from "../../cli/commands/status";
import { auditDirs, readJob } from "../../results/load";
import { MANIFEST_FILE } from "../../results/manifest";
import { parseOverrides } from "../../results/overrides";
import type { AuditReport } from "../../results/schema";
import type { StatusReport } from "../../results/status";
import { mustRun } from "../../sim/exec";
import { setNetworkConditions } from "../../sim/settings";
import type { SimInstance } from "../../sim/layout";
import { auditCounts, auditMismatches, countRows, type CutTrial, endWithoutStop, type EtaSample, etaErrors, type ExpectedOutcome, expectedCounts, overheadOutsideAgentAndVerifier, throughput } from "../../sim/rehearsal/measure";
import { prepareRehearsal, type RehearsalReport } from "../../sim/rehearsal/prepare";
import { verdictsYaml } from "../../sim/rehearsal/tasks";
import { describeEvent, dueEvents, type FaultEvent, parseFaultTimeline } from "../../sim/rehearsal/timeline";
import { repoRoot } from "./project";
import { type SimStack, simStack } from "./sim-stack";

export interface RehearsalOptions {
  instance: SimInstance;
  tasks: number;
  seed: number;
  /** n_concurrent_trials and agents[].n_concurrent (seed 000: 25 and 20). */
  trials: number;
  agents: number;
  /** Project-relative fault timeline (sim/scenarios/rehearsal-*.json). */
  timeline: string;
  /** The address-pool pitfall: networks a killed run left behind, and how many Compose projects start at once. */
  pitfall?: { leftoverNetworks: number; projects: number };
  /** Upper bound for the whole job (every pass); past it the rehearsal fails. */
  deadlineMinutes: number;
  /**
   * Seed 000's sequence: a run of the same tasks at this agent timeout multiplier first (its 3× smoke run,
   * no faults), stopped by a destroy once finished; status then reads it as an earlier job of the tasks.
   */
  smoke?: { agentTimeoutMultiplier: number };
  log?: (m: string) => void;
}

export interface PitfallResult {
  pools: "docker defaults" | "the stack's";
  projects: number;
  leftoverNetworks: number;
  failed: number;
  firstError: string | null;
}

export interface PassRecord {
  name: string;
  job: string;
  startedAt: string;
  endedAt: string;
}

export interface RehearsalResult {
  wallSec: number;
  prepare: RehearsalReport;
  clusterUpSec: number;
  pitfall: PitfallResult[];
  jobName: string;
  rerunJobName: string | null;
  /** The smoke run, when one ran first: its job and how long it took (up to its last trial). */
  smokeRun: { job: string; trials: number; seconds: number } | null;
  /** When the job would have ended without the stop (endWithoutStop: what status's ETA read before the stop is held against). */
  workEnd: string;
  /** The first job's trials after the resume (what workEnd is computed from) and the trials the stop cut. */
  trialTimes: { task: string; startedAt: string | null; finishedAt: string | null; exceptionType: string | null }[];
  cut: CutTrial[];
  /** The job's real end less the idle time between the stop and the resume (the reference before endWithoutStop: it counts the cut trials' reruns whole). */
  endLessIdle: string;
  /** From the start of the run stack's `up` to the first trial's started_at. */
  upToFirstTrialSec: number;
  events: { name: string; line: string; at: string; finished: number; started: number }[];
  passes: PassRecord[];
  peakNetworks: number;
  peakRunning: number;
  etaSamples: (EtaSample & { errorSec: number | null; errorOfRemaining: number | null })[];
  /** The first run (until the stop) and the resume pass, each against its own lower bound. */
  throughput: { first: ReturnType<typeof throughput>; resume: ReturnType<typeof throughput> };
  overhead: ReturnType<typeof overheadOutsideAgentAndVerifier>;
  infraHit: string[];
  audits: { raw: AuditReport; corrected: AuditReport; beforeRerun: AuditReport };
  comparison: { raw: ReturnType<typeof countRows>; corrected: ReturnType<typeof countRows>; mismatches: ReturnType<typeof auditMismatches> };
  leaks: { containers: number; networks: number; composeProjects: number; incompleteTrialDirs: number; jobsUnfinished: number };
  verdictsFile: string;
  localJobsDir: string;
}

const RUNNER = "worker-b";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The job dir on the runner: trials started (config.json) and finished (a result.json that is not a
 * cancellation: a stopped trial is run again by the resume), Harbor's total, networks and running trial
 * containers, and the tasks finished.
 */
async function progress(sim: SimStack, jobDir: string): Promise<{ started: number; finished: number; total: number; networks: number; running: number; done: boolean; finishedTasks: Set<string> }> {
  const script = `cd ${jobDir} 2>/dev/null || { echo "0 0 0 0 0"; exit 0; }
s=0; for d in */; do [ -f "$d/config.json" ] && s=$((s+1)); done
names=$(cat ./*/result.json 2>/dev/null | jq -r 'select((.exception_info.exception_type // "") != "CancelledError") | .task_name' 2>/dev/null | tr '\n' ' ' || true)
t=$(jq -r '.n_total_trials // 0' result.json 2>/dev/null || echo 0)
done=$(jq -r 'if .finished_at then 1 else 0 end' result.json 2>/dev/null || echo 0)
n=$(docker network ls -q --filter label=com.docker.compose.project | wc -l); r=$(docker ps -q --filter label=com.docker.compose.project | wc -l)
echo "$s $t $n $r $done $names"`;
  const [started, total, networks, running, done, ...names] = (await sim.ssh(RUNNER, "bash -s", Buffer.from(script))).trim().split(/\s+/);
  const n = Number;
  return { started: n(started), finished: names.length, total: n(total), networks: n(networks), running: n(running), done: done === "1", finishedTasks: new Set(names) };
}

/** `reprobench status --stack <stack> --json` on the project copy. */
async function statusOf(sim: SimStack, stack: string): Promise<StatusReport | null> {
  let out = "";
  const code = await runStatus(["--stack", stack, "--json"], { root: sim.project.dir, env: sim.project.env, write: (t) => void (out += t), writeErr: () => undefined, isTTY: false });
  return code === 0 ? (JSON.parse(out) as StatusReport) : null;
}

/**
 * The address-pool pitfall as Harbor meets it: every trial is a Compose project with a network of its own.
 * Networks a killed run left behind stay allocated; then `projects` projects are created at once (as
 * n_concurrent_trials does). Counts the projects Docker refused a network.
 */
export async function poolPitfall(sim: SimStack, pools: PitfallResult["pools"], o: { leftoverNetworks: number; projects: number }): Promise<PitfallResult> {
  const script = `set -u
work=$(mktemp -d /tmp/pitfall-XXXXXX)
docker image inspect reprobench/pitfall-empty:1 >/dev/null 2>&1 || tar -cf - --files-from /dev/null | docker import - reprobench/pitfall-empty:1 >/dev/null
for i in $(seq 1 ${o.leftoverNetworks}); do docker network create --label com.docker.compose.project=killed-run-$i killed-run-\${i}_default >/dev/null 2>&1 || true; done
printf 'services:\\n  main:\\n    image: reprobench/pitfall-empty:1\\n    command: ["/none"]\\n    pull_policy: never\\n' >"$work/compose.yaml"
for i in $(seq 1 ${o.projects}); do (docker compose -f "$work/compose.yaml" -p pitfall-$i up --no-start >"$work/$i.log" 2>&1; echo $? >"$work/$i.rc") & done
wait
failed=0; first=
for i in $(seq 1 ${o.projects}); do if [ "$(cat "$work/$i.rc")" != 0 ]; then failed=$((failed+1)); [ -n "$first" ] || first=$(grep -m1 -i 'pool' "$work/$i.log" || tail -n1 "$work/$i.log"); fi; done
for i in $(seq 1 ${o.projects}); do docker compose -f "$work/compose.yaml" -p pitfall-$i down >/dev/null 2>&1 || true; done
for i in $(seq 1 ${o.leftoverNetworks}); do docker network rm killed-run-\${i}_default >/dev/null 2>&1 || true; done
docker image rm reprobench/pitfall-empty:1 >/dev/null 2>&1 || true
rm -rf "$work"
printf '%s\\t%s\\n' "$failed" "$first"`;
  const out = (await sim.ssh(RUNNER, "bash -s", Buffer.from(script))).trim().split("\n").pop() ?? "";
  const [failed, firstError] = out.split("\t");
  return { pools, projects: o.projects, leftoverNetworks: o.leftoverNetworks, failed: Number(failed), firstError: firstError || null };
}

/** Copies a job dir from the runner into `localJobs` (tar over the sim's SSH). */
export async function pullJob(sim: SimStack, jobsDir: string, job: string, localJobs: string): Promise<string> {
  // With the run manifest beside it when the job has one (what `reprobench pull --stack` brings too): the
  // comparison's dataset commit, images and GPU-hours come from it.
  const manifest = `${job}.${MANIFEST_FILE}`;
  const b64 = await sim.ssh(RUNNER, `cd ${jobsDir} && tar -czf - ${job} $(test -f ${manifest} && echo ${manifest}) | base64 -w0`);
  fs.mkdirSync(localJobs, { recursive: true });
  await mustRun(["tar", "-xzf", "-", "-C", localJobs], { input: Buffer.from(b64.trim(), "base64") });
  return path.join(localJobs, job);
}

/** Kills the model server's main process on a host, as a crash would (docker's restart policy brings it back). */
async function killServer(sim: SimStack, host: string): Promise<string> {
  const out = await sim.ssh(host, `c=$(docker ps --filter label=${ROLE_LABEL}=worker --format '{{.Names}}' | head -n1); [ -n "$c" ] || { echo "no model server runs on ${host}" >&2; exit 1; }; pid=$(docker inspect -f '{{.State.Pid}}' "$c"); kill -9 "$pid"; echo "$c"`);
  return out.trim();
}

export async function rehearse(sim: SimStack, o: RehearsalOptions): Promise<RehearsalResult> {
  const log = o.log ?? (() => undefined);
  const started = Date.now();
  const prepare = await prepareRehearsal({ root: repoRoot, instance: o.instance, count: o.tasks, seed: o.seed, log });
  log(`dataset: ${prepare.taskCount} tasks at ${prepare.repoUrl}@${prepare.commit} in ${prepare.seconds.toFixed(1)}s`);
  const timeline = parseFaultTimeline(fs.readFileSync(path.join(repoRoot, o.timeline), "utf8"), o.timeline);
  const behaviourOf = new Map(prepare.tasks.map((t) => [t.name, t.behaviour]));

  const pitfall: PitfallResult[] = [];
  if (o.pitfall) {
    pitfall.push(await poolPitfall(sim, "docker defaults", o.pitfall));
    log(`pitfall on docker's default pools: ${pitfall[0].failed}/${o.pitfall.projects} projects refused (${pitfall[0].firstError ?? "-"})`);
  }
  const clusterStart = Date.now();
  await sim.stack.up({ onOutput: () => undefined });
  const clusterUpSec = (Date.now() - clusterStart) / 1000;
  log(`cluster up in ${clusterUpSec.toFixed(0)}s`);
  if (o.pitfall) {
    pitfall.push(await poolPitfall(sim, "the stack's", o.pitfall));
    log(`pitfall on the stack's pools: ${pitfall[1].failed}/${o.pitfall.projects} projects refused`);
  }

  // The run stack: this dataset, seed 000's multipliers, the timeline's concurrency.
  const runFile = path.join(sim.project.dir, "Pulumi.rehearsal.yaml");
  const tracked = YAML.parse(fs.readFileSync(path.join(repoRoot, "Pulumi.rehearsal.yaml"), "utf8")) as { config: Record<string, Record<string, unknown>> };
  const runStack = await sim.project.stack("rehearsal", "Pulumi.rehearsal.yaml");
  const config = tracked.config;
  config["reprobench:dataset"] = { ...config["reprobench:dataset"], repo: prepare.repoUrl, commit: prepare.commit, expectedTaskCount: prepare.taskCount };
  const run = config["reprobench:run"];
  const jobNamePrefix = `rehearsal-terminus2-sim${o.tasks}-c${o.trials}-a${o.agents}`;
  config["reprobench:run"] = { ...run, waitForCompletion: false, nConcurrentTrials: o.trials, nConcurrentAgents: o.agents, jobNamePrefix: `${jobNamePrefix}-agent6x` };

  let smokeRun: RehearsalResult["smokeRun"] = null;
  if (o.smoke) {
    const multiplier = o.smoke.agentTimeoutMultiplier;
    fs.writeFileSync(runFile, YAML.stringify({ config: { ...config, "reprobench:run": { ...config["reprobench:run"], agentTimeoutMultiplier: multiplier, jobNamePrefix: `${jobNamePrefix}-agent${multiplier}x-smoke` } } }));
    const smokeStart = Date.now();
    const smokeUp = await runStack.up({ onOutput: () => undefined });
    const smokeDir = path.posix.join(String(smokeUp.outputs.jobsDir.value), String(smokeUp.outputs.jobName.value));
    log(`smoke run ${String(smokeUp.outputs.jobName.value)} started (${multiplier}× agent timeouts)`);
    const smokeDeadline = Date.now() + o.deadlineMinutes * 60_000;
    let p = await progress(sim, smokeDir);
    while (!p.done) {
      if (Date.now() > smokeDeadline) throw new Error(`rehearsal: the smoke run did not finish within ${o.deadlineMinutes} minutes (${p.finished}/${p.total} finished)`);
      await sleep(2000);
      p = await progress(sim, smokeDir);
    }
    smokeRun = { job: String(smokeUp.outputs.jobName.value), trials: p.finished, seconds: (Date.now() - smokeStart) / 1000 };
    // Between runs the way a user swaps them: the finished job's stack is destroyed (its job dir stays).
    await runStack.destroy({ onOutput: () => undefined });
    log(`smoke run done: ${p.finished}/${p.total} trials in ${smokeRun.seconds.toFixed(0)}s; destroyed its stack`);
  }
  fs.writeFileSync(runFile, YAML.stringify({ config }));

  const upStart = Date.now();
  const up = await runStack.up({ onOutput: () => undefined });
  const jobName = String(up.outputs.jobName.value);
  const jobsDir = String(up.outputs.jobsDir.value);
  const jobDir = path.posix.join(jobsDir, jobName);
  log(`job ${jobName} started (${((Date.now() - upStart) / 1000).toFixed(0)}s after up began)`);

  const deadline = Date.now() + o.deadlineMinutes * 60_000;
  const fired = new Set<string>();
  const events: RehearsalResult["events"] = [];
  const etaSamples: EtaSample[] = [];
  const etaAt = [0.25, 0.5, 0.75];
  let peakNetworks = 0;
  let peakRunning = 0;
  const passes: PassRecord[] = [];
  let passStart = new Date().toISOString();
  let stopped = false;
  let lastLine = "";

  const act = async (e: FaultEvent, p: { started: number; finished: number }) => {
    const at = new Date().toISOString();
    if (e.proxy) setNetworkConditions({ root: repoRoot, instance: o.instance }, { failFraction: e.proxy.failFraction, failWith: e.proxy.failWith ?? "502", failTargets: e.proxy.failTargets ?? [], seed: timeline.seed });
    else if (e.killServer) log(`killed ${await killServer(sim, e.killServer)} on ${e.killServer}`);
    else if (e.stop) {
      log("graceful stop: destroy of the run stack");
      await runStack.destroy({ onOutput: () => undefined });
      stopped = true;
    }
    events.push({ name: e.name, line: describeEvent(e), at, finished: p.finished, started: p.started });
    log(`${at} ${describeEvent(e)} [${p.finished} finished, ${p.started} started]`);
  };

  /** Polls the job until `until` says so, sampling networks, running trials and status's ETA. */
  const follow = async (until: (p: Awaited<ReturnType<typeof progress>>) => boolean, withEvents: boolean) => {
    for (;;) {
      if (Date.now() > deadline) throw new Error(`rehearsal: the job did not finish within ${o.deadlineMinutes} minutes (last: ${lastLine})`);
      const p = await progress(sim, jobDir);
      peakNetworks = Math.max(peakNetworks, p.networks);
      peakRunning = Math.max(peakRunning, p.running);
      lastLine = `${p.finished}/${p.total} finished, ${p.started} started, ${p.running} running, ${p.networks} networks`;
      // Every task once: Harbor's result.json showed a smaller n_total_trials (18 of 89) in a job's first minute.
      const fraction = p.finished / Math.max(p.total, prepare.taskCount);
      while (etaAt.length && fraction >= etaAt[0]) {
        const at = etaAt.shift()!;
        const s = await statusOf(sim, "rehearsal");
        etaSamples.push({ fraction: at, takenAt: new Date().toISOString(), finishAt: s?.eta?.finishAt ?? null });
        log(`status at ${at * 100}%: ${s ? `${s.trials.finished}/${s.trials.total} finished, ETA ${s.eta?.finishAt ?? "none"}` : "unreadable"} (job dir: ${lastLine})`);
      }
      if (withEvents) for (const e of dueEvents(timeline, p, fired, behaviourOf)) {
        fired.add(e.name);
        await act(e, p);
      }
      if (until(p)) return p;
      await sleep(2000);
    }
  };

  await follow((p) => p.done || stopped, true);
  passes.push({ name: "first run", job: jobName, startedAt: passStart, endedAt: new Date().toISOString() });
  const unfired = timeline.events.filter((e) => !fired.has(e.name));
  if (unfired.length) log(`the job ended before: ${unfired.map((e) => e.name).join(", ")}`);
  // The trials the stop cut short (cancelled, or ended with neither exception nor verifier result): the
  // resume deletes and reruns them, so their starts are read now (endWithoutStop).
  const cut: CutTrial[] = (
    await sim.ssh(
      RUNNER,
      `cd ${jobDir} && for f in */result.json; do jq -r 'select((.exception_info.exception_type // "") == "CancelledError" or (.exception_info == null and .verifier_result == null)) | "\\(.task_name)\\t\\(.started_at)\\t\\(.agent_execution.started_at // "")"' "$f" 2>/dev/null || true; done`,
    )
  )
    .split("\n")
    .filter((l) => l.includes("\t"))
    .map((l) => l.split("\t"))
    .map(([task, startedAt, agentStartedAt]) => ({ task, startedAt, agentStartedAt: agentStartedAt || null }));
  log(`cut short by the stop: ${cut.map((c) => c.task).join(", ") || "none"}`);
  // Whatever the timeline left on, the passes after the stop see a clean network.
  setNetworkConditions({ root: repoRoot, instance: o.instance }, { failFraction: 0, failTargets: [] });

  // Mop-up: cancelled trials and infra errors, on the runner, as the stack's job.
  const ctx = { root: sim.project.dir, env: sim.project.env };
  passStart = new Date().toISOString();
  // The resume waits for its unit; meanwhile the job is followed (networks, status's ETA).
  const resume: { exit: number | Error | null } = { exit: null };
  const resumed = runResume(["--stack", "rehearsal", "--job", jobName, "--wait"], ctx).then(
    (code) => void (resume.exit = code),
    (err: Error) => void (resume.exit = err),
  );
  const afterResume = await follow(() => resume.exit !== null, false);
  await resumed;
  const exit = resume.exit as number | Error | null;
  if (exit !== 0) throw new Error(`reprobench resume --stack rehearsal --job ${jobName} failed: ${exit instanceof Error ? exit.message : `exit ${exit}`}`);
  passes.push({ name: "resume", job: jobName, startedAt: passStart, endedAt: new Date().toISOString() });
  log(`resume pass done: ${afterResume.finished}/${afterResume.total}`);

  const localJobs = fs.mkdtempSync(path.join(sim.project.dir, "rehearsal-jobs-"));
  const local1 = await pullJob(sim, jobsDir, jobName, localJobs);
  const beforeRerun = auditDirs([local1]);
  // The rerun: tasks whose counted trial the audit suspects of infra trouble (seed 000's small rerun).
  const infraHit = beforeRerun.tasks.filter((t) => t.trials.some((x) => x.suspectedInfra || x.category === "infra" || x.category === "setup")).map((t) => t.task).sort();
  log(`infra-hit after the resume: ${infraHit.join(", ") || "none"}`);
  let rerunJobName: string | null = null;
  const dirs = [local1];
  if (infraHit.length) {
    rerunJobName = `${jobName}-rerun`;
    passStart = new Date().toISOString();
    const code = await runRerun(["--stack", "rehearsal", "--job", jobName, ...infraHit, "--job-name", rerunJobName, "--wait"], ctx);
    if (code !== 0) throw new Error(`reprobench rerun exited ${code}`);
    passes.push({ name: "rerun", job: rerunJobName, startedAt: passStart, endedAt: new Date().toISOString() });
    dirs.push(await pullJob(sim, jobsDir, rerunJobName, localJobs));
  }

  const verdictsFile = path.join(localJobs, "verdicts.yaml");
  fs.writeFileSync(verdictsFile, verdictsYaml(prepare.tasks, []));
  const raw = auditDirs(dirs);
  const corrected = auditDirs(dirs, { overrides: parseOverrides(fs.readFileSync(verdictsFile, "utf8"), verdictsFile) });
  const expected: ExpectedOutcome[] = prepare.tasks.map((t) => ({
    task: t.name,
    reward: t.expected.reward,
    exception: t.expected.exception,
    corrected: t.verdict ? t.verdict.verdict : t.expected.reward === null ? "errored" : t.expected.reward >= 1 ? "passed" : "failed",
  }));

  // After the last pass: nothing of a trial may be left on the runner, and every job dir is complete.
  const leakOut = await sim.ssh(
    RUNNER,
    `echo "$(docker ps -aq --filter label=com.docker.compose.project | wc -l) $(docker network ls -q --filter label=com.docker.compose.project | wc -l) $(docker compose ls -aq | wc -l)"`,
  );
  const [containers, networks, composeProjects] = leakOut.trim().split(/\s+/).map(Number);
  const jobs = dirs.map(readJob);
  const firstJob = jobs[0];
  const firstTrialStart = Math.min(...firstJob.trials.map((t) => Date.parse(t.startedAt ?? "")).filter(Number.isFinite));
  // Status estimates when the job's trials are done; the stop and the wait before the resume are not
  // work it could foresee, so the reference end leaves that gap out.
  const resumePass = passes.find((p) => p.name === "resume")!;
  const gapMs = Date.parse(resumePass.startedAt) - Date.parse(passes[0].endedAt);
  const endLessIdle = new Date(Date.parse(firstJob.result?.finished_at ?? resumePass.endedAt) - Math.max(0, gapMs)).toISOString();
  // The stop began with the destroy (harbor got SIGTERM then); the trials it cut that run into their agent
  // timeout (the ground truth at this run's multiplier) would have ended that long after their agent began.
  const stopAt = events.find((e) => timeline.events.some((t) => t.name === e.name && t.stop))?.at ?? passes[0].endedAt;
  const multiplier = Number((config["reprobench:run"] as { agentTimeoutMultiplier?: number }).agentTimeoutMultiplier ?? 1);
  const timingOut = new Map(prepare.tasks.filter((t) => t.expected.exception === "AgentTimeoutError").map((t) => [t.name, t.agentTimeoutSec * multiplier]));
  const workEnd = endWithoutStop(firstJob.trials, { stoppedAt: stopAt, idleMs: gapMs, cut, agentTimeoutSec: (task) => timingOut.get(task) ?? null }) ?? endLessIdle;
  const inPass = (p: PassRecord) => firstJob.trials.filter((t) => t.startedAt !== null && t.startedAt >= p.startedAt && t.startedAt <= p.endedAt);

  return {
    wallSec: (Date.now() - started) / 1000,
    prepare,
    clusterUpSec,
    pitfall,
    jobName,
    rerunJobName,
    smokeRun,
    trialTimes: firstJob.trials.map((t) => ({ task: t.task, startedAt: t.startedAt, finishedAt: t.finishedAt, exceptionType: t.exceptionType })),
    cut,
    upToFirstTrialSec: (firstTrialStart - upStart) / 1000,
    workEnd,
    endLessIdle,
    events,
    passes,
    peakNetworks,
    peakRunning,
    // A sample taken before the stop is held against the end without the gap; one taken during the resume, against the real end.
    etaSamples: etaSamples.map((s) => ({ ...s, ...etaErrors([s], s.takenAt <= passes[0].endedAt ? workEnd : (firstJob.result?.finished_at ?? resumePass.endedAt))[0] })),
    throughput: { first: throughput(inPass(passes[0]), o.trials), resume: throughput(inPass(resumePass), o.trials) },
    overhead: overheadOutsideAgentAndVerifier(firstJob.trials),
    infraHit,
    audits: { raw, corrected, beforeRerun },
    comparison: {
      raw: countRows(auditCounts(raw, false), expectedCounts(expected, false)),
      corrected: countRows(auditCounts(corrected, true), expectedCounts(expected, true)),
      mismatches: auditMismatches(raw, expected),
    },
    leaks: {
      containers,
      networks,
      composeProjects,
      incompleteTrialDirs: jobs.reduce((n, j) => n + j.incompleteTrialDirs.length, 0),
      jobsUnfinished: jobs.filter((j) => !j.result?.finished_at).length,
    },
    verdictsFile,
    localJobsDir: localJobs,
  };
}

/** The cluster stack for a rehearsal: the local stack on the instance with Harbor, without its own 3-task job. */
export function rehearsalCluster(instance: SimInstance, log?: (m: string) => void): Promise<SimStack> {
  return simStack(instance, {
    baseline: (c) => {
      c["reprobench:run"] = { enabled: false };
      c["reprobench:harbor"] = { ...c["reprobench:harbor"], enabled: true };
    },
    log,
  });
}
