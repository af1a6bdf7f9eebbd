// hosts[].ssh.sudo: a login other than root must say it uses sudo (and root must not), and what the
// program hands the components carries `sudo` only when it is set, so root connections stay the value
// they were (no diff in the state of stacks that log in as root).
import * as pulumi from "@pulumi/pulumi";
import { beforeAll, describe, expect, it } from "vitest";
import { type LoadedConfig, formatProblems, parseConfig, readStackFile, sshConnection } from "../../../components/config";
import { REPO, minimalRealConfig } from "./helpers";

type RawHost = { name: string; ssh: Record<string, unknown> };

function withLogin(index: number, ssh: Record<string, unknown>): Record<string, unknown> {
  const raw = minimalRealConfig();
  const hosts = raw.hosts as RawHost[];
  hosts[index] = { ...hosts[index], ssh: { ...hosts[index].ssh, ...ssh } };
  return raw;
}

function problems(raw: Record<string, unknown>) {
  const r = parseConfig(raw);
  return r.ok ? [] : r.problems;
}

describe("hosts[].ssh.sudo", () => {
  it("defaults to false for root, the default login", () => {
    const r = parseConfig(minimalRealConfig());
    if (!r.ok) throw new Error(formatProblems(r.problems));
    expect(r.config.hosts.map((h) => [h.ssh.user, h.ssh.sudo])).toEqual([["root", false], ["root", false]]);
  });

  it("a login other than root without sudo is refused, naming the key to set and why", () => {
    expect(problems(withLogin(0, { user: "bench" }))).toEqual([
      {
        key: "reprobench:hosts[0].ssh.sudo",
        message: expect.stringMatching(/^missing; the login "bench" is not root, and reprobench needs root's rights on worker-a .*set hosts\[0\]\.ssh\.sudo: true .*NOPASSWD sudo .*docker group.*or log in as root$/),
      },
    ]);
    // Saying false is the same refusal.
    expect(problems(withLogin(1, { user: "ops", sudo: false })).map((p) => p.key)).toEqual(["reprobench:hosts[1].ssh.sudo"]);
  });

  it("a login other than root with sudo: true is accepted", () => {
    const r = parseConfig(withLogin(0, { user: "bench", sudo: true }));
    if (!r.ok) throw new Error(formatProblems(r.problems));
    expect(r.config.hosts[0].ssh).toMatchObject({ user: "bench", sudo: true });
  });

  it("root with sudo: true is refused (root needs none)", () => {
    expect(problems(withLogin(1, { sudo: true }))).toEqual([
      { key: "reprobench:hosts[1].ssh.sudo", message: 'got true for the login "root"; expected false or unset (root needs no sudo)' },
    ]);
    expect(problems(withLogin(1, { user: "root", sudo: true })).map((p) => p.key)).toEqual(["reprobench:hosts[1].ssh.sudo"]);
  });

  it("is a boolean (a quoted 'yes' is a type error naming the key)", () => {
    expect(problems(withLogin(0, { user: "bench", sudo: "yes" }))).toContainEqual({ key: "reprobench:hosts[0].ssh.sudo", message: 'got "yes"; expected true or false' });
  });
});

describe("sshConnection: what the components get", () => {
  beforeAll(() => {
    pulumi.runtime.setMocks({ newResource: (a) => ({ id: a.name, state: a.inputs }), call: (a) => a.inputs }, "reprobench", "test", false);
  });

  function loaded(raw: Record<string, unknown>): LoadedConfig {
    const r = parseConfig(raw);
    if (!r.ok) throw new Error(formatProblems(r.problems));
    return { config: r.config, hostKeys: { "worker-a": "ssh-ed25519 AAAA", "worker-b": "ssh-ed25519 BBBB" }, secrets: { sshPrivateKey: { "worker-a": pulumi.secret("k"), "worker-b": pulumi.secret("k") }, proxyUpstream: undefined, hfToken: undefined } };
  }

  it("carries sudo: true for a sudo login, and no sudo key at all for root", () => {
    const l = loaded(withLogin(0, { user: "bench", sudo: true }));
    expect(sshConnection(l, "worker-a")).toMatchObject({ user: "bench", sudo: true });
    const root = sshConnection(l, "worker-b");
    expect(root.user).toBe("root");
    expect(Object.keys(root)).not.toContain("sudo");
  });
});

describe("the local stack", () => {
  it("logs in to worker-a as the unprivileged sim user bench with sudo, and to worker-b as root", () => {
    const r = parseConfig(readStackFile(`${REPO}/Pulumi.local.yaml`), { requireSecrets: false });
    if (!r.ok) throw new Error(formatProblems(r.problems));
    expect(r.config.hosts.map((h) => [h.name, h.ssh.user, h.ssh.sudo])).toEqual([["worker-a", "bench", true], ["worker-b", "root", false]]);
  });
});
