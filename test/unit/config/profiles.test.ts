// The seeds' other run profiles (issue 7): the committed stack files for seed 003 (SGLang FP8 on one H200),
// seed 002 Run 2 (vLLM gpt-oss-20b) and Run 3 (mini-swe-agent, on Docker and on hf-sandbox), the rules that
// refuse what cannot work, and what they render for the worker and for Harbor. The flags are checked
// against the seed documents themselves, not against a copy of them.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { apiKeyEntrypoint } from "../../../components/container-spec";
import { expectedServerInfo, expectedVllmModel } from "../../../components/model-server-spec";
import { workerContainerSpec, workerGateEnv } from "../../../components/model-server";
import { preflightChecks, runPaths } from "../../../components/run-config";
import { composeOverrideObject, jobConfigObject, renderJobConfig, runSettings } from "../../../components/config/job";
import { harborArgv, launchScriptEnv } from "../../../components/benchmark-run";
import { type ModelBridgeSettings, modelBridgeScriptEnv } from "../../../components/model-bridge";
import { expectedRouterWorkers } from "../../../components/sglang-router";
import { SECRET_PLACEHOLDER, apiBase, containerApiBase, hostsWithRole, modelEndpoint, parseConfig, readStackFile, routerCommand, routerSettings, serverCommand, usesModelBridge, workerSettings, type ReprobenchConfig } from "../../../components/config";
import { HF_SANDBOX_PIPEFAIL_FIX, compareHarborVersions } from "../../../components/config/rules/profiles";
import { REPO, minimalRealConfig } from "./helpers";
import { execArgv } from "../../helpers/entrypoint";

// The seed documents' commands, as written there (../shared/seeds is not part of a checkout).
/** 003_d2cf58025e604973.txt §1 (and 002 Run 1): the SGLang server on one H200. */
const SEED_003_SERVE = `sglang serve \\
    --trust-remote-code \\
    --model-path Qwen/Qwen3.8-27B-FP8 \\
    --kv-cache-dtype fp8_e4m3 \\
    --mem-fraction-static 0.85 \\
    --attention-backend flashinfer \\
    --chunked-prefill-size 32768 \\
    --max-prefill-tokens 32768 \\
    --reasoning-parser qwen3 \\
    --tool-call-parser qwen3_coder \\
    --mamba-full-memory-ratio 3.67 \\
    --host 0.0.0.0 \\
    --port 30000 \\
    --mamba-radix-cache-strategy extra_buffer_lazy \\
    --mamba-ssm-dtype float32`;
/** 002_51f9376b37da563c.txt Run 3: the flag that switched thinking off. */
const SEED_002_THINKING_OFF = `--default-chat-template-kwargs '{"enable_thinking": false}'`;
/** 002_51f9376b37da563c.txt Run 2: the model as LiteLLM sees it. */
const SEED_002_GPT_OSS_MODEL = `--model "openai/openai/gpt-oss-20b"`;

/** Stack config and rendered objects as loosely typed trees, edited and read freely by these tests. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = Record<string, any>;

function stackRaw(name: string): Record<string, unknown> {
  return readStackFile(join(REPO, `Pulumi.${name}.yaml`));
}

function parse(raw: Record<string, unknown>) {
  return parseConfig({ sshPrivateKeys: { default: SECRET_PLACEHOLDER }, proxyUpstream: SECRET_PLACEHOLDER, hfToken: SECRET_PLACEHOLDER, ...raw }, { requireSecrets: true });
}

function stack(name: string, edit?: (raw: Loose) => void): ReprobenchConfig {
  const raw = stackRaw(name);
  edit?.(raw);
  const result = parse(raw);
  if (!result.ok) throw new Error(`Pulumi.${name}.yaml: ${JSON.stringify(result.problems, null, 2)}`);
  return result.config;
}

/** Problems (key → message) of a stack file after an edit. */
function problems(name: string, edit: (raw: Loose) => void): Record<string, string> {
  const raw = stackRaw(name);
  edit(raw);
  const result = parse(raw);
  return result.ok ? {} : Object.fromEntries(result.problems.map((p) => [p.key, p.message]));
}

