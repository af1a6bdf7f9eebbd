// The router's pure parts, built from the committed stack files: seed 000's docker options and
// launch_router argv (lines 585–620), every DP rank it must list, and ONE --worker-urls with every URL
// (sglang-router 0.3.2 keeps only the last list when the flag repeats). The router gets each worker's URL
// and DP size from ModelServer (url, dpSize = the worker's resolved settings); `workersOf` builds the same.
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { type ReprobenchConfig, formatProblems, hostsWithRole, parseConfig, readStackFile, routerCommand, routerSettings, workerSettings } from "../../../components/config";
import { envPrelude, hostScript } from "../../../components/host-script";
import { MANAGED_LABEL, ROLE_LABEL, apiKeyEntrypoint } from "../../../components/container-spec";
import { type RouterWorker, expectedRouterWorkers, routerContainerSpec, routerGateEnv, routerLocalUrl } from "../../../components/sglang-router";
import { execArgv } from "../../helpers/entrypoint";

const REPO = resolve(__dirname, "../../..");

function stack(name: "a100" | "local", edit?: (raw: Record<string, unknown>) => void): ReprobenchConfig {
  const raw = readStackFile(join(REPO, `Pulumi.${name}.yaml`));
  edit?.(raw);
  const result = parseConfig(raw, { requireSecrets: false });
  if (!result.ok) throw new Error(`Pulumi.${name}.yaml: ${formatProblems(result.problems)}`);
  return result.config;
}

const merge = (raw: Record<string, unknown>, key: string, value: Record<string, unknown>) =>
  (raw[key] = { ...((raw[key] as object | undefined) ?? {}), ...value });

/** a100 plus a third worker host (worker-c, 10.0.0.13). */
function a100WithWorkerC(edit?: (raw: Record<string, unknown>) => void): ReprobenchConfig {
  return stack("a100", (raw) => {
    const hosts = raw.hosts as Record<string, unknown>[];
    raw.hosts = [
      ...hosts,
      { ...hosts[0], name: "worker-c", privateIp: "10.0.0.13", ssh: { ...(hosts[0].ssh as object), host: "203.0.113.13" } },
    ];
    edit?.(raw);
  });
}

/** The workers as the router sees them (ModelServer.url and .dpSize), in host order. */
function workersOf(c: ReprobenchConfig): RouterWorker[] {
  return hostsWithRole(c, "worker").map((h) => {
    const s = workerSettings(c, h.name);
    return { url: s.url, dpSize: s.dp };
  });
}

/** The router's container spec for a config, as SglangRouter builds it. */
const specOf = (c: ReprobenchConfig) => routerContainerSpec(routerSettings(c), workersOf(c).map((w) => w.url));
const gateOf = (c: ReprobenchConfig) => routerGateEnv(routerSettings(c), workersOf(c));
const expectedOf = (c: ReprobenchConfig) => expectedRouterWorkers(routerSettings(c).dpAware, workersOf(c));

/** argv after the launcher → flag → values (a flag may take several values, e.g. --worker-urls). */
function flags(argv: string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const arg of argv) {
    if (arg.startsWith("--")) {
      expect(out.has(arg), `${arg} appears once`).toBe(false);
      current = [];
      out.set(arg, current);
    } else {
      expect(current, `value ${arg} follows a flag`).toBeDefined();
      current!.push(arg);
    }
  }
  return out;
}

const LAUNCHER = ["python3", "-m", "sglang_router.launch_router"];
const A100_MODEL = "/var/lib/reprobench/models/Qwen3.8-27B";

