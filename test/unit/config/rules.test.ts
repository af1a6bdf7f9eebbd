// Cross-field rules, per-worker overrides, message format and secret hygiene.
import { describe, expect, it } from "vitest";
import { checkPublicKeyLine, formatProblems, hostsWithRole, parseCidr, parseConfig, plaintextSecretProblems, sglangCommand, workerSettings, type ConfigProblem } from "../../../components/config";
import { FAKE_PEM, HOST_KEY_A, minimalRealConfig } from "./helpers";

function problemsOf(raw: Record<string, unknown>, requireSecrets = true): ConfigProblem[] {
  const r = parseConfig(raw, { requireSecrets });
  return r.ok ? [] : r.problems;
}

function withOverrides(overrides: Record<string, unknown>) {
  return { ...minimalRealConfig(), modelServer: { overrides } };
}

describe("per-worker overrides", () => {
  it("one worker's maxRunningRequests differs; the other keeps the base", () => {
    const r = parseConfig(withOverrides({ "worker-b": { maxRunningRequests: 4, env: { HOME: "/root" } } }));
    if (!r.ok) throw new Error(formatProblems(r.problems));
    const a = workerSettings(r.config, "worker-a");
    const b = workerSettings(r.config, "worker-b");
    expect([a.maxRunningRequests, b.maxRunningRequests]).toEqual([5, 4]);
    expect(b.env).toEqual({ HOME: "/root" }); // shallow: the override's map replaces the base map
    expect(b.url).toBe("http://10.0.0.12:30001");
    expect(sglangCommand(b)).toContain("4");
    expect(sglangCommand(b).slice(sglangCommand(b).indexOf("--max-running-requests"))[1]).toBe("4");
  });

  it("workerSettings refuses unknown hosts and hosts without the worker role", () => {
    const r = parseConfig(minimalRealConfig());
    if (!r.ok) throw new Error("base config must parse");
    expect(() => workerSettings(r.config, "worker-z")).toThrow(/unknown host 'worker-z'/);
    const noWorker = parseConfig({
      ...minimalRealConfig(),
      hosts: [...(minimalRealConfig().hosts as object[]), { name: "runner-c", ssh: { host: "203.0.113.13", hostKey: HOST_KEY_A }, privateIp: "10.0.0.13", roles: ["worker"], gpus: 8 }],
    });
    if (!noWorker.ok) throw new Error(formatProblems(noWorker.problems));
    expect(hostsWithRole(noWorker.config, "worker").map((h) => h.name)).toEqual(["worker-a", "worker-b", "runner-c"]);
    expect(hostsWithRole(noWorker.config, "runner").map((h) => h.name)).toEqual(["worker-b"]);
  });

  it("an override naming a host without the worker role is refused", () => {
    const raw = minimalRealConfig();
    (raw.hosts as { roles: string[] }[])[1].roles = ["router", "runner"];
    const problems = problemsOf({ ...raw, modelServer: { overrides: { "worker-b": { tp: 2 } } } });
    expect(problems).toContainEqual({ key: "reprobench:modelServer.overrides.worker-b", message: expect.stringContaining("a host without the worker role") });
  });

  it("tp×dp is checked against each host's GPUs with its override applied", () => {
    const ok = problemsOf(withOverrides({ "worker-a": { tp: 2, dp: 4 } }));
    expect(ok).toEqual([]);
    const tooMany = problemsOf(withOverrides({ "worker-a": { tp: 8 } }));
    expect(tooMany.map((p) => p.key)).toEqual(["reprobench:hosts[0].gpus"]);
  });
});

describe("environments", () => {
  it("sim accepts hosts with 0 GPUs when modelServer.gpus is none", () => {
    const raw = minimalRealConfig();
    for (const h of raw.hosts as { gpus: number }[]) h.gpus = 0;
    expect(problemsOf({ ...raw, environment: "sim", modelServer: { gpus: "none" } })).toEqual([]);
    expect(problemsOf({ ...raw, environment: "real", modelServer: { gpus: "none" } }).map((p) => p.key)).toContain("reprobench:hosts[0].gpus");
  });

  it("sim with GPUs asks the hosts for tp×dp of them, as real hosts", () => {
    const raw = minimalRealConfig();
    expect(problemsOf({ ...raw, environment: "sim" })).toEqual([]);
    for (const h of raw.hosts as { gpus: number }[]) h.gpus = 4;
    const few = problemsOf({ ...raw, environment: "sim", modelServer: { tp: 4, dp: 2 } });
    expect(few.map((p) => p.key)).toContain("reprobench:hosts[0].gpus");
    expect(few.map((p) => p.message).join("\n")).toMatch(/got 4; expected at least tp×dp = 4×2 = 8 GPUs on worker worker-a \(environment sim\)/);
  });
});

