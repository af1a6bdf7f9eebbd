// A host's proxy: the standard variables, how a URL is shown, CheckedCommand's masking of secret inputs, and
// the two host scripts that take it — docker-daemon.sh (daemon.json "proxies", 0600, guarded restart, the
// check's digest) and image-digest.sh (the registry's HEAD and `docker pull` retried, progress naming what) — run
// by a real bash and jq against stand-ins for docker, systemctl and ip that record what they were asked, and
// image-digest.sh against an in-process registry reached through the proxy (test/helpers/fake-registry.ts).
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { secretMasker } from "../../../components/transport";
import { daemonScriptEnv } from "../../../components/docker-daemon";
import { daemonProxies, proxiesDigest, proxyEnvironment, proxyUrlProblem, redactProxyUrl } from "../../../components/host-proxy";
import { scriptWithEnv } from "../../../components/host-script";
import { imageDigestScripts } from "../../../components/image-digest";
import { progressLine, warningLine } from "../../../components/checked-command";
import { registryScriptEnv } from "../../../components/registry-access";
import { type FakeRegistry, type FakeRegistryOptions, type ScriptResult, fakeImageTools, runBash, startFakeRegistry, tagDigest } from "../../helpers/fake-registry";

const URL_A = "http://reprobench:0123456789abcdef@proxy.sim:3128";
const PASSWORD = "0123456789abcdef";

let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "reprobench-host-proxy-"));
  dirs.push(d);
  return d;
}
function executable(path: string, text: string): void {
  writeFileSync(path, text);
  chmodSync(path, 0o755);
}

describe("proxyEnvironment / redactProxyUrl / proxyUrlProblem", () => {
  it("gives the six standard variables", () => {
    expect(proxyEnvironment(URL_A, ["127.0.0.1", "localhost"])).toEqual({
      HTTP_PROXY: URL_A, HTTPS_PROXY: URL_A, http_proxy: URL_A, https_proxy: URL_A, NO_PROXY: "127.0.0.1,localhost", no_proxy: "127.0.0.1,localhost",
    });
  });

  it("shows a URL without its credentials", () => {
    expect(redactProxyUrl(URL_A)).toBe("http://***@proxy.sim:3128");
    expect(redactProxyUrl("http://127.0.0.1:27890")).toBe("http://127.0.0.1:27890");
    expect(redactProxyUrl("http://u:p@ss@h:1/x@y")).toBe("http://***@h:1/x@y");
    expect(redactProxyUrl("user:pw@host:1")).toBe("[proxy URL not shown]");
  });

  it("accepts http(s)://host:port, with credentials only where allowed", () => {
    expect(proxyUrlProblem("http://proxy.sim:3128", false)).toBeNull();
    expect(proxyUrlProblem("https://proxy.sim:443/", false)).toBeNull();
    expect(proxyUrlProblem(URL_A, true)).toBeNull();
    expect(proxyUrlProblem(URL_A, false)).toMatch(/credentials/);
    expect(proxyUrlProblem("http://proxy.sim", true)).toMatch(/no port/);
    expect(proxyUrlProblem("http://u:p@proxy.sim", true)).toMatch(/no port/);
    expect(proxyUrlProblem("socks5://p:1", true)).toMatch(/scheme socks5/);
  });
});

describe("secretMasker (CheckedCommand errors and progress lines)", () => {
  const env = { ...proxyEnvironment(URL_A, ["127.0.0.1", "localhost"]), API_KEY: "k".repeat(40), SHORT: "1" };

  it("shows a proxy URL without credentials, hides other secret values, anywhere in the text", () => {
    const mask = secretMasker(env);
    const text = `curl: (56) via ${URL_A}: 407\nkey ${"k".repeat(40)} user reprobench:${PASSWORD} pw ${PASSWORD}; other http://x:y@elsewhere:1 exit 1`;
    const shown = mask.all(text);
    expect(shown).toBe("curl: (56) via http://***@proxy.sim:3128: 407\nkey [secret not shown] user *** pw ***; other http://***@elsewhere:1 exit 1");
    expect(shown).not.toContain(PASSWORD);
  });

  it("stdout loses the inputs' secret values, by value, and nothing else (it is parsed and kept in state)", () => {
    const mask = secretMasker(env);
    // A server that echoes its API key (real SGLang's /server_info) loses it here.
    expect(mask.values(`{"api_key":"${"k".repeat(40)}","p":"${URL_A}","n":"1"}`)).toBe(`{"api_key":"[secret not shown]","p":"http://***@proxy.sim:3128","n":"1"}`);
    expect(mask.all("exit 1")).toBe("exit 1");
    // A router's worker@rank URLs look like userinfo but are no input of ours: stdout keeps them.
    const status = `{"workers":["http://172.31.252.11:30001@0","http://172.31.252.12:30001@1"],"p":"${URL_A}"}`;
    expect(mask.values(status)).toBe('{"workers":["http://172.31.252.11:30001@0","http://172.31.252.12:30001@1"],"p":"http://***@proxy.sim:3128"}');
  });

  it("a credential-free proxy URL is shown as it is", () => {
    const mask = secretMasker(proxyEnvironment("http://127.0.0.1:27890", []));
    expect(mask.all("retrying via http://127.0.0.1:27890")).toBe("retrying via http://127.0.0.1:27890");
  });
});

