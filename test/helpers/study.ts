// The 3× vs 6× study (issue 33) on a sim instance: the tracked `dev` (agent timeout ×3) and `prod` (×6)
// stack files, unchanged in what they compare (agent, model, multipliers), pointed at the `local` cluster
// of the instance and the rehearsal dataset published on it, each run to the end; then `reprobench compare`
// typed as a user types it (bin/reprobench as a subprocess) over the two job dirs pulled from the runner.
// bench/study.ts runs it at full size; test/integration/rehearsal.test.ts holds its reduced form.
import * as fs from "node:fs";
import * as path from "node:path";
import YAML from "yaml";
import { run } from "../../sim/exec";
import type { RehearsalReport } from "../../sim/rehearsal/prepare";
import { pullJob } from "./rehearsal";
import { repoRoot } from "./project";
import type { SimStack } from "./sim-stack";

type StackDoc = { config: Record<string, Record<string, unknown> | unknown> };

/** A study run: the stack it is, the job it ran and where its job dir was pulled to. */
export interface StudyRun {
  stack: string;
  agentTimeoutMultiplier: number;
  jobName: string;
  localDir: string;
  upSec: number;
}

export interface StudyDataset {
  repoUrl: string;
  commit: string;
  taskCount: number;
}

/**
 * The stack file of a study side: the tracked file's run settings (agent, model, multipliers) on the
 * sim's `local` cluster and the published rehearsal dataset, every task of it (no task filter), waiting
 * for the end, at the sim's concurrency. Pure: the tracked file's text in, the study's YAML out.
 */
export function studyStackConfig(tracked: string, dataset: StudyDataset, o: { trials: number; agents: number; jobNamePrefix: string }): StackDoc {
  const doc = YAML.parse(tracked) as StackDoc;
  const run = { ...(doc.config["reprobench:run"] as Record<string, unknown>) };
  if (typeof run.agentTimeoutMultiplier !== "number") throw new Error("study: the tracked stack file has no reprobench:run.agentTimeoutMultiplier");
  delete run.taskFilter;
  Object.assign(run, { enabled: true, waitForCompletion: true, nConcurrentTrials: o.trials, nConcurrentAgents: o.agents, jobNamePrefix: o.jobNamePrefix });
  return {
    config: {
      ...doc.config,
      "reprobench:cluster": "local",
      "reprobench:dataset": { repo: dataset.repoUrl, commit: dataset.commit, tasksSubdir: "", expectedTaskCount: dataset.taskCount },
      "reprobench:run": run,
    },
  };
}

/** Runs one side: the stack `name` from the tracked file `trackedFile`, up to the job's end, then pulls its dir. */
export async function runStudySide(sim: SimStack, name: string, trackedFile: string, dataset: RehearsalReport, o: { trials: number; agents: number; localJobs: string; log?: (m: string) => void }): Promise<StudyRun> {
  const doc = studyStackConfig(fs.readFileSync(path.join(repoRoot, trackedFile), "utf8"), dataset, {
    trials: o.trials,
    agents: o.agents,
    jobNamePrefix: `study-${name}-sim${dataset.taskCount}`,
  });
  const multiplier = (doc.config["reprobench:run"] as { agentTimeoutMultiplier: number }).agentTimeoutMultiplier;
  const stack = await sim.project.stack(name, trackedFile);
  // After the stack exists: its file is the study's, not the tracked one project.stack() copied.
  fs.writeFileSync(path.join(sim.project.dir, `Pulumi.${name}.yaml`), YAML.stringify(doc));
  const t0 = Date.now();
  const up = await stack.up({ onOutput: () => undefined });
  const upSec = (Date.now() - t0) / 1000;
  const jobName = String(up.outputs.jobName.value);
  o.log?.(`study ${name} (agent ×${multiplier}): job ${jobName} finished in ${upSec.toFixed(0)}s`);
  const localDir = await pullJob(sim, String(up.outputs.jobsDir.value), jobName, o.localJobs);
  return { stack: name, agentTimeoutMultiplier: multiplier, jobName, localDir, upSec };
}

/** `bin/reprobench compare A B …` as a subprocess; rejects naming the exit code and stderr. */
export async function compareThroughLauncher(a: string[], b: string[], extra: string[] = []): Promise<string> {
  const r = await run([path.join(repoRoot, "bin/reprobench"), "compare", a.join(","), b.join(","), ...extra], { timeoutMs: 120_000 });
  if (r.code !== 0) throw new Error(`bin/reprobench compare exited ${r.code}: ${r.stderr || r.stdout}`);
  return r.stdout;
}
