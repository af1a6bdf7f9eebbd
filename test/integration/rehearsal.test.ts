// The reduced rehearsal of seed 000's run (bench/rehearsal.ts is the full one), on a sim instance of its
// own (slot 10): 12 tasks with known outcomes (every behaviour of sim/rehearsal/tasks.ts), 6 concurrent
// trials, the package index failing through the proxy while the first half runs, a graceful stop (destroy
// of the run stack) at half the trials, `reprobench resume --stack`, a rerun of the infra-hit tasks, and
// the audit over every pass against the ground truth, raw and corrected. Also the address-pool pitfall
// (docker's default pools refuse networks, the stack's do not) and the leak check after the last pass.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as fs from "node:fs";
import * as path from "node:path";
import type { Comparison } from "../../results/compare";
import type { SimStack } from "../helpers/sim-stack";
import { rehearsalCluster, type RehearsalResult, rehearse } from "../helpers/rehearsal";
import { compareThroughLauncher, runStudySide, type StudyRun } from "../helpers/study";

const instance = { name: "rehearse-ci", slot: 10 };
const log = (m: string) => console.log(m);
let sim: SimStack | undefined;
let result: RehearsalResult;
// The reduced 3× vs 6× study: the dev stack (agent timeout ×3) over the same dataset, compared with the
// rehearsal's passes (×6) through bin/reprobench compare.
let dev: StudyRun;
let study: Comparison;

beforeAll(async () => {
  sim = await rehearsalCluster(instance, log);
  result = await rehearse(sim, {
    instance,
    tasks: 12,
    seed: 0,
    trials: 6,
    agents: 6,
    timeline: "sim/scenarios/rehearsal-ci.json",
    pitfall: { leftoverNetworks: 10, projects: 25 },
    deadlineMinutes: 25,
    log,
  });
  dev = await runStudySide(sim, "dev", "Pulumi.dev.yaml", result.prepare, { trials: 6, agents: 6, localJobs: result.localJobsDir, log });
  const sixX = [result.jobName, ...(result.rerunJobName ? [result.rerunJobName] : [])].map((j) => path.join(result.localJobsDir, j));
  study = JSON.parse(await compareThroughLauncher([dev.localDir], sixX, ["--json"])) as Comparison;
});

afterAll(async () => {
  await sim?.cleanup();
});

/**
 * What each mismatched trial's result.json says (the job dirs are gone once the suite cleans up): its
 * timings, exception and verifier result, beside when the graceful stop came.
 */
function mismatchEvidence(r: RehearsalResult): string {
  const stop = r.events.find((e) => e.name === "graceful-stop");
  const lines = [`graceful stop: ${JSON.stringify(stop ?? null)}; passes: ${JSON.stringify(r.passes)}`];
  for (const m of r.comparison.mismatches) {
    const trial = /\(([^()]+)\)$/.exec(m.got)?.[1];
    if (!trial) continue;
    const file = path.join(r.localJobsDir, trial, "result.json");
    try {
      const res = JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>;
      const keep = ["started_at", "finished_at", "environment_setup", "agent_setup", "agent_execution", "verifier", "exception_info", "verifier_result"];
      lines.push(`${trial}: ${JSON.stringify(Object.fromEntries(keep.map((k) => [k, res[k] ?? null])))}`);
    } catch (err) {
      lines.push(`${trial}: ${file} unreadable (${(err as Error).message})`);
    }
  }
  return lines.join("\n");
}

describe("reduced rehearsal", () => {
  it("the proxy fault opened while trials ran and the job was stopped gracefully before it was done", () => {
    expect(result.events.map((e) => e.name)).toEqual(["proxy-502-window-opens", "proxy-502-window-closes", "graceful-stop"]);
    const stop = result.events.find((e) => e.name === "graceful-stop")!;
    expect(stop.finished).toBeLessThan(12);
    expect(result.passes.map((p) => p.name)).toEqual(result.rerunJobName ? ["first run", "resume", "rerun"] : ["first run", "resume"]);
  });

  it("the audit over every pass equals the ground truth, raw and corrected with the verdicts file", () => {
    expect(result.comparison.mismatches, mismatchEvidence(result)).toEqual([]);
    for (const row of [...result.comparison.raw, ...result.comparison.corrected]) expect(row, row.what).toMatchObject({ equal: true });
    // Every behaviour left its mark: a pass, a failure, the three error kinds.
    const exceptions = result.comparison.raw.filter((r) => r.truth > 0).map((r) => r.what);
    expect(exceptions).toEqual(expect.arrayContaining(["passed", "failed", "errored", "AgentTimeoutError", "VerifierTimeoutError", "RuntimeError"]));
  });

  it("the downloads verifiers the proxy broke were found as infra-hit (HTTP 502 evidence) and rerun", () => {
    const hit = result.audits.beforeRerun.tasks.filter((t) => t.trials.some((x) => x.evidence.some((e) => e.signature === "proxy-502"))).map((t) => t.task);
    expect(hit.length).toBeGreaterThan(0);
    expect(result.infraHit).toEqual(expect.arrayContaining(hit));
    expect(result.rerunJobName).not.toBeNull();
  });

  it("docker's default pools run out under the projects plus a killed run's networks; the stack's pools do not", () => {
    const [defaults, stacks] = result.pitfall;
    expect(defaults.failed).toBeGreaterThan(0);
    expect(defaults.firstError).toMatch(/all predefined address pools have been fully subnetted|could not find an available, non-overlapping IPv4 address pool/);
    expect(stacks).toMatchObject({ pools: "the stack's", failed: 0 });
  });

  it("nothing of a trial is left on the runner and every job dir is complete", () => {
    expect(result.leaks).toEqual({ containers: 0, networks: 0, composeProjects: 0, incompleteTrialDirs: 0, jobsUnfinished: 0 });
  });

  it("status, read while the job ran, estimated its end", () => {
    expect(result.etaSamples.length).toBeGreaterThan(0);
    expect(result.etaSamples.some((s) => s.finishAt !== null)).toBe(true);
  });
});

describe("3× vs 6× (the dev stack against the rehearsal's passes)", () => {
  const tasksOf = (behaviour: string) => result.prepare.tasks.filter((t) => t.behaviour === behaviour).map((t) => t.name).sort();

  it("the overthinking tasks time out at ×3 and pass at ×6; nothing else flips", () => {
    expect(dev.agentTimeoutMultiplier).toBe(3);
    expect(tasksOf("overthinks").length).toBeGreaterThan(0);
    expect(study.flips.byCause["timeout → pass"].sort()).toEqual(tasksOf("overthinks"));
    expect(study.flips.failToPass.sort()).toEqual(tasksOf("overthinks"));
    expect(study.flips.passToFail).toEqual([]);
  });

  it("the comparison names the multiplier as the difference and tests it paired", () => {
    const multiplier = study.conditions.find((c) => c.field === "agent_timeout_multiplier");
    expect(multiplier, JSON.stringify(study.conditions)).toMatchObject({ a: "3", b: "6", differs: true });
    expect(study.mcnemar).toMatchObject({ b: 0, c: tasksOf("overthinks").length });
    expect(study.bootstrap.diff).toBeGreaterThan(0);
  });
});
