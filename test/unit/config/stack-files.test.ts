// The committed stack files: a100 = seed 000's cluster (owned, no job), prod = its final 6× run and dev =
// a 3× smoke run on that cluster (run stacks), local = the simulated cluster and its 3× job, local6x = a 6×
// run beside it. They must parse, and say what the briefs say they say.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SECRET_PLACEHOLDER, apiBase, checkStackFile, hostsWithRole, isRunStack, jobConfigObject, parseConfig, parseRunStackConfig, readStackFile, stackConfigFromYaml, workerSettings } from "../../../components/config";
import { REPO } from "./helpers";

/** A stack's effective config; a run stack's is its run on the owner's stack file. */
function parseStack(stack: string, withSecrets: boolean) {
  let raw = readStackFile(join(REPO, `Pulumi.${stack}.yaml`));
  if (isRunStack(raw)) {
    const run = parseRunStackConfig(raw);
    if (!run.ok) throw new Error(`Pulumi.${stack}.yaml: ${JSON.stringify(run.problems, null, 2)}`);
    raw = { ...readStackFile(join(REPO, `Pulumi.${run.config.cluster}.yaml`)), run: raw.run };
  }
  // dev/prod leave secrets to `pulumi config set --secret`; simulate that having happened.
  const withPlaceholders = withSecrets ? { sshPrivateKeys: { default: SECRET_PLACEHOLDER }, proxyUpstream: SECRET_PLACEHOLDER, ...raw } : raw;
  const result = parseConfig(withPlaceholders, { requireSecrets: withSecrets });
  if (!result.ok) throw new Error(`Pulumi.${stack}.yaml: ${JSON.stringify(result.problems, null, 2)}`);
  return result.config;
}