describe("routerContainerSpec", () => {
  it("a100: seed 000 lines 591–597 (host network, nofile 65536:65536, HOME=/tmp, model read-only) + stop 180 s (line 795)", () => {
    const spec = specOf(stack("a100"));
    expect({ ...spec, command: undefined }).toEqual({
      name: "qwen38-global-router",
      command: undefined,
      networkMode: "host",
      ulimits: [{ name: "nofile", soft: 65536, hard: 65536 }],
      envs: ["HOME=/tmp"],
      mounts: [{ type: "bind", source: A100_MODEL, target: "/models/Qwen3.8-27B", readOnly: true }],
      labels: [
        { label: MANAGED_LABEL, value: "1" },
        { label: ROLE_LABEL, value: "router" },
      ],
      stopTimeout: 180,
    });
    // No GPUs, no ipc mode, no shm size: the router needs none.
    expect(spec).not.toHaveProperty("gpus");
    expect(spec).not.toHaveProperty("ipcMode");
  });

  it("mountModel: false drops the volume; the mount follows sglang.modelPath/modelMountPath", () => {
    expect(specOf(stack("a100", (raw) => merge(raw, "router", { mountModel: false }))).mounts).toEqual([]);
    expect(specOf(stack("local")).mounts).toEqual([{ type: "bind", source: "/var/lib/reprobench/models/Qwen3.8-27B", target: "/models/Qwen3.8-27B", readOnly: true }]);
    expect(specOf(stack("a100", (raw) => merge(raw, "modelServer", { modelPath: "/data/m", modelMountPath: "/m" }))).mounts).toEqual([{ type: "bind", source: "/data/m", target: "/m", readOnly: true }]);
  });

  it("renders integer ulimits as soft = hard and keeps the env order", () => {
    const spec = specOf(stack("a100", (raw) => merge(raw, "router", { ulimits: { nofile: 4096, core: 0 }, env: { Z: "1", A: "2" } })));
    expect(spec.ulimits).toEqual([
      { name: "nofile", soft: 4096, hard: 4096 },
      { name: "core", soft: 0, hard: 0 },
    ]);
    expect(spec.envs).toEqual(["Z=1", "A=2"]);
  });

  it("the argv holds no API key: the entrypoint appends --api-key from the container's environment", () => {
    const spec = specOf(stack("a100"));
    expect(spec.command).not.toContain("--api-key");
    expect(execArgv(apiKeyEntrypoint(), spec.command, { REPROBENCH_API_KEY: "rk" })).toEqual([...spec.command, "--api-key", "rk"]);
  });
});

describe("expectedRouterWorkers", () => {
  it("a100, dp-aware: 2 hosts × dp 2 = four http://ip:port@rank entries", () => {
    expect(expectedOf(stack("a100"))).toEqual([
      "http://10.0.0.11:30001@0",
      "http://10.0.0.11:30001@1",
      "http://10.0.0.12:30001@0",
      "http://10.0.0.12:30001@1",
    ]);
  });

  it("local (sim): the sim hosts' private IPs", () => {
    expect(expectedOf(stack("local"))).toEqual([
      "http://172.31.250.11:30001@0",
      "http://172.31.250.11:30001@1",
      "http://172.31.250.12:30001@0",
      "http://172.31.250.12:30001@1",
    ]);
  });

  it("is Σ over worker hosts of each host's own dp (per-host dp and port overrides)", () => {
    const c = a100WithWorkerC((raw) =>
      merge(raw, "modelServer", { overrides: { "worker-b": { dp: 1, tp: 8 }, "worker-c": { port: 30101, dp: 1 } } }),
    );
    expect(expectedOf(c)).toEqual([
      "http://10.0.0.11:30001@0",
      "http://10.0.0.11:30001@1",
      "http://10.0.0.12:30001@0",
      "http://10.0.0.13:30101@0",
    ]);
  });

  it("without --dp-aware: one plain URL per worker host", () => {
    const c = a100WithWorkerC((raw) => merge(raw, "router", { dpAware: false }));
    expect(expectedOf(c)).toEqual(["http://10.0.0.11:30001", "http://10.0.0.12:30001", "http://10.0.0.13:30001"]);
  });

  it("is a function of what it is given: dp sizes as passed, no config", () => {
    expect(expectedRouterWorkers(true, [{ url: "http://a:1", dpSize: 3 }, { url: "http://b:2", dpSize: 1 }])).toEqual(["http://a:1@0", "http://a:1@1", "http://a:1@2", "http://b:2@0"]);
    expect(expectedRouterWorkers(false, [{ url: "http://a:1", dpSize: 3 }])).toEqual(["http://a:1"]);
    expect(expectedRouterWorkers(true, [])).toEqual([]);
  });

  it("skips hosts without the worker role", () => {
    const c = a100WithWorkerC((raw) => {
      const hosts = raw.hosts as Record<string, unknown>[];
      hosts[2] = { ...hosts[2], roles: ["router"] };
      hosts[1] = { ...hosts[1], roles: ["worker", "runner"] };
      merge(raw, "router", { host: "0.0.0.0" }); // the runner is now on another host
    });
    expect(expectedOf(c).map((u) => u.replace(/@\d+$/, ""))).toEqual([
      "http://10.0.0.11:30001", "http://10.0.0.11:30001", "http://10.0.0.12:30001", "http://10.0.0.12:30001",
    ]);
  });
});

