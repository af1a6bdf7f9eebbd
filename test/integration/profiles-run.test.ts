// The seeds' other run profiles end to end on the simulated cluster, real engine and real Harbor 0.21:
// the vLLM engine (seed 002 Run 2) behind sglang-router WITHOUT DP awareness (vLLM has no /server_info),
// Terminus-2 over the 3-task dataset; then mini-swe-agent (seed 002 Run 3), which runs inside the task
// containers and reaches the model through the model bridge on the docker gateway, its endpoint and key
// in the agent env. The doubles play vLLM; the router and Harbor are real.
import type { Stack } from "@pulumi/pulumi/automation";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClusterPlan } from "../../sim/layout";
import { repoRoot } from "../helpers/project";
import { type SimStack, simStack, trialOutcomes } from "../helpers/sim-stack";

let sim: SimStack;
let plan: ClusterPlan;
let stack: Stack;

const host = (name: string) => plan.hosts.find((h) => h.name === name)!;
const ssh = (name: string, command: string) => sim.ssh(name, command);
const DOUBLE_IMAGE = "registry.sim:5000/reprobench/sglang-double:latest";


/** Chat requests each double answered (its /_double/stats), keyed by host. */
async function requestsPerHost(): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const h of ["worker-a", "worker-b"]) {
    const stats = JSON.parse(await ssh(h, `curl -fsS http://${host(h).ip}:30001/_double/stats`));
    counts[h] = stats.requests_total;
  }
  return counts;
}

beforeAll(async () => {
  sim = await simStack(
    { name: "profiles", slot: 3 },
    {
      extraFiles: { "sim/dataset": path.join(repoRoot, "sim/dataset") },
      baseline: (c) => {
        // Seed 002 Run 2's engine on both sim workers; the router in front without --dp-aware.
        c["reprobench:modelServer"] = { ...c["reprobench:modelServer"], engine: "vllm", maxMambaCacheSize: null };
        c["reprobench:router"] = { ...(c["reprobench:router"] ?? {}), image: DOUBLE_IMAGE, dpAware: false, policy: "round_robin" };
        c["reprobench:run"] = { ...c["reprobench:run"], jobNamePrefix: "sim-vllm-terminus2" };
      },
    },
  );
  ({ plan, stack } = sim);
});

afterAll(() => sim?.cleanup());

