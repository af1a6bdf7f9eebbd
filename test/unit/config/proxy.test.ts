// hosts[].proxy and the secret proxyUrls: one URL source per host, http(s) URLs with host and port, NO_PROXY
// entries, credentials only in secrets (never quoted in a problem), and the loader reading proxy.urlFile as
// a secret and handing components the standard variables.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { beforeAll, describe, expect, it } from "vitest";
import { formatProblems, hostDaemonProxies, hostProxyEnv, parseConfig, plaintextSecretProblems, proxyUrlFor, readLocalFiles } from "../../../components/config";
import { loadConfig } from "../../../infra/config";
import { FAKE_PEM, minimalRealConfig, toPulumiConfigMap } from "./helpers";

const SECRET_URL = "http://reprobench:0123456789abcdef@proxy.sim:3128";
const PASSWORD = "0123456789abcdef";

function resolved<T>(output: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => output.apply((v) => resolve(v)));
}
function isSecret(output: pulumi.Output<unknown>): Promise<boolean> {
  return (output as unknown as { isSecret: Promise<boolean> }).isSecret;
}

/** The minimal config with edits to worker-a (hosts[0]) / worker-b (hosts[1]) and the top level. */
function withProxy(a: unknown, b: unknown, top: Record<string, unknown> = {}): Record<string, unknown> {
  const raw = minimalRealConfig();
  const hosts = raw.hosts as Record<string, unknown>[];
  if (a !== undefined) hosts[0].proxy = a;
  if (b !== undefined) hosts[1].proxy = b;
  return { ...raw, ...top };
}

/** Every host's SSH key from a file in dir (so no plaintext sshPrivateKeys). */
function withKeyFile(dir: string, raw: Record<string, unknown>): Record<string, unknown> {
  writeFileSync(join(dir, "id"), FAKE_PEM, { mode: 0o600 });
  const hosts = (raw.hosts as { ssh: Record<string, unknown> }[]).map((h) => ({ ...h, ssh: { ...h.ssh, privateKeyFile: "id" } }));
  const { sshPrivateKeys: _keys, proxyUpstream: _upstream, ...rest } = raw;
  return { ...rest, hosts, proxy: { enabled: false } };
}

function problems(raw: Record<string, unknown>, requireSecrets = true): string {
  const r = parseConfig(raw, { requireSecrets });
  return r.ok ? "" : formatProblems(r.problems);
}

beforeAll(() => {
  pulumi.runtime.setMocks({ newResource: (a) => ({ id: a.name, state: a.inputs }), call: (a) => a.inputs }, "reprobench", "test", false);
});

