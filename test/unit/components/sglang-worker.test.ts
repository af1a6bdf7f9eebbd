// The SGLang worker's pure parts, built from the committed stack files: the docker options and server argv
// must be seed 000's (lines 505–560), SPEC must track exactly what the container runs, and a per-host
// override must touch only that host's worker.
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import {
  type ReprobenchConfig,
  type ResolvedSglangSettings,
  formatProblems,
  parseConfig,
  readStackFile,
  sglangCommand,
  workerSettings,
} from "../../../infra/config";
import { envPrelude, hostScript } from "../../../components/host-script";
import { expectedServerInfo, workerDockerArgs, workerGateScript, workerScriptEnv } from "../../../components/sglang-worker";

const REPO = resolve(__dirname, "../../..");

/** A committed stack file, optionally edited, through the real parser (secrets not required). */
function stack(name: "prod" | "local" | "dev" | "gpt-oss-20b", edit?: (raw: Record<string, unknown>) => void): ReprobenchConfig {
  const raw = readStackFile(join(REPO, `Pulumi.${name}.yaml`));
  edit?.(raw);
  const result = parseConfig(raw, { requireSecrets: false });
  if (!result.ok) throw new Error(`Pulumi.${name}.yaml: ${formatProblems(result.problems)}`);
  return result.config;
}

/** Same stack with extra sglang keys merged in. */
function withSglang(name: "prod" | "local", sglang: Record<string, unknown>): ReprobenchConfig {
  return stack(name, (raw) => (raw.sglang = { ...(raw.sglang as object), ...sglang }));
}

/** docker options as [flag, value] pairs, sorted (docker does not care about option order). */
function pairs(args: string[]): string[][] {
  expect(args.length % 2).toBe(0);
  const out: string[][] = [];
  for (let i = 0; i < args.length; i += 2) {
    expect(args[i]).toMatch(/^--[a-z-]+$/);
    out.push([args[i], args[i + 1]]);
  }
  return out.sort((a, b) => a.join(" ").localeCompare(b.join(" ")));
}

const PROD_MODEL = "/var/lib/reprobench/models/Qwen3.8-27B";

