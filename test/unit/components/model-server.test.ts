// The SGLang worker's pure parts, built from the committed stack files: the container docker.Container gets
// and the server argv must be seed 000's (lines 505–560), the container spec must track exactly what the
// container runs (a needless change restarts a 45-minute model load), and a per-host override must touch
// only that host's worker.
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { type ReprobenchConfig, type ResolvedModelServerSettings, formatProblems, parseConfig, readStackFile, sglangCommand, workerSettings } from "../../../components/config";
import { envPrelude, hostScript } from "../../../components/host-script";
import { MANAGED_LABEL, ROLE_LABEL, apiKeyEntrypoint } from "../../../components/container-spec";
import { expectedServerInfo } from "../../../components/model-server-spec";
import { workerContainerSpec, workerGateEnv, workerGateScript } from "../../../components/model-server";
import { execArgv } from "../../helpers/entrypoint";

const REPO = resolve(__dirname, "../../..");

/** A committed stack file, optionally edited, through the real parser (secrets not required). */
function stack(name: "a100" | "local" | "gpt-oss-20b", edit?: (raw: Record<string, unknown>) => void): ReprobenchConfig {
  const raw = readStackFile(join(REPO, `Pulumi.${name}.yaml`));
  edit?.(raw);
  const result = parseConfig(raw, { requireSecrets: false });
  if (!result.ok) throw new Error(`Pulumi.${name}.yaml: ${formatProblems(result.problems)}`);
  return result.config;
}

/** Same stack with extra sglang keys merged in. */
function withSglang(name: "a100" | "local", sglang: Record<string, unknown>): ReprobenchConfig {
  return stack(name, (raw) => (raw.modelServer = { ...(raw.modelServer as object), ...sglang }));
}

/** Keys whose values differ between two flat records. */
function differing(a: object, b: object): string[] {
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  return [...new Set([...Object.keys(x), ...Object.keys(y)])].filter((k) => JSON.stringify(x[k]) !== JSON.stringify(y[k])).sort();
}

const A100_MODEL = "/var/lib/reprobench/models/Qwen3.8-27B";
const WORKER_LABELS = [
  { label: MANAGED_LABEL, value: "1" },
  { label: ROLE_LABEL, value: "worker" },
];

// Seed 000 lines 537–549 with WORKER_IP = 10.0.0.11 / 10.0.0.12 and WORKER_PORT = 30001 (lines 104–106).
const seedServe = (workerIp: string) => [
  "sglang", "serve",
  "--model-path", "/models/Qwen3.8-27B",
  "--served-model-name", "Qwen/Qwen3.8-27B",
  "--host", workerIp,
  "--port", "30001",
  "--tp-size", "4",
  "--dp-size", "2",
  "--context-length", "262144",
  "--max-running-requests", "5",
  "--max-mamba-cache-size", "25",
  "--mem-fraction-static", "0.90",
  "--reasoning-parser", "qwen3",
  "--tool-call-parser", "qwen3_coder",
];