/** `--flag value` pairs (and bare flags → "") of a seed's `sglang serve` command. */
function seedServeFlags(command: string): Map<string, string> {
  const tokens = command.replace(/\\\n/g, " ").match(/'[^']*'|\S+/g)!.slice(2);
  const flags = new Map<string, string>();
  for (let i = 0; i < tokens.length; i++) {
    if (!tokens[i].startsWith("--")) continue;
    const next = tokens[i + 1];
    flags.set(tokens[i], next === undefined || next.startsWith("--") ? "" : next.replace(/^'|'$/g, ""));
  }
  return flags;
}

/** The same pairs from our argv. */
function argvFlags(argv: string[]): Map<string, string> {
  const flags = new Map<string, string>();
  argv.forEach((t, i) => {
    if (t.startsWith("--")) flags.set(t, argv[i + 1] === undefined || argv[i + 1].startsWith("--") ? "" : argv[i + 1]);
  });
  return flags;
}

// Where the profiles legitimately differ from the HF Jobs commands: the address, the port and the model
// path are the host's (the checkpoint is mounted read-only at modelMountPath).
const PLACE_FLAGS = ["--host", "--port", "--model-path"];

describe("seed 003: SGLang FP8 on one H200 (Pulumi.h200-fp8.yaml)", () => {
  const config = stack("h200-fp8");
  const s = workerSettings(config, "h200");

  it("passes every flag of seed 003's sglang serve, with the seed's values", () => {
    const seed = seedServeFlags(SEED_003_SERVE);
    const ours = argvFlags(serverCommand(s));
    expect(seed.size).toBeGreaterThanOrEqual(12);
    for (const [flag, value] of seed) {
      if (PLACE_FLAGS.includes(flag)) continue;
      expect(ours.get(flag), flag).toBe(value);
    }
    expect(serverCommand(s).slice(0, 2)).toEqual(["sglang", "serve"]);
    // Nothing seed 003 leaves to SGLang is forced.
    for (const flag of ["--context-length", "--max-running-requests", "--max-mamba-cache-size", "--default-chat-template-kwargs"]) expect(ours.has(flag), flag).toBe(false);
  });

  it("asserts the FP8 settings on /server_info and leaves the unset ones to SGLang", () => {
    const expected = expectedServerInfo(s);
    expect(expected).toMatchObject({
      kv_cache_dtype: "fp8_e4m3", attention_backend: "flashinfer", chunked_prefill_size: 32768, max_prefill_tokens: 32768,
      mamba_full_memory_ratio: 3.67, mamba_radix_cache_strategy: "extra_buffer_lazy", mamba_ssm_dtype: "float32",
      trust_remote_code: true, mem_fraction_static: 0.85, tp_size: 1, dp_size: 1,
    });
    expect(expected).not.toHaveProperty("context_length");
    expect(expected).not.toHaveProperty("max_running_requests");
    expect(expected).not.toHaveProperty("default_chat_template_kwargs");
    expect(workerGateEnv(s).EXPECT_NO_REASONING).toBe("0");
  });

  it("has no router: Harbor calls the worker on its private address, with reasoning_effort low", () => {
    expect(hostsWithRole(config, "router")).toEqual([]);
    expect(apiBase(config)).toBe("http://10.0.0.21:30000/v1");
    const agent = (jobConfigObject(config, apiBase(config)).agents as Loose[])[0];
    expect(agent.kwargs).toMatchObject({ api_base: "http://10.0.0.21:30000/v1", reasoning_effort: "low" });
    expect(jobConfigObject(config, apiBase(config))).toMatchObject({ n_concurrent_trials: 3, agent_timeout_multiplier: 4 });
  });

  it("modelServer.enableThinking false is seed 002 Run 3's --default-chat-template-kwargs, checked after start", () => {
    const off = workerSettings(stack("h200-fp8", (r) => (r.modelServer.enableThinking = false)), "h200");
    const value = argvFlags(serverCommand(off)).get("--default-chat-template-kwargs")!;
    expect(`--default-chat-template-kwargs '${value}'`).toBe(SEED_002_THINKING_OFF);
    expect(JSON.parse(value)).toEqual({ enable_thinking: false });
    expect(expectedServerInfo(off).default_chat_template_kwargs).toEqual({ enable_thinking: false });
    expect(workerGateEnv(off).EXPECT_NO_REASONING).toBe("1");
    // The flag is the only difference in the container: a preview shows exactly this change.
    const [on, offSpec] = [workerContainerSpec(s), workerContainerSpec(off)];
    expect(offSpec.command.slice(0, -2)).toEqual(on.command);
    expect({ ...offSpec, command: on.command }).toEqual(on);
  });
});

