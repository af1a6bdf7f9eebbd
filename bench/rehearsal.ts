// Benchmark (not a test): seed 000's whole run rehearsed on a sim instance of its own (test/helpers/rehearsal.ts):
// 89 tasks at 25 concurrent trials and 20 agents, 6× agent and 5× setup timeouts, the faults of
// sim/scenarios/rehearsal-seed000.json, a graceful stop, a resume pass, a rerun of the infra-hit tasks, the
// audit against the ground truth, the address-pool pitfall and the leak check. Before it, as seed 000 did,
// a 3× smoke run of the same tasks (no faults), which status's ETA reads as an earlier job; --no-smoke
// leaves it out. Prints every figure.
// --save DIR keeps what the ETA was computed from: the runner's raw status probe at each sample
// (sample-<percent>.json) and the result (result.json), for replaying estimators offline.
//   node --import tsx bench/rehearsal.ts [tasks] [trials] [agents] [--no-smoke] [--save DIR]
import * as fs from "node:fs";
import * as path from "node:path";
import { runStatus } from "../cli/commands/status";
import type { StatusReport } from "../results/status";
import { simDown } from "../sim/cluster";
import { type EstimatorSample, estimatesOfReport, estimatorErrors } from "../sim/rehearsal/measure";
import { SEED000_TASK_COUNT } from "../sim/rehearsal/tasks";
import { repoRoot } from "../test/helpers/project";
import { rehearsalCluster, type RehearsalResult, rehearse } from "../test/helpers/rehearsal";

const instance = { name: "rehearsal", slot: 11 };
const argv = process.argv.slice(2);
const saveAt = argv.indexOf("--save");
const saveDir = saveAt >= 0 ? argv[saveAt + 1] : null;
if (saveAt >= 0 && !saveDir) throw new Error("--save: expected a directory");
const args = argv.filter((a, i) => a !== "--no-smoke" && a !== "--save" && (saveAt < 0 || i !== saveAt + 1));
const smoke = !argv.includes("--no-smoke");
if (saveDir) fs.mkdirSync(saveDir, { recursive: true });
const tasks = Number(args[0] ?? SEED000_TASK_COUNT);
const trials = Number(args[1] ?? 25);
const agents = Number(args[2] ?? 20);

const fmt = (sec: number) => (sec >= 120 ? `${(sec / 60).toFixed(1)} min` : `${sec.toFixed(1)} s`);
const pct = (x: number | null) => (x === null ? "-" : `${(x * 100).toFixed(0)}%`);

function table(rows: { what: string; audit: number; truth: number; equal: boolean }[]): string {
  return rows.map((r) => `    ${r.what.padEnd(22)} ${String(r.audit).padStart(5)} ${String(r.truth).padStart(6)}   ${r.equal ? "equal" : "DIFFERENT"}`).join("\n");
}

/**
 * Old and new ETA at the moments the rehearsal samples status (it logs "status at N%: …" right after its
 * own read): a second read moments later, both estimates from that one report (estimatesOfReport), and a
 * third with `--earlier-jobs 0`: the new estimate without the smoke run.
 */
interface Sampled {
  withEarlier: EstimatorSample;
  earlierJobs: string[];
  withoutEarlier: EstimatorSample | null;
}
const estimatorSamples: Promise<Sampled | null>[] = [];
function sampleEstimators(sim: Awaited<ReturnType<typeof rehearsalCluster>>, message: string): void {
  const at = /^status at (\d+(?:\.\d+)?)%:/.exec(message);
  if (!at) return;
  const fraction = Number(at[1]) / 100;
  const read = async (extra: string[]): Promise<StatusReport | null> => {
    let out = "";
    const code = await runStatus(["--stack", "rehearsal", "--json", ...extra], { root: sim.project.dir, env: sim.project.env, write: (t) => void (out += t), writeErr: () => undefined, isTTY: false });
    return code === 0 ? (JSON.parse(out) as StatusReport) : null;
  };
  estimatorSamples.push(
    (async () => {
      const report = await read([]);
      if (!report) return null;
      if (saveDir && report.job) await saveProbe(sim, report.job.dir, report.job.unit ?? "", fraction);
      const without = await read(["--earlier-jobs", "0"]);
      return { withEarlier: estimatesOfReport(report, fraction), earlierJobs: report.eta?.earlierJobs ?? [], withoutEarlier: without && estimatesOfReport(without, fraction) };
    })().catch(() => null),
  );
}