/** Stand-ins for docker, systemctl and ip; $STATE/started is dockerd's start stamp, $STATE/running its containers. */
function daemonTools(dir: string): string {
  const bin = join(dir, "bin");
  mkdirSync(bin);
  executable(
    join(bin, "docker"),
    `#!/usr/bin/env bash
echo "docker $*" >>"$STATE/calls"
case "$1" in
  ps) cat "$STATE/running" 2>/dev/null || true ;;
  info) case "$*" in
      *HTTPProxy*) jq -r '.proxies["http-proxy"] // empty' "$DAEMON_JSON" | sed 's#//[^@]*@#//xxxxx:xxxxx@#' ;;
      # What the running dockerd has: the mirrors it read at its last start or reload.
      *Mirrors*) cat "$STATE/mirrors" 2>/dev/null || echo null ;;
    esac ;;
  network) exit 0 ;;
esac
`,
  );
  executable(
    join(bin, "systemctl"),
    `#!/usr/bin/env bash
echo "systemctl $*" >>"$STATE/calls"
case "$1" in
  show) cat "$STATE/started" ;;
  restart) echo $(( $(cat "$STATE/started") + 1 )) >"$STATE/started"; jq -c '."registry-mirrors" // null | if . then map(sub("/$"; "") + "/") else . end' "$DAEMON_JSON" >"$STATE/mirrors" ;;
  reload) jq -c '."registry-mirrors" // null | if . then map(sub("/$"; "") + "/") else . end' "$DAEMON_JSON" >"$STATE/mirrors" ;;
esac
`,
  );
  executable(join(bin, "ip"), "#!/bin/sh\necho '[]'\n");
  return bin;
}