describe("seed 002 Run 2: vLLM gpt-oss-20b (Pulumi.gpt-oss-20b.yaml)", () => {
  const config = stack("gpt-oss-20b");
  const s = workerSettings(config, "l40s");

  it("runs `vllm serve MODEL` with vLLM's flag names, the entry point set explicitly", () => {
    const argv = serverCommand(s);
    expect(argv.slice(0, 3)).toEqual(["vllm", "serve", "/models/openai/gpt-oss-20b"]);
    expect(argvFlags(argv)).toEqual(
      new Map([
        ["--served-model-name", "openai/gpt-oss-20b"], ["--host", "10.0.0.31"], ["--port", "8000"],
        ["--tensor-parallel-size", "1"], ["--data-parallel-size", "1"], ["--gpu-memory-utilization", "0.90"],
      ]),
    );
    // vllm/vllm-openai's ENTRYPOINT is `vllm serve`; the container's entrypoint is reprobench's (it appends
    // --api-key), so the command carries the whole `vllm serve MODEL …` and the server gets it once.
    const spec = workerContainerSpec(s);
    expect(spec.command).toEqual(argv);
    expect(execArgv(apiKeyEntrypoint(), spec.command, { REPROBENCH_API_KEY: "vk" })).toEqual([...argv, "--api-key", "vk"]);
  });

  it("gates on /v1/models (vLLM has no /server_info)", () => {
    expect(expectedVllmModel(s)).toEqual({ id: "openai/gpt-oss-20b", owned_by: "vllm" });
    expect(JSON.parse(workerGateEnv(s).EXPECTED_JSON)).toEqual({ id: "openai/gpt-oss-20b", owned_by: "vllm" });
    const withContext = workerSettings(stack("gpt-oss-20b", (r) => (r.modelServer.contextLength = 131072)), "l40s");
    expect(expectedVllmModel(withContext).max_model_len).toBe(131072);
    expect(argvFlags(serverCommand(withContext)).get("--max-model-len")).toBe("131072");
  });

  it("tool-call parser brings --enable-auto-tool-choice (vLLM refuses the parser alone)", () => {
    const argv = serverCommand(workerSettings(stack("gpt-oss-20b", (r) => (r.modelServer.toolCallParser = "openai")), "l40s"));
    expect(argv.slice(argv.indexOf("--tool-call-parser"), argv.indexOf("--tool-call-parser") + 3)).toEqual(["--tool-call-parser", "openai", "--enable-auto-tool-choice"]);
  });

  it("model id openai/openai/gpt-oss-20b as in the seed", () => {
    expect(`--model "${config.run.modelName}"`).toBe(SEED_002_GPT_OSS_MODEL);
  });

  it("several vLLM workers behind sglang-router: no --dp-aware, one URL per worker (the engine's defaults)", () => {
    const two = parse({
      ...minimalRealConfig(),
      modelServer: { engine: "vllm", image: "vllm/vllm-openai:v0.11.0" },
      router: { image: "lmsysorg/sglang:v0.5.23-runtime" },
    });
    if (!two.ok) throw new Error(JSON.stringify(two.problems));
    expect(two.config.router.dpAware).toBe(false);
    expect(two.config.modelServer.maxMambaCacheSize).toBe(null);
    expect(routerCommand(two.config)).not.toContain("--dp-aware");
    const router = routerSettings(two.config);
    const workers = hostsWithRole(two.config, "worker").map((h) => ({ url: workerSettings(two.config, h.name).url, dpSize: workerSettings(two.config, h.name).dp }));
    expect(router.dpAware).toBe(false);
    expect(router.modelListed).toBe(false);
    expect(expectedRouterWorkers(router.dpAware, workers)).toEqual(["http://10.0.0.11:30001", "http://10.0.0.12:30001"]);
    expect(router.image).toBe("lmsysorg/sglang:v0.5.23-runtime");
  });
});