describe("problem reporting", () => {
  it("reports every independent schema problem at once, one per key", () => {
    const raw = minimalRealConfig();
    const problems = problemsOf({ ...raw, modelServer: { tp: "four", port: 0 }, router: { policy: "fastest" }, harbor: { wheelSha256: "x" } });
    expect(problems.map((p) => p.key).sort()).toEqual(["reprobench:harbor.wheelSha256", "reprobench:modelServer.port", "reprobench:modelServer.tp", "reprobench:router.policy"]);
  });

  it("reports several cross-field problems at once", () => {
    const raw = minimalRealConfig();
    const hosts = raw.hosts as { name: string; privateIp: string }[];
    hosts[1].name = "worker-a";
    hosts[1].privateIp = "10.0.0.11";
    const problems = problemsOf({ ...raw, run: { nConcurrentAgents: 40 } });
    expect(problems.map((p) => p.key)).toEqual(expect.arrayContaining(["reprobench:hosts[1].name", "reprobench:hosts[1].privateIp", "reprobench:run.nConcurrentAgents"]));
  });

  it("a non-object config is one clear problem", () => {
    expect(problemsOf([] as unknown as Record<string, unknown>)).toEqual([{ key: "reprobench", message: "got []; expected a mapping of config keys" }]);
  });

  it("long values are shortened", () => {
    const [p] = problemsOf({ ...minimalRealConfig(), environment: "x".repeat(500) });
    expect(p.message.length).toBeLessThan(200);
  });

  it("missing secrets are optional only when asked", () => {
    const { sshPrivateKeys: _k, proxyUpstream: _p, ...raw } = minimalRealConfig();
    expect(problemsOf(raw, false)).toEqual([]);
    expect(problemsOf(raw, true).map((p) => p.key)).toEqual(["reprobench:sshPrivateKeys.worker-a", "reprobench:sshPrivateKeys.worker-b", "reprobench:proxyUpstream"]);
    expect(problemsOf({ ...raw, proxy: { enabled: false }, sshPrivateKeys: { "worker-a": "[secret]", "worker-b": "[secret]" } }, true)).toEqual([]);
  });
});

describe("secrets never reach the output", () => {
  const SECRET_BITS = ["VEVTVC1TRUNSRVQ", "hunter2", "424242"];

  it("bad secret values are reported without their value", () => {
    const cases: Record<string, unknown>[] = [
      { sshPrivateKeys: { default: FAKE_PEM.replace("-----END OPENSSH PRIVATE KEY-----\n", "") }, proxyUpstream: "http://alice:hunter2@" },
      { sshPrivateKeys: { default: 424242 }, proxyUpstream: "http://alice:hunter2@proxy.example:3128/path" },
      { sshPrivateKeys: FAKE_PEM, proxyUpstream: { url: "socks9://alice:hunter2@x" } },
      { sshPrivateKeys: { "not-a-host": FAKE_PEM }, proxyUpstream: 424242 },
    ];
    for (const secrets of cases) {
      const problems = problemsOf({ ...minimalRealConfig(), ...secrets });
      expect(problems.length).toBeGreaterThan(0);
      const text = formatProblems(problems) + JSON.stringify(problems);
      for (const bit of SECRET_BITS) expect(text).not.toContain(bit);
    }
  });

  it("plaintext secrets are flagged without their value; placeholders and encrypted keys pass", () => {
    const raw = { sshPrivateKeys: { default: FAKE_PEM }, proxyUpstream: "http://alice:hunter2@proxy.example:3128" };
    const flagged = plaintextSecretProblems(raw, () => false);
    expect(flagged.map((p) => p.key)).toEqual(["reprobench:sshPrivateKeys.default", "reprobench:proxyUpstream"]);
    for (const bit of SECRET_BITS) expect(formatProblems(flagged)).not.toContain(bit);
    expect(plaintextSecretProblems(raw, () => true)).toEqual([]);
    expect(plaintextSecretProblems({ sshPrivateKeys: { default: "[secret]" }, proxyUpstream: "http://127.0.0.1:27890" }, () => false)).toEqual([]);
  });

  it("formatProblems masks key material and URL credentials even in hand-made messages", () => {
    const text = formatProblems([
      { key: "reprobench:x", message: `got ${FAKE_PEM}` },
      { key: "reprobench:y", message: "got http://alice:hunter2@proxy:3128" },
    ]);
    for (const bit of SECRET_BITS) expect(text).not.toContain(bit);
    expect(text.split("\n")[0]).toBe("reprobench:x: got [private key not shown]");
    expect(text).toContain("reprobench:y: got http://***@proxy:3128");
  });
});

describe("value checks", () => {
  it("public key lines", () => {
    expect(checkPublicKeyLine(HOST_KEY_A)).toBeNull();
    expect(checkPublicKeyLine(`${HOST_KEY_A} root@host`)).toBeNull();
    expect(checkPublicKeyLine("ssh-ed25519")).toMatch(/<type> <base64>/);
    expect(checkPublicKeyLine(HOST_KEY_A.replace("ssh-ed25519", "ssh-dss"))).toMatch(/unknown key type/);
    expect(checkPublicKeyLine("ssh-ed25519 AAAAB3NzaC1yc2EAAAADAQAB")).toMatch(/does not encode a ssh-ed25519 key/);
  });

  it("CIDRs", () => {
    expect(parseCidr("172.18.0.0/15")).toEqual({ network: (172 * 256 + 18) * 65536, prefix: 15 });
    expect(parseCidr("172.19.0.0/15")).toBeNull(); // host bits set
    expect(parseCidr("172.18.0.0/33")).toBeNull();
    expect(parseCidr("172.18.0/16")).toBeNull();
    expect(parseCidr("0.0.0.0/0")).toEqual({ network: 0, prefix: 0 });
  });
});