describe("docker-daemon.sh with proxies", () => {
  const pools = { addressPools: [{ base: "10.210.0.0/16", size: 24 }], forceRestart: false, restartPolicy: "when-idle" as const, verifyNetworks: 0, restoreOnDestroy: true };

  function setup() {
    const dir = tempDir();
    const state = join(dir, "state");
    mkdirSync(state);
    writeFileSync(join(state, "started"), "100");
    const bin = daemonTools(dir);
    const daemonJson = join(dir, "etc/daemon.json");
    const env = { ...daemonScriptEnv({ ...pools, daemonConfigPath: daemonJson }), STATE_DIR: join(dir, "reprobench") };
    const run = (script: "docker-daemon" | "docker-daemon-check", environment: Record<string, string> = {}) => {
      const r = spawnSync("bash", ["-s"], {
        input: `${Object.entries(environment).map(([k, v]) => `export ${k}='${v}'`).join("\n")}\n${scriptWithEnv(script, env)}`,
        env: { PATH: `${bin}:${process.env.PATH}`, STATE: state, DAEMON_JSON: daemonJson },
        encoding: "utf8",
      });
      return { ...r, out: `${r.stdout}${r.stderr}` };
    };
    const restarts = () => readFileSync(join(state, "calls"), "utf8").split("\n").filter((l) => l === "systemctl restart docker").length;
    const mode = () => (statSync(daemonJson).mode & 0o777).toString(8);
    return { dir, state, daemonJson, run, restarts, mode };
  }

  const proxies = daemonProxies(URL_A, ["127.0.0.1", "localhost"]);
  const withProxies = { PROXIES_JSON: JSON.stringify(proxies) };

  it("merges them (0600), restarts once, and the check reports their digest, never the URL", () => {
    const t = setup();
    const first = t.run("docker-daemon", withProxies);
    expect(first.status, first.out).toBe(0);
    expect(first.out).toContain("docker restarted");
    expect(first.out).not.toContain(PASSWORD);
    expect(JSON.parse(readFileSync(t.daemonJson, "utf8"))).toEqual({ "default-address-pools": pools.addressPools, proxies });
    expect(t.mode()).toBe("600");
    expect(t.restarts()).toBe(1);
    const check = t.run("docker-daemon-check");
    expect(check.stdout.trim()).toBe(`default-address-pools=[{"base":"10.210.0.0/16","size":24}] proxies=${proxiesDigest(proxies)}`);
    // The URL never reaches a command line.
    expect(readFileSync(join(t.state, "calls"), "utf8")).not.toContain(PASSWORD);

    const again = t.run("docker-daemon", withProxies);
    expect(again.out).toContain("already up to date");
    expect(t.restarts()).toBe(1);
  });

  it("a reverted proxy is drift: the check changes, and the repair needs no restart while dockerd still runs with it", () => {
    const t = setup();
    t.run("docker-daemon", withProxies);
    const cfg = JSON.parse(readFileSync(t.daemonJson, "utf8"));
    delete cfg.proxies;
    writeFileSync(t.daemonJson, JSON.stringify(cfg));
    chmodSync(t.daemonJson, 0o644);
    expect(t.run("docker-daemon-check").stdout.trim()).toMatch(/ proxies=none$/);
    const repair = t.run("docker-daemon", withProxies);
    expect(repair.status, repair.out).toBe(0);
    expect(repair.out).toContain("no restart");
    expect(t.restarts()).toBe(1);
    expect(t.mode()).toBe("600");
    expect(t.run("docker-daemon-check").stdout.trim()).toMatch(new RegExp(` proxies=${proxiesDigest(proxies)}$`));
  });

  it("a changed proxy needs a restart, refused while containers run", () => {
    const t = setup();
    t.run("docker-daemon", withProxies);
    writeFileSync(join(t.state, "running"), "qwen38-worker-a\n");
    const changed = t.run("docker-daemon", { PROXIES_JSON: JSON.stringify(daemonProxies("http://reprobench:other-password@proxy.sim:3128", ["localhost"])) });
    expect(changed.status).toBe(1);
    expect(changed.out).toContain("refusing to restart docker while containers run (qwen38-worker-a)");
    expect(changed.out).not.toContain("other-password");
    expect(t.restarts()).toBe(1);
  });

  it("registry-mirrors: set with a reload (no restart, containers keep running), shown by the check, removed when no longer configured", () => {
    const t = setup();
    t.run("docker-daemon");
    expect(t.restarts()).toBe(1);
    writeFileSync(join(t.state, "running"), "qwen38-worker-a\n");
    const mirrors = daemonScriptEnv({ ...pools, daemonConfigPath: t.daemonJson, registryMirrors: ["http://mirror.sim:5000"] }).MIRRORS_JSON;
    expect(mirrors).toBe('["http://mirror.sim:5000"]');
    const set = t.run("docker-daemon", { MIRRORS_JSON: mirrors });
    expect(set.status, set.out).toBe(0);
    expect(set.out).toContain('registry-mirrors set to ["http://mirror.sim:5000/"]');
    expect(set.out).toContain("docker reloaded, nothing restarted");
    expect(t.restarts()).toBe(1);
    expect(readFileSync(join(t.state, "calls"), "utf8")).toContain("systemctl reload docker");
    expect(t.run("docker-daemon-check").stdout.trim()).toMatch(/ proxies=none registry-mirrors=\["http:\/\/mirror.sim:5000"\]$/);
    expect(t.run("docker-daemon", { MIRRORS_JSON: mirrors }).out).toContain("already up to date");
    const removed = t.run("docker-daemon");
    expect(removed.status, removed.out).toBe(0);
    expect(JSON.parse(readFileSync(t.daemonJson, "utf8"))["registry-mirrors"]).toBeUndefined();
    expect(t.restarts()).toBe(1);
    // A host without mirrors reads as it always did (no drift for stacks that never set any).
    expect(t.run("docker-daemon-check").stdout.trim()).toMatch(/ proxies=none$/);
    expect(daemonScriptEnv({ ...pools, daemonConfigPath: t.daemonJson }).MIRRORS_JSON).toBeUndefined();
  });

  it("removes the proxies it set once they are no longer configured (0644 again); leaves someone else's alone", () => {
    const t = setup();
    t.run("docker-daemon", withProxies);
    const removed = t.run("docker-daemon");
    expect(removed.status, removed.out).toBe(0);
    expect(JSON.parse(readFileSync(t.daemonJson, "utf8")).proxies).toBeUndefined();
    expect(t.mode()).toBe("644");
    expect(t.restarts()).toBe(2);

    const other = setup();
    mkdirSync(join(other.dir, "etc"));
    writeFileSync(other.daemonJson, JSON.stringify({ proxies: { "http-proxy": "http://corp:3128" } }));
    other.run("docker-daemon");
    expect(JSON.parse(readFileSync(other.daemonJson, "utf8")).proxies).toEqual({ "http-proxy": "http://corp:3128" });
  });
});