describe("rules for the engine and the router", () => {
  it.each([
    ["dpAware with vLLM", (r: Loose) => { r.modelServer = { engine: "vllm", image: "vllm/vllm-openai:v0.11.0" }; r.router = { image: "lmsysorg/sglang:v0.5.23-runtime", dpAware: true }; }, "reprobench:router.dpAware", /server_info/],
    ["no router image with vLLM", (r: Loose) => { r.modelServer = { engine: "vllm", image: "vllm/vllm-openai:v0.11.0" }; }, "reprobench:router.image", /no router/],
    ["an SGLang-only flag with vLLM", (r: Loose) => { r.modelServer = { engine: "vllm", image: "vllm/vllm-openai:v0.11.0", maxMambaCacheSize: null, attentionBackend: "flashinfer" }; r.router = { enabled: true, dpAware: false, image: "lmsysorg/sglang:v0.5.23-runtime" }; }, "reprobench:modelServer.attentionBackend", /no vLLM equivalent/],
    ["a mamba cache size with vLLM", (r: Loose) => { r.modelServer = { engine: "vllm", image: "vllm/vllm-openai:v0.11.0", maxMambaCacheSize: 25 }; r.router = { image: "lmsysorg/sglang:v0.5.23-runtime" }; }, "reprobench:modelServer.maxMambaCacheSize", /null for modelServer.engine vllm/],
    ["an SGLang launcher with vLLM", (r: Loose) => { r.modelServer = { engine: "vllm", launcher: "sglang serve", image: "vllm/vllm-openai:v0.11.0", maxMambaCacheSize: null }; r.router = { dpAware: false, image: "lmsysorg/sglang:v0.5.23-runtime" }; }, "reprobench:modelServer.launcher", /"vllm serve"/],
    ["a vLLM-managed flag in extraArgs", (r: Loose) => { r.modelServer = { engine: "vllm", image: "vllm/vllm-openai:v0.11.0", maxMambaCacheSize: null, extraArgs: ["--max-model-len=4096"] }; r.router = { dpAware: false, image: "lmsysorg/sglang:v0.5.23-runtime" }; }, "reprobench:modelServer.extraArgs[0]", /managed/],
    ["a router role with the router off", (r: Loose) => { r.router = { enabled: false }; }, "reprobench:hosts[1].roles", /router.enabled is false/],
  ])("refuses %s", (_what, edit, key, message) => {
    const raw = minimalRealConfig() as Loose;
    edit(raw);
    const result = parse(raw);
    expect(result.ok).toBe(false);
    const found = result.ok ? undefined : result.problems.find((p) => p.key === key);
    expect(found?.message, JSON.stringify(result.ok ? [] : result.problems)).toMatch(message);
  });

  it("the router off means exactly one worker's endpoint", () => {
    const p = problems("h200-fp8", (r) => {
      r.hosts = [...r.hosts, { ...r.hosts[0], name: "h200-b", privateIp: "10.0.0.22", ssh: { ...r.hosts[0].ssh, host: "203.0.113.22" }, roles: ["worker"] }];
    });
    expect(p["reprobench:router.enabled"]).toMatch(/one worker/);
  });
});

