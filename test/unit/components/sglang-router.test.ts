// The router's pure parts, built from the committed stack files: seed 000's docker options and
// launch_router argv (lines 585–620), every DP rank it must list, and ONE --worker-urls with every URL
// (sglang-router 0.3.2 keeps only the last list when the flag repeats).
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { type ReprobenchConfig, formatProblems, parseConfig, readStackFile } from "../../../infra/config";
import { envPrelude, hostScript } from "../../../components/host-script";
import { expectedRouterWorkers, routerDockerArgs, routerLocalUrl, routerScriptEnv } from "../../../components/sglang-router";

const REPO = resolve(__dirname, "../../..");

function stack(name: "prod" | "local", edit?: (raw: Record<string, unknown>) => void): ReprobenchConfig {
  const raw = readStackFile(join(REPO, `Pulumi.${name}.yaml`));
  edit?.(raw);
  const result = parseConfig(raw, { requireSecrets: false });
  if (!result.ok) throw new Error(`Pulumi.${name}.yaml: ${formatProblems(result.problems)}`);
  return result.config;
}

const merge = (raw: Record<string, unknown>, key: string, value: Record<string, unknown>) =>
  (raw[key] = { ...((raw[key] as object | undefined) ?? {}), ...value });

/** prod plus a third worker host (worker-c, 10.0.0.13). */
function prodWithWorkerC(edit?: (raw: Record<string, unknown>) => void): ReprobenchConfig {
  return stack("prod", (raw) => {
    const hosts = raw.hosts as Record<string, unknown>[];
    raw.hosts = [
      ...hosts,
      { ...hosts[0], name: "worker-c", privateIp: "10.0.0.13", ssh: { ...(hosts[0].ssh as object), host: "203.0.113.13" } },
    ];
    edit?.(raw);
  });
}

function pairs(args: string[]): string[][] {
  expect(args.length % 2).toBe(0);
  const out: string[][] = [];
  for (let i = 0; i < args.length; i += 2) out.push([args[i], args[i + 1]]);
  return out.sort((a, b) => a.join(" ").localeCompare(b.join(" ")));
}

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
const PROD_MODEL = "/var/lib/reprobench/models/Qwen3.8-27B";

describe("routerDockerArgs", () => {
  it("prod: seed 000 lines 591–597 (host network, nofile 65536:65536, HOME=/tmp, model read-only) + stop 180 s (line 795)", () => {
    expect(pairs(routerDockerArgs(stack("prod")))).toEqual(pairs([
      "--network", "host",
      "--ulimit", "nofile=65536:65536",
      "--env", "HOME=/tmp",
      "--volume", `${PROD_MODEL}:/models/Qwen3.8-27B:ro`,
      "--stop-timeout", "180",
    ]));
  });

  it("mountModel: false drops the volume; the mount follows sglang.modelPath/modelMountPath", () => {
    expect(routerDockerArgs(stack("prod", (raw) => merge(raw, "router", { mountModel: false })))).not.toContain("--volume");
    const local = routerDockerArgs(stack("local"));
    expect(local[local.indexOf("--volume") + 1]).toBe("/var/lib/reprobench/models/sim-placeholder:/models/Qwen3.8-27B:ro");
  });

  it("renders integer ulimits as name=value and keeps the env order", () => {
    const c = stack("prod", (raw) => merge(raw, "router", { ulimits: { nofile: 4096, core: 0 }, env: { Z: "1", A: "2" } }));
    const args = routerDockerArgs(c);
    expect(args.filter((_, i) => args[i - 1] === "--ulimit")).toEqual(["nofile=4096", "core=0"]);
    expect(args.filter((_, i) => args[i - 1] === "--env")).toEqual(["Z=1", "A=2"]);
  });
});