/**
 * image-digest.sh as CheckedCommand runs it (`bash -s`, retry.sh and registry.sh prepended), against the fake
 * registry (test/helpers/fake-registry.ts) reached through a proxy URL with credentials, as hosts[].proxy
 * sets it. fakeImageTools gives the stand-in sleep (records, advances the fake clock) and curl (records its
 * argv, runs the real one); docker is replaced by a stand-in for this script:
 * - `info`: the insecure registries (registry.sim:5000), as daemon.json's insecure-registries make dockerd say;
 * - `image inspect REF`: REF is present when $STATE/images/<REF, / : @ as _> exists;
 * - `pull -q REF`: fails the first $STATE/docker-fails times with $STATE/docker-error, then does what dockerd
 *   would: GETs REF's manifest from the registry (the one counted pull) with the credentials the CLI read from
 *   $DOCKER_CONFIG/config.json (sent from a file, never on a command line), and records $DOCKER_CONFIG, that
 *   file's mode and the registries it holds credentials for in $STATE/pull-env ("none" without one).
 */
const DIGEST_DOCKER = `#!/usr/bin/env bash
set -euo pipefail
echo "docker $*" >>"$STATE/calls"
key() { printf '%s' "$1" | tr '/:@' '___'; }
case "$1" in
  info) case "$*" in *IndexConfigs*) printf 'registry.sim:5000,' ;; esac; exit 0 ;;
  image) [ -e "$STATE/images/$(key "\${!#}")" ] && exit 0; echo "Error: No such image: \${!#}" >&2; exit 1 ;;
  pull) ;;
  *) exit 2 ;;
esac
ref=\${!#}
n=$(( $(cat "$STATE/docker-count" 2>/dev/null || echo 0) + 1 )); echo "$n" >"$STATE/docker-count"
if [ "$n" -le "$(cat "$STATE/docker-fails" 2>/dev/null || echo 0)" ]; then cat "$STATE/docker-error" >&2; exit 1; fi
config=\${DOCKER_CONFIG:-}/config.json
if [ -n "\${DOCKER_CONFIG:-}" ] && [ -f "$config" ]; then
  echo "$DOCKER_CONFIG $(stat -c %a "$config") $(jq -c '.auths | keys' "$config")" >>"$STATE/pull-env"
else
  echo none >>"$STATE/pull-env"
fi
name=\${ref%@*} digest=\${ref##*@}
registry=\${name%%/*} repo=\${name#*/}
hdr=()
auth=$(jq -r --arg k "$registry" '.auths[$k].auth // empty' "$config" 2>/dev/null || true)
if [ -n "$auth" ]; then
  (umask 077 && printf 'Authorization: Basic %s\\n' "$auth" >"$STATE/pull-auth")
  hdr=(-H "@$STATE/pull-auth")
fi
code=$(curl -sS -o /dev/null -w '%{http_code}' "\${hdr[@]}" "http://$registry/v2/$repo/manifests/$digest" </dev/null) || code=000
rm -f "$STATE/pull-auth"
[ "$code" = 200 ] || { echo "Error response from daemon: manifest for $ref: HTTP $code" >&2; exit 1; }
touch "$STATE/images/$(key "$ref")"
echo "$ref"
`;

interface DigestRun extends ScriptResult {
  registry: FakeRegistry;
  dir: string;
  /** Every argv the stand-ins saw ("docker …", "curl …", "sleep …"). */
  calls: string[];
  sleeps: number[];
  /** The references `docker pull` was asked for, in order (failed attempts too). */
  pulls: string[];
  /** One line per pull that reached the registry: "$DOCKER_CONFIG <mode> <auths' keys>" or "none". */
  pullEnv: string[];
  /** The stderr lines CheckedCommand forwards as progress (whole, "image-digest: progress: …"). */
  progress: string[];
}

/** The references the stand-in docker holds ("<repo>@<digest>"). */
const imageKey = (ref: string) => ref.replace(/[/:@]/g, "_");