describe("hosts[].proxy", () => {
  it("is optional; a host with it defaults noProxy to 127.0.0.1 and localhost", () => {
    const r = parseConfig(withProxy({ url: "http://127.0.0.1:27890" }, undefined));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.config.hosts[0].proxy).toEqual({ url: "http://127.0.0.1:27890", noProxy: ["127.0.0.1", "localhost"] });
    expect(r.config.hosts[1].proxy).toBeUndefined();
    expect(r.config.proxyUrls).toEqual({});
  });

  it("takes the URL from urlFile, url, proxyUrls.<host>, proxyUrls.default", () => {
    const r = parseConfig(withProxy({ urlFile: ".sim/proxy-url" }, {}, { proxyUrls: { default: SECRET_URL } }));
    expect(r.ok, r.ok ? "" : formatProblems(r.problems)).toBe(true);
    if (!r.ok) return;
    expect(proxyUrlFor(r.config, { proxyUrlFiles: { "worker-a": "http://from-file:1" } }, "worker-a")).toBe("http://from-file:1");
    expect(proxyUrlFor(r.config, { proxyUrlFiles: {} }, "worker-b")).toBe(SECRET_URL);
    const own = parseConfig(withProxy({ url: "http://127.0.0.1:27890" }, {}, { proxyUrls: { "worker-b": "http://b:1", default: "http://d:2" } }));
    expect(own.ok).toBe(true);
    if (!own.ok) return;
    expect(proxyUrlFor(own.config, { proxyUrlFiles: {} }, "worker-a")).toBe("http://127.0.0.1:27890");
    expect(proxyUrlFor(own.config, { proxyUrlFiles: {} }, "worker-b")).toBe("http://b:1");
  });

  it("refuses credentials in the non-secret url, naming the host and never quoting them", () => {
    const text = problems(withProxy({ url: SECRET_URL }, undefined));
    expect(text).toMatch(/reprobench:hosts\[0\]\.proxy\.url: got a URL with credentials for host worker-a/);
    expect(text).toContain("proxyUrls.worker-a");
    expect(text).not.toContain(PASSWORD);
    expect(text).not.toContain("reprobench:0123");
  });

  it("refuses URLs that are not http(s)://host:port", () => {
    const cases: [string, RegExp][] = [
      ["socks5://proxy:1080", /scheme socks5; expected http or https/],
      ["http://proxy.sim", /no port/],
      ["http://proxy.sim:3128/path", /path, query or fragment/],
      ["proxy.sim:3128", /scheme proxy\.sim|not a URL/],
      ["not a url", /not a URL/],
    ];
    for (const [url, message] of cases) {
      const text = problems(withProxy({ url }, undefined));
      expect(text, url).toMatch(/reprobench:hosts\[0\]\.proxy\.url: got .* for host worker-a/);
      expect(text, url).toMatch(message);
    }
    expect(problems(withProxy({ url: "https://proxy.example:8443/" }, undefined))).toBe("");
  });

  it("checks every noProxy entry", () => {
    expect(problems(withProxy({ url: "http://p:1", noProxy: ["127.0.0.1", "localhost", ".internal.example", "*.corp", "10.0.0.0/8", "registry:5000", "*", "::1"] }, undefined))).toBe("");
    const text = problems(withProxy({ url: "http://p:1", noProxy: ["a b", "x,y"] }, undefined));
    expect(text).toContain("reprobench:hosts[0].proxy.noProxy[0]");
    expect(text).toContain("reprobench:hosts[0].proxy.noProxy[1]");
    expect(text).toContain("expected a NO_PROXY entry");
  });

  it("refuses two sources for one host", () => {
    expect(problems(withProxy({ url: "http://p:1", urlFile: "f" }, undefined))).toContain("reprobench:hosts[0].proxy.urlFile: got both proxy.url and proxy.urlFile for host worker-a");
    expect(problems(withProxy({ url: "http://p:1" }, undefined, { proxyUrls: { "worker-a": "[secret]" } }))).toContain(
      "reprobench:proxyUrls.worker-a: set, but host worker-a takes its proxy URL from hosts[0].proxy.url",
    );
  });

  it("reports a host with proxy but no URL as a missing secret (fine for preview)", () => {
    const raw = withProxy({}, undefined);
    expect(problems(raw)).toMatch(/reprobench:proxyUrls\.worker-a: missing; host worker-a has hosts\[0\]\.proxy but no proxy URL/);
    expect(problems(raw, false)).toBe("");
  });
});

describe("proxyUrls (secret)", () => {
  it("names only hosts with a proxy, or default", () => {
    expect(problems(withProxy(undefined, undefined, { proxyUrls: { nope: "[secret]" } }))).toContain("reprobench:proxyUrls.nope: names no host");
    expect(problems(withProxy(undefined, undefined, { proxyUrls: { "worker-b": "[secret]" } }))).toContain("reprobench:proxyUrls.worker-b: set, but host worker-b has no hosts[1].proxy");
  });

  it("checks a decrypted value without ever showing it", () => {
    const text = problems(withProxy({}, undefined, { proxyUrls: { "worker-a": "ftp://user:hunter2-secret@proxy:21" } }));
    expect(text).toMatch(/reprobench:proxyUrls\.worker-a: got a value that is not a proxy URL \(not shown\): scheme ftp/);
    expect(text).not.toContain("hunter2");
    expect(problems(withProxy({}, undefined, { proxyUrls: { "worker-a": SECRET_URL } }))).toBe("");
  });

  it("with credentials is refused when stored in plaintext", () => {
    const raw = withProxy({}, undefined, { proxyUrls: { "worker-a": SECRET_URL, default: "http://127.0.0.1:27890" } });
    const found = plaintextSecretProblems(raw, () => false);
    expect(found.map((p) => p.key)).toEqual(["reprobench:proxyUrls.worker-a"]);
    expect(formatProblems(found)).not.toContain(PASSWORD);
    expect(plaintextSecretProblems(raw, (k) => k === "proxyUrls")).toEqual([]);
  });
});