/** The runner's raw probe of the job (results/remote/status-probe.sh), as status reads it. */
async function saveProbe(sim: Awaited<ReturnType<typeof rehearsalCluster>>, jobDir: string, unit: string, fraction: number): Promise<void> {
  const script = fs.readFileSync(path.join(repoRoot, "results", "remote", "status-probe.sh"));
  const out = await sim.ssh("worker-b", `JOB_DIR='${jobDir}' UNIT='${unit}' LOG_LINES=0 bash -s`, script);
  const probe: unknown = JSON.parse(out.trim().split("\n").pop() ?? "null");
  fs.writeFileSync(path.join(saveDir!, `sample-${Math.round(fraction * 100)}.json`), JSON.stringify({ fraction, takenAt: new Date().toISOString(), probe }));
}

function print(r: RehearsalResult, estimators: Sampled[]): void {
  const out: string[] = [];
  out.push(`rehearsal: ${r.prepare.taskCount} tasks (${r.prepare.repoUrl} @ ${r.prepare.commit.slice(0, 12)}), ${trials} concurrent trials, ${agents} agents`);
  out.push(`  dataset published in ${fmt(r.prepare.seconds)}; cluster up in ${fmt(r.clusterUpSec)}`);
  out.push(`wall time (dataset to leak check): ${fmt(r.wallSec)}`);
  out.push(r.smokeRun ? `smoke run before it (3× agent timeouts, no faults): ${r.smokeRun.job}, ${r.smokeRun.trials} trials in ${fmt(r.smokeRun.seconds)}` : "no smoke run before it (--no-smoke)");
  out.push(`up to first trial running: ${fmt(r.upToFirstTrialSec)}`);
  for (const [name, t] of [["first run (until the stop)", r.throughput.first], ["resume pass", r.throughput.resume]] as const) {
    out.push(`${name}: ${t.trials} trials in ${fmt(t.makespanSec)}, ${t.trialsPerMinute.toFixed(1)} trials/min; lower bound max(longest ${fmt(t.longestTrialSec)}, Σ/${trials}) = ${fmt(t.lowerBoundSec)}; makespan/bound ${(t.lowerBoundSec ? t.makespanSec / t.lowerBoundSec : 0).toFixed(2)}`);
  }
  out.push(`per-trial overhead outside agent and verifier: mean ${fmt(r.overhead.meanSec)}, median ${fmt(r.overhead.p50Sec)}, max ${fmt(r.overhead.maxSec)} (${r.overhead.trials} trials)`);
  out.push(`peak trial networks in use: ${r.peakNetworks}; peak trial containers running: ${r.peakRunning}`);
  // status's ETA is results/eta.ts since issue 33; the mean-of-finished-trials estimate before it was off by 40–72 % here.
  out.push("status ETA error at 25/50/75 % of trials finished (results/eta.ts; positive: the job ended later than status said; for samples before the stop the reference is when the job would have ended without it (sim/rehearsal/measure.ts endWithoutStop): a cut trial that runs into its agent timeout ends that long after its agent began plus what the finished timeouts took after theirs, another one its rerun's duration after its start, never before the stop; later trials move back by the idle time):");
  for (const s of r.etaSamples) out.push(`  at ${pct(s.fraction)}: ETA ${s.finishAt ?? "none"} → error ${s.errorSec === null ? "-" : fmt(s.errorSec)} (${pct(s.errorOfRemaining)} of the time left)`);
  // The reference end of each sample is the helper's (finishAt + errorSec), so both estimators are held to it.
  out.push("ETA error of the time left, old estimator (mean of the finished trials) → new (results/eta.ts) without earlier jobs (--earlier-jobs 0) → new as status gives it (with the smoke run when there was one):");
  for (const e of estimators) {
    const f = e.withEarlier.fraction;
    const ref = r.etaSamples.find((s) => s.fraction === f);
    const end = ref?.finishAt && ref.errorSec !== null ? new Date(Date.parse(ref.finishAt) + ref.errorSec * 1000).toISOString() : r.workEnd;
    const [row] = estimatorErrors([e.withEarlier], end);
    const without = e.withoutEarlier ? estimatorErrors([e.withoutEarlier], end)[0].new : null;
    out.push(`  at ${pct(f)}: old ${pct(row.old)} → new without earlier jobs ${pct(without)} → new ${pct(row.new)}${e.earlierJobs.length ? ` (earlier: ${e.earlierJobs.join(", ")})` : ""}`);
  }
  // The same reads against the reference used before endWithoutStop (the real end less the idle time), for samples before the stop.
  out.push(`the same against the job's real end less the idle time after the stop (${r.endLessIdle}; the reference above: ${r.workEnd}):`);
  for (const e of estimators) {
    const end = e.withEarlier.takenAt <= r.passes[0].endedAt ? r.endLessIdle : null;
    if (!end) continue;
    const [row] = estimatorErrors([e.withEarlier], end);
    const without = e.withoutEarlier ? estimatorErrors([e.withoutEarlier], end)[0].new : null;
    out.push(`  at ${pct(e.withEarlier.fraction)}: old ${pct(row.old)} → new without earlier jobs ${pct(without)} → new ${pct(row.new)}`);
  }
  out.push("faults and passes:");
  for (const e of r.events) out.push(`  ${e.at} ${e.line} [${e.finished} finished, ${e.started} started]`);
  for (const p of r.passes) out.push(`  pass ${p.name}: ${p.job} ${p.startedAt} → ${p.endedAt}`);
  out.push(`infra-hit after the resume (rerun as a new job): ${r.infraHit.join(", ") || "none"}`);
  out.push("address-pool pitfall (Compose projects created at once beside networks a killed run left):");
  for (const p of r.pitfall) out.push(`  ${p.pools.padEnd(15)} ${p.projects} projects + ${p.leftoverNetworks} leftover networks: ${p.failed} refused${p.firstError ? ` — ${p.firstError}` : ""}`);
  out.push("audit over all passes against the ground truth (what, audit, truth):");
  out.push("  raw:");
  out.push(table(r.comparison.raw));
  out.push(`  corrected (verdicts ${r.verdictsFile}):`);
  out.push(table(r.comparison.corrected));
  out.push(`  raw score ${r.audits.raw.scores.raw.passed}/${r.audits.raw.scores.raw.nTrials}, corrected ${r.audits.corrected.scores.corrected.passed}/${r.audits.corrected.scores.corrected.nTrials}; task-by-task mismatches: ${r.comparison.mismatches.length}`);
  for (const m of r.comparison.mismatches) out.push(`    ${m.task}: expected ${m.expected}, got ${m.got}`);
  out.push(`leak check after the last pass: ${r.leaks.containers} containers, ${r.leaks.networks} networks, ${r.leaks.composeProjects} compose projects of trials left; ${r.leaks.incompleteTrialDirs} incomplete trial dirs; ${r.leaks.jobsUnfinished} unfinished job dirs`);
  console.log(out.join("\n"));
}