describe("workerContainerSpec", () => {
  const a100 = stack("a100");

  // Seed 000 lines 522–535: --name, --stop-timeout 30, --gpus all, --network host, --ipc host, memlock and
  // stack ulimits, HOME and HF_HOME, the weights read-only; then the server argv. (--user is the login's
  // uid:gid, settings.user "ssh-user", resolved by HostAccess; the image is pulled by docker.RemoteImage.)
  it.each([
    ["worker-a", "10.0.0.11"],
    ["worker-b", "10.0.0.12"],
  ])("a100 %s: exactly seed 000's docker run options and server argv", (host, ip) => {
    const s = workerSettings(a100, host);
    expect(workerContainerSpec(s)).toEqual({
      name: `qwen38-${host}`,
      command: seedServe(ip),
      networkMode: "host",
      ipcMode: "host",
      gpus: "all",
      ulimits: [
        { name: "memlock", soft: -1, hard: -1 },
        { name: "stack", soft: 67108864, hard: 67108864 },
      ],
      envs: ["HOME=/tmp", "HF_HOME=/tmp/huggingface"],
      mounts: [{ type: "bind", source: A100_MODEL, target: "/models/Qwen3.8-27B", readOnly: true }],
      labels: WORKER_LABELS,
      stopTimeout: 30,
    });
    expect(s.image).toBe("lmsysorg/sglang:latest-runtime");
    expect(s.user).toBe("ssh-user");
  });

  it("local (sim): every GPU requested and the weights mounted read-only where a100 has them", () => {
    const spec = workerContainerSpec(workerSettings(stack("local"), "worker-a"));
    expect(spec.gpus).toBe("all");
    expect(spec.mounts).toEqual([{ type: "bind", source: "/var/lib/reprobench/models/Qwen3.8-27B", target: "/models/Qwen3.8-27B", readOnly: true }]);
    expect(spec.mounts).toEqual(workerContainerSpec(workerSettings(stack("a100"), "worker-a")).mounts);
  });

  it("renders {soft, hard} ulimits, the shm size in MiB, other ipc modes, and an env map in order", () => {
    const c = withSglang("a100", {
      ulimits: { nofile: { soft: 1024, hard: 4096 }, memlock: -1 },
      shmSizeMb: 16384,
      ipc: "private",
      env: { B: "2", A: "x=y z" },
    });
    const spec = workerContainerSpec(workerSettings(c, "worker-a"));
    expect(spec).toMatchObject({
      networkMode: "host",
      ipcMode: "private",
      stopTimeout: 30,
      gpus: "all",
      shmSize: 16384,
      ulimits: [
        { name: "nofile", soft: 1024, hard: 4096 },
        { name: "memlock", soft: -1, hard: -1 },
      ],
      envs: ["B=2", "A=x=y z"],
      mounts: [{ type: "bind", source: A100_MODEL, target: "/models/Qwen3.8-27B", readOnly: true }],
    });
  });

  it("a different mount path moves both the volume and --model-path", () => {
    const spec = workerContainerSpec(workerSettings(withSglang("a100", { modelMountPath: "/m" }), "worker-a"));
    expect(spec.mounts).toEqual([{ type: "bind", source: A100_MODEL, target: "/m", readOnly: true }]);
    expect(spec.command[spec.command.indexOf("--model-path") + 1]).toBe("/m");
  });

  it("the argv holds no API key: the entrypoint appends --api-key from the container's environment", () => {
    const spec = workerContainerSpec(workerSettings(a100, "worker-a"));
    expect(spec.command).not.toContain("--api-key");
    expect(spec.envs.join(" ")).not.toMatch(/API_KEY/);
    const argv = execArgv(apiKeyEntrypoint(), spec.command, { REPROBENCH_API_KEY: "k-123 with space" });
    expect(argv).toEqual([...seedServe("10.0.0.11"), "--api-key", "k-123 with space"]);
  });
});

describe("expectedServerInfo", () => {
  it("a100: seed 000's /server_info checks (lines 567–574) with SGLang's JSON types", () => {
    const info = expectedServerInfo(workerSettings(stack("a100"), "worker-a"));
    expect(info).toEqual({
      served_model_name: "Qwen/Qwen3.8-27B",
      tp_size: 4,
      dp_size: 2,
      context_length: 262144,
      max_running_requests: 5,
      max_mamba_cache_size: 25,
      mem_fraction_static: 0.9,
      reasoning_parser: "qwen3",
      tool_call_parser: "qwen3_coder",
    });
  });

  it("follows the settings, and null parsers stay null (SGLang reports null when the flag is absent)", () => {
    const s = workerSettings(withSglang("a100", { tp: 8, dp: 1, memFractionStatic: 0.85, reasoningParser: null, toolCallParser: null }), "worker-b");
    const info = expectedServerInfo(s);
    expect(info).toMatchObject({ tp_size: 8, dp_size: 1, mem_fraction_static: 0.85, reasoning_parser: null, tool_call_parser: null });
    const command = sglangCommand(s);
    expect(command).not.toContain("--reasoning-parser");
    expect(command).not.toContain("--tool-call-parser");
  });
});

describe("workerGateEnv", () => {
  const a100 = stack("a100");

  it.each([
    ["worker-a", "10.0.0.11"],
    ["worker-b", "10.0.0.12"],
  ])("a100 %s: the gate's inputs", (host, ip) => {
    const s = workerSettings(a100, host);
    const env = workerGateEnv(s);
    expect(env).toEqual({
      CONTAINER_NAME: `qwen38-${host}`,
      BASE_URL: `http://${ip}:30001`,
      READY_TIMEOUT_SECONDS: String(45 * 60),
      EXPECTED_JSON: JSON.stringify(expectedServerInfo(s)),
      SERVED_MODEL_NAME: "Qwen/Qwen3.8-27B",
      EXPECT_NO_REASONING: "0",
    });
    // Every input must be exportable by the host-script prelude.
    expect(() => envPrelude(env)).not.toThrow();
    expect(Object.keys(env)).not.toContain("API_KEY");
  });

  it("the two a100 workers differ only where the host differs (container name, --host, URL)", () => {
    const a = workerSettings(a100, "worker-a");
    const b = workerSettings(a100, "worker-b");
    expect(differing(workerContainerSpec(a), workerContainerSpec(b))).toEqual(["command", "name"]);
    expect(differing(workerContainerSpec(a).command, workerContainerSpec(b).command)).toEqual([String(seedServe("").indexOf("--host") + 1)]);
    expect(differing(workerGateEnv(a), workerGateEnv(b))).toEqual(["BASE_URL", "CONTAINER_NAME"]);
  });

  it("readyTimeoutMinutes only moves the budget", () => {
    const before = workerSettings(a100, "worker-a");
    const after = workerSettings(withSglang("a100", { readyTimeoutMinutes: 90 }), "worker-a");
    expect(workerGateEnv(after).READY_TIMEOUT_SECONDS).toBe("5400");
    expect(differing(workerGateEnv(after), workerGateEnv(before))).toEqual(["READY_TIMEOUT_SECONDS"]);
    expect(workerContainerSpec(after)).toEqual(workerContainerSpec(before));
  });
});