let digestRegistries: FakeRegistry[] = [];
async function closeDigestRegistries(): Promise<void> {
  for (const r of digestRegistries) await r.close();
  digestRegistries = [];
}

/** Runs image-digest.sh's create or check against a fresh fake registry, through a proxy URL with credentials. */
async function runImageDigest(
  image: string,
  script: "create" | "check",
  opts: { registry?: FakeRegistryOptions; docker?: { fails: number; error: string }; previous?: string; have?: string[]; followTags?: boolean; secret?: Record<string, string> } = {},
): Promise<DigestRun> {
  const registry = await startFakeRegistry(opts.registry);
  digestRegistries.push(registry);
  const dir = tempDir();
  const tools = fakeImageTools(dir);
  executable(join(tools.bin, "docker"), DIGEST_DOCKER);
  mkdirSync(join(tools.state, "images"));
  for (const ref of opts.have ?? []) writeFileSync(join(tools.state, "images", imageKey(ref)), "");
  writeFileSync(join(tools.state, "docker-fails"), String(opts.docker?.fails ?? 0));
  writeFileSync(join(tools.state, "docker-error"), `${opts.docker?.error ?? "Error response from daemon: received unexpected HTTP status: 502 Bad Gateway"}\n`);
  // The host's proxy, with credentials (hosts[].proxy): the fake registry is that proxy.
  const proxy = proxyEnvironment(`http://reprobench:${PASSWORD}@${new URL(registry.proxyUrl).host}`, []);
  const r = await runBash(imageDigestScripts(image, 8, opts.followTags === true)[script], {
    PATH: `${tools.bin}:${process.env.PATH}`,
    HOME: dir,
    TMPDIR: dir,
    STATE: tools.state,
    PREVIOUS_STDOUT: opts.previous ?? "",
    ...proxy,
    // The secret environment (credentials) travels as the process environment, as CheckedCommand's does.
    ...(opts.secret ?? {}),
  });
  const calls = tools.calls();
  const pullEnvFile = join(tools.state, "pull-env");
  return {
    ...r,
    registry,
    dir,
    calls,
    sleeps: tools.sleeps(),
    pulls: calls.filter((c) => c.startsWith("docker pull ")).map((c) => c.split(" ").pop()!),
    pullEnv: existsSync(pullEnvFile) ? readFileSync(pullEnvFile, "utf8").split("\n").filter((l) => l !== "") : [],
    progress: r.stderr.split("\n").filter((l) => progressLine(l) !== undefined),
  };
}
/** The registry's manifest requests as "METHOD repo:ref status[ counted][ user]". */
const seen = (r: DigestRun) => r.registry.manifests().map((q) => `${q.method} ${q.host}/${q.repo}:${q.ref} ${q.status}${q.counted ? " counted" : ""}${q.user ? ` ${q.user}` : ""}`);

