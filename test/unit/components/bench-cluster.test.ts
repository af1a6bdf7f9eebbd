// BenchCluster's pure parts: how its secrets meet the settings' validation (a plain string is validated in
// place, an Output — a Python program's secret — stands behind the placeholder), and the host handle's
// options (the host's Docker engine reaches the component's children; a caller's own provider wins).
import * as docker from "@pulumi/docker";
import * as random from "@pulumi/random";
import * as pulumi from "@pulumi/pulumi";
import { beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { type BenchClusterSettings, clusterConfigOf, settingsWithSecrets } from "../../../components/bench-cluster";
import { stackConfigFromYaml } from "../../../components/config/stack-file";
import { SECRET_PLACEHOLDER } from "../../../components/config";
import { type ClusterHost, loginUserOf, onHost } from "../../../components/host";

const REPO = path.resolve(__dirname, "../../..");
const valueOf = <T>(o: pulumi.Output<T>) => new Promise<T>((resolve) => o.apply(resolve));
const PEM = "-----BEGIN OPENSSH PRIVATE KEY-----\nk\n-----END OPENSSH PRIVATE KEY-----\n";

beforeAll(() => {
  pulumi.runtime.setMocks({ newResource: (a) => ({ id: `${a.name}-id`, state: a.inputs }), call: (a) => a.inputs }, "reprobench", "unit", true);
});

describe("settingsWithSecrets", () => {
  it("puts a plain secret in place (validated as a stack file's), an Output behind the placeholder, and leaves absent keys out", () => {
    const raw = settingsWithSecrets(
      { hosts: [], run: { enabled: false } },
      { sshPrivateKeys: { default: "-----BEGIN OPENSSH PRIVATE KEY-----\nk\n-----END OPENSSH PRIVATE KEY-----\n", "worker-a": pulumi.secret("x") }, proxyUpstream: pulumi.secret("http://u:p@proxy:3128") },
    );
    expect(raw.sshPrivateKeys).toEqual({ default: "-----BEGIN OPENSSH PRIVATE KEY-----\nk\n-----END OPENSSH PRIVATE KEY-----\n", "worker-a": SECRET_PLACEHOLDER });
    expect(raw.proxyUpstream).toBe(SECRET_PLACEHOLDER);
    expect("hfToken" in raw).toBe(false);
    expect("registryPasswords" in raw).toBe(false);
    expect(raw.run).toEqual({ enabled: false });
  });

  it("passes a secret of the wrong shape through as given, so that validation names it (a key as one string, not a map; a number)", () => {
    const raw = settingsWithSecrets({}, { sshPrivateKeys: "-----BEGIN OPENSSH PRIVATE KEY-----" as unknown as Record<string, string>, proxyUpstream: 3128 as unknown as string });
    expect(raw.sshPrivateKeys).toBe("-----BEGIN OPENSSH PRIVATE KEY-----");
    expect(raw.proxyUpstream).toBe(3128);
  });

  it("never changes the settings it is given", () => {
    const settings = { hosts: [], proxyUpstream: "http://old:1" };
    settingsWithSecrets(settings, { proxyUpstream: pulumi.secret("http://new:1") });
    expect(settings).toEqual({ hosts: [], proxyUpstream: "http://old:1" });
  });
});

describe("clusterConfigOf", () => {
  const settings = stackConfigFromYaml(readFileSync(path.join(REPO, "Pulumi.a100.yaml"), "utf8"), "Pulumi.a100.yaml") as BenchClusterSettings;
  const options = { projectDir: REPO, requireSecrets: true, warn: () => undefined };

  it("gives each secret given as an Output its own value, by the stack file's precedence (the host's entry, else the default)", async () => {
    const loaded = clusterConfigOf({ settings, secrets: { sshPrivateKeys: { default: pulumi.secret(PEM), "worker-b": pulumi.secret(PEM.replace("k", "b")) }, proxyUpstream: pulumi.secret("http://127.0.0.1:27890") } }, options);
    expect(await valueOf(loaded.secrets.sshPrivateKey["worker-a"])).toBe(PEM);
    expect(await valueOf(loaded.secrets.sshPrivateKey["worker-b"])).toBe(PEM.replace("k", "b"));
    expect(await valueOf(loaded.secrets.proxyUpstream!)).toBe("http://127.0.0.1:27890");
    // The config object the components get holds placeholders only.
    expect(JSON.stringify(loaded.config)).not.toContain("PRIVATE KEY");
    expect(JSON.stringify(loaded.config)).not.toContain("27890");
  });

  it("validates a plain secret in place: a key that is no PEM is named", () => {
    expect(() => clusterConfigOf({ settings, secrets: { sshPrivateKeys: { default: "not a key" }, proxyUpstream: "http://127.0.0.1:27890" } }, options)).toThrow(/sshPrivateKeys\.default/);
  });
});

describe("host handles", () => {
  const connection = { name: "worker-a", host: "10.0.0.1", port: 22, user: "root", privateKey: "k", hostKey: "ssh-ed25519 AAAA" };

  it("give a component the host's Docker engine among its providers, so its docker children use it", () => {
    const engine = new docker.Provider("worker-a-engine", { host: "ssh://root@10.0.0.1:22" });
    const host: ClusterHost = { name: "worker-a", connection, dockerProvider: engine };
    expect(onHost(host, { dependsOn: [] }).providers).toEqual([engine]);
    expect(onHost(host, undefined).providers).toEqual([engine]);
  });

  it("keep a docker provider the caller passed, and other providers beside the host's engine", () => {
    const engine = new docker.Provider("worker-b-engine", { host: "ssh://root@10.0.0.2:22" });
    const mine = new docker.Provider("mine", { host: "unix:///var/run/docker.sock" });
    const other = new random.Provider("other-random", {});
    const host: ClusterHost = { name: "worker-b", connection, dockerProvider: engine };
    expect(onHost(host, { providers: [mine] }).providers).toEqual([mine]);
    expect(onHost(host, { providers: { random: other } }).providers).toEqual([other, engine]);
  });

  it("of a host this program has not claimed carry no engine and no login user, and say so when one is needed", () => {
    const host: ClusterHost = { name: "worker-c", connection };
    expect(onHost(host, { protect: true })).toEqual({ protect: true });
    expect(() => loginUserOf(host)).toThrow(/host worker-c: .*ssh-user.*not claimed the host/);
  });
});