describe("seed 002 Run 3: mini-swe-agent in the task container (Pulumi.h200-fp8-mswea.yaml)", () => {
  const config = stack("h200-fp8-mswea");
  const job = jobConfigObject(config, apiBase(config));
  const agent = (job.agents as Loose[])[0];

  it("wires endpoint and key through the agent env (Harbor's --ae), the key as a template only", () => {
    expect(agent).toMatchObject({ name: "mini-swe-agent", model_name: "openai/Qwen/Qwen3.8-27B-FP8" });
    expect(agent.env).toEqual({ OPENAI_API_KEY: "${OPENAI_API_KEY}", OPENAI_BASE_URL: "http://host.docker.internal:30080/v1" });
    // Not terminus-2's wiring: no api_base kwarg, no LiteLLM model_info.
    expect(agent.kwargs).not.toHaveProperty("api_base");
    expect(agent.kwargs).not.toHaveProperty("model_info");
    expect(agent.kwargs).toMatchObject({ version: "2.4.6", config: { model: { model_kwargs: { temperature: 1, top_p: 0.95 } } } });
    // --print-config must show the template back (Harbor keeps templates as they are).
    expect(preflightChecks(job).printed).toContainEqual({ path: ["agents", 0, "env", "OPENAI_API_KEY"], expected: "${OPENAI_API_KEY}" });
  });

  it("bridges the docker gateway to the model server and keeps that host off the proxy", () => {
    expect(usesModelBridge(config)).toBe(true);
    expect(containerApiBase(config)).toBe("http://host.docker.internal:30080/v1");
    // The model bridge's settings as infra/cluster-program.ts passes them.
    const bridge: ModelBridgeSettings = { bridgePort: config.run.modelBridgePort, containerHost: config.proxy.containerHost, checkImage: config.toolBundle.canaryImage, upstream: modelEndpoint(config) };
    expect(modelBridgeScriptEnv(bridge)).toMatchObject({ BRIDGE_PORT: "30080", UPSTREAM_HOST: "10.0.0.21", UPSTREAM_PORT: "30000", CHECK_MODE: "direct", CHECK_URL: "http://host.docker.internal:30080/health" });
    const env = (composeOverrideObject(config).services as Loose).main.environment;
    expect(env.NO_PROXY.split(",")).toContain("host.docker.internal");
    expect(env.no_proxy).toBe(env.NO_PROXY);
    // Terminus-2 (on the runner) needs neither.
    const terminus = stack("h200-fp8");
    expect(usesModelBridge(terminus)).toBe(false);
    expect((composeOverrideObject(terminus).services as Loose).main.environment.NO_PROXY).toBe("127.0.0.1,localhost");
  });

  it("switches thinking off server-side as Run 3 did", () => {
    expect(argvFlags(serverCommand(workerSettings(config, "h200"))).get("--default-chat-template-kwargs")).toBe('{"enable_thinking": false}');
  });

  it.each([
    ["reasoningEffort with an openai/ model (Harbor would use the Responses API)", (r: Loose) => (r.run.reasoningEffort = "low"), "reprobench:run.reasoningEffort", /Responses API/],
    ["an agent reprobench cannot wire", (r: Loose) => (r.run.agent = "claude-code"), "reprobench:run.agent", /mini-swe-agent/],
    ["agentVersion for Terminus-2", (r: Loose) => (r.run.agent = "terminus-2"), "reprobench:run.agentVersion", /not installed/],
    ["a container URL for Terminus-2", (r: Loose) => Object.assign(r.run, { agent: "terminus-2", agentVersion: null, containerApiBase: "http://x:1/v1" }), "reprobench:run.containerApiBase", /from the runner/],
  ])("refuses %s", (_what, edit, key, message) => {
    expect(problems("h200-fp8-mswea", edit)[key]).toMatch(message);
  });

  it("task env and mounts reach Harbor's environment (e.g. an offline index for the agent install)", () => {
    const c = stack("h200-fp8-mswea", (r) => {
      r.run.taskEnv = { UV_NO_INDEX: "1", UV_FIND_LINKS: "/opt/agent-wheels" };
      r.run.taskMounts = [{ source: "/var/cache/reprobench/agent-wheels", target: "/opt/agent-wheels" }];
    });
    expect(jobConfigObject(c, apiBase(c)).environment).toEqual({
      type: "docker", cpu_enforcement_policy: "auto", memory_enforcement_policy: "auto",
      mounts: [{ type: "bind", source: "/var/cache/reprobench/agent-wheels", target: "/opt/agent-wheels", read_only: true }],
      env: { UV_NO_INDEX: "1", UV_FIND_LINKS: "/opt/agent-wheels" },
    });
  });
});

