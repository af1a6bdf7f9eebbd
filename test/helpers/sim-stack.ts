// One local stack on a sim instance of its own, for integration tests: the instance is started, the
// project copied with that instance's keys, and the stack file pointed at its hosts. Tests edit the
// config through `editConfig` (values without the "reprobench:" prefix) and reach hosts with `ssh`.
import { readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import type { Stack } from "@pulumi/pulumi/automation";
import YAML from "yaml";
import type { ClusterPlan, SimInstance } from "../../sim/layout";
import { ForeignInstanceError } from "../../sim/ownership";
import { simDown, simUp } from "../../sim/cluster";
import { sshRun } from "../../sim/ssh";
import { pointAtSimInstance, repoRoot, type TestProject, testProject } from "./project";

// Stack config as parsed YAML, edited freely by tests.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type LooseConfig = Record<string, any>;

export interface SimStack {
  plan: ClusterPlan;
  project: TestProject;
  stack: Stack;
  /** Runs a command on a host over SSH (pinned key); rejects with its stderr on a non-zero exit. */
  ssh(host: string, command: string, input?: Buffer): Promise<string>;
  /** Rewrites the stack file from the baseline; `edit` gets the config without the prefix. */
  editConfig(edit: (c: LooseConfig) => void): void;
  /** Destroys the stack, removes the project copy and the sim instance. */
  cleanup(): Promise<void>;
}

export interface SimStackOptions {
  extraFiles?: Record<string, string>;
  baseline?: (config: LooseConfig) => void;
  /** Hosts of the instance (default 2, the local stack's). */
  hosts?: number;
  log?: (message: string) => void;
}

/**
 * Starts the instance, copies the project and creates its stack. If any step fails, everything started
 * so far is removed before the error is rethrown: a suite whose beforeAll throws gets no SimStack for its
 * afterAll to clean up, and a leftover instance would break the same suite later (here or in another checkout).
 */
export async function simStack(instance: SimInstance, options: SimStackOptions = {}): Promise<SimStack> {
  let project: TestProject | undefined;
  let stack: Stack | undefined;
  const teardown = async () => {
    // Whatever happened, leave no resources behind (destroy is asserted by the tests themselves).
    await stack?.destroy({ runProgram: true, onOutput: () => undefined }).catch(() => undefined);
    project?.cleanup();
    await simDown({ root: repoRoot, instance, discardResults: true, log: options.log });
  };
  try {
    const { plan } = await simUp({ root: repoRoot, instance, hosts: options.hosts, log: options.log });
    project = await testProject({ [plan.stateDir]: path.join(repoRoot, plan.stateDir), ...options.extraFiles });
    stack = await project.stack("local", "Pulumi.local.yaml");
    return simStackOn(instance, plan, project, stack, options, teardown);
  } catch (err) {
    // Someone else's instance (a live test run, another checkout's) is theirs to remove, not ours.
    if (err instanceof ForeignInstanceError) throw err;
    try {
      await teardown();
    } catch (cleanupErr) {
      throw new Error(`${(err as Error).message}\n(and removing what the failed setup started also failed: ${(cleanupErr as Error).message})`, { cause: err });
    }
    throw err;
  }
}

function simStackOn(instance: SimInstance, plan: ClusterPlan, project: TestProject, stack: Stack, options: SimStackOptions, teardown: () => Promise<void>): SimStack {
  const stackFile = path.join(project.dir, "Pulumi.local.yaml");
  const baseline = YAML.parse(readFileSync(stackFile, "utf8")) as { config: LooseConfig };
  options.baseline?.(baseline.config);

  const editConfig = (edit: (c: LooseConfig) => void) => {
    const doc = structuredClone(baseline);
    const flat: LooseConfig = {};
    for (const [k, v] of Object.entries(doc.config)) flat[k.replace(/^reprobench:/, "")] = v;
    edit(flat);
    doc.config = Object.fromEntries(Object.entries(flat).map(([k, v]) => [`reprobench:${k}`, v]));
    pointAtSimInstance(doc, plan);
    writeFileSync(stackFile, YAML.stringify(doc));
  };
  editConfig(() => undefined);

  const ssh = async (name: string, command: string, input?: Buffer) => {
    const host = plan.hosts.find((h) => h.name === name);
    if (!host) throw new Error(`sim instance ${instance.name} has no host ${name}`);
    const r = await sshRun(plan, host, command, { timeoutMs: 600_000, input });
    if (r.code !== 0) throw new Error(`ssh ${name} '${command.slice(0, 120)}' exited ${r.code}: ${r.stderr || r.stdout}`);
    return r.stdout;
  };

  return { plan, project, stack, ssh, editConfig, cleanup: teardown };
}

/** What one trial of a Harbor job scored, from its result.json. */
export interface TrialOutcome {
  reward: number | null;
  exception: string | null;
}

/** Per-task reward and exception of a job, read from the trial result.json files on the runner (worker-b). */
export async function trialOutcomes(sim: SimStack, jobDir: string): Promise<Record<string, TrialOutcome>> {
  const out = await sim.ssh("worker-b", `for t in ${jobDir}/*/result.json; do jq -c '{task: .task_name, reward: .verifier_result.rewards.reward, exception: .exception_info.exception_type}' "$t"; done`);
  const outcomes: Record<string, TrialOutcome> = {};
  for (const line of out.trim().split("\n").filter(Boolean)) {
    const r = JSON.parse(line);
    outcomes[String(r.task).replace(/^.*\//, "")] = { reward: r.reward ?? null, exception: r.exception ?? null };
  }
  return outcomes;
}

/**
 * Each trial's result.json in brief (trial dir, task, timings, exception, verifier result), one line a trial:
 * for a failed assertion's message, since the job dir goes with the sim instance.
 */
export async function trialResultExcerpts(sim: SimStack, jobDir: string): Promise<string> {
  const keep = "{trial: .trial_name, task: .task_name, started_at, finished_at, agent_execution, verifier, exception_info, verifier_result}";
  return sim.ssh("worker-b", `for t in ${jobDir}/*/; do if [ -f "$t/result.json" ]; then jq -c '${keep}' "$t/result.json"; else echo "$t: no result.json"; fi; done`);
}