async function main(): Promise<void> {
  let onLog = (_m: string): void => undefined;
  const log = (m: string) => {
    console.error(`[${new Date().toISOString().slice(11, 19)}] ${m}`);
    onLog(m);
  };
  const sim = await rehearsalCluster(instance, log);
  onLog = (m) => sampleEstimators(sim, m);
  try {
    const r = await rehearse(sim, {
      instance,
      tasks,
      seed: 0,
      trials,
      agents,
      timeline: "sim/scenarios/rehearsal-seed000.json",
      pitfall: { leftoverNetworks: 10, projects: 25 },
      deadlineMinutes: 90,
      smoke: smoke ? { agentTimeoutMultiplier: 3 } : undefined,
      log,
    });
    const sampled = (await Promise.all(estimatorSamples)).filter((x): x is Sampled => x !== null);
    if (saveDir) fs.writeFileSync(path.join(saveDir, "result.json"), JSON.stringify({ result: r, sampled }));
    print(r, sampled);
  } finally {
    await sim.cleanup().catch(async (err: Error) => {
      log(`cleanup failed (${err.message}); removing the instance`);
      await simDown({ root: repoRoot, instance, discardResults: true });
    });
  }
}

main().catch((err: Error) => {
  console.error(err.stack ?? err.message);
  process.exit(1);
});