describe("expectedRouterWorkers", () => {
  it("prod, dp-aware: 2 hosts × dp 2 = four http://ip:port@rank entries", () => {
    expect(expectedRouterWorkers(stack("prod"))).toEqual([
      "http://10.0.0.11:30001@0",
      "http://10.0.0.11:30001@1",
      "http://10.0.0.12:30001@0",
      "http://10.0.0.12:30001@1",
    ]);
  });

  it("local (sim): the sim hosts' private IPs", () => {
    expect(expectedRouterWorkers(stack("local"))).toEqual([
      "http://172.31.250.11:30001@0",
      "http://172.31.250.11:30001@1",
      "http://172.31.250.12:30001@0",
      "http://172.31.250.12:30001@1",
    ]);
  });

  it("is Σ over worker hosts of each host's own dp (per-host dp and port overrides)", () => {
    const c = prodWithWorkerC((raw) =>
      merge(raw, "sglang", { overrides: { "worker-b": { dp: 1, tp: 8 }, "worker-c": { port: 30101, dp: 1 } } }),
    );
    expect(expectedRouterWorkers(c)).toEqual([
      "http://10.0.0.11:30001@0",
      "http://10.0.0.11:30001@1",
      "http://10.0.0.12:30001@0",
      "http://10.0.0.13:30101@0",
    ]);
  });

  it("without --dp-aware: one plain URL per worker host", () => {
    const c = prodWithWorkerC((raw) => merge(raw, "router", { dpAware: false }));
    expect(expectedRouterWorkers(c)).toEqual(["http://10.0.0.11:30001", "http://10.0.0.12:30001", "http://10.0.0.13:30001"]);
  });

  it("skips hosts without the worker role", () => {
    const c = prodWithWorkerC((raw) => {
      const hosts = raw.hosts as Record<string, unknown>[];
      hosts[2] = { ...hosts[2], roles: ["router"] };
      hosts[1] = { ...hosts[1], roles: ["worker", "runner"] };
      merge(raw, "router", { host: "0.0.0.0" }); // the runner is now on another host
    });
    expect(expectedRouterWorkers(c).map((u) => u.replace(/@\d+$/, ""))).toEqual([
      "http://10.0.0.11:30001", "http://10.0.0.11:30001", "http://10.0.0.12:30001", "http://10.0.0.12:30001",
    ]);
  });
});

describe("routerLocalUrl", () => {
  it("prod: the seed's http://127.0.0.1:30000 (line 605)", () => {
    expect(routerLocalUrl(stack("prod"))).toBe("http://127.0.0.1:30000");
  });

  it("0.0.0.0 is reached over loopback; a specific bind address is used as is", () => {
    expect(routerLocalUrl(stack("prod", (raw) => merge(raw, "router", { host: "0.0.0.0", port: 31000 })))).toBe("http://127.0.0.1:31000");
    expect(routerLocalUrl(stack("prod", (raw) => merge(raw, "router", { host: "10.0.0.12" })))).toBe("http://10.0.0.12:30000");
  });
});