// Seed 000 lines 522–535, minus --rm/--name/--user, which the host script adds itself (--name from
// CONTAINER_NAME, --user from CONTAINER_USER = ssh-user, the seed's $(id -u):$(id -g)).
const SEED_WORKER_DOCKER = [
  ["--stop-timeout", "30"],
  ["--gpus", "all"],
  ["--network", "host"],
  ["--ipc", "host"],
  ["--ulimit", "memlock=-1"],
  ["--ulimit", "stack=67108864"],
  ["--env", "HOME=/tmp"],
  ["--env", "HF_HOME=/tmp/huggingface"],
  ["--volume", `${PROD_MODEL}:/models/Qwen3.8-27B:ro`],
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

describe("workerDockerArgs", () => {
  const prod = stack("prod");

  it.each(["worker-a", "worker-b"])("prod %s: exactly seed 000's docker run options", (host) => {
    expect(pairs(workerDockerArgs(workerSettings(prod, host)))).toEqual(pairs(SEED_WORKER_DOCKER.flat()));
  });

  it("local (sim): no --gpus, the placeholder model mounted read-only", () => {
    const args = workerDockerArgs(workerSettings(stack("local"), "worker-a"));
    expect(args).not.toContain("--gpus");
    expect(pairs(args)).toContainEqual(["--volume", "/var/lib/reprobench/models/sim-placeholder:/models/Qwen3.8-27B:ro"]);
  });

  it("renders {soft, hard} ulimits, --shm-size in MiB, other ipc modes, and an env map in order", () => {
    const c = withSglang("prod", {
      ulimits: { nofile: { soft: 1024, hard: 4096 }, memlock: -1 },
      shmSizeMb: 16384,
      ipc: "private",
      env: { B: "2", A: "x=y z" },
    });
    const args = workerDockerArgs(workerSettings(c, "worker-a"));
    expect(pairs(args)).toEqual(pairs([
      "--network", "host", "--ipc", "private", "--stop-timeout", "30", "--gpus", "all",
      "--ulimit", "nofile=1024:4096", "--ulimit", "memlock=-1", "--shm-size", "16384m",
      "--env", "B=2", "--env", "A=x=y z", "--volume", `${PROD_MODEL}:/models/Qwen3.8-27B:ro`,
    ]));
    expect(args.filter((_, i) => args[i - 1] === "--env")).toEqual(["B=2", "A=x=y z"]);
  });

  it("a different mount path moves both the volume and --model-path", () => {
    const s = workerSettings(withSglang("prod", { modelMountPath: "/m" }), "worker-a");
    expect(pairs(workerDockerArgs(s))).toContainEqual(["--volume", `${PROD_MODEL}:/m:ro`]);
    const command = JSON.parse(workerScriptEnv(s).COMMAND_JSON) as string[];
    expect(command[command.indexOf("--model-path") + 1]).toBe("/m");
  });
});

describe("expectedServerInfo", () => {
  it("prod: seed 000's /server_info checks (lines 567–574) with SGLang's JSON types", () => {
    const info = expectedServerInfo(workerSettings(stack("prod"), "worker-a"));
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
    const s = workerSettings(withSglang("prod", { tp: 8, dp: 1, memFractionStatic: 0.85, reasoningParser: null, toolCallParser: null }), "worker-b");
    const info = expectedServerInfo(s);
    expect(info).toMatchObject({ tp_size: 8, dp_size: 1, mem_fraction_static: 0.85, reasoning_parser: null, tool_call_parser: null });
    const command = sglangCommand(s);
    expect(command).not.toContain("--reasoning-parser");
    expect(command).not.toContain("--tool-call-parser");
  });
});

describe("workerScriptEnv", () => {
  const prod = stack("prod");

  it.each([
    ["worker-a", "10.0.0.11"],
    ["worker-b", "10.0.0.12"],
  ])("prod %s: seed 000's container, image, argv and gate inputs", (host, ip) => {
    const s = workerSettings(prod, host);
    const env = workerScriptEnv(s);
    expect(env.CONTAINER_NAME).toBe(`qwen38-${host}`);
    expect(env.IMAGE).toBe("lmsysorg/sglang:latest-runtime");
    expect(env.CONTAINER_USER).toBe("ssh-user");
    expect(env.REQUIRED_DIRS).toBe(PROD_MODEL); // checked before docker could create an empty bind source
    expect(env.BASE_URL).toBe(`http://${ip}:30001`);
    expect(env.READY_TIMEOUT_SECONDS).toBe(String(45 * 60));
    expect(JSON.parse(env.COMMAND_JSON)).toEqual(seedServe(ip));
    expect(JSON.parse(env.DOCKER_ARGS_JSON)).toEqual(workerDockerArgs(s));
    expect(JSON.parse(env.EXPECTED_JSON)).toEqual(expectedServerInfo(s));
    expect(env.SPEC).toMatch(/^[0-9a-f]{16}$/);
    // Every input must be exportable by the host-script prelude.
    expect(() => envPrelude(env)).not.toThrow();
    expect(Object.keys(env)).not.toContain("API_KEY");
  });

  it("the two prod workers differ only where the host differs (container name, --host, URL, SPEC)", () => {
    const a = workerScriptEnv(workerSettings(prod, "worker-a"));
    const b = workerScriptEnv(workerSettings(prod, "worker-b"));
    const differing = Object.keys(a).filter((k) => a[k] !== b[k]).sort();
    expect(differing).toEqual(["BASE_URL", "COMMAND_JSON", "CONTAINER_NAME", "SPEC"]);
  });

  it("SPEC is stable: re-parsing the same stack file gives the same SPEC", () => {
    expect(workerScriptEnv(workerSettings(stack("prod"), "worker-a")).SPEC).toBe(workerScriptEnv(workerSettings(prod, "worker-a")).SPEC);
  });

  // Every key that becomes a docker option, a server flag or the image must change SPEC…
  const specChanges: [string, unknown][] = [
    ["image", "lmsysorg/sglang:v0.5.9-runtime"],
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
    ["user", "1000:1000"],
    ["ipc", "private"],
    ["ulimits", { memlock: -1 }],
    ["shmSizeMb", 1024],
    ["env", { HOME: "/tmp" }],
    ["stopTimeoutSecs", 60],
  ];
  it.each(specChanges)("changing sglang.%s changes SPEC", (key, value) => {
    const before = workerScriptEnv(workerSettings(prod, "worker-a"));
    const after = workerScriptEnv(workerSettings(withSglang("prod", { [key]: value }), "worker-a"));
    expect(after.SPEC).not.toBe(before.SPEC);
  });

  it("changing sglang.servedModelName (with run.modelName to match) changes SPEC", () => {
    const c = stack("prod", (raw) => {
      raw.sglang = { ...(raw.sglang as object), servedModelName: "qwen" };
      raw.run = { ...(raw.run as object), modelName: "openai/qwen" };
    });
    expect(workerScriptEnv(workerSettings(c, "worker-a")).SPEC).not.toBe(workerScriptEnv(workerSettings(prod, "worker-a")).SPEC);
  });

  it("changing sglang.gpus changes SPEC (sim stack: real hosts must keep gpus: all)", () => {
    const s = workerSettings(stack("local"), "worker-a");
    expect(workerScriptEnv({ ...s, gpus: "all" }).SPEC).not.toBe(workerScriptEnv(s).SPEC);
  });

  // …and nothing else may (a needless SPEC change restarts a 45-minute model load).
  it.each([
    ["sglang.readyTimeoutMinutes", (raw: Record<string, unknown>) => (raw.sglang = { ...(raw.sglang as object), readyTimeoutMinutes: 90 })],
    ["router.policy", (raw: Record<string, unknown>) => (raw.router = { policy: "round_robin" })],
    ["docker.verifyNetworks", (raw: Record<string, unknown>) => (raw.docker = { verifyNetworks: 8 })],
    ["run.nConcurrentTrials", (raw: Record<string, unknown>) => (raw.run = { ...(raw.run as object), nConcurrentTrials: 30 })],
    ["toolBundle.mountPath", (raw: Record<string, unknown>) => (raw.toolBundle = { mountPath: "/opt/tools" })],
  ])("changing %s leaves SPEC alone", (_key, edit) => {
    const before = workerScriptEnv(workerSettings(prod, "worker-a"));
    const after = workerScriptEnv(workerSettings(stack("prod", edit), "worker-a"));
    expect(after.SPEC).toBe(before.SPEC);
  });

  it("readyTimeoutMinutes only moves the budget", () => {
    const before = workerScriptEnv(workerSettings(prod, "worker-a"));
    const after = workerScriptEnv(workerSettings(withSglang("prod", { readyTimeoutMinutes: 90 }), "worker-a"));
    expect(after.READY_TIMEOUT_SECONDS).toBe("5400");
    expect({ ...after, READY_TIMEOUT_SECONDS: "" }).toEqual({ ...before, READY_TIMEOUT_SECONDS: "" });
  });
});

describe("per-host overrides (sglang.overrides.<host>)", () => {
  const prod = stack("prod");
  const base = {
    a: workerScriptEnv(workerSettings(prod, "worker-a")),
    b: workerScriptEnv(workerSettings(prod, "worker-b")),
  };

  it("an override for worker-b changes worker-b's inputs and leaves worker-a's identical", () => {
    const c = withSglang("prod", { overrides: { "worker-b": { maxRunningRequests: 4 } } });
    const a = workerScriptEnv(workerSettings(c, "worker-a"));
    const b = workerScriptEnv(workerSettings(c, "worker-b"));
    expect(a).toEqual(base.a);
    expect(b.SPEC).not.toBe(base.b.SPEC);
    const command = JSON.parse(b.COMMAND_JSON) as string[];
    expect(command[command.indexOf("--max-running-requests") + 1]).toBe("4");
    expect(JSON.parse(b.EXPECTED_JSON)).toMatchObject({ max_running_requests: 4 });
    expect(Object.keys(b).filter((k) => b[k] !== base.b[k]).sort()).toEqual(["COMMAND_JSON", "EXPECTED_JSON", "SPEC"]);
  });

  it("an image override pins one worker's image only", () => {
    const c = withSglang("prod", { overrides: { "worker-a": { image: "lmsysorg/sglang:v0.5.9-runtime" } } });
    expect(workerScriptEnv(workerSettings(c, "worker-a")).IMAGE).toBe("lmsysorg/sglang:v0.5.9-runtime");
    expect(workerScriptEnv(workerSettings(c, "worker-b"))).toEqual(base.b);
  });

  it("an env override replaces the whole map for that host (shallow merge, as documented)", () => {
    const c = withSglang("prod", { overrides: { "worker-b": { env: { CUDA_VISIBLE_DEVICES: "0,1,2,3" } } } });
    const envFlags = (host: string) => {
      const args = workerDockerArgs(workerSettings(c, host));
      return args.filter((_, i) => args[i - 1] === "--env");
    };
    expect(envFlags("worker-b")).toEqual(["CUDA_VISIBLE_DEVICES=0,1,2,3"]);
    expect(envFlags("worker-a")).toEqual(["HOME=/tmp", "HF_HOME=/tmp/huggingface"]);
  });

  it("an override equal to the base value changes nothing", () => {
    const c = withSglang("prod", { overrides: { "worker-b": { tp: 4, dp: 2 } } });
    expect(workerScriptEnv(workerSettings(c, "worker-b"))).toEqual(base.b);
  });
});

describe("ResolvedSglangSettings edits (no parser in between)", () => {
  it("workerDockerArgs reads only the settings it is given", () => {
    const s: ResolvedSglangSettings = { ...workerSettings(stack("prod"), "worker-a"), gpus: "none", stopTimeoutSecs: 0, ulimits: {}, env: {} };
    expect(workerDockerArgs(s)).toEqual(["--network", "host", "--ipc", "host", "--stop-timeout", "0", "--volume", `${PROD_MODEL}:/models/Qwen3.8-27B:ro`]);
  });
});

/** Names a host script refuses to run without (`: "${NAME:?}"`). */
function requiredInputs(script: string): string[] {
  return [...hostScript(script).matchAll(/\$\{([A-Z_][A-Z0-9_]*):\?\}/g)].map((m) => m[1]);
}

describe("workerScriptEnv against container-run.sh + server-health.sh + the engine's gate", () => {
  it.each([
    ["prod", "worker-a", "sglang-worker"],
    ["gpt-oss-20b", "l40s", "vllm-worker"],
  ] as const)("Pulumi.%s.yaml: supplies every input the scripts insist on, except API_KEY (sent as a secret environment)", (name, host, gate) => {
    const settings = workerSettings(stack(name), host);
    expect(workerGateScript(settings)).toBe(gate);
    const env = workerScriptEnv(settings);
    const required = [...new Set([...requiredInputs("container-run"), ...requiredInputs("server-health"), ...requiredInputs(gate)])];
    expect(required).toEqual(expect.arrayContaining(["API_KEY", "READY_TIMEOUT_SECONDS", "EXPECTED_JSON"]));
    expect(required.filter((input) => !(input in env))).toEqual(["API_KEY"]);
  });
});