describe("routerLocalUrl", () => {
  it("a100: the seed's http://127.0.0.1:30000 (line 605)", () => {
    expect(routerLocalUrl(routerSettings(stack("a100")))).toBe("http://127.0.0.1:30000");
  });

  it("0.0.0.0 is reached over loopback; a specific bind address is used as is", () => {
    expect(routerLocalUrl(routerSettings(stack("a100", (raw) => merge(raw, "router", { host: "0.0.0.0", port: 31000 }))))).toBe("http://127.0.0.1:31000");
    expect(routerLocalUrl(routerSettings(stack("a100", (raw) => merge(raw, "router", { host: "10.0.0.12" }))))).toBe("http://10.0.0.12:30000");
  });
});

describe("the router's argv (routerContainerSpec().command, infra routerCommand)", () => {
  const a100 = stack("a100");

  it("a100: seed 000's launch_router argv (lines 599–609) with ONE --worker-urls followed by every worker URL", () => {
    const argv = specOf(a100).command;
    expect(routerCommand(a100)).toEqual(argv);
    expect(argv.slice(0, 3)).toEqual(LAUNCHER);
    expect(argv.filter((a) => a === "--worker-urls")).toHaveLength(1);
    const f = flags(argv.slice(3));
    expect(f.get("--worker-urls")).toEqual(["http://10.0.0.11:30001", "http://10.0.0.12:30001"]);
    expect(f.get("--host")).toEqual(["127.0.0.1"]);
    expect(f.get("--port")).toEqual(["30000"]);
    expect(f.get("--dp-aware")).toEqual([]);
    expect(f.get("--policy")).toEqual(["cache_aware"]);
    expect(f.get("--balance-abs-threshold")).toEqual(["1"]);
    expect(f.get("--balance-rel-threshold")).toEqual(["1.2"]);
    // Beyond the seed: the router's own defaults, made explicit.
    expect(f.get("--worker-startup-timeout-secs")).toEqual(["1800"]);
    expect(f.get("--request-timeout-secs")).toEqual(["1800"]);
    expect(f.get("--prometheus-port")).toEqual(["29000"]);
    expect([...f.keys()].sort()).toEqual([
      "--balance-abs-threshold", "--balance-rel-threshold", "--dp-aware", "--host", "--policy", "--port",
      "--prometheus-port", "--request-timeout-secs", "--worker-startup-timeout-secs", "--worker-urls",
    ]);
  });

  it("three workers: still one --worker-urls, with all three URLs, in host order", () => {
    const argv = routerCommand(a100WithWorkerC());
    expect(argv.filter((a) => a === "--worker-urls")).toHaveLength(1);
    expect(flags(argv.slice(3)).get("--worker-urls")).toEqual(["http://10.0.0.11:30001", "http://10.0.0.12:30001", "http://10.0.0.13:30001"]);
  });

  it("without --dp-aware the flag is absent", () => {
    expect(routerCommand(stack("a100", (raw) => merge(raw, "router", { dpAware: false })))).not.toContain("--dp-aware");
  });

  it("router.extraArgs come last", () => {
    const argv = routerCommand(stack("a100", (raw) => merge(raw, "router", { extraArgs: ["--log-level", "debug"] })));
    expect(argv.slice(-2)).toEqual(["--log-level", "debug"]);
  });
});

describe("routerGateEnv", () => {
  const a100 = stack("a100");

  it("a100: the gate's inputs", () => {
    const env = gateOf(a100);
    expect(env).toEqual({
      CONTAINER_NAME: "qwen38-global-router",
      ROUTER_URL: "http://127.0.0.1:30000",
      PROBE_URL: "http://127.0.0.1:30000",
      PROBE_NAME: "sglang-router[qwen38-global-router]",
      EXPECTED_WORKERS: JSON.stringify(expectedOf(a100)),
      SERVED_MODEL_NAME: "Qwen/Qwen3.8-27B",
      MODEL_LISTED: "1",
      READY_TIMEOUT_SECONDS: String(1800 + 120),
    });
    expect(() => envPrelude(env)).not.toThrow();
  });

  it("without --dp-aware EXPECTED_WORKERS has no ranks", () => {
    expect(JSON.parse(gateOf(stack("a100", (raw) => merge(raw, "router", { dpAware: false }))).EXPECTED_WORKERS)).toEqual(["http://10.0.0.11:30001", "http://10.0.0.12:30001"]);
  });
});

