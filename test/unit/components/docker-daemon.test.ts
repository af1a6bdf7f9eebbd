// docker-daemon.ts: the address pools checked before any host is touched, their capacity (Harbor needs one
// network per concurrent trial), and the inputs of docker-daemon.sh, from the committed stack files.
import { spawnSync } from "node:child_process";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { type ReprobenchConfig, formatProblems, parseConfig, readStackFile } from "../../../components/config";
import { DAEMON_STATE_DIR, daemonScriptEnv, poolCapacity, poolProblems } from "../../../components/docker-daemon";
import { bashCommand, envPrelude, scriptWithEnv } from "../../../components/host-script";

const REPO = resolve(__dirname, "../../..");

function stack(name: "a100" | "local", edit?: (raw: Record<string, unknown>) => void): ReprobenchConfig {
  const raw = readStackFile(join(REPO, `Pulumi.${name}.yaml`));
  edit?.(raw);
  const result = parseConfig(raw, { requireSecrets: false });
  if (!result.ok) throw new Error(`Pulumi.${name}.yaml: ${formatProblems(result.problems)}`);
  return result.config;
}

const docker = (name: "a100" | "local", extra: Record<string, unknown> = {}) =>
  stack(name, (raw) => (raw.docker = { ...(raw.docker as object), ...extra })).docker;

describe("poolCapacity", () => {
  it("seed 000's 172.18.0.0/15 cut into /24s gives 512 networks (the default, a100)", () => {
    const pools = docker("a100").addressPools;
    expect(pools).toEqual([{ base: "172.18.0.0/15", size: 24 }]);
    expect(poolCapacity(pools)).toBe(512);
  });

  it("is 2^(size − prefix) summed over the pools", () => {
    expect(poolCapacity([{ base: "10.200.0.0/16", size: 24 }])).toBe(256);
    expect(poolCapacity([{ base: "10.200.0.0/16", size: 16 }])).toBe(1);
    expect(poolCapacity([{ base: "10.200.0.0/16", size: 20 }, { base: "192.168.0.0/20", size: 28 }])).toBe(16 + 256);
    expect(poolCapacity([])).toBe(0);
  });

  it("covers run.nConcurrentTrials on both committed stacks", () => {
    for (const name of ["a100", "local"] as const) {
      const c = stack(name);
      expect(poolCapacity(c.docker.addressPools)).toBeGreaterThanOrEqual(c.run.nConcurrentTrials);
    }
  });
});

describe("poolProblems", () => {
  it("finds nothing wrong with the committed stacks' pools", () => {
    expect(poolProblems(docker("a100").addressPools)).toEqual([]);
    expect(poolProblems(docker("local").addressPools)).toEqual([]);
  });

  it("reports overlapping pools, naming both", () => {
    expect(poolProblems([{ base: "172.18.0.0/15", size: 24 }, { base: "172.19.0.0/16", size: 24 }])).toEqual([
      "pools 172.18.0.0/15 and 172.19.0.0/16 overlap",
    ]);
  });

  it("reports a pool that contains an earlier one (order does not hide it) and identical pools", () => {
    expect(poolProblems([{ base: "10.1.2.0/24", size: 28 }, { base: "10.0.0.0/8", size: 24 }])).toEqual(["pools 10.1.2.0/24 and 10.0.0.0/8 overlap"]);
    expect(poolProblems([{ base: "10.9.0.0/16", size: 24 }, { base: "10.9.0.0/16", size: 24 }])).toEqual(["pools 10.9.0.0/16 and 10.9.0.0/16 overlap"]);
  });

  it("does not report adjacent pools", () => {
    expect(poolProblems([{ base: "172.18.0.0/16", size: 24 }, { base: "172.19.0.0/16", size: 24 }, { base: "172.20.0.0/14", size: 24 }])).toEqual([]);
    expect(poolProblems([{ base: "255.255.255.0/24", size: 28 }, { base: "0.0.0.0/24", size: 28 }])).toEqual([]);
  });

  it("reports every overlapping pair among several pools", () => {
    const problems = poolProblems([
      { base: "10.0.0.0/8", size: 24 },
      { base: "10.5.0.0/16", size: 24 },
      { base: "192.168.0.0/16", size: 24 },
      { base: "10.5.128.0/17", size: 24 },
    ]);
    expect(problems).toEqual([
      "pools 10.0.0.0/8 and 10.5.0.0/16 overlap",
      "pools 10.0.0.0/8 and 10.5.128.0/17 overlap",
      "pools 10.5.0.0/16 and 10.5.128.0/17 overlap",
    ]);
  });

  it("reports a network size smaller than the base prefix", () => {
    expect(poolProblems([{ base: "172.18.0.0/15", size: 14 }])).toEqual([
      "pool 172.18.0.0/15 cannot be cut into /14 networks (size must be ≥ 15)",
    ]);
    expect(poolProblems([{ base: "172.18.0.0/15", size: 15 }])).toEqual([]);
  });

  it("reports a base that is not a CIDR, and still checks the other pools", () => {
    expect(poolProblems([{ base: "172.18.0.1/15", size: 24 }, { base: "nope", size: 24 }, { base: "10.0.0.0/8", size: 7 }])).toEqual([
      "pool 172.18.0.1/15 is not a valid IPv4 CIDR",
      "pool nope is not a valid IPv4 CIDR",
      "pool 10.0.0.0/8 cannot be cut into /7 networks (size must be ≥ 8)",
    ]);
  });
});

