// One cluster, several stacks, on a sim instance of its own with the real engine: the owning stack
// (local: cluster + a 3× job), a run stack on it (local6x: its 6× job only, through a StackReference),
// and a third stack that claims the same hosts. Asserted on the hosts themselves: container IDs and
// daemon.json hashes before and after every step.
import * as fs from "node:fs";
import * as path from "node:path";
import type { Stack } from "@pulumi/pulumi/automation";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { repoRoot } from "../helpers/project";
import { type SimStack, simStack, trialOutcomes, trialResultExcerpts } from "../helpers/sim-stack";

let sim: SimStack;
let owner: Stack;
let runStack: Stack | undefined;
let intruder: Stack | undefined;

/** What the cluster is on the hosts: every container of ours (not the jobs' task containers) and every daemon.json's sha256. */
async function clusterState(): Promise<Record<string, string>> {
  const state: Record<string, string> = {};
  for (const host of sim.plan.hosts) {
    state[`${host.name} containers`] = (await sim.ssh(host.name, "docker ps -a --no-trunc --filter label=io.reprobench.managed=1 --format '{{.Names}}={{.ID}}' | sort")).trim();
    state[`${host.name} daemon.json`] = (await sim.ssh(host.name, "sha256sum /etc/docker/daemon.json | cut -d' ' -f1")).trim();
  }
  return state;
}

/** Writes a stack file in the project copy (after the workspace created the stack from the checkout's). */
function writeStackFile(name: string, config: Record<string, unknown>): void {
  fs.writeFileSync(path.join(sim.project.dir, `Pulumi.${name}.yaml`), YAML.stringify({ config }));
}

const runStackConfig = (run: Record<string, unknown>) => {
  const tracked = YAML.parse(fs.readFileSync(path.join(repoRoot, "Pulumi.local6x.yaml"), "utf8")) as { config: Record<string, unknown> };
  return { ...tracked.config, "reprobench:run": { ...(tracked.config["reprobench:run"] as object), ...run } };
};

beforeAll(async () => {
  sim = await simStack({ name: "stacks", slot: 6 }, { extraFiles: { "sim/dataset": path.join(repoRoot, "sim/dataset") } });
  owner = sim.stack;
});

afterAll(async () => {
  // A run stack's job first: the owner's guard refuses to go while it runs.
  await runStack?.destroy({ runProgram: true, onOutput: () => undefined }).catch(() => undefined);
  await intruder?.workspace.removeStack("intruder", { force: true }).catch(() => undefined);
  await sim?.cleanup();
});