describe("run profiles on the simulated cluster (real engine, real router, real Harbor)", () => {
  it("vLLM engine behind a router without DP awareness: Terminus-2 gets reward 1, 1, 0 from both hosts", async () => {
    const before = await requestsPerHost().catch(() => ({ "worker-a": 0, "worker-b": 0 }) as Record<string, number>);
    const up = await stack.up({ onOutput: (o) => process.stdout.write(o) });
    expect(up.summary.result).toBe("succeeded");
    // The workers run `vllm serve MODEL` with vLLM's flags (reprobench's entrypoint only appends --api-key).
    const argv = JSON.parse(await ssh("worker-a", "docker inspect --format '{{json .Config.Cmd}}' qwen38-worker-a"));
    expect(argv.slice(0, 2)).toEqual(["vllm", "serve"]);
    expect(argv).toContain("--tensor-parallel-size");
    expect(argv).not.toContain("--tp-size");
    // The gate recorded what vLLM reports (no /server_info): engine, model, context length.
    const info = (up.outputs.workerServerInfo.value as string[]).map((s) => JSON.parse(s));
    for (const i of info) expect(i).toMatchObject({ engine: "vllm", model: { id: "Qwen/Qwen3.8-27B", owned_by: "vllm", max_model_len: 262144 } });
    // One router entry per worker, no @rank.
    expect(JSON.parse(up.outputs.routerStatus.value as string).workers).toEqual([`http://${host("worker-a").ip}:30001`, `http://${host("worker-b").ip}:30001`]);

    const jobDir = `${up.outputs.jobsDir.value}/${up.outputs.jobName.value}`;
    expect(up.outputs.jobState.value).toBe("finished");
    const outcomes = await trialOutcomes(sim, jobDir);
    console.log("vLLM profile, Terminus-2 rewards per task:", JSON.stringify(outcomes));
    expect(outcomes["hello-file"].reward).toBe(1);
    expect(outcomes["sum-numbers"].reward).toBe(1);
    expect(outcomes["sha-preimage"].reward).toBe(0);
    const after = await requestsPerHost();
    console.log("chat requests per host:", JSON.stringify(after));
    for (const h of ["worker-a", "worker-b"]) expect(after[h], h).toBeGreaterThan(before[h] ?? 0);
    const manifest = JSON.parse(await ssh("worker-b", `cat ${jobDir}.reprobench-manifest.json`));
    expect(manifest.workers["worker-a"].engine).toBe("vllm");
  });

  it("mini-swe-agent in the task containers through the model bridge: reward 1, 1, 0, the key in no file", async () => {
    // The sim's task containers reach nothing outside: mini-swe-agent installs from the agent wheelhouse
    // that `sim up` put on the runner (sim/agent-wheelhouse.sh), via the generic task env and mounts.
    sim.editConfig((c) => {
      c.run = {
        ...c.run,
        agent: "mini-swe-agent",
        agentVersion: "2.4.6",
        jobNamePrefix: "sim-vllm-mswea",
        taskEnv: { UV_FIND_LINKS: "/opt/agent-wheels", UV_OFFLINE: "1", UV_PYTHON_DOWNLOADS: "never", LITELLM_LOCAL_MODEL_COST_MAP: "True" },
        taskMounts: [
          { source: "/var/cache/reprobench/agent-wheels", target: "/opt/agent-wheels" },
          { source: "/var/cache/reprobench/agent-wheels/bin/uv", target: "/usr/local/bin/uv" },
        ],
      };
    });
    const before = await requestsPerHost();
    const up = await stack.up({ onOutput: (o) => process.stdout.write(o) });
    expect(up.summary.result).toBe("succeeded");
    expect(up.outputs.modelBridgeListen.value).toMatch(/^\d+\.\d+\.\d+\.\d+:30080$/);
    const jobDir = `${up.outputs.jobsDir.value}/${up.outputs.jobName.value}`;
    expect(up.outputs.jobName.value).toMatch(/^sim-vllm-mswea-/);
    const outcomes = await trialOutcomes(sim, jobDir);
    console.log("mini-swe-agent rewards per task:", JSON.stringify(outcomes));
    expect(outcomes["hello-file"].reward).toBe(1);
    expect(outcomes["sum-numbers"].reward).toBe(1);
    expect(outcomes["sha-preimage"].reward).toBe(0);
    // The agent really ran in the container and talked to the model (through bridge → router → doubles).
    const after = await requestsPerHost();
    console.log("chat requests per host:", JSON.stringify(after));
    expect(after["worker-a"] + after["worker-b"]).toBeGreaterThan(before["worker-a"] + before["worker-b"]);
    const trajectories = await ssh("worker-b", `ls ${jobDir}/*/agent/mini-swe-agent.trajectory.json | wc -l`);
    expect(trajectories.trim()).toBe("3");
    // The job config holds the template, Harbor's config.json too; the key itself is in no file.
    const config = JSON.parse(await ssh("worker-b", `cat ${jobDir}/config.json`));
    expect(config.agents[0].env.OPENAI_API_KEY).toBe("${OPENAI_API_KEY}");
    const key = (await stack.outputs()).sglangApiKey.value as string;
    expect(await ssh("worker-b", `grep -rlF '${key}' ${jobDir} ${jobDir}.reprobench-manifest.json /var/lib/reprobench/runs /var/lib/reprobench/logs || true`)).toBe("");
  });

  it("seed 003's SGLang FP8 flags with thinking off: /server_info carries each, a completion has no reasoning", async () => {
    sim.editConfig((c) => {
      c.modelServer = {
        ...c.modelServer, engine: "sglang", maxMambaCacheSize: 25, trustRemoteCode: true, kvCacheDtype: "fp8_e4m3", attentionBackend: "flashinfer",
        chunkedPrefillSize: 32768, maxPrefillTokens: 32768, memFractionStatic: 0.85,
        mamba: { fullMemoryRatio: 3.67, radixCacheStrategy: "extra_buffer_lazy", ssmDtype: "float32" }, enableThinking: false,
      };
      c.router = { ...c.router, dpAware: true };
    });
    const up = await stack.up({ onOutput: () => undefined });
    expect(up.summary.result).toBe("succeeded");
    // Seed 002 Run 3's check, on a worker: no reasoning by default; a request that asks for thinking gets it,
    // so the absence comes from the server-side switch (the gate ran the same check before `up` returned).
    const key = (await stack.outputs()).sglangApiKey.value as string;
    const ask = async (extra: string) =>
      JSON.parse(await ssh("worker-a", `curl -fsS -H 'Authorization: Bearer ${key}' -H 'Content-Type: application/json' -d '{"model":"Qwen/Qwen3.8-27B","messages":[{"role":"user","content":"Reply with exactly READY."}]${extra}}' http://${host("worker-a").ip}:30001/v1/chat/completions`));
    const plain = await ask("");
    expect(plain.choices[0].message.reasoning_content ?? null).toBe(null);
    expect(plain.usage.reasoning_tokens ?? 0).toBe(0);
    const thinking = await ask(',"chat_template_kwargs":{"enable_thinking":true}');
    expect(thinking.choices[0].message.reasoning_content).toEqual(expect.any(String));
    for (const s of up.outputs.workerServerInfo.value as string[]) {
      expect(JSON.parse(s)).toMatchObject({
        kv_cache_dtype: "fp8_e4m3", attention_backend: "flashinfer", chunked_prefill_size: 32768, max_prefill_tokens: 32768,
        mamba_full_memory_ratio: 3.67, mamba_radix_cache_strategy: "extra_buffer_lazy", mamba_ssm_dtype: "float32",
        trust_remote_code: true, default_chat_template_kwargs: { enable_thinking: false }, mem_fraction_static: 0.85,
      });
    }
    const argv = JSON.parse(await ssh("worker-b", "docker inspect --format '{{json .Config.Cmd}}' qwen38-worker-b"));
    expect(argv.slice(argv.indexOf("--default-chat-template-kwargs"), argv.indexOf("--default-chat-template-kwargs") + 2)).toEqual(["--default-chat-template-kwargs", '{"enable_thinking": false}']);
  });
});