describe("daemonScriptEnv", () => {
  it("a100: seed 000's pool, restart only when idle, 64 test networks, the standard daemon.json", () => {
    const env = daemonScriptEnv(docker("a100"));
    expect(JSON.parse(env.POOLS_JSON)).toEqual([{ base: "172.18.0.0/15", size: 24 }]);
    expect(env).toMatchObject({
      FORCE_RESTART: "0",
      RESTART_POLICY: "when-idle",
      VERIFY_NETWORKS: "64",
      STATE_DIR: DAEMON_STATE_DIR,
      DAEMON_JSON: "/etc/docker/daemon.json",
    });
    expect(Object.keys(env).sort()).toEqual(["DAEMON_JSON", "FORCE_RESTART", "POOLS_JSON", "RESTART_POLICY", "STATE_DIR", "VERIFY_NETWORKS"]);
    expect(() => envPrelude(env)).not.toThrow();
  });

  it("local: 4 test networks", () => {
    expect(daemonScriptEnv(docker("local")).VERIFY_NETWORKS).toBe("4");
  });

  it("follows forceRestart, restartPolicy, daemonConfigPath and every pool in order", () => {
    const env = daemonScriptEnv(
      docker("a100", {
        forceRestart: true,
        restartPolicy: "never",
        daemonConfigPath: "/etc/docker/custom.json",
        addressPools: [{ base: "10.210.0.0/16", size: 24 }, { base: "10.211.0.0/16", size: 26 }],
        verifyNetworks: 0,
      }),
    );
    expect(env.FORCE_RESTART).toBe("1");
    expect(env.RESTART_POLICY).toBe("never");
    expect(env.DAEMON_JSON).toBe("/etc/docker/custom.json");
    expect(env.VERIFY_NETWORKS).toBe("0");
    expect(JSON.parse(env.POOLS_JSON)).toEqual([{ base: "10.210.0.0/16", size: 24 }, { base: "10.211.0.0/16", size: 26 }]);
  });

  it("POOLS_JSON carries exactly base and size (the daemon.json default-address-pools keys)", () => {
    const pools = JSON.parse(daemonScriptEnv(docker("a100")).POOLS_JSON) as Record<string, unknown>[];
    for (const pool of pools) expect(Object.keys(pool).sort()).toEqual(["base", "size"]);
    expect(typeof pools[0].size).toBe("number");
  });
});

describe("the create command (bashCommand over daemonScriptEnv)", () => {
  it("a login shell parses it back into exactly prelude + docker-daemon.sh, inputs intact", () => {
    const env = daemonScriptEnv(docker("a100", { addressPools: [{ base: "172.18.0.0/15", size: 24 }, { base: "10.210.0.0/16", size: 26 }] }));
    const command = bashCommand("docker-daemon", env);
    // printf in place of bash shows the argv the remote shell builds, without running the script.
    const argv = spawnSync("sh", ["-c", command.replace(/^bash -c /, "printf '%s\\0' ")], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    expect(argv.stdout.split("\0")).toEqual([scriptWithEnv("docker-daemon", env), "docker-daemon", ""]);
    // …and the prelude alone exports POOLS_JSON (quotes, braces) unchanged.
    const seen = spawnSync("bash", ["-c", `${envPrelude(env)}\nprintf '%s' "$POOLS_JSON"`], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    expect(JSON.parse(seen.stdout)).toEqual([{ base: "172.18.0.0/15", size: 24 }, { base: "10.210.0.0/16", size: 26 }]);
  });

  it("supplies every input docker-daemon.sh insists on", () => {
    const env = daemonScriptEnv(docker("a100"));
    const script = scriptWithEnv("docker-daemon", env);
    const required = [...script.matchAll(/\$\{([A-Z_][A-Z0-9_]*):\?\}/g)].map((m) => m[1]);
    expect(required.length).toBeGreaterThan(0);
    for (const name of required) expect(Object.keys(env), name).toContain(name);
  });
});