describe("routerSettings (image, user) and what a config change does to the router's container", () => {
  const a100 = stack("a100");

  it("a100: the router runs in the SGLang image as the SSH login (the seed's $(id -u):$(id -g))", () => {
    const r = routerSettings(a100);
    expect(r.image).toBe("lmsysorg/sglang:latest-runtime");
    expect(r.user).toBe("ssh-user");
  });

  it("--dp-aware only when set: unset follows the engine (SGLang workers: on), false drops the flag", () => {
    expect(routerSettings(a100).dpAware).toBe(true);
    expect(routerCommand(a100)).toContain("--dp-aware");
    const off = stack("a100", (raw) => merge(raw, "router", { dpAware: false }));
    expect(routerSettings(off).dpAware).toBe(false);
    expect(routerCommand(off)).not.toContain("--dp-aware");
    expect(routerSettings(stack("a100", (raw) => merge(raw, "router", { mountModel: false }))).modelMount).toBeNull();
    expect(routerSettings(a100).modelMount).toEqual({ hostPath: A100_MODEL, containerPath: "/models/Qwen3.8-27B" });
  });

  it("router.image, when set, replaces the SGLang image", () => {
    expect(routerSettings(stack("a100", (raw) => merge(raw, "router", { image: "lmsysorg/sglang-router:v0.3.2" }))).image).toBe("lmsysorg/sglang-router:v0.3.2");
  });

  it("an unset router.image follows sglang.image", () => {
    expect(routerSettings(stack("a100", (raw) => merge(raw, "modelServer", { image: "lmsysorg/sglang:v0.5.9-runtime" }))).image).toBe("lmsysorg/sglang:v0.5.9-runtime");
  });

  it("the spec is stable across re-parsing", () => {
    expect(specOf(stack("a100"))).toEqual(specOf(a100));
  });

  it.each([
    ["router.policy", { router: { policy: "round_robin" } }],
    ["router.dpAware", { router: { dpAware: false } }],
    ["router.balanceRelThreshold", { router: { balanceRelThreshold: 1.5 } }],
    ["router.port", { router: { port: 30500 } }],
    ["router.stopTimeoutSecs", { router: { stopTimeoutSecs: 60 } }],
    ["router.env", { router: { env: { HOME: "/root" } } }],
    ["router.mountModel", { router: { mountModel: false } }],
    ["router.extraArgs", { router: { extraArgs: ["--log-level", "debug"] } }],
    ["sglang.port (every worker URL moves)", { modelServer: { port: 30002 } }],
    ["sglang.modelPath (the mounted tokenizer)", { modelServer: { modelPath: "/data/m" } }],
  ] as [string, Record<string, Record<string, unknown>>][])("changing %s changes the container spec", (_what, edits) => {
    const c = stack("a100", (raw) => Object.entries(edits).forEach(([k, v]) => merge(raw, k, v)));
    expect(specOf(c)).not.toEqual(specOf(a100));
  });

  it("router.user is the container's user, outside the spec", () => {
    const c = stack("a100", (raw) => merge(raw, "router", { user: "1000:1000" }));
    expect(routerSettings(c).user).toBe("1000:1000");
    expect(specOf(c)).toEqual(specOf(a100));
  });

  it.each([
    ["sglang.readyTimeoutMinutes", { modelServer: { readyTimeoutMinutes: 90 } }],
    ["sglang.maxRunningRequests", { modelServer: { maxRunningRequests: 4 } }],
    ["docker.verifyNetworks", { docker: { verifyNetworks: 8 } }],
  ] as [string, Record<string, Record<string, unknown>>][])("changing %s leaves the router's container alone", (_what, edits) => {
    const c = stack("a100", (raw) => Object.entries(edits).forEach(([k, v]) => merge(raw, k, v)));
    expect(specOf(c)).toEqual(specOf(a100));
    expect(routerSettings(c).image).toBe(routerSettings(a100).image);
    expect(gateOf(c)).toEqual(gateOf(a100));
  });
});

/** Names a host script refuses to run without (`: "${NAME:?}"`). */
function requiredInputs(script: string): string[] {
  return [...hostScript(script).matchAll(/\$\{([A-Z_][A-Z0-9_]*):\?\}/g)].map((m) => m[1]);
}

describe("routerGateEnv against sglang-router.sh + ready-probe.sh", () => {
  it("supplies every input the scripts insist on, except API_KEY (sent as a secret environment)", () => {
    const env = gateOf(stack("a100"));
    const required = [...new Set([...requiredInputs("sglang-router"), ...requiredInputs("ready-probe")])];
    expect(required).toEqual(expect.arrayContaining(["EXPECTED_WORKERS", "PROBE_URL"]));
    expect(required.filter((name) => !(name in env))).toEqual(["API_KEY"]);
  });
});