describe("stack files", () => {
  it.each(["a100", "prod", "dev", "lb", "local", "local6x"])("Pulumi.%s.yaml parses without its secrets (preview / config validate)", (stack) => {
    const check = checkStackFile(join(REPO, `Pulumi.${stack}.yaml`));
    expect(check.problems).toEqual([]);
    expect(check.ok).toBe(true);
  });

  it("Pulumi.a100.yaml names exactly the secrets pulumi up still needs", () => {
    const check = checkStackFile(join(REPO, "Pulumi.a100.yaml"));
    expect(check.missingSecrets.map((p) => p.key)).toEqual([
      "reprobench:sshPrivateKeys.worker-a",
      "reprobench:sshPrivateKeys.worker-b",
      "reprobench:proxyUpstream",
    ]);
    expect(checkStackFile(join(REPO, "Pulumi.a100.yaml"), { requireSecrets: true }).ok).toBe(false);
  });

  it.each(["prod", "dev", "lb", "local6x"])("Pulumi.%s.yaml is a run stack: it sets only its cluster and its run, and needs no secret of the cluster's", (stack) => {
    const raw = readStackFile(join(REPO, `Pulumi.${stack}.yaml`));
    expect(Object.keys(raw).sort()).toEqual(["cluster", "run"]);
    expect(checkStackFile(join(REPO, `Pulumi.${stack}.yaml`), { requireSecrets: true }).missingSecrets).toEqual([]);
  });

  it("a run stack that sets a cluster key is refused naming its owner", () => {
    const dir = mkdtempSync(join(tmpdir(), "reprobench-runstack-"));
    const file = join(dir, "Pulumi.x.yaml");
    writeFileSync(file, "config:\n  reprobench:cluster: a100\n  reprobench:router:\n    policy: random\n  reprobench:run:\n    enabled: true\n");
    const check = checkStackFile(file);
    expect(check.ok).toBe(false);
    expect(check.problems).toEqual([{ key: "reprobench:router", message: expect.stringMatching(/^set by the cluster's owner stack 'a100'; a run stack \(reprobench:cluster\) sets only/) }]);
  });

  it("prod is seed 000's final run: 2 × 8 GPUs, TP4×DP2 each, worker-b router+runner, c25/a20, 6×/5×, 89 tasks", () => {
    const c = parseStack("prod", true);
    expect(c.environment).toBe("real");
    expect(c.hosts.map((h) => [h.name, h.gpus, h.roles])).toEqual([
      ["worker-a", 8, ["worker"]],
      ["worker-b", 8, ["worker", "router", "runner"]],
    ]);
    for (const h of hostsWithRole(c, "worker")) {
      const s = workerSettings(c, h.name);
      expect([s.tp, s.dp, s.maxRunningRequests, s.maxMambaCacheSize]).toEqual([4, 2, 5, 25]);
    }
    expect(c.run).toMatchObject({ enabled: true, nConcurrentTrials: 25, nConcurrentAgents: 20, agentTimeoutMultiplier: 6, agentSetupTimeoutMultiplier: 5, agent: "terminus-2" });
    expect(c.run.taskFilter).toEqual({ include: [], exclude: [], nTasks: null });
    expect(c.harbor.expectedTaskCount).toBe(89);
    expect(c.docker.verifyNetworks).toBe(64);
    expect(c.harbor.enabled).toBe(true);
    expect(apiBase(c)).toBe("http://127.0.0.1:30000/v1");
    // Placeholder addresses only (TEST-NET-3): nothing real is committed.
    expect(c.hosts.every((h) => h.ssh.host.startsWith("203.0.113."))).toBe(true);
  });

  it("a100 runs no job of its own; dev and prod run on it", () => {
    expect(parseStack("a100", true).run.enabled).toBe(false);
    for (const stack of ["dev", "prod"]) expect(readStackFile(join(REPO, `Pulumi.${stack}.yaml`)).cluster).toBe("a100");
    expect(readStackFile(join(REPO, "Pulumi.local6x.yaml")).cluster).toBe("local");
  });

  it("lb is a leaderboard run on a100: all 89 tasks, 5 attempts, every timeout multiplier 1.0, no override", () => {
    expect(readStackFile(join(REPO, "Pulumi.lb.yaml")).cluster).toBe("a100");
    const c = parseStack("lb", true);
    expect(c.run).toMatchObject({ enabled: true, nAttempts: 5, timeoutMultiplier: 1, agentTimeoutMultiplier: 1, agentSetupTimeoutMultiplier: 1, verifierTimeoutMultiplier: null, environmentBuildTimeoutMultiplier: null });
    expect(c.run.taskFilter).toEqual({ include: [], exclude: [], nTasks: null });
    expect(c.harbor.expectedTaskCount).toBe(89);
    // What Harbor gets: no multiplier other than 1.0 (the leaderboard's run-conditions rule), 5 attempts.
    const job = jobConfigObject(c, apiBase(c));
    const multipliers = Object.entries(job).filter(([k]) => k.endsWith("multiplier"));
    expect(multipliers.every(([, v]) => v === 1)).toBe(true);
    expect(job.n_attempts).toBe(5);
    expect(JSON.stringify(job)).not.toMatch(/override_|max_timeout_sec/);
  });

  it("dev is the prod cluster running one or two tasks at 3×", () => {
    const prod = parseStack("prod", true);
    const dev = parseStack("dev", true);
    expect(dev.hosts).toEqual(prod.hosts);
    expect(dev.modelServer).toEqual(prod.modelServer);
    expect(dev.router).toEqual(prod.router);
    expect(dev.run.agentTimeoutMultiplier).toBe(3);
    const selected = dev.run.taskFilter.nTasks ?? dev.run.taskFilter.include.length;
    expect(selected).toBeGreaterThanOrEqual(1);
    expect(selected).toBeLessThanOrEqual(2);
    expect(dev.run.enabled).toBe(true);
  });

  it("local is the simulated cluster from the sim brief", () => {
    const c = parseStack("local", true);
    expect(c.environment).toBe("sim");
    expect(c.hosts.map((h) => ({ name: h.name, ssh: h.ssh, privateIp: h.privateIp, gpus: h.gpus, roles: h.roles }))).toEqual([
      {
        name: "worker-a",
        ssh: { host: "127.0.0.1", port: 2201, user: "bench", sudo: true, hostKeyFile: ".sim/hosts/worker-a/ssh_host_ed25519_key.pub", privateKeyFile: ".sim/id_ed25519" },
        privateIp: "172.31.250.11",
        gpus: 8,
        roles: ["worker"],
      },
      {
        name: "worker-b",
        ssh: { host: "127.0.0.1", port: 2202, user: "root", sudo: false, hostKeyFile: ".sim/hosts/worker-b/ssh_host_ed25519_key.pub", privateKeyFile: ".sim/id_ed25519" },
        privateIp: "172.31.250.12",
        gpus: 8,
        roles: ["worker", "router", "runner"],
      },
    ]);
    expect(c.modelServer).toMatchObject({ image: "registry.sim:5000/reprobench/sglang-double:latest", gpus: "all", tp: 4, dp: 2 });
    expect(c.router.image).toBe(c.modelServer.image);
    expect(c.harbor).toMatchObject({ datasetRepo: "http://git.sim/terminal-bench-sim.git", expectedTaskCount: 3, jobsDir: "/var/lib/reprobench/jobs", indexUrl: "http://pypi.sim/simple/", pipFindLinks: null });
    // The local file needs no encrypted secrets at all: keys and worker-a's proxy URL come from .sim/, the
    // other proxy URLs have no credentials.
    expect(checkStackFile(join(REPO, "Pulumi.local.yaml"), { requireSecrets: true }).ok).toBe(true);
  });
});

describe("readStackFile", () => {
  it("keeps reprobench:* keys, strips the prefix, masks secure values (nested too), ignores other namespaces", () => {
    const raw = stackConfigFromYaml(
      [
        "encryptionsalt: v1:abc",
        "config:",
        "  aws:region: us-east-1",
        "  reprobench:environment: sim",
        "  reprobench:proxyUpstream:",
        "    secure: v1:AAAA",
        "  reprobench:sshPrivateKeys:",
        "    worker-a:",
        "      secure: v1:BBBB",
        "  reprobench:run:",
        "    taskFilter:",
        "      include: [a]",
      ].join("\n"),
    );
    expect(raw).toEqual({
      environment: "sim",
      proxyUpstream: "[secret]",
      sshPrivateKeys: { "worker-a": "[secret]" },
      run: { taskFilter: { include: ["a"] } },
    });
  });

  it("an empty file or one without config yields no keys (parseConfig then reports what is missing)", () => {
    expect(stackConfigFromYaml("")).toEqual({});
    expect(stackConfigFromYaml("encryptionsalt: x\n")).toEqual({});
  });

  it("names the file on unreadable or malformed input", () => {
    const dir = mkdtempSync(join(tmpdir(), "reprobench-config-"));
    const broken = join(dir, "Pulumi.broken.yaml");
    writeFileSync(broken, "config:\n  reprobench:hosts: [\n");
    expect(() => readStackFile(broken)).toThrow(/Pulumi\.broken\.yaml: invalid YAML/);
    expect(() => readStackFile(join(dir, "Pulumi.none.yaml"))).toThrow(/cannot read stack file .*Pulumi\.none\.yaml: ENOENT/);
    const list = join(dir, "Pulumi.list.yaml");
    writeFileSync(list, "- a\n- b\n");
    expect(() => readStackFile(list)).toThrow(/Pulumi\.list\.yaml: expected a YAML mapping/);
  });
});
