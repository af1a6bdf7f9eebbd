// The benchmark run end to end on the simulated cluster with the REAL engine (Automation API) and the REAL
// Harbor 0.21 (installed with uv from the sim's index, through a proxy that fails 10 % of connections):
// Terminus-2 through the real router to the SGLang
// doubles on both hosts, the oracle agent, a second `up` that starts nothing, a 3×→6× preview that touches
// only the run, and a destroy while a job runs (SIGTERM, every trial keeps its result.json, nothing left).
import type { Stack } from "@pulumi/pulumi/automation";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClusterPlan } from "../../sim/layout";
import { readNetworkConditions, setNetworkConditions } from "../../sim/settings";
import { mustRun, run } from "../../sim/exec";
import { repoRoot } from "../helpers/project";
import { type LooseConfig, type SimStack, simStack, trialOutcomes } from "../helpers/sim-stack";

let sim: SimStack;
let plan: ClusterPlan;
let stack: Stack;

const host = (name: string) => plan.hosts.find((h) => h.name === name)!;
const ssh = (name: string, command: string) => sim.ssh(name, command);
const editConfig = (edit: (c: LooseConfig) => void) => sim.editConfig(edit);


/** Requests each double answered (its /_double/stats), keyed "host@rank". */
async function doubleRequests(): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const h of ["worker-a", "worker-b"]) {
    const ip = host(h).ip;
    const stats = JSON.parse(await ssh(h, `curl -fsS http://${ip}:30001/_double/stats`));
    for (const r of stats.ranks) counts[`${stats.host_tag}@${r.dp_rank}`] = r.requests;
  }
  return counts;
}

beforeAll(async () => {
  // A sim instance of its own (fresh hosts, removed afterwards): never the default one a user's local
  // stack uses. Pulumi.local.yaml installs Harbor from the sim's index and clones the dataset from git.sim.
  sim = await simStack(
    { name: "run", slot: 4 },
    {
      extraFiles: { "sim/dataset": path.join(repoRoot, "sim/dataset") },
      // cache_aware (the seed's policy) keeps 3 short sim tasks, which share their long prompt prefix, on
      // one rank; round_robin makes "both hosts served the job" deterministic.
      baseline: (c) => (c["reprobench:router"] = { ...(c["reprobench:router"] ?? {}), policy: "round_robin" }),
    },
  );
  ({ plan, stack } = sim);
});

afterAll(() => sim?.cleanup());

