// loadConfig: the Pulumi program's entry point. Reads the flat config map, key files relative to the
// project dir, and returns secrets as secret Outputs; throws one Error before anything is registered.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { hostProxyEnv, hostRegistryEnv, readStackFile, sshConnection } from "../../../components/config";
import { loadConfig, rawFromPulumiConfig } from "../../../infra/config";
import { FAKE_PEM, HOST_KEY_A, HOST_KEY_B, REPO, minimalRealConfig, toPulumiConfigMap } from "./helpers";

function resolved<T>(output: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => output.apply((v) => resolve(v)));
}
function isSecret(output: pulumi.Output<unknown>): Promise<boolean> {
  return (output as unknown as { isSecret: Promise<boolean> }).isSecret;
}

/** A project dir with the .sim/ files the local stack points at. */
/** What `sim up` writes to .sim/proxy-url: the egress proxy with this instance's credentials. */
const SIM_PROXY_URL = "http://reprobench:0123456789abcdef01234567@proxy.sim:3128";

function simProjectDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "reprobench-load-"));
  for (const [name, key] of [["worker-a", HOST_KEY_A], ["worker-b", HOST_KEY_B]]) {
    mkdirSync(join(dir, ".sim/hosts", name), { recursive: true });
    writeFileSync(join(dir, ".sim/hosts", name, "ssh_host_ed25519_key.pub"), `${key} root@${name}\n`);
  }
  writeFileSync(join(dir, ".sim/id_ed25519"), FAKE_PEM, { mode: 0o600 });
  writeFileSync(join(dir, ".sim/proxy-url"), `${SIM_PROXY_URL}\n`, { mode: 0o600 });
  writeFileSync(join(dir, ".sim/registry-password"), `${SIM_REGISTRY_PASSWORD}\n`, { mode: 0o600 });
  return dir;
}

const quiet = { warn: () => undefined };
const SIM_REGISTRY_PASSWORD = "fedcba9876543210registry";

beforeAll(() => {
  pulumi.runtime.setMocks({ newResource: (a) => ({ id: a.name, state: a.inputs }), call: (a) => a.inputs }, "reprobench", "test", false);
});
afterEach(() => pulumi.runtime.setAllConfig({}));

describe("rawFromPulumiConfig", () => {
  it("keeps reprobench keys, decodes JSON objects and lists, leaves strings alone", () => {
    expect(
      rawFromPulumiConfig({
        "reprobench:environment": "sim",
        "reprobench:hosts": '[{"name":"a"}]',
        "reprobench:proxyUpstream": "http://127.0.0.1:27890",
        "reprobench:modelServer": "{not json",
        "aws:region": "x",
      }),
    ).toEqual({ environment: "sim", hosts: [{ name: "a" }], proxyUpstream: "http://127.0.0.1:27890", modelServer: "{not json" });
  });
});

