// Benchmark (not a test): seed 000's whole run rehearsed on a sim instance of its own (test/helpers/rehearsal.ts):
// 89 tasks at 25 concurrent trials and 20 agents, 6× agent and 5× setup timeouts, the faults of
// sim/scenarios/rehearsal-seed000.json, a graceful stop, a resume pass, a rerun of the infra-hit tasks, the
// audit against the ground truth, the address-pool pitfall and the leak check. Prints every figure.
//   node --import tsx bench/rehearsal.ts [tasks] [trials] [agents]
import { simDown } from "../sim/cluster";
import { SEED000_TASK_COUNT } from "../sim/rehearsal/tasks";
import { repoRoot } from "../test/helpers/project";
import { rehearsalCluster, type RehearsalResult, rehearse } from "../test/helpers/rehearsal";

const instance = { name: "rehearsal", slot: 11 };
const tasks = Number(process.argv[2] ?? SEED000_TASK_COUNT);
const trials = Number(process.argv[3] ?? 25);
const agents = Number(process.argv[4] ?? 20);

const fmt = (sec: number) => (sec >= 120 ? `${(sec / 60).toFixed(1)} min` : `${sec.toFixed(1)} s`);
const pct = (x: number | null) => (x === null ? "-" : `${(x * 100).toFixed(0)}%`);

function table(rows: { what: string; audit: number; truth: number; equal: boolean }[]): string {
  return rows.map((r) => `    ${r.what.padEnd(22)} ${String(r.audit).padStart(5)} ${String(r.truth).padStart(6)}   ${r.equal ? "equal" : "DIFFERENT"}`).join("\n");
}

function print(r: RehearsalResult): void {
  const out: string[] = [];
  out.push(`rehearsal: ${r.prepare.taskCount} tasks (${r.prepare.repoUrl} @ ${r.prepare.commit.slice(0, 12)}), ${trials} concurrent trials, ${agents} agents`);
  out.push(`  dataset published in ${fmt(r.prepare.seconds)}; cluster up in ${fmt(r.clusterUpSec)}`);
  out.push(`wall time (dataset to leak check): ${fmt(r.wallSec)}`);
  out.push(`up to first trial running: ${fmt(r.upToFirstTrialSec)}`);
  for (const [name, t] of [["first run (until the stop)", r.throughput.first], ["resume pass", r.throughput.resume]] as const) {
    out.push(`${name}: ${t.trials} trials in ${fmt(t.makespanSec)}, ${t.trialsPerMinute.toFixed(1)} trials/min; lower bound max(longest ${fmt(t.longestTrialSec)}, Σ/${trials}) = ${fmt(t.lowerBoundSec)}; makespan/bound ${(t.lowerBoundSec ? t.makespanSec / t.lowerBoundSec : 0).toFixed(2)}`);
  }
  out.push(`per-trial overhead outside agent and verifier: mean ${fmt(r.overhead.meanSec)}, median ${fmt(r.overhead.p50Sec)}, max ${fmt(r.overhead.maxSec)} (${r.overhead.trials} trials)`);
  out.push(`peak trial networks in use: ${r.peakNetworks}; peak trial containers running: ${r.peakRunning}`);
  // status's ETA is results/eta.ts since issue 33; the mean-of-finished-trials estimate before it was off by 40–72 % here.
  out.push("status ETA error at 25/50/75 % of trials finished (results/eta.ts; positive: the job ended later than status said; reference end without the stop-to-resume gap for samples before the stop):");
  for (const s of r.etaSamples) out.push(`  at ${pct(s.fraction)}: ETA ${s.finishAt ?? "none"} → error ${s.errorSec === null ? "-" : fmt(s.errorSec)} (${pct(s.errorOfRemaining)} of the time left)`);
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
  const log = (m: string) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${m}`);
  const sim = await rehearsalCluster(instance, log);
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
      log,
    });
    print(r);
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