describe("benchmark run on the simulated cluster (real engine, real Harbor)", () => {
  let jobDir = "";
  let oracleJobDir = "";

  it("up through a proxy that fails 10 % of connections converges, says what it retried, and runs Terminus-2 through the router to the doubles on both hosts: reward 1, 1, 0", async () => {
    const before = await doubleRequests().catch(() => ({}));
    // Every image, wheel and the dataset come through the sim's proxy; one connection in ten fails (502).
    const where = { root: repoRoot, instance: { name: "run", slot: 4 } };
    setNetworkConditions(where, { failFraction: 0.1, failWith: "502", seed: 15 });
    let output = "";
    const up = await stack
      .up({
        onOutput: (o) => {
          output += o;
          process.stdout.write(o);
        },
      })
      .finally(() => setNetworkConditions(where, { failFraction: 0 }));
    expect(readNetworkConditions(where)?.failFraction).toBe(0);
    expect(up.summary.result).toBe("succeeded");
    const injected = (await run(["docker", "logs", plan.proxy.container], { timeoutMs: 30_000 })).stdout.match(/FAILED .*injected 502/g) ?? [];
    console.log(`the proxy failed ${injected.length} connections; up retried:\n${[...new Set(output.match(/[a-z-]+: retrying [^(]+/g) ?? [])].join("\n")}`);
    expect(injected.length).toBeGreaterThan(0);
    expect(output).toMatch(/: retrying .+ \(attempt 2\/\d+ in \d+s\): .*502/);
    // The worker-a proxy URL carries the instance's credentials: never in the output or the state.
    const password = new URL(readFileSync(path.join(repoRoot, plan.stateDir, "proxy-url"), "utf8").trim()).password;
    expect(password.length).toBeGreaterThan(8);
    expect(output).not.toContain(password);
    // The state as the backend keeps it (exportStack would decrypt the secrets for us): only ciphertext.
    const stateFile = path.join(sim.project.dir, ".state", ".pulumi", "stacks", "reprobench", "local.json");
    const state = readFileSync(stateFile, "utf8");
    expect(state).toContain('"ciphertext"');
    expect(state).not.toContain(password);
    // The registry account's password (reprobench:registries, read from the instance's registry-password):
    // neither it nor the base64 "user:password" docker's auth file holds is in the output or the state.
    const registryPassword = readFileSync(path.join(repoRoot, plan.registry.passwordFile), "utf8").trim();
    const registryAuth = Buffer.from(`${plan.registry.username}:${registryPassword}`).toString("base64");
    expect(registryPassword.length).toBeGreaterThan(8);
    for (const secret of [registryPassword, registryAuth]) {
      expect(output).not.toContain(secret);
      expect(state).not.toContain(secret);
    }
    const name = up.outputs.jobName.value as string;
    expect(name).toMatch(/^sim-terminus2-\d{8}-\d{6}$/);
    jobDir = `${up.outputs.jobsDir.value}/${name}`;
    expect(up.outputs.jobState.value).toBe("finished");
    expect(up.outputs.jobSummary.value).toMatchObject({ trials: 3, passed: 2, finished: true });
    const outcomes = await trialOutcomes(sim, jobDir);
    console.log("rewards per task:", JSON.stringify(outcomes));
    expect(outcomes["hello-file"].reward).toBe(1);
    expect(outcomes["sum-numbers"].reward).toBe(1);
    expect(outcomes["sha-preimage"].reward).toBe(0);
    const after = await doubleRequests();
    const served = Object.entries(after).filter(([k, v]) => v > ((before as Record<string, number>)[k] ?? 0)).map(([k]) => k);
    console.log("requests per host@rank:", JSON.stringify(after));
    expect(new Set(served.map((s) => s.split("@")[0]))).toEqual(new Set(["worker-a", "worker-b"]));
    // The manifest sits beside the job dir; the key is in no file Harbor or we wrote.
    const manifest = JSON.parse(await ssh("worker-b", `cat ${jobDir}.reprobench-manifest.json`));
    expect(manifest.harbor.version).toBe("0.21.0");
    expect(Object.keys(manifest.workers).sort()).toEqual(["worker-a", "worker-b"]);
    const key = (await stack.outputs()).sglangApiKey.value as string;
    expect(await ssh("worker-b", `grep -rlF '${key}' ${jobDir} ${jobDir}.reprobench-manifest.json /var/lib/reprobench/runs /var/lib/reprobench/logs || true`)).toBe("");
    // The double echoes the key in /server_info and logs it at start-up, as real SGLang does: the sentinel
    // is there to find, and found nowhere we keep or show it.
    expect(await ssh("worker-a", "docker logs qwen38-worker-a 2>&1 | head -n 50")).toContain(key);
    expect(state).not.toContain(key);
    const plainOutputs = await mustRun(["pulumi", "stack", "output", "--json", "--stack", "local"], { cwd: sim.project.dir, env: { ...process.env, ...sim.project.env } });
    expect(plainOutputs).toContain("workerServerInfo");
    expect(plainOutputs).not.toContain(key);
    expect(JSON.stringify(manifest)).not.toContain(key);
    console.log(`the API key (${key.length} chars) is in worker-a's container log, and in none of: the state file, pulumi stack output --json, the run manifest`);
  });

  it("a second up changes nothing and starts no new job", async () => {
    const jobsBefore = await ssh("worker-b", "ls /var/lib/reprobench/jobs");
    const up = await stack.up({ onOutput: () => undefined });
    expect(Object.keys(up.summary.resourceChanges ?? {}).filter((k) => k !== "same")).toEqual([]);
    expect(await ssh("worker-b", "ls /var/lib/reprobench/jobs")).toBe(jobsBefore);
  });

  it("3× → 6× previews changes to the run-level resources only", async () => {
    editConfig((c) => (c.run = { ...c.run, agentTimeoutMultiplier: 6.0 }));
    const changed: string[] = [];
    const out: string[] = [];
    const preview = await stack.preview({
      diff: true,
      onOutput: (o) => out.push(o),
      onEvent: (e) => {
        const m = e.resourcePreEvent?.metadata;
        // A default provider's inputs are the stack config (dynamic providers receive it), so any config
        // edit "updates" pulumi:providers:pulumi-nodejs::default; that touches no host.
        if (m && m.op !== "same" && !m.type.startsWith("pulumi:providers:")) changed.push(`${m.op} ${m.urn.split("::").pop()}`);
      },
    });
    console.log(`3x -> 6x preview:\n${changed.join("\n")}\n${JSON.stringify(preview.changeSummary)}`);
    expect(changed.length).toBeGreaterThan(0);
    for (const c of changed) expect(c, "only run-level resources may change").toMatch(/ cluster-benchmark-(job-name|preflight|harbor|daemon-json-worker-[ab])$/);
  });

  it("the oracle agent's run passes the solvable tasks too", async () => {
    editConfig((c) => (c.run = { ...c.run, agent: "oracle", jobNamePrefix: "sim-oracle" }));
    const up = await stack.up({ onOutput: () => undefined });
    oracleJobDir = `${up.outputs.jobsDir.value}/${up.outputs.jobName.value}`;
    const outcomes = await trialOutcomes(sim, oracleJobDir);
    console.log("oracle rewards per task:", JSON.stringify(outcomes));
    expect(outcomes["hello-file"].reward).toBe(1);
    expect(outcomes["sum-numbers"].reward).toBe(1);
    expect(outcomes["sha-preimage"].reward).toBe(0);
  });

  it("destroy while a job runs: SIGTERM, every trial keeps its result.json, no container or network of ours is left", async () => {
    // Terminus-2 on sha-preimage keeps trying until its agent timeout: a job that is surely still running.
    editConfig((c) => (c.run = { ...c.run, agent: "terminus-2", waitForCompletion: false, jobNamePrefix: "sim-stop" }));
    const up = await stack.up({ onOutput: () => undefined });
    expect(up.outputs.jobState.value).toBe("running");
    const job = `${up.outputs.jobsDir.value}/${up.outputs.jobName.value}`;
    // Bounded wait until trial containers exist (Harbor started trials).
    await ssh("worker-b", `for i in $(seq 1 120); do [ "$(docker ps -q --filter label=com.docker.compose.project | wc -l)" -gt 0 ] && exit 0; sleep 1; done; exit 1`);
    const out: string[] = [];
    await stack.destroy({ runProgram: true, onOutput: (o) => out.push(o) });
    console.log(out.filter((l) => l.includes("harbor-stop")).join(""));
    const trials = (await ssh("worker-b", `ls -d ${job}/*/`)).trim().split("\n").filter(Boolean);
    expect(trials.length).toBeGreaterThan(0);
    const outcomes = await trialOutcomes(sim, job);
    // A diagnostic only: Harbor rewrites result.json in place (write_text), so a read may catch it half written.
    console.log("after destroy mid-run:", JSON.stringify(outcomes), await ssh("worker-b", `jq -c '{finished_at, n_cancelled: .stats.n_cancelled_trials}' ${job}/result.json 2>&1 || sed -n '30,45p' ${job}/result.json`));
    expect(Object.keys(outcomes).length).toBe(trials.length);
    expect(await ssh("worker-b", "docker ps -aq --filter label=com.docker.compose.project | wc -l")).toBe("0\n");
    expect(await ssh("worker-b", "docker network ls --format '{{.Name}}' | grep -c __env || true")).toBe("0\n");
    expect(await ssh("worker-b", "systemctl list-units --all 'reprobench-harbor-*' --no-legend | wc -l")).toBe("0\n");
    // Job directories are never removed.
    for (const dir of [jobDir, oracleJobDir, job]) expect(await ssh("worker-b", `test -f ${dir}/result.json && echo kept`)).toBe("kept\n");
  });
});