describe("loadConfig", () => {
  it("loads the local stack: host keys from .sim/*.pub, the private key from .sim/id_ed25519 as a secret", async () => {
    const dir = simProjectDir();
    const all = toPulumiConfigMap(readStackFile(join(REPO, "Pulumi.local.yaml")));
    const loaded = loadConfig({ all, projectDir: dir, requireSecrets: true, ...quiet });
    expect(loaded.hostKeys).toEqual({ "worker-a": `${HOST_KEY_A} root@worker-a`, "worker-b": `${HOST_KEY_B} root@worker-b` });
    const key = loaded.secrets.sshPrivateKey["worker-b"];
    expect(await resolved(key)).toBe(FAKE_PEM);
    expect(await isSecret(key)).toBe(true);
    expect(await isSecret(loaded.secrets.proxyUpstream!)).toBe(true);
    const conn = sshConnection(loaded, "worker-a");
    expect({ ...conn, privateKey: undefined }).toEqual({ name: "worker-a", host: "127.0.0.1", port: 2201, user: "bench", sudo: true, privateKey: undefined, hostKey: `${HOST_KEY_A} root@worker-a` });
    // worker-a's proxy URL comes from .sim/proxy-url as a secret; worker-b's is the credential-free loopback one.
    const proxyA = hostProxyEnv(loaded, "worker-a")!;
    expect(await isSecret(proxyA)).toBe(true);
    expect((await resolved(proxyA)).HTTPS_PROXY).toBe(SIM_PROXY_URL);
    expect((await resolved(hostProxyEnv(loaded, "worker-b")!)).https_proxy).toBe("http://127.0.0.1:27890");
    // The config handed to components carries no plain secret.
    expect(loaded.config.proxyUpstream).toBe("[secret]");
    expect(JSON.stringify(loaded.config)).not.toContain("0123456789abcdef");
    expect(JSON.stringify(loaded.config)).not.toContain("BEGIN OPENSSH");
    // The hosts pull from the sim registry as its account, the password from .sim/registry-password as a secret.
    const registry = hostRegistryEnv(loaded)!;
    expect(await isSecret(registry)).toBe(true);
    const auth = JSON.parse((await resolved(registry)).REGISTRY_AUTH_JSON) as { auths: Record<string, { auth: string }> };
    expect(Buffer.from(auth.auths["registry.sim:5000"].auth, "base64").toString()).toBe(`reprobench-pull:${SIM_REGISTRY_PASSWORD}`);
    expect(JSON.stringify(loaded.config)).not.toContain(SIM_REGISTRY_PASSWORD);
  });

  it("reads all config through pulumi.runtime when no map is given", async () => {
    const raw = { ...minimalRealConfig(), sshPrivateKeys: { default: FAKE_PEM, "worker-b": FAKE_PEM.replace("VEVT", "QUJD") }, proxyUpstream: "http://proxy.example:3128" };
    pulumi.runtime.setAllConfig(toPulumiConfigMap(raw), ["reprobench:sshPrivateKeys", "reprobench:proxyUpstream"]);
    const loaded = loadConfig({ projectDir: REPO, requireSecrets: true, ...quiet });
    expect(await resolved(loaded.secrets.sshPrivateKey["worker-a"])).toBe(FAKE_PEM); // the default
    expect(await resolved(loaded.secrets.sshPrivateKey["worker-b"])).toContain("QUJD"); // the host's own key wins
    expect(await resolved(loaded.secrets.proxyUpstream!)).toBe("http://proxy.example:3128");
  });

  it("refuses secrets Pulumi holds in plaintext, without printing them", () => {
    const raw = { ...minimalRealConfig(), sshPrivateKeys: { default: FAKE_PEM }, proxyUpstream: "http://alice:hunter2@proxy.example:3128" };
    pulumi.runtime.setAllConfig(toPulumiConfigMap(raw), []);
    expect(() => loadConfig({ projectDir: REPO, requireSecrets: true, ...quiet })).toThrow(/sshPrivateKeys\.default: stored in plaintext[\s\S]*proxyUpstream: stored in plaintext/);
    try {
      loadConfig({ projectDir: REPO, requireSecrets: true, ...quiet });
    } catch (err) {
      expect((err as Error).message).not.toMatch(/hunter2|VEVTVC1TRUNSRVQ/);
    }
  });

  it("names unreadable or malformed key files", () => {
    const dir = simProjectDir();
    writeFileSync(join(dir, ".sim/hosts/worker-b/ssh_host_ed25519_key.pub"), "not a key\n");
    writeFileSync(join(dir, ".sim/id_ed25519"), "garbage");
    const all = toPulumiConfigMap(readStackFile(join(REPO, "Pulumi.local.yaml")));
    const run = () => loadConfig({ all, projectDir: dir, requireSecrets: true, ...quiet });
    expect(run).toThrow(/reprobench:hosts\[1\]\.ssh\.hostKeyFile: got ".sim\/hosts\/worker-b\/ssh_host_ed25519_key.pub", whose contents are not a public key line/);
    expect(run).toThrow(/reprobench:hosts\[0\]\.ssh\.privateKeyFile: got ".sim\/id_ed25519", which does not hold a PEM private key/);
    expect(() => loadConfig({ all, projectDir: join(dir, "nowhere"), requireSecrets: true, ...quiet })).toThrow(/reprobench:hosts\[0\]\.ssh\.hostKeyFile: got ".*" \(.*nowhere\/\.sim\/hosts\/worker-a\/ssh_host_ed25519_key\.pub: ENOENT\); expected a readable file/);
  });

  it("preview without secrets: warns and continues; up: fails naming each missing secret", () => {
    const { sshPrivateKeys: _k, proxyUpstream: _p, ...raw } = minimalRealConfig();
    const all = toPulumiConfigMap(raw);
    const notes: string[] = [];
    const loaded = loadConfig({ all, projectDir: REPO, requireSecrets: false, warn: (m) => notes.push(m) });
    expect(loaded.config.hosts).toHaveLength(2);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toContain("reprobench:sshPrivateKeys.worker-a: missing");
    expect(() => loadConfig({ all, projectDir: REPO, requireSecrets: true, ...quiet })).toThrow(/invalid stack configuration \(3 problems\)/);
  });

  it("defaults requireSecrets to Pulumi's preview flag", () => {
    const { sshPrivateKeys: _k, proxyUpstream: _p, ...raw } = minimalRealConfig();
    const all = toPulumiConfigMap(raw);
    pulumi.runtime.setMocks({ newResource: (a) => ({ id: a.name, state: a.inputs }), call: (a) => a.inputs }, "reprobench", "test", true);
    expect(() => loadConfig({ all, projectDir: REPO, ...quiet })).not.toThrow();
    pulumi.runtime.setMocks({ newResource: (a) => ({ id: a.name, state: a.inputs }), call: (a) => a.inputs }, "reprobench", "test", false);
    expect(() => loadConfig({ all, projectDir: REPO, ...quiet })).toThrow(/sshPrivateKeys\.worker-a: missing/);
  });
});