describe("what a config change does to the container", () => {
  const a100 = stack("a100");
  const spec = (c: ReprobenchConfig) => workerContainerSpec(workerSettings(c, "worker-a"));

  it("the container spec is stable: re-parsing the same stack file gives the same spec", () => {
    expect(spec(stack("a100"))).toEqual(spec(a100));
  });

  // Every key that becomes a docker option or a server flag must change the container docker.Container gets…
  const specChanges: [string, unknown][] = [
    ["launcher", "python3 -m sglang.launch_server"],
    ["modelPath", "/data/other-model"],
    ["modelMountPath", "/models/other"],
    ["bindAddress", "0.0.0.0"],
    ["port", 30011],
    ["tp", 2],
    ["dp", 1],
    ["contextLength", 524288],
    ["maxRunningRequests", 4],
    ["maxMambaCacheSize", null],
    ["memFractionStatic", 0.85],
    ["reasoningParser", "deepseek-r1"],
    ["toolCallParser", null],
    ["extraArgs", ["--enable-metrics"]],
    ["ipc", "private"],
    ["ulimits", { memlock: -1 }],
    ["shmSizeMb", 1024],
    ["env", { HOME: "/tmp" }],
    ["stopTimeoutSecs", 60],
  ];
  it.each(specChanges)("changing sglang.%s changes the container spec", (key, value) => {
    expect(spec(withSglang("a100", { [key]: value }))).not.toEqual(spec(a100));
  });

  // …the image (docker.RemoteImage) and the user are the container's own inputs, outside the spec.
  it.each([
    ["image", "lmsysorg/sglang:v0.5.9-runtime"],
    ["user", "1000:1000"],
  ] as const)("changing sglang.%s changes only that container input", (key, value) => {
    const s = workerSettings(withSglang("a100", { [key]: value }), "worker-a");
    expect(s[key]).toBe(value);
    expect(workerContainerSpec(s)).toEqual(spec(a100));
    expect(workerGateEnv(s)).toEqual(workerGateEnv(workerSettings(a100, "worker-a")));
  });

  it("changing sglang.servedModelName (with run.modelName to match) changes the spec", () => {
    const c = stack("a100", (raw) => {
      raw.modelServer = { ...(raw.modelServer as object), servedModelName: "qwen" };
      raw.run = { ...(raw.run as object), modelName: "openai/qwen" };
    });
    expect(spec(c)).not.toEqual(spec(a100));
  });

  it("changing sglang.gpus changes the spec (sim stack: real hosts must keep gpus: all)", () => {
    const s = workerSettings(stack("local"), "worker-a");
    expect(workerContainerSpec({ ...s, gpus: "all" })).toEqual({ ...workerContainerSpec(s), gpus: "all" });
  });

  // …and nothing else may (a needless change restarts a 45-minute model load).
  it.each([
    ["modelServer.readyTimeoutMinutes", (raw: Record<string, unknown>) => (raw.modelServer = { ...(raw.modelServer as object), readyTimeoutMinutes: 90 })],
    ["router.policy", (raw: Record<string, unknown>) => (raw.router = { policy: "round_robin" })],
    ["docker.verifyNetworks", (raw: Record<string, unknown>) => (raw.docker = { verifyNetworks: 8 })],
    ["run.nConcurrentTrials", (raw: Record<string, unknown>) => (raw.run = { ...(raw.run as object), nConcurrentTrials: 30 })],
    ["toolBundle.mountPath", (raw: Record<string, unknown>) => (raw.toolBundle = { mountPath: "/opt/tools" })],
  ])("changing %s leaves the container alone", (_key, edit) => {
    const s = workerSettings(stack("a100", edit), "worker-a");
    const before = workerSettings(a100, "worker-a");
    expect(workerContainerSpec(s)).toEqual(workerContainerSpec(before));
    expect([s.image, s.user]).toEqual([before.image, before.user]);
  });
});

