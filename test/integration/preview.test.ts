// `pulumi preview` of the real-cluster stacks and the seeds' other run profiles through the real engine
// and language host, from a machine that cannot reach those hosts: nothing may contact a host during
// preview. Each profile must plan its own shape (engine, router or not, bridges) and show the Harbor job
// config it would run.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestProject, testProject } from "../helpers/project";

let project: TestProject;
beforeAll(async () => {
  project = await testProject();
});
afterAll(() => project?.cleanup());

interface Profile {
  /** Component types the plan must create, and types it must not. */
  types: string[];
  absent: string[];
  /** Text the diff (resource inputs or the harborJobConfig output) must show. */
  shows: string[];
  hides?: string[];
}

/** Component types only a cluster-owning stack creates. */
const CLUSTER_TYPES = ["BenchCluster", "HostAccess", "DockerDaemonConfig", "ModelServer", "SglangRouter", "ToolBundle", "HarborRunner", "TaskImages", "ProxyBridge", "ModelBridge", "ClusterGuard"];

const PROFILES: Record<string, Profile> = {
  // Seed 000's cluster: two hosts claimed, daemon config, two workers, router, tool bundle, Harbor; no job.
  a100: {
    types: ["BenchCluster", "HostAccess", "DockerDaemonConfig", "ModelServer", "SglangRouter", "ToolBundle", "HarborRunner", "TaskImages", "ClusterGuard"],
    absent: ["ModelBridge", "BenchmarkRun"],
    shows: ["--max-running-requests", "--dp-aware", "lmsysorg/sglang:latest-runtime is a tag, not a digest"],
  },
  // Run stacks on a100 (not up here: previewed against Pulumi.a100.yaml): the job only, no cluster resource.
  prod: { types: ["BenchmarkRun"], absent: CLUSTER_TYPES, shows: ["api_base: http://127.0.0.1:30000/v1", "agent_timeout_multiplier: 6", "n_concurrent_trials: 25", "previewing this run against Pulumi.a100.yaml"] },
  dev: { types: ["BenchmarkRun"], absent: CLUSTER_TYPES, shows: ["agent_timeout_multiplier: 3", "regex-chess"] },
  // Seed 003: one H200, SGLang FP8 flags, no router, terminus-2 with reasoning_effort.
  "h200-fp8": {
    types: ["ModelServer", "BenchmarkRun", "TaskImages"],
    absent: ["SglangRouter", "ModelBridge"],
    shows: ["--kv-cache-dtype", "fp8_e4m3", "--attention-backend", "flashinfer", "--chunked-prefill-size", "--mamba-radix-cache-strategy", "extra_buffer_lazy", "--trust-remote-code", "reasoning_effort: low", "api_base: http://10.0.0.21:30000/v1"],
    hides: ["--dp-aware", "--default-chat-template-kwargs"],
  },
  // Seed 002 Run 3 on Docker: thinking off, mini-swe-agent in the container, reached through the model bridge.
  "h200-fp8-mswea": {
    types: ["ModelServer", "ModelBridge", "BenchmarkRun"],
    absent: ["SglangRouter"],
    shows: ["--default-chat-template-kwargs", "enable_thinking", "name: mini-swe-agent", "OPENAI_BASE_URL: http://host.docker.internal:30080/v1", "OPENAI_API_KEY: ${OPENAI_API_KEY}", "version: 2.4.6"],
    hides: ["api_base:"],
  },
  // Seed 002 Run 2: vLLM gpt-oss-20b, its own entry point, no router.
  "gpt-oss-20b": {
    types: ["ModelServer", "BenchmarkRun"],
    absent: ["SglangRouter", "ModelBridge"],
    shows: ["vllm", "serve", "--tensor-parallel-size", "--gpu-memory-utilization", "model_name: openai/openai/gpt-oss-20b", "api_base: http://10.0.0.31:8000/v1"],
    hides: ["--tp-size", "--mem-fraction-static"],
  },
  // Seed 002 Run 3 as it ran: hf-sandbox, rendered only; no task images, proxy bridge or tool bundle on the runner.
  "hf-sandbox": {
    types: ["ModelServer", "HarborRunner", "BenchmarkRun"],
    absent: ["SglangRouter", "TaskImages", "ModelBridge", "ProxyBridge", "ToolBundle"],
    shows: ["type: hf-sandbox", "flavor: cpu-upgrade", "job_timeout: 2h", "harbor[hf-sandbox]", "harbor-0.23.0", "OPENAI_BASE_URL: https://h200.example.org/v1"],
    hides: ["cpu_enforcement_policy"],
  },
};

describe.each(Object.keys(PROFILES))("pulumi preview --stack %s", (name) => {
  it("plans its profile without contacting any host", async () => {
    const profile = PROFILES[name];
    const stack = await project.stack(name, `Pulumi.${name}.yaml`);
    const events: string[] = [];
    // The program's warnings reach the Automation API as engine events, not in the text output.
    const result = await stack.preview({ diff: true, onOutput: (o) => events.push(o), onEvent: (e) => e.diagnosticEvent && ["warning", "error"].includes(e.diagnosticEvent.severity) && events.push(`\n${e.diagnosticEvent.severity}: ${e.diagnosticEvent.message}`) });
    // Pulumi shows the YAML output structured ("key   : \"value\""); read it as "key: value".
    const output = events.join("").replace(/\s*:\s+/g, ": ").replace(/"/g, "");
    expect(result.changeSummary.create).toBeGreaterThanOrEqual(6);
    // Nothing here is reachable: a preview that dialled a host would have failed.
    expect(output).not.toMatch(/docker:index[^\n]*\(read\)|cannot be reached/);
    expect(result.changeSummary.update ?? 0).toBe(0);
    for (const type of profile.types) expect(output).toMatch(new RegExp(`reprobench:[a-z]+:${type}\\b`));
    for (const type of profile.absent) expect(output).not.toMatch(new RegExp(`reprobench:[a-z]+:${type}\\b`));
    for (const text of profile.shows) expect(output).toContain(text);
    for (const text of profile.hides ?? []) expect(output).not.toContain(text);
    expect(output).not.toMatch(/error:/);
  });
});