describe("seed 002 Run 3 on hf-sandbox (Pulumi.hf-sandbox.yaml), rendered only", () => {
  const config = stack("hf-sandbox");
  const job = jobConfigObject(config, apiBase(config));

  it("renders --env hf-sandbox --ek flavor=cpu-upgrade --ek job_timeout=2h", () => {
    expect(job.environment).toEqual({ type: "hf-sandbox", kwargs: { flavor: "cpu-upgrade", job_timeout: "2h" } });
    expect(renderJobConfig(config, apiBase(config))).toContain("type: hf-sandbox");
    const agent = (job.agents as Loose[])[0];
    expect(agent.env.OPENAI_BASE_URL).toBe("https://h200.example.org/v1");
    expect(job).toMatchObject({ n_concurrent_trials: 3, agent_timeout_multiplier: 4 });
  });

  it("runs harbor without the Docker compose override and hands it HF_TOKEN", () => {
    const paths = runPaths(config.harbor, "j");
    const run = runSettings(config, apiBase(config), "reprobench.hf-sandbox");
    expect(run.composeOverrideYaml).toBeNull();
    expect(harborArgv(run, "j", paths)).not.toContain("--extra-docker-compose");
    expect(launchScriptEnv(run, "j", paths).USE_OVERRIDE).toBe("0");
    const docker = stack("h200-fp8");
    expect(harborArgv(runSettings(docker, apiBase(docker), "reprobench.h200-fp8"), "j", paths)).toContain("--extra-docker-compose");
    const launch = readFileSync(join(REPO, "components/scripts/harbor-launch.sh"), "utf8");
    expect(launch).toMatch(/HF_TOKEN=%s/);
    expect(usesModelBridge(config)).toBe(false);
  });

  it.each([
    ["Harbor 0.21.0 (the pipefail/dash bug)", (r: Loose) => { r.harbor = { ...r.harbor, version: "0.21.0", wheelSha256: "c77d779a03f1a9e8ecb3c449e17f39a9728b82238832f1fd28632eb9426c0a21" }; }, "reprobench:harbor.version", /Illegal option -o pipefail/],
    ["Harbor 0.22.0, still before the fix", (r: Loose) => { r.harbor = { ...r.harbor, version: "0.22.0" }; }, "reprobench:harbor.version", /0\.22\.1\.dev202609020403/],
    ["the sandbox's 600 s idle default", (r: Loose) => (r.run.hfSandbox.jobTimeout = null), "reprobench:run.hfSandbox.jobTimeout", /600 s/],
    ["a 10-minute job_timeout", (r: Loose) => (r.run.hfSandbox.jobTimeout = "10m"), "reprobench:run.hfSandbox.jobTimeout", /one exec/],
    ["no public model URL", (r: Loose) => (r.run.containerApiBase = null), "reprobench:run.containerApiBase", /cannot reach/],
    ["no hf-sandbox extra", (r: Loose) => (r.harbor.extras = []), "reprobench:harbor.extras", /huggingface-hub/],
    ["runner bind mounts", (r: Loose) => (r.run.taskMounts = [{ source: "/a", target: "/b" }]), "reprobench:run.taskMounts", /cannot see/],
  ])("refuses %s", (_what, edit, key, message) => {
    expect(problems("hf-sandbox", edit)[key]).toMatch(message);
  });

  it("accepts Terminus-2 on hf-sandbox with Harbor 0.21.0 (the bug is in installed agents only)", () => {
    const p = problems("hf-sandbox", (r) => {
      r.harbor = { ...r.harbor, version: "0.21.0", wheelSha256: "c77d779a03f1a9e8ecb3c449e17f39a9728b82238832f1fd28632eb9426c0a21" };
      r.run = { ...r.run, agent: "terminus-2", agentVersion: null, containerApiBase: null, reasoningEffort: "low" };
    });
    expect(p).toEqual({});
  });

  it("needs the token as a secret", () => {
    const raw = stackRaw("hf-sandbox");
    const result = parseConfig({ sshPrivateKeys: { default: SECRET_PLACEHOLDER }, ...raw }, { requireSecrets: true });
    expect(result.ok).toBe(false);
    expect(result.ok ? [] : result.problems.map((p) => p.key)).toContain("reprobench:hfToken");
  });
});

describe("compareHarborVersions", () => {
  it.each([
    ["0.21.0", HF_SANDBOX_PIPEFAIL_FIX, -1],
    ["0.22.0", HF_SANDBOX_PIPEFAIL_FIX, -1],
    ["0.22.1.dev202609010000", HF_SANDBOX_PIPEFAIL_FIX, -1],
    [HF_SANDBOX_PIPEFAIL_FIX, HF_SANDBOX_PIPEFAIL_FIX, 0],
    ["0.22.1", HF_SANDBOX_PIPEFAIL_FIX, 1],
    ["0.23.0", HF_SANDBOX_PIPEFAIL_FIX, 1],
    ["0.26.0", "0.23.0", 1],
  ])("%s vs %s", (a, b, sign) => {
    expect(Math.sign(compareHarborVersions(a, b))).toBe(sign);
  });
});