describe("image-digest.sh (create: a HEAD for the digest, then docker pull at it, both retried)", () => {
  afterEach(closeDigestRegistries);
  const IMAGE = "registry.sim:5000/reprobench/sglang-double:dev";
  const REPO = "registry.sim:5000/reprobench/sglang-double";
  const KEY = IMAGE;
  const DIGEST = tagDigest(IMAGE);
  const HEAD_URL = "http://registry.sim:5000/v2/reprobench/sglang-double/manifests/dev";

  it("retries a flaky registry and pull, saying what it retried, and ends with the digest it pulled (free HEADs, one counted pull)", async () => {
    const r = await runImageDigest(IMAGE, "create", { registry: { headFailures: { [KEY]: 2 }, headFailStatus: { [KEY]: 502 } }, docker: { fails: 1, error: "Error response from daemon: received unexpected HTTP status: 502 Bad Gateway" } });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim().split("\n")).toEqual([`image=${IMAGE}`, `digest=${DIGEST}`]);
    expect(r.progress).toEqual([
      `image-digest: progress: retrying HEAD ${IMAGE} (attempt 2/8 in 2s): HEAD ${HEAD_URL}: HTTP 502`,
      `image-digest: progress: retrying HEAD ${IMAGE} (attempt 3/8 in 4s): HEAD ${HEAD_URL}: HTTP 502`,
      `image-digest: progress: retrying docker pull ${REPO}@${DIGEST} (attempt 2/8 in 2s): Error response from daemon: received unexpected HTTP status: 502 Bad Gateway`,
    ]);
    expect(r.sleeps).toEqual([2, 4, 2]);
    expect(r.stderr).toContain(`image-digest: pulled ${REPO}@${DIGEST}\n`);
    // Three HEADs over plain HTTP (daemon.json lists registry.sim:5000 as insecure), then the one counted
    // pull, by digest (dockerd's); nothing through CONNECT, nothing with credentials.
    expect(seen(r)).toEqual([`HEAD ${KEY} 502`, `HEAD ${KEY} 502`, `HEAD ${KEY} 200`, `GET ${REPO}:${DIGEST} 200 counted`]);
    expect(r.registry.requests.filter((q) => q.method === "CONNECT" || q.user !== undefined)).toEqual([]);
    expect(r.pulls).toEqual([`${REPO}@${DIGEST}`, `${REPO}@${DIGEST}`]);
    expect(r.calls).toContain(`docker pull -q ${REPO}@${DIGEST}`);
    expect(r.calls.filter((c) => c.startsWith("curl ")).every((c) => c.includes("--head") || c.includes(`/manifests/${DIGEST}`))).toBe(true);
    expect(r.calls.filter((c) => c.startsWith("skopeo"))).toEqual([]);
    expect(r.pullEnv).toEqual(["none"]);
    expect(`${r.stdout}${r.stderr}${r.calls.join("\n")}`).not.toContain(PASSWORD);
  });

  it("a registry that keeps answering 429 ends in one message naming the host, the image and the status, without retrying (the quota will not come back in seconds)", async () => {
    const r = await runImageDigest(IMAGE, "create", { registry: { headFailures: { [KEY]: Infinity }, headFailStatus: { [KEY]: 429 } } });
    expect(r.status).toBe(1);
    const messages = r.stderr.split("\n").filter((l) => /^image-digest\[[^\]]+\]: /.test(l));
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(
      /^image-digest\[[^\]]+\]: cannot resolve registry\.sim:5000\/reprobench\/sglang-double:dev to a digest: registry registry\.sim:5000 refused \(HEAD http:\/\/registry\.sim:5000\/v2\/reprobench\/sglang-double\/manifests\/dev: 429 Too Many Requests\); set credentials for registry\.sim:5000 \(reprobench:registries\[\]\.username and the secret registryPasswords\) or a mirror$/,
    );
    // One HEAD, no wait, no retry (registry_head says 97: retrying cannot help), no pull.
    expect(seen(r)).toEqual([`HEAD ${KEY} 429`]);
    expect(r.sleeps).toEqual([]);
    expect(r.progress).toEqual([]);
    expect(r.pulls).toEqual([]);
    expect(r.registry.counted()).toEqual([]);
  });

  it("a registry that keeps failing (503) is asked 8 times with a doubling wait of at most a minute, then one message naming the host, the image and the last status", async () => {
    const r = await runImageDigest(IMAGE, "create", { registry: { headFailures: { [KEY]: Infinity } } });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /image-digest\[[^\]]+\]: cannot resolve registry\.sim:5000\/reprobench\/sglang-double:dev to a digest: registry registry\.sim:5000 failed 8 times \(last: HEAD http:\/\/registry\.sim:5000\/v2\/reprobench\/sglang-double\/manifests\/dev: HTTP 503\); is it up, and does the host's proxy reach it\?/,
    );
    expect(r.sleeps).toEqual([2, 4, 8, 16, 32, 60, 60]);
    expect(seen(r)).toEqual(Array.from({ length: 8 }, () => `HEAD ${KEY} 503`));
    expect(r.progress.at(-1)).toBe(`image-digest: progress: retrying HEAD ${IMAGE} (attempt 8/8 in 60s): HEAD ${HEAD_URL}: HTTP 503`);
    expect(r.pulls).toEqual([]);
  });

  it("a pull that keeps failing names the reference and dockerd's last error", async () => {
    const r = await runImageDigest(IMAGE, "create", { docker: { fails: 99, error: 'Error response from daemon: Get "http://registry.sim:5000/v2/": proxyconnect tcp: EOF' } });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(
      `docker pull ${REPO}@${DIGEST} failed 8 times (last: Error response from daemon: Get "http://registry.sim:5000/v2/": proxyconnect tcp: EOF); dockerd pulls through its daemon.json proxies and insecure-registries`,
    );
    expect(r.pulls).toEqual(Array.from({ length: 8 }, () => `${REPO}@${DIGEST}`));
    expect(r.stdout).not.toContain("digest=");
    // The digest was read once, for free; the pull never reached the registry.
    expect(seen(r)).toEqual([`HEAD ${KEY} 200`]);
  });

  it("the check only asks the registry: one HEAD, no counted GET, no pull", async () => {
    expect(imageDigestScripts(IMAGE).check).not.toContain("export PULL=");
    expect(imageDigestScripts(IMAGE).create).toContain("export PULL=1");
    // Only the create step retries (retry.sh); both talk to the registry through registry.sh.
    expect(imageDigestScripts(IMAGE).check).not.toMatch(/^retry\(\) \{/m);
    expect(imageDigestScripts(IMAGE).create).toMatch(/^retry\(\) \{/m);
    expect(imageDigestScripts(IMAGE).check).toMatch(/^registry_head\(\) \{/m);

    const kept = `sha256:${"a".repeat(64)}`;
    const r = await runImageDigest(IMAGE, "check", { previous: `image=${IMAGE}\ndigest=${kept}`, have: [`${REPO}@${kept}`] });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim().split("\n")).toEqual([`digest=${kept}`, `info: upstream=${DIGEST}`]);
    expect(seen(r)).toEqual([`HEAD ${KEY} 200`]);
    expect(r.registry.manifests({ method: "GET" })).toEqual([]);
    expect(r.registry.counted()).toEqual([]);
    expect(r.pulls).toEqual([]);
  });

  it("with registry credentials (REGISTRY_AUTH_JSON) the HEAD carries the account and docker pull reads them from a 0600 config.json in DOCKER_CONFIG, gone after the step; the password is shown nowhere", async () => {
    const REGISTRY_PASSWORD = "pull-secret-7f3a9c1e5b";
    const secret = registryScriptEnv([{ registry: "registry.sim:5000", username: "reprobench-pull", password: REGISTRY_PASSWORD }], []);
    expect(Object.keys(secret)).toEqual(["REGISTRY_AUTH_JSON"]);
    const r = await runImageDigest(IMAGE, "create", { registry: { users: { "reprobench-pull": REGISTRY_PASSWORD } }, secret });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim().split("\n")).toEqual([`image=${IMAGE}`, `digest=${DIGEST}`]);
    expect(r.registry.manifests().map((q) => [q.method, q.user, q.auth, q.status, q.counted])).toEqual([
      ["HEAD", "reprobench-pull", "Basic", 200, false],
      ["GET", "reprobench-pull", "Basic", 200, true],
    ]);
    expect(r.registry.counted({ user: "reprobench-pull" })).toHaveLength(1);
    // The step's private directory (under TMPDIR): config.json 0600 with the registry's credentials…
    expect(r.pullEnv).toHaveLength(1);
    const [dockerConfig, mode, keys] = r.pullEnv[0].split(" ");
    expect(dockerConfig.startsWith(`${r.dir}/registry.`)).toBe(true);
    expect(mode).toBe("600");
    expect(JSON.parse(keys)).toEqual(["registry.sim:5000"]);
    // …removed with everything else the step made.
    expect(existsSync(dockerConfig)).toBe(false);
    expect(readdirSync(r.dir).sort()).toEqual(["bin", "state"]);
    // Neither the password nor its base64 form on any output or command line (curl's, docker's).
    const auth = Buffer.from(`reprobench-pull:${REGISTRY_PASSWORD}`).toString("base64");
    const everything = `${r.stdout}${r.stderr}${r.calls.join("\n")}`;
    expect(everything).not.toContain(REGISTRY_PASSWORD);
    expect(everything).not.toContain(auth);
    expect(everything).not.toContain(PASSWORD);
  });
});