describe("per-host overrides (sglang.overrides.<host>)", () => {
  const a100 = stack("a100");
  const base = {
    a: workerSettings(a100, "worker-a"),
    b: workerSettings(a100, "worker-b"),
  };

  it("an override for worker-b changes worker-b's container and gate and leaves worker-a's identical", () => {
    const c = withSglang("a100", { overrides: { "worker-b": { maxRunningRequests: 4 } } });
    const a = workerSettings(c, "worker-a");
    const b = workerSettings(c, "worker-b");
    expect(workerContainerSpec(a)).toEqual(workerContainerSpec(base.a));
    expect(workerGateEnv(a)).toEqual(workerGateEnv(base.a));
    const command = workerContainerSpec(b).command;
    expect(command[command.indexOf("--max-running-requests") + 1]).toBe("4");
    expect(JSON.parse(workerGateEnv(b).EXPECTED_JSON)).toMatchObject({ max_running_requests: 4 });
    expect(differing(workerContainerSpec(b), workerContainerSpec(base.b))).toEqual(["command"]);
    expect(differing(workerGateEnv(b), workerGateEnv(base.b))).toEqual(["EXPECTED_JSON"]);
  });

  it("an image override pins one worker's image only", () => {
    const c = withSglang("a100", { overrides: { "worker-a": { image: "lmsysorg/sglang:v0.5.9-runtime" } } });
    expect(workerSettings(c, "worker-a").image).toBe("lmsysorg/sglang:v0.5.9-runtime");
    expect(workerSettings(c, "worker-b")).toEqual(base.b);
  });

  it("an env override replaces the whole map for that host (shallow merge, as documented)", () => {
    const c = withSglang("a100", { overrides: { "worker-b": { env: { CUDA_VISIBLE_DEVICES: "0,1,2,3" } } } });
    expect(workerContainerSpec(workerSettings(c, "worker-b")).envs).toEqual(["CUDA_VISIBLE_DEVICES=0,1,2,3"]);
    expect(workerContainerSpec(workerSettings(c, "worker-a")).envs).toEqual(["HOME=/tmp", "HF_HOME=/tmp/huggingface"]);
  });

  it("an override equal to the base value changes nothing", () => {
    const c = withSglang("a100", { overrides: { "worker-b": { tp: 4, dp: 2 } } });
    expect(workerContainerSpec(workerSettings(c, "worker-b"))).toEqual(workerContainerSpec(base.b));
    expect(workerGateEnv(workerSettings(c, "worker-b"))).toEqual(workerGateEnv(base.b));
  });
});

describe("ResolvedSglangSettings edits (no parser in between)", () => {
  it("workerContainerSpec reads only the settings it is given", () => {
    const s: ResolvedModelServerSettings = { ...workerSettings(stack("a100"), "worker-a"), gpus: "none", stopTimeoutSecs: 0, ulimits: {}, env: {} };
    expect(workerContainerSpec(s)).toEqual({
      name: "qwen38-worker-a",
      command: seedServe("10.0.0.11"),
      networkMode: "host",
      ipcMode: "host",
      ulimits: [],
      envs: [],
      mounts: [{ type: "bind", source: A100_MODEL, target: "/models/Qwen3.8-27B", readOnly: true }],
      labels: WORKER_LABELS,
      stopTimeout: 0,
    });
  });
});

/** Names a host script refuses to run without (`: "${NAME:?}"`). */
function requiredInputs(script: string): string[] {
  return [...hostScript(script).matchAll(/\$\{([A-Z_][A-Z0-9_]*):\?\}/g)].map((m) => m[1]);
}

describe("workerGateEnv against server-health.sh + the engine's gate", () => {
  it.each([
    ["a100", "worker-a", "sglang-worker"],
    ["gpt-oss-20b", "l40s", "vllm-worker"],
  ] as const)("Pulumi.%s.yaml: supplies every input the scripts insist on, except API_KEY (sent as a secret environment)", (name, host, gate) => {
    const settings = workerSettings(stack(name), host);
    expect(workerGateScript(settings)).toBe(gate);
    const env = workerGateEnv(settings);
    const required = [...new Set([...requiredInputs("server-health"), ...requiredInputs(gate)])];
    expect(required).toEqual(expect.arrayContaining(["API_KEY", "READY_TIMEOUT_SECONDS", "EXPECTED_JSON"]));
    expect(required.filter((input) => !(input in env))).toEqual(["API_KEY"]);
  });

  it("the refresh probe (container-started.sh) needs only the container name", () => {
    expect(requiredInputs("container-started")).toEqual(["CONTAINER_NAME"]);
  });
});
