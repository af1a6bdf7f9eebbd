import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { apiBase } from "../../../components/config/derive";
import {
  dockerImageOf,
  imageManifest,
  jobName,
  preflightChecks,
  registryOf,
  runManifest,
  runPaths,
  summarizeJobResult,
  tasksDir,
} from "../../../components/run-config";
import { composeOverrideObject, jobConfigObject, publicConfig, renderComposeOverride, renderJobConfig } from "../../../components/config/job";
import type { PreflightFacts } from "../../../components/preflight/plan";
import { FAKE_PEM } from "../config/helpers";
import { seedConfig, simTaskTomls } from "./helpers";

// Seed 000 "创建 Harbor 和 Docker Compose 配置", with the dataset path at our default $TASK_ROOT.
const SEED_JOB_YAML = `n_concurrent_trials: 25
agent_timeout_multiplier: 6.0
agent_setup_timeout_multiplier: 5.0
environment:
  type: docker
  cpu_enforcement_policy: auto
  memory_enforcement_policy: auto
agents:
  - name: terminus-2
    model_name: openai/Qwen/Qwen3.8-27B
    n_concurrent: 20
    kwargs:
      api_base: http://127.0.0.1:30000/v1
      temperature: 1.0
      record_terminal_session: true
      llm_call_kwargs:
        top_p: 0.95
      model_info:
        max_input_tokens: 262144
        max_output_tokens: 65536
        input_cost_per_token: 0
        output_cost_per_token: 0
datasets:
  - path: /var/lib/reprobench/terminal-bench-2-1/tasks
`;

const SEED_OVERRIDE_YAML = `services:
  main:
    extra_hosts:
      - host.docker.internal:host-gateway
    volumes:
      - /var/lib/reprobench/harbor-tools-amd64:/opt/harbor-tools:ro
      - /var/lib/reprobench/harbor-tools-amd64/bin/tmux:/usr/bin/tmux:ro
      - /var/lib/reprobench/harbor-tools-amd64/bin/asciinema:/usr/bin/asciinema:ro
    environment:
      HTTP_PROXY: http://host.docker.internal:27891
      HTTPS_PROXY: http://host.docker.internal:27891
      http_proxy: http://host.docker.internal:27891
      https_proxy: http://host.docker.internal:27891
      NO_PROXY: 127.0.0.1,localhost
      no_proxy: 127.0.0.1,localhost
`;

