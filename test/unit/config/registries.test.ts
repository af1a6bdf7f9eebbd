// registries[] and the secret registryPasswords: one entry per registry, a password only for an account and
// from one source, never in plaintext; mirrors as plain URLs; the loader handing components the credentials
// as secrets (registry.sh's environment, the Docker provider's registry auth) and Docker Hub's limits.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { beforeAll, describe, expect, it } from "vitest";
import { formatProblems, hostRegistryEnv, parseConfig, plaintextSecretProblems, pullQuotaSettings, registryMirrors } from "../../../components/config";
import { loadConfig } from "../../../infra/config";
import { registryMirrorEnv } from "../../../components/registry-access";
import { FAKE_PEM, minimalRealConfig, toPulumiConfigMap } from "./helpers";

const TOKEN = "dckr_pat_0123456789abcdefSECRET";

function resolved<T>(output: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => output.apply((v) => resolve(v)));
}
function isSecret(output: pulumi.Output<unknown>): Promise<boolean> {
  return (output as unknown as { isSecret: Promise<boolean> }).isSecret;
}
function problems(top: Record<string, unknown>, requireSecrets = true): string {
  const r = parseConfig({ ...minimalRealConfig(), ...top }, { requireSecrets });
  return r.ok ? "" : formatProblems(r.problems);
}

beforeAll(() => {
  pulumi.runtime.setMocks({ newResource: (a) => ({ id: a.name, state: a.inputs }), call: (a) => a.inputs }, "reprobench", "test", false);
});

describe("registries[] rules", () => {
  it("accepts an account with a secret password, a mirror, and Docker Hub's name", () => {
    expect(problems({ registries: [{ host: "docker.io", username: "bench", mirror: "http://mirror.internal:5000" }, { host: "registry.sim:5000" }], registryPasswords: { "docker.io": "[secret]" } })).toBe("");
  });

  it("names each problem: duplicate, password without account, two sources, unknown registry, bad mirror", () => {
    const text = problems({
      registries: [
        { host: "ghcr.io", passwordFile: "pw" },
        { host: "ghcr.io" },
        { host: "quay.io", username: "u", passwordFile: "pw" },
        { host: "docker.io", mirror: "ftp://mirror:21" },
        { host: "r.example", mirror: "http://user:hunter2@mirror:5000" },
        { host: "s.example", mirror: "http://mirror:5000/v2/" },
      ],
      registryPasswords: { "quay.io": "[secret]", "nowhere.io": "[secret]" },
    });
    expect(text).toContain("reprobench:registries[1].host: got ghcr.io again (also registries[0]); expected one entry per registry");
    expect(text).toContain("reprobench:registries[0].username: missing; registries[0] (ghcr.io) has a password (passwordFile) but no account");
    expect(text).toContain("reprobench:registryPasswords.quay.io: set, but registries[2] takes its password from passwordFile; expected one source per registry");
    expect(text).toContain("reprobench:registryPasswords.nowhere.io: names no registry; expected one of registries[].host (ghcr.io, ghcr.io, quay.io, docker.io, r.example, s.example)");
    expect(text).toContain("reprobench:registries[3].mirror: got scheme ftp; expected http or https");
    expect(text).toContain("reprobench:registries[4].mirror: got a URL with credentials (not shown)");
    expect(text).not.toContain("hunter2");
    expect(text).toContain('reprobench:registries[5].mirror: got "http://mirror:5000/v2/"; expected http(s)://HOST[:PORT] with nothing after it');
  });

  it("an account without a password is a missing secret for up, not for preview", () => {
    const raw = { registries: [{ host: "docker.io", username: "bench" }] };
    expect(problems(raw)).toContain("reprobench:registryPasswords.docker.io: missing; registries[0] (docker.io) pulls as bench but has no password: pulumi config set --secret --path 'reprobench:registryPasswords[\"docker.io\"]' TOKEN (or registries[0].passwordFile)");
    expect(problems(raw, false)).toBe("");
  });

  it("a password stored in plaintext is refused without being shown", () => {
    const found = plaintextSecretProblems({ registryPasswords: { "docker.io": TOKEN } }, () => false);
    expect(found.map((p) => `${p.key}: ${p.message}`)).toEqual([
      "reprobench:registryPasswords.docker.io: stored in plaintext (not shown); expected an encrypted value: pulumi config set --secret --path 'reprobench:registryPasswords[\"docker.io\"]' TOKEN",
    ]);
    expect(plaintextSecretProblems({ registryPasswords: { "docker.io": TOKEN } }, (k) => k === "registryPasswords")).toEqual([]);
  });
});