describe("image-digest.sh keeps the build it settled on: a tag that moved upstream is no drift", () => {
  afterEach(closeDigestRegistries);
  const IMAGE = "registry.sim:5000/reprobench/sglang-double:latest";
  const REPO = "registry.sim:5000/reprobench/sglang-double";
  const KEPT = `sha256:${"a".repeat(64)}`;
  // What the registry names for the tag now.
  const MOVED = tagDigest(IMAGE);

  /** Runs create or check with the registry naming MOVED now; `have` = the host has the kept build. */
  const run = (script: "create" | "check", opts: { previous?: string; have?: boolean; followTags?: boolean; registry?: FakeRegistryOptions }) =>
    runImageDigest(IMAGE, script, { previous: opts.previous, have: opts.have ? [`${REPO}@${KEPT}`] : [], followTags: opts.followTags, registry: opts.registry });
  const previous = `image=${IMAGE}\ndigest=${KEPT}`;
  const heads = (r: DigestRun) => r.registry.manifests({ method: "HEAD" }).length;

  it("create keeps the digest it printed last for the same reference, without asking the registry", async () => {
    const r = await run("create", { previous, have: false });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim().split("\n")).toEqual([`image=${IMAGE}`, `digest=${KEPT}`]);
    expect(r.calls).toContain(`docker pull -q ${REPO}@${KEPT}`);
    // No HEAD: the only request is dockerd's pull of the kept build.
    expect(seen(r)).toEqual([`GET ${REPO}:${KEPT} 200 counted`]);
  });

  it("a state written by the release before (no image= line) keeps its digest too", async () => {
    const r = await run("create", { previous: `digest=${KEPT}`, have: true });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim().split("\n").pop()).toBe(`digest=${KEPT}`);
    expect(r.stderr).toContain(`image-digest: ${REPO}@${KEPT} already present`);
    expect(r.pulls).toEqual([]);
    expect(seen(r)).toEqual([]);
  });

  it("another reference (a new tag in the config) is resolved afresh", async () => {
    const r = await run("create", { previous: `image=${REPO}:older\ndigest=${KEPT}`, have: false });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim().split("\n").pop()).toBe(`digest=${MOVED}`);
    expect(seen(r)).toEqual([`HEAD ${IMAGE} 200`, `GET ${REPO}:${MOVED} 200 counted`]);
  });

  it("the check reports the host's build and, apart, what upstream says now", async () => {
    const have = await run("check", { previous, have: true });
    expect(have.stdout.trim().split("\n")).toEqual([`digest=${KEPT}`, `info: upstream=${MOVED}`]);
    expect(heads(have)).toBe(1);
    // The build gone from the host is drift (the next up pulls the same digest again).
    const gone = await run("check", { previous, have: false });
    expect(gone.stdout.trim().split("\n")).toEqual([`digest=${KEPT} missing`, `info: upstream=${MOVED}`]);
    for (const r of [have, gone]) {
      expect(r.status, r.stderr).toBe(0);
      expect(r.pulls).toEqual([]);
      expect(r.registry.manifests({ method: "GET" })).toEqual([]);
    }
  });

  it("a registry the check cannot ask is no moved tag: upstream unknown, with its error, and no warning", async () => {
    const r = await run("check", { previous, have: true, registry: { headFailures: { [IMAGE]: Infinity } } });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim().split("\n")).toEqual([`digest=${KEPT}`, "info: upstream=unknown (HEAD http://registry.sim:5000/v2/reprobench/sglang-double/manifests/latest: HTTP 503)"]);
    // One HEAD, not retried: the check runs on every refresh.
    expect(heads(r)).toBe(1);
    expect(r.sleeps).toEqual([]);
    expect(r.stderr.split("\n").map(warningLine).filter((w) => w !== undefined)).toEqual([]);
  });

  it("with followImageTags the check reads the registry, so a moved tag is drift", async () => {
    const check = await run("check", { previous, have: true, followTags: true });
    expect(check.stdout.trim()).toBe(`digest=${MOVED}`);
    expect(heads(check)).toBe(1);
    expect(check.pulls).toEqual([]);
    const create = await run("create", { previous, have: true, followTags: true });
    expect(create.stdout.trim().split("\n").pop()).toBe(`digest=${MOVED}`);
    expect(seen(create)).toEqual([`HEAD ${IMAGE} 200`, `GET ${REPO}:${MOVED} 200 counted`]);
    expect(create.pulls).toEqual([`${REPO}@${MOVED}`]);
  });

  it("the check warns, naming the tag, both digests and how to pin, only when upstream moved", async () => {
    const moved = await run("check", { previous, have: true });
    const warnings = moved.stderr.split("\n").map(warningLine).filter((w) => w !== undefined);
    expect(warnings).toEqual([
      `${IMAGE} has moved upstream: the registry now names ${MOVED}, this host keeps running ${KEPT}. Nothing changes until you pin the new build (${REPO}@${MOVED}) in the stack's config, or set reprobench:followImageTags: true to follow tags.`,
    ]);
    const same = await runImageDigest(IMAGE, "check", { previous: `image=${IMAGE}\ndigest=${MOVED}`, have: [`${REPO}@${MOVED}`] });
    expect(same.stdout.trim().split("\n")).toEqual([`digest=${MOVED}`, `info: upstream=${MOVED}`]);
    expect(same.stderr.split("\n").map(warningLine).filter((w) => w !== undefined)).toEqual([]);
  });
});