/** The rendered text without the leading comment header. */
const body = (text: string) => text.replace(/^(#.*\n)+\n?/, "");

describe("job config", () => {
  it("renders seed 000's tb21-full-89-agent6x.yaml exactly from the defaults", () => {
    const c = seedConfig();
    expect(body(renderJobConfig(c, apiBase(c)))).toBe(SEED_JOB_YAML);
  });

  it("has no secret: the API key is not a kwarg", () => {
    const c = seedConfig();
    const text = renderJobConfig(c, apiBase(c));
    expect(text).not.toMatch(/api_key|OPENAI_API_KEY|llm_kwargs/);
  });

  it("keeps fractional multipliers and writes the optional ones only when set", () => {
    const c = seedConfig({ run: { agentTimeoutMultiplier: 3, verifierTimeoutMultiplier: 2.5, timeoutMultiplier: 1.5, nAttempts: 5, maxRetries: 2 } });
    const text = renderJobConfig(c, apiBase(c));
    expect(text).toContain("agent_timeout_multiplier: 3.0\n");
    expect(text).toContain("verifier_timeout_multiplier: 2.5\n");
    expect(text).toContain("timeout_multiplier: 1.5\n");
    expect(text).toContain("n_attempts: 5\n");
    expect(text).not.toContain("environment_build_timeout_multiplier");
    expect(YAML.parse(text).retry).toEqual({ max_retries: 2 });
  });

  it("maps the task filter onto the dataset (globs on directory names) and nTasks onto n_tasks", () => {
    const c = seedConfig({ run: { taskFilter: { include: ["regex-chess", "prove-*"], exclude: ["big-*"], nTasks: 2 } } });
    expect(jobConfigObject(c, apiBase(c)).datasets).toEqual([
      { path: "/var/lib/reprobench/terminal-bench-2-1/tasks", task_names: ["regex-chess", "prove-*"], exclude_task_names: ["big-*"], n_tasks: 2 },
    ]);
  });

  it("gives the oracle agent no model and no LLM kwargs", () => {
    const c = seedConfig({ run: { agent: "oracle", nConcurrentAgents: null } });
    expect((jobConfigObject(c, apiBase(c)).agents as unknown[])[0]).toEqual({ name: "oracle" });
  });

  it("passes sampling extras through llm_call_kwargs and drops unset temperature", () => {
    const c = seedConfig({ run: { sampling: { temperature: null, topP: null, topK: 20, extraCallKwargs: { min_p: 0.05 } } } });
    const kwargs = ((jobConfigObject(c, apiBase(c)).agents as Record<string, unknown>[])[0].kwargs ?? {}) as Record<string, unknown>;
    expect(kwargs.temperature).toBeUndefined();
    expect(kwargs.llm_call_kwargs).toEqual({ top_k: 20, min_p: 0.05 });
  });

  it("uses the tasks subdirectory, or the dataset root when it is empty", () => {
    expect(tasksDir(seedConfig().harbor)).toBe("/var/lib/reprobench/terminal-bench-2-1/tasks");
    expect(tasksDir(seedConfig({ harbor: { datasetDir: "/srv/ds", datasetTasksSubdir: "" } }).harbor)).toBe("/srv/ds");
  });
});

describe("compose override", () => {
  it("renders seed 000's tb21-docker-runtime.yaml exactly", () => {
    expect(body(renderComposeOverride(seedConfig()))).toBe(SEED_OVERRIDE_YAML);
  });

  it("drops the proxy env without an upstream proxy and the binds without the tool bundle", () => {
    const c = seedConfig({ proxyUpstream: undefined, toolBundle: { enabled: false } });
    expect(composeOverrideObject(c)).toEqual({ services: { main: { extra_hosts: ["host.docker.internal:host-gateway"] } } });
  });

  it("refuses a path docker compose would interpolate", () => {
    expect(() => composeOverrideObject(seedConfig({ toolBundle: { hostDir: "/x/$HOME/tools" } }))).toThrow(/toolBundle.hostDir.*'\$'/);
  });
});

describe("preflight checks", () => {
  it("asserts seed 000's jq fields on --print-config and the default-valued ones on the rendered file", () => {
    const c = seedConfig();
    const { printed, rendered } = preflightChecks(jobConfigObject(c, apiBase(c)));
    const at = (p: (string | number)[]) => printed.find((x) => JSON.stringify(x.path) === JSON.stringify(p))?.expected;
    // The manual's jq -e expression, field by field.
    expect(at(["n_concurrent_trials"])).toBe(25);
    expect(at(["agent_timeout_multiplier"])).toBe(6);
    expect(at(["agent_setup_timeout_multiplier"])).toBe(5);
    expect(at(["agents", 0, "name"])).toBe("terminus-2");
    expect(at(["agents", 0, "n_concurrent"])).toBe(20);
    expect(at(["agents", 0, "kwargs", "api_base"])).toBe("http://127.0.0.1:30000/v1");
    expect(at(["agents", 0, "kwargs", "temperature"])).toBe(1);
    expect(at(["agents", 0, "kwargs", "llm_call_kwargs", "top_p"])).toBe(0.95);
    expect(at(["agents", 0, "kwargs", "model_info", "max_input_tokens"])).toBe(262144);
    expect(at(["agents", 0, "kwargs", "model_info", "max_output_tokens"])).toBe(65536);
    expect(at(["environment", "type"])).toBe("docker");
    // Harbor prints neither (exclude_defaults): checking them on --print-config would fail.
    expect(rendered).toEqual([
      { path: ["environment", "cpu_enforcement_policy"], expected: "auto" },
      { path: ["environment", "memory_enforcement_policy"], expected: "auto" },
    ]);
  });

  it("moves n_concurrent_trials to the rendered checks when it equals Harbor's default 4", () => {
    const c = seedConfig({ run: { nConcurrentTrials: 4, nConcurrentAgents: 4 } });
    const { printed, rendered } = preflightChecks(jobConfigObject(c, apiBase(c)));
    expect(rendered.map((x) => x.path.join("."))).toContain("n_concurrent_trials");
    expect(printed.map((x) => x.path.join("."))).not.toContain("n_concurrent_trials");
  });

  it("checks a list of globs as one value", () => {
    const c = seedConfig({ run: { taskFilter: { include: ["a", "b"] } } });
    const { printed } = preflightChecks(jobConfigObject(c, apiBase(c)));
    expect(printed).toContainEqual({ path: ["datasets", 0, "task_names"], expected: ["a", "b"] });
  });
});

describe("job name and paths", () => {
  it("is prefix-YYYYmmdd-HHMMSS in UTC", () => {
    expect(jobName("qwen38-terminus2-tb21-full89-c25-a20-agent6x", new Date("2026-03-04T05:06:07+08:00"))).toBe("qwen38-terminus2-tb21-full89-c25-a20-agent6x-20260303-210607");
  });

  it("refuses a prefix that is not a file/unit name", () => {
    expect(() => jobName("bad/prefix", new Date())).toThrow(/run.jobNamePrefix "bad\/prefix"/);
  });

  it("keys every file by the job name; the manifest sits beside the job dir; paths are absolute", () => {
    const p = runPaths(seedConfig().harbor, "job-1");
    expect(p).toMatchObject({
      jobDir: "/var/lib/reprobench/jobs/job-1",
      manifest: "/var/lib/reprobench/jobs/job-1.reprobench-manifest.json",
      log: "/var/lib/reprobench/logs/job-1.log",
      jobConfig: "/var/lib/reprobench/runs/job-1/harbor-job.yaml",
      unit: "reprobench-harbor-job-1.service",
    });
    for (const v of Object.values(p)) if (v.includes("/")) expect(v.startsWith("/")).toBe(true);
  });
});

describe("image manifest", () => {
  it("reads [environment].docker_image from the sim dataset, deduplicated and sorted", () => {
    const tomls = simTaskTomls();
    const twice = { ...tomls, "copy/task.toml": tomls["hello-file/task.toml"] };
    expect(imageManifest(twice)).toEqual({
      images: [
        "registry.sim:5000/reprobench/task-hello-file:latest",
        "registry.sim:5000/reprobench/task-sha-preimage:latest",
        "registry.sim:5000/reprobench/task-sum-numbers:latest",
      ],
      withoutImage: [],
    });
  });

  it("parses TOML properly: comments, other tables' docker_image and quoting do not confuse it", () => {
    const text = `# docker_image = "commented/out:1"
[metadata]
docker_image = "not/this:1"
[environment]
cpus = 1
docker_image = 'alexgshaw/regex-chess:20251031' # trailing comment
[verifier]
timeout_sec = 900.0
`;
    expect(dockerImageOf(text)).toBe("alexgshaw/regex-chess:20251031");
  });

  it("lists Dockerfile-only tasks separately", () => {
    expect(imageManifest({ "a/task.toml": "[environment]\ncpus = 1\n", "b/task.toml": "" })).toEqual({ images: [], withoutImage: ["a/task.toml", "b/task.toml"] });
  });

  it("names the file when the TOML is broken or docker_image is not a string", () => {
    expect(() => imageManifest({ "x/task.toml": "[environment\n" })).toThrow(/x\/task.toml: not valid TOML/);
    expect(() => imageManifest({ "y/task.toml": "[environment]\ndocker_image = 3\n" })).toThrow(/y\/task.toml: \[environment\].docker_image must be a non-empty string, got 3/);
  });

  it("finds the registry of a reference (Docker Hub has none)", () => {
    expect(registryOf("registry.sim:5000/reprobench/task-a:latest")).toBe("registry.sim:5000");
    expect(registryOf("alexgshaw/regex-chess:20251031")).toBe("");
    expect(registryOf("localhost/x:1")).toBe("localhost");
    expect(registryOf("ubuntu:24.04")).toBe("");
  });
});

/** What a worker's preflight records (WorkerPreflight.facts): seed 000's 8×A100-40GB and its 27B BF16 checkpoint. */
const A100_FACTS: PreflightFacts = {
  host: "worker-a",
  hostname: "gpu-node-17",
  containerUser: "1000:1000",
  gpus: {
    count: 8, names: ["NVIDIA A100-SXM4-40GB"], driver: "580.95.05", cuda: "13.0", memoryTotalMiB: Array(8).fill(40960), freeMiB: Array(8).fill(40956), migEnabled: [],
    foreignProcesses: [], fabricManager: "active", visibleInImage: 8,
  },
  weights: { path: "/var/lib/reprobench/models/Qwen3.8-27B", kind: "safetensors", shards: 12, totalSize: 54_893_092_864, bytesOnDisk: 54_893_301_248, geometry: { num_hidden_layers: 64 } },
  fit: { available: 42_412_802_048, weightsPerGpu: 13_723_273_216, kvPool: 23_524_622_336, cellBytes: 65_536, maxTokens: 358_957 },
};

/** The manifest's inputs for seed 000's config; `more` replaces some. */
function manifestOf(more: Partial<Parameters<typeof runManifest>[0]> = {}) {
  const c = seedConfig({ sshPrivateKeys: { default: FAKE_PEM }, proxyUpstream: "http://127.0.0.1:27890" });
  const m = runManifest({
    toolkitVersion: "0.1.0",
    jobName: "j",
    paths: runPaths(c.harbor, "j"),
    publicConfig: publicConfig(c),
    jobConfig: renderJobConfig(c, apiBase(c)),
    composeOverride: renderComposeOverride(c),
    harbor: { version: "0.21.0", wheelSha256: c.harbor.wheelSha256 },
    dataset: { identity: c.harbor.datasetCommit, count: 89 },
    images: { "a:1": "sha256:00" },
    serverInfo: { "worker-a": '{"tp_size":4}' },
    daemonJsonSha256: { "worker-a": "ab" },
    serverImages: {},
    preflight: {},
    ...more,
  });
  return { c, m };
}

describe("run manifest", () => {
  it("records each worker's preflight facts (GPUs, driver, weights size, fit) by host, and no secret with them", () => {
    const b: PreflightFacts = { ...A100_FACTS, host: "worker-b", hostname: "gpu-node-18", gpus: { ...A100_FACTS.gpus!, driver: "580.82.07" } };
    const { m } = manifestOf({ preflight: { "worker-a": A100_FACTS, "worker-b": b } });
    expect(m.preflight).toEqual({ "worker-a": A100_FACTS, "worker-b": b });
    const facts = m.preflight as Record<string, PreflightFacts>;
    expect(facts["worker-a"].gpus).toMatchObject({ count: 8, driver: "580.95.05", cuda: "13.0" });
    expect(facts["worker-b"].gpus?.driver).toBe("580.82.07");
    expect(facts["worker-a"].weights).toMatchObject({ kind: "safetensors", totalSize: 54_893_092_864 });
    const text = JSON.stringify(m);
    expect(text).not.toContain("PRIVATE KEY");
    expect(text).not.toContain("27890");
  });

  it("keeps the key when no worker had a preflight: `preflight: {}`", () => {
    const { m } = manifestOf();
    expect(m).toHaveProperty("preflight", {});
  });

  it("records what ran and carries no secret", () => {
    const { c, m } = manifestOf({
      serverInfo: { "worker-a": '{"tp_size":4}', "worker-b": "not json" },
      daemonJsonSha256: { "worker-a": "ab", "worker-b": "cd" },
      serverImages: { "worker/worker-a": "lmsysorg/sglang@sha256:aa", "router/worker-b": "lmsysorg/sglang@sha256:aa" },
      preflight: { "worker-a": A100_FACTS },
    });
    const text = JSON.stringify(m);
    expect(text).not.toContain("PRIVATE KEY");
    expect(text).not.toContain("27890");
    expect(m.workers).toEqual({ "worker-a": { tp_size: 4 }, "worker-b": "not json" });
    expect(m).toMatchObject({ toolkit: { version: "0.1.0" }, job: { name: "j", dir: "/var/lib/reprobench/jobs/j" }, harbor: { version: "0.21.0" }, daemonJsonSha256: { "worker-a": "ab" } });
    expect(m.serverImages).toEqual({ "worker/worker-a": "lmsysorg/sglang@sha256:aa", "router/worker-b": "lmsysorg/sglang@sha256:aa" });
    expect(publicConfig(c)).not.toHaveProperty("sshPrivateKeys");
    expect(publicConfig(c)).toMatchObject({ proxyUpstream: "[secret]", hfToken: null });
    expect((m.config as Record<string, unknown>).run).toEqual(c.run);
  });
});

describe("job summary", () => {
  it("counts passed trials, errors and the mean from Harbor 0.21's result.json", () => {
    const result = {
      id: "x",
      started_at: "2026-01-01T00:00:00",
      finished_at: "2026-01-01T01:00:00",
      n_total_trials: 3,
      stats: {
        n_completed_trials: 3,
        n_errored_trials: 1,
        evals: {
          "terminus-2__Qwen/Qwen3.8-27B__sim-dataset": {
            n_trials: 3,
            n_errors: 1,
            metrics: [{ mean: 0.6666666666666666 }],
            reward_stats: { reward: { "1.0": ["hello-file__a", "sum-numbers__b"], "0.0": ["sha-preimage__c"] } },
            exception_stats: { AgentTimeoutError: ["sha-preimage__c"] },
          },
        },
      },
    };
    expect(summarizeJobResult(result)).toEqual({ trials: 3, passed: 2, errors: 1, mean: 0.6666666666666666, finished: true });
  });

  it("reports an unfinished or missing result without inventing numbers", () => {
    expect(summarizeJobResult({ n_total_trials: 89, finished_at: null, stats: { evals: {} } })).toEqual({ trials: 89, passed: 0, errors: 0, mean: null, finished: false });
    expect(summarizeJobResult(null)).toEqual({ trials: 0, passed: 0, errors: 0, mean: null, finished: false });
  });
});