describe("the loader", () => {
  function load(top: Record<string, unknown>, files: Record<string, string> = {}) {
    const dir = mkdtempSync(join(tmpdir(), "rb-registries-"));
    writeFileSync(join(dir, "id"), FAKE_PEM, { mode: 0o600 });
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text, { mode: 0o600 });
    const raw = minimalRealConfig();
    const hosts = (raw.hosts as { ssh: Record<string, unknown> }[]).map((h) => ({ ...h, ssh: { ...h.ssh, privateKeyFile: "id" } }));
    const { sshPrivateKeys: _k, proxyUpstream: _u, ...rest } = raw;
    return loadConfig({ all: toPulumiConfigMap({ ...rest, hosts, proxy: { enabled: false }, ...top }), projectDir: dir, requireSecrets: true, warn: () => undefined });
  }

  it("reads passwordFile as a secret and hands registry.sh one auth file's worth, Docker Hub under both names", async () => {
    const loaded = load({ registries: [{ host: "docker.io", username: "bench", passwordFile: "hub-token" }, { host: "registry.sim:5000", mirror: "http://mirror.sim:5000" }] }, { "hub-token": `${TOKEN}\n` });
    const env = hostRegistryEnv(loaded)!;
    expect(await isSecret(env)).toBe(true);
    const value = await resolved(env);
    const auth = Buffer.from(`bench:${TOKEN}`).toString("base64");
    expect(JSON.parse(value.REGISTRY_AUTH_JSON)).toEqual({ auths: { "docker.io": { auth }, "https://index.docker.io/v1/": { auth } } });
    // Only the accounts are secret: a secret value is masked wherever it appears in a step's output, and
    // registry names are in every line of it. The mirrors go to the pre-pull's script as plain inputs.
    expect(Object.keys(value)).toEqual(["REGISTRY_AUTH_JSON"]);
    expect(registryMirrors(loaded.config)).toEqual([{ registry: "registry.sim:5000", url: "http://mirror.sim:5000" }]);
    const mirrorEnv = registryMirrorEnv(registryMirrors(loaded.config));
    expect(mirrorEnv.MIRRORED_REGISTRIES).toBe("registry.sim:5000");
    expect(mirrorEnv.REGISTRIES_CONF).toContain('location = "registry.sim:5000"\n[[registry.mirror]]\nlocation = "mirror.sim:5000"\ninsecure = true');
    expect(JSON.stringify(loaded.config)).not.toContain(TOKEN);
    expect(await isSecret(loaded.secrets.registryLogins!)).toBe(true);
  });

  it("a stack without registry accounts gives no secret registry environment (its steps keep the inputs they had)", () => {
    expect(hostRegistryEnv(load({}))).toBeUndefined();
    expect(hostRegistryEnv(load({ registries: [{ host: "docker.io", mirror: "http://m:5000" }] }))).toBeUndefined();
  });

  it("an unreadable or multi-line passwordFile names the key, never the contents", () => {
    expect(() => load({ registries: [{ host: "ghcr.io", username: "u", passwordFile: "missing" }] })).toThrow(/reprobench:registries\[0\]\.passwordFile: got "missing" .*ENOENT/);
    let message = "";
    try {
      load({ registries: [{ host: "ghcr.io", username: "u", passwordFile: "two" }] }, { two: `${TOKEN}\nsecond\n` });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('reprobench:registries[0].passwordFile: got "two", which does not hold one line (contents not shown)');
    expect(message).not.toContain(TOKEN);
  });

  it("pull limits: Docker Hub's documented ones by default, an account's when it has one, a stated one elsewhere", () => {
    const q = pullQuotaSettings(load({ registries: [{ host: "docker.io", username: "bench", passwordFile: "t" }, { host: "ghcr.io", pullLimit: { pulls: 50, windowSeconds: 60 } }, { host: "quay.io", pullLimit: null }] }, { t: TOKEN }).config);
    expect(q.limits).toEqual({ "docker.io": { pulls: 100, windowSeconds: 3600 }, "ghcr.io": { pulls: 50, windowSeconds: 60 }, "quay.io": undefined });
    expect(q.credentialed).toEqual(["docker.io"]);
    expect(pullQuotaSettings(load({}).config).limits["docker.io"]).toEqual({ pulls: 10, windowSeconds: 3600 });
  });
});