describe("loading proxy URLs", () => {
  const projectDir = () => mkdtempSync(join(tmpdir(), "reprobench-proxy-"));

  it("reads proxy.urlFile as a secret; bad or missing files are problems that never quote the contents", () => {
    const dir = projectDir();
    writeFileSync(join(dir, "proxy-url"), `${SECRET_URL}\n`, { mode: 0o600 });
    writeFileSync(join(dir, "bad-url"), "ftp://user:hunter2-secret@x:21\n");
    const parse = (file: string) => {
      const r = parseConfig(withProxy({ urlFile: file }, undefined));
      if (!r.ok) throw new Error(formatProblems(r.problems));
      return readLocalFiles(r.config, dir);
    };
    expect(parse("proxy-url").proxyUrlFiles).toEqual({ "worker-a": SECRET_URL });
    const bad = formatProblems(parse("bad-url").problems);
    expect(bad).toMatch(/reprobench:hosts\[0\]\.proxy\.urlFile: got "bad-url", which does not hold a proxy URL for host worker-a/);
    expect(bad).not.toContain("hunter2");
    expect(formatProblems(parse("missing").problems)).toMatch(/hosts\[0\]\.proxy\.urlFile: got "missing" .*ENOENT/);
  });

  it("loadConfig: per-host proxy variables and daemon.json proxies as secrets; the public config holds placeholders", async () => {
    const dir = projectDir();
    writeFileSync(join(dir, "proxy-url"), `${SECRET_URL}\n`, { mode: 0o600 });
    const raw = withKeyFile(dir, withProxy({ urlFile: "proxy-url", noProxy: ["127.0.0.1", "localhost", "10.0.0.0/8"] }, { url: "http://127.0.0.1:27890" }, {
      proxyUrls: { default: "http://unused:1" },
    }));
    const loaded = loadConfig({ all: toPulumiConfigMap(raw), projectDir: dir, requireSecrets: true, warn: () => undefined });
    const envA = hostProxyEnv(loaded, "worker-a")!;
    expect(await isSecret(envA)).toBe(true);
    expect(await resolved(envA)).toEqual({
      HTTP_PROXY: SECRET_URL, HTTPS_PROXY: SECRET_URL, http_proxy: SECRET_URL, https_proxy: SECRET_URL,
      NO_PROXY: "127.0.0.1,localhost,10.0.0.0/8", no_proxy: "127.0.0.1,localhost,10.0.0.0/8",
    });
    expect((await resolved(hostProxyEnv(loaded, "worker-b")!)).HTTPS_PROXY).toBe("http://127.0.0.1:27890");
    const daemon = hostDaemonProxies(loaded, "worker-a")!;
    expect(await isSecret(daemon)).toBe(true);
    expect(await resolved(daemon)).toEqual({ "http-proxy": SECRET_URL, "https-proxy": SECRET_URL, "no-proxy": "127.0.0.1,localhost,10.0.0.0/8" });
    expect(loaded.config.proxyUrls).toEqual({ default: "[secret]" });
    expect(JSON.stringify(loaded.config)).not.toContain(PASSWORD);
  });

  it("a host without proxy gets nothing", () => {
    const dir = projectDir();
    const raw = withKeyFile(dir, minimalRealConfig());
    const loaded = loadConfig({ all: toPulumiConfigMap(raw), projectDir: dir, requireSecrets: true, warn: () => undefined });
    expect(hostProxyEnv(loaded, "worker-a")).toBeUndefined();
    expect(hostDaemonProxies(loaded, "worker-b")).toBeUndefined();
  });
});

describe("pointAtSimInstance (test helper)", () => {
  it("maps the default instance's .sim/proxy-url to the instance's own stateDir, and leaves other proxies alone", async () => {
    const { pointAtSimInstance } = await import("../../helpers/project");
    const doc = {
      config: {
        "reprobench:hosts": [
          { name: "worker-a", ssh: { host: "127.0.0.1" }, proxy: { urlFile: ".sim/proxy-url", noProxy: ["localhost"] } },
          { name: "worker-b", ssh: { host: "127.0.0.1" }, proxy: { url: "http://127.0.0.1:27890" } },
        ] as unknown,
      },
    };
    const host = (name: string, port: number) => ({ name, ip: "172.31.259.1", sshHost: "127.0.0.1", sshPort: port, hostKeyFile: `k-${name}` });
    pointAtSimInstance(doc, { privateKeyFile: ".sim/instances/t9/id_ed25519", stateDir: ".sim/instances/t9", hosts: [host("worker-a", 1), host("worker-b", 2)] });
    const hosts = doc.config["reprobench:hosts"] as { proxy: Record<string, unknown> }[];
    expect(hosts[0].proxy).toEqual({ urlFile: ".sim/instances/t9/proxy-url", noProxy: ["localhost"] });
    expect(hosts[1].proxy).toEqual({ url: "http://127.0.0.1:27890" });
  });
});