describe("one cluster, several run stacks (real engine)", () => {
  let before: Record<string, string>;

  it("the owning stack brings up the cluster and its 3× job", async () => {
    const up = await owner.up({ onOutput: () => undefined });
    expect(up.summary.result).toBe("succeeded");
    expect(up.outputs.jobState.value).toBe("finished");
    expect(String(up.outputs.jobName.value)).toMatch(/^sim-terminus2-\d{8}-\d{6}$/);
    before = await clusterState();
    expect(before["worker-a containers"]).toMatch(/qwen38-worker-a=/);
  });

  it("a run stack at 6× previews no cluster resource, runs its own job, and changes nothing of the cluster", async () => {
    runStack = await sim.project.stack("local6x", "Pulumi.local6x.yaml");
    const events: string[] = [];
    const preview = await runStack.preview({ diff: true, onOutput: (o) => events.push(o) });
    const plan = events.join("");
    expect(plan).not.toMatch(/reprobench:cluster:|docker:index:|DockerDaemonConfig|HarborRunner|TaskImages|ToolBundle|ProxyBridge/);
    expect(plan).toMatch(/reprobench:run:BenchmarkRun/);
    expect(plan).toMatch(/agent_timeout_multiplier\s*:\s*6/);
    expect(preview.changeSummary.create).toBeLessThanOrEqual(7);

    const up = await runStack.up({ onOutput: () => undefined });
    expect(up.summary.result).toBe("succeeded");
    const jobName = String(up.outputs.jobName.value);
    expect(jobName).toMatch(/^sim-terminus2-6x-\d{8}-\d{6}$/);
    expect(up.outputs.jobState.value).toBe("finished");
    const outcomes = await trialOutcomes(sim, `/var/lib/reprobench/jobs/${jobName}`);
    const rewards = Object.fromEntries(Object.entries(outcomes).map(([t, o]) => [t, o.reward]));
    // Once (CI of 2026-12-02) a trial read as reward null: the message shows every trial's result.json.
    const evidence = await trialResultExcerpts(sim, `/var/lib/reprobench/jobs/${jobName}`);
    expect(rewards, evidence).toEqual({ "hello-file": 1, "sum-numbers": 1, "sha-preimage": 0 });
    const config = JSON.parse(await sim.ssh("worker-b", `cat /var/lib/reprobench/jobs/${jobName}/config.json`));
    expect(config.agent_timeout_multiplier).toBe(6);
    // The owner's job is still there under its own name.
    const ownerJob = String((await owner.outputs()).jobName.value);
    expect(await sim.ssh("worker-b", `jq -r .finished_at /var/lib/reprobench/jobs/${ownerJob}/result.json`)).not.toMatch(/null/);
    expect(await clusterState()).toEqual(before);
  });

  it("the owner's preview --refresh afterwards shows no change", async () => {
    const preview = await owner.preview({ refresh: true, expectNoChanges: true });
    expect(Object.keys(preview.changeSummary).filter((k) => k !== "same")).toEqual([]);
  });

  it("destroying the run stack keeps its results and leaves every container and daemon.json as they were", async () => {
    const jobName = String((await runStack!.outputs()).jobName.value);
    await runStack!.destroy({ runProgram: true, onOutput: () => undefined });
    expect(await sim.ssh("worker-b", `test -f /var/lib/reprobench/jobs/${jobName}/result.json && echo kept`)).toContain("kept");
    expect(await clusterState()).toEqual(before);
  });

  it("a third stack claiming the same hosts is refused at up, and nothing on any host changes", async () => {
    intruder = await sim.project.stack("intruder", "Pulumi.local.yaml");
    // The same hosts as the owner (the project copy's local stack file points at this instance).
    fs.copyFileSync(path.join(sim.project.dir, "Pulumi.local.yaml"), path.join(sim.project.dir, "Pulumi.intruder.yaml"));
    const failure = await intruder.up({ onOutput: () => undefined }).then(() => new Error("up succeeded"), (err: Error) => err);
    expect(failure.message).toMatch(/this host belongs to stack local of project reprobench/);
    expect(failure.message).toMatch(/reference it from this stack \(reprobench:cluster: <that stack>\)/);
    expect(await clusterState()).toEqual(before);
    console.log(`stacks: a third stack's up was refused: ${failure.message.split("\n").find((l) => l.includes("belongs to")) ?? ""}`);
    // Its own state holds nothing on any host: removing it touches no host.
    await intruder.destroy({ runProgram: true, onOutput: () => undefined });
    expect(await clusterState()).toEqual(before);
  });

  it("destroying the owner is refused while a run stack's job runs, naming the stack and the job", async () => {
    writeStackFile("local6x", runStackConfig({ waitForCompletion: false, nConcurrentTrials: 1, nConcurrentAgents: 1 }));
    // Slow replies (8 s each) keep the job running through the refused up and the refused destroy below: on a
    // loaded machine those took longer than the three quick sim trials, and the destroy then rightly went ahead.
    const setDelay = async (seconds: number) => {
      for (const h of sim.plan.hosts) await sim.ssh(h.name, `curl -fsS -X POST -H 'Content-Type: application/json' -d '{"extra_delay_seconds": ${seconds}}' http://${h.ip}:30001/_double/state`);
    };
    await setDelay(8);
    const up = await runStack!.up({ onOutput: () => undefined });
    const jobName = String(up.outputs.jobName.value);
    expect(up.outputs.jobState.value).toBe("running");
    // A worker flag change on the owner while that job runs: refused naming the job, and nothing restarts.
    sim.editConfig((c) => (c.modelServer.overrides = { "worker-b": { maxRunningRequests: 4 } }));
    const refused = await owner.up({ onOutput: () => undefined }).then(() => new Error("up succeeded"), (err: Error) => err);
    expect(refused.message).toMatch(new RegExp(`refusing to restart worker-b's model server \\(qwen38-worker-b\\) while a Harbor job runs on this cluster: ${jobName} \\(stack reprobench\\.local6x\\)`));
    expect(await clusterState()).toEqual(before);
    console.log(`stacks: a worker flag change under a running job: ${refused.message.split("\n").find((l) => l.includes("refusing to restart")) ?? ""}`);
    sim.editConfig(() => undefined);

    const failure = await owner.destroy({ runProgram: true, onOutput: () => undefined }).then(() => new Error("destroy succeeded"), (err: Error) => err);
    expect(failure.message).toContain(`stack reprobench.local6x runs job ${jobName}`);
    // Nothing of the cluster went: the workers and the router still run.
    const after = await clusterState();
    for (const host of sim.plan.hosts) expect(after[`${host.name} daemon.json`]).toBe(before[`${host.name} daemon.json`]);
    expect(after["worker-a containers"]).toBe(before["worker-a containers"]);
    expect(after["worker-b containers"]).toMatch(/qwen38-global-router=/);
    // The run stack's destroy stops its job gracefully (its directory stays); then the owner may go.
    await runStack!.destroy({ runProgram: true, onOutput: () => undefined });
    await setDelay(0);
    expect(await sim.ssh("worker-b", `test -d /var/lib/reprobench/jobs/${jobName} && echo kept`)).toContain("kept");
    const destroyed = await owner.destroy({ runProgram: true, onOutput: () => undefined });
    expect(destroyed.summary.result).toBe("succeeded");
    expect(await sim.ssh("worker-a", "test -e /var/lib/reprobench/owner.json && echo claimed || echo free")).toContain("free");
  });
});