describe("routerScriptEnv", () => {
  const prod = stack("prod");

  it("prod: seed 000's launch_router argv (lines 599–609) with ONE --worker-urls followed by every worker URL", () => {
    const env = routerScriptEnv(prod);
    const argv = JSON.parse(env.COMMAND_JSON) as string[];
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
    const argv = JSON.parse(routerScriptEnv(prodWithWorkerC()).COMMAND_JSON) as string[];
    expect(argv.filter((a) => a === "--worker-urls")).toHaveLength(1);
    expect(flags(argv.slice(3)).get("--worker-urls")).toEqual(["http://10.0.0.11:30001", "http://10.0.0.12:30001", "http://10.0.0.13:30001"]);
  });

  it("prod: the gate's inputs", () => {
    const env = routerScriptEnv(prod);
    expect(env.CONTAINER_NAME).toBe("qwen38-global-router");
    expect(env.IMAGE).toBe("lmsysorg/sglang:latest-runtime"); // the seed runs the router in the SGLang image
    expect(env.CONTAINER_USER).toBe("ssh-user");
    expect(env.ROUTER_URL).toBe("http://127.0.0.1:30000");
    expect(JSON.parse(env.EXPECTED_WORKERS)).toEqual(expectedRouterWorkers(prod));
    expect(env.SERVED_MODEL_NAME).toBe("Qwen/Qwen3.8-27B");
    expect(env.READY_TIMEOUT_SECONDS).toBe(String(1800 + 120));
    expect(JSON.parse(env.DOCKER_ARGS_JSON)).toEqual(routerDockerArgs(prod));
    expect(env.SPEC).toMatch(/^[0-9a-f]{16}$/);
    expect(Object.keys(env)).not.toContain("API_KEY");
    expect(() => envPrelude(env)).not.toThrow();
  });

  it("without --dp-aware the flag is absent and EXPECTED_WORKERS has no ranks", () => {
    const env = routerScriptEnv(stack("prod", (raw) => merge(raw, "router", { dpAware: false })));
    expect(JSON.parse(env.COMMAND_JSON)).not.toContain("--dp-aware");
    expect(JSON.parse(env.EXPECTED_WORKERS)).toEqual(["http://10.0.0.11:30001", "http://10.0.0.12:30001"]);
  });

  it("router.image, when set, replaces the SGLang image and changes SPEC", () => {
    const env = routerScriptEnv(stack("prod", (raw) => merge(raw, "router", { image: "lmsysorg/sglang-router:v0.3.2" })));
    expect(env.IMAGE).toBe("lmsysorg/sglang-router:v0.3.2");
    expect(env.SPEC).not.toBe(routerScriptEnv(prod).SPEC);
  });

  it("an unset router.image follows sglang.image, and SPEC follows it too", () => {
    const env = routerScriptEnv(stack("prod", (raw) => merge(raw, "sglang", { image: "lmsysorg/sglang:v0.5.9-runtime" })));
    expect(env.IMAGE).toBe("lmsysorg/sglang:v0.5.9-runtime");
    expect(env.SPEC).not.toBe(routerScriptEnv(prod).SPEC);
  });

  it("SPEC is stable across re-parsing", () => {
    expect(routerScriptEnv(stack("prod")).SPEC).toBe(routerScriptEnv(prod).SPEC);
  });

  it.each([
    ["router.policy", { router: { policy: "round_robin" } }],
    ["router.dpAware", { router: { dpAware: false } }],
    ["router.balanceRelThreshold", { router: { balanceRelThreshold: 1.5 } }],
    ["router.port", { router: { port: 30500 } }],
    ["router.stopTimeoutSecs", { router: { stopTimeoutSecs: 60 } }],
    ["router.user", { router: { user: "1000:1000" } }],
    ["router.env", { router: { env: { HOME: "/root" } } }],
    ["router.mountModel", { router: { mountModel: false } }],
    ["router.extraArgs", { router: { extraArgs: ["--log-level", "debug"] } }],
    ["sglang.port (every worker URL moves)", { sglang: { port: 30002 } }],
    ["sglang.modelPath (the mounted tokenizer)", { sglang: { modelPath: "/data/m" } }],
  ] as [string, Record<string, Record<string, unknown>>][])("changing %s changes SPEC", (_what, edits) => {
    const c = stack("prod", (raw) => Object.entries(edits).forEach(([k, v]) => merge(raw, k, v)));
    expect(routerScriptEnv(c).SPEC).not.toBe(routerScriptEnv(prod).SPEC);
  });

  it.each([
    ["sglang.readyTimeoutMinutes", { sglang: { readyTimeoutMinutes: 90 } }],
    ["sglang.maxRunningRequests", { sglang: { maxRunningRequests: 4 } }],
    ["docker.verifyNetworks", { docker: { verifyNetworks: 8 } }],
  ] as [string, Record<string, Record<string, unknown>>][])("changing %s leaves the router's SPEC alone", (_what, edits) => {
    const c = stack("prod", (raw) => Object.entries(edits).forEach(([k, v]) => merge(raw, k, v)));
    expect(routerScriptEnv(c).SPEC).toBe(routerScriptEnv(prod).SPEC);
  });
});

/** Names a host script refuses to run without (`: "${NAME:?}"`). */
function requiredInputs(script: string): string[] {
  return [...hostScript(script).matchAll(/\$\{([A-Z_][A-Z0-9_]*):\?\}/g)].map((m) => m[1]);
}

describe("routerScriptEnv against container-run.sh + sglang-router.sh", () => {
  it("supplies every input the script insists on, except API_KEY (sent as a secret environment)", () => {
    const env = routerScriptEnv(stack("prod"));
    const required = [...new Set([...requiredInputs("container-run"), ...requiredInputs("sglang-router")])];
    expect(required).toContain("EXPECTED_WORKERS");
    expect(required.filter((name) => !(name in env))).toEqual(["API_KEY"]);
  });
});
