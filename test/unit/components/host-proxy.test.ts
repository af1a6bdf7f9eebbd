// A host's proxy: the standard variables, how a URL is shown, CheckedCommand's masking of secret inputs, and
// the two host scripts that take it — docker-daemon.sh (daemon.json "proxies", 0600, guarded restart, the
// check's digest) and image-digest.sh (skopeo and `docker pull` retried, progress naming what) — run by a
// real bash and jq against stand-ins for docker, systemctl, ip and skopeo that record what they were asked.
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { secretMasker } from "../../../components/checked-command";
import { daemonScriptEnv } from "../../../components/docker-daemon";
import { daemonProxies, proxiesDigest, proxyEnvironment, proxyUrlProblem, redactProxyUrl } from "../../../components/host-proxy";
import { scriptWithEnv } from "../../../components/host-script";
import { imageDigestScripts } from "../../../components/image-digest";
import { warningLine } from "../../../components/checked-command";

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

/** Stand-ins for skopeo and docker: each fails as many times as $STATE/<tool>-fails says, with $STATE/<tool>-error. */
function pullTools(dir: string): string {
  const bin = join(dir, "bin");
  mkdirSync(bin);
  const flaky = (tool: string, ok: string) => `#!/usr/bin/env bash
echo "${tool} $*" >>"$STATE/calls"
${tool === "docker" ? `case "$1" in info) exit 0 ;; image) [ -e "$STATE/pulled" ] && exit 0; exit 1 ;; esac` : ""}
n=$(( $(cat "$STATE/${tool}-count" 2>/dev/null || echo 0) + 1 )); echo "$n" >"$STATE/${tool}-count"
if [ "$n" -le "$(cat "$STATE/${tool}-fails" 2>/dev/null || echo 0)" ]; then cat "$STATE/${tool}-error" >&2; exit 1; fi
${ok}
`;
  executable(join(bin, "skopeo"), flaky("skopeo", `echo "sha256:${"a".repeat(64)}"`));
  executable(join(bin, "docker"), flaky("docker", `touch "$STATE/pulled"; echo "$2"`));
  executable(join(bin, "sleep"), `#!/bin/sh\necho "sleep $*" >>"$STATE/calls"\n`);
  return bin;
}

describe("image-digest.sh (create: resolve, then pull at the digest, both retried)", () => {
  const IMAGE = "registry.sim:5000/reprobench/sglang-double:dev";
  const DIGEST = `sha256:${"a".repeat(64)}`;

  function run(fails: { skopeo?: number; docker?: number }, errors: { skopeo?: string; docker?: string } = {}) {
    const dir = tempDir();
    const state = join(dir, "state");
    mkdirSync(state);
    for (const tool of ["skopeo", "docker"] as const) {
      writeFileSync(join(state, `${tool}-fails`), String(fails[tool] ?? 0));
      writeFileSync(join(state, `${tool}-error`), `${errors[tool] ?? `${tool}: received unexpected HTTP status: 502 Bad Gateway`}\n`);
    }
    const bin = pullTools(dir);
    const env = proxyEnvironment(URL_A, ["127.0.0.1", "localhost"]);
    const r = spawnSync("bash", ["-s"], {
      input: imageDigestScripts(IMAGE).create,
      env: { PATH: `${bin}:${process.env.PATH}`, STATE: state, ...env },
      encoding: "utf8",
    });
    const calls = readFileSync(join(state, "calls"), "utf8");
    return { ...r, calls, pulled: existsSync(join(state, "pulled")) };
  }

  it("retries a flaky registry and pull, saying what it retried, and ends with the digest it pulled", () => {
    const r = run({ skopeo: 2, docker: 1 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim().split("\n").pop()).toBe(`digest=${DIGEST}`);
    expect(r.stderr).toContain(`image-digest: progress: retrying skopeo inspect ${IMAGE} (attempt 2/8 in 2s): skopeo: received unexpected HTTP status: 502 Bad Gateway`);
    expect(r.stderr).toContain(`image-digest: progress: retrying skopeo inspect ${IMAGE} (attempt 3/8 in 4s)`);
    expect(r.stderr).toContain(`image-digest: progress: retrying docker pull registry.sim:5000/reprobench/sglang-double@${DIGEST} (attempt 2/8 in 2s): docker: received unexpected HTTP status: 502 Bad Gateway`);
    expect(r.calls).toContain(`docker pull -q registry.sim:5000/reprobench/sglang-double@${DIGEST}`);
    expect(r.calls).toMatch(/skopeo inspect --retry-times 2 .*docker:\/\/registry\.sim:5000\/reprobench\/sglang-double:dev/);
    expect(r.pulled).toBe(true);
    expect(`${r.stdout}${r.stderr}`).not.toContain(PASSWORD);
  });

  it("a registry that keeps answering 429 ends in one message naming the host, the image and the last status", () => {
    const r = run({ skopeo: 99 }, { skopeo: "time=x level=fatal msg=\"reading manifest dev: toomanyrequests: 429 Too Many Requests\"" });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/image-digest\[[^\]]+\]: cannot resolve registry\.sim:5000\/reprobench\/sglang-double:dev to a digest: registry registry\.sim:5000 failed 8 times \(last: .*429 Too Many Requests/);
    expect(r.calls.split("\n").filter((l) => l.startsWith("sleep"))).toEqual(["sleep 2", "sleep 4", "sleep 8", "sleep 16", "sleep 32", "sleep 60", "sleep 60"]);
    expect(r.pulled).toBe(false);
  });

  it("a pull that keeps failing names the reference and dockerd's last error", () => {
    const r = run({ docker: 99 }, { docker: "Error response from daemon: Get \"http://registry.sim:5000/v2/\": proxyconnect tcp: EOF" });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`docker pull registry.sim:5000/reprobench/sglang-double@${DIGEST} failed 8 times (last: Error response from daemon`);
  });

  it("the check only asks the registry (no pull)", () => {
    expect(imageDigestScripts(IMAGE).check).not.toContain("export PULL=");
    expect(imageDigestScripts(IMAGE).create).toContain("export PULL=1");
  });
});

describe("image-digest.sh keeps the build it settled on: a tag that moved upstream is no drift", () => {
  const IMAGE = "registry.sim:5000/reprobench/sglang-double:latest";
  const REPO = "registry.sim:5000/reprobench/sglang-double";
  const KEPT = `sha256:${"a".repeat(64)}`;
  const MOVED = `sha256:${"b".repeat(64)}`;

  /** Runs create or check with the registry naming MOVED now; `have` = the host has the kept build. */
  function run(script: "create" | "check", opts: { previous?: string; have?: boolean; followTags?: boolean }) {
    const dir = tempDir();
    const bin = join(dir, "bin");
    mkdirSync(bin);
    const state = join(dir, "state");
    mkdirSync(state);
    if (opts.have) writeFileSync(join(state, "pulled"), "");
    executable(join(bin, "skopeo"), `#!/usr/bin/env bash\necho "skopeo $*" >>"$STATE/calls"\necho "${MOVED}"\n`);
    executable(join(bin, "docker"), `#!/usr/bin/env bash
echo "docker $*" >>"$STATE/calls"
case "$1" in info) exit 0 ;; image) [ -e "$STATE/pulled" ] && exit 0; exit 1 ;; pull) touch "$STATE/pulled"; echo "$3" ;; esac
`);
    const r = spawnSync("bash", ["-s"], {
      input: imageDigestScripts(IMAGE, 8, opts.followTags === true)[script],
      env: { PATH: `${bin}:${process.env.PATH}`, STATE: state, PREVIOUS_STDOUT: opts.previous ?? "" },
      encoding: "utf8",
    });
    const calls = existsSync(join(state, "calls")) ? readFileSync(join(state, "calls"), "utf8") : "";
    return { ...r, calls };
  }
  const previous = `image=${IMAGE}\ndigest=${KEPT}`;

  it("create keeps the digest it printed last for the same reference, without asking the registry", () => {
    const r = run("create", { previous, have: false });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim().split("\n")).toEqual([`image=${IMAGE}`, `digest=${KEPT}`]);
    expect(r.calls).toContain(`docker pull -q ${REPO}@${KEPT}`);
    expect(r.calls).not.toContain("skopeo");
  });

  it("a state written by the release before (no image= line) keeps its digest too", () => {
    expect(run("create", { previous: `digest=${KEPT}`, have: true }).stdout.trim().split("\n").pop()).toBe(`digest=${KEPT}`);
  });

  it("another reference (a new tag in the config) is resolved afresh", () => {
    const r = run("create", { previous: `image=${REPO}:older\ndigest=${KEPT}`, have: false });
    expect(r.stdout.trim().split("\n").pop()).toBe(`digest=${MOVED}`);
  });

  it("the check reports the host's build and, apart, what upstream says now", () => {
    expect(run("check", { previous, have: true }).stdout.trim().split("\n")).toEqual([`digest=${KEPT}`, `info: upstream=${MOVED}`]);
    // The build gone from the host is drift (the next up pulls the same digest again).
    expect(run("check", { previous, have: false }).stdout.trim().split("\n")[0]).toBe(`digest=${KEPT} missing`);
  });

  it("with followImageTags the check reads the registry, so a moved tag is drift", () => {
    expect(run("check", { previous, have: true, followTags: true }).stdout.trim()).toBe(`digest=${MOVED}`);
    expect(run("create", { previous, have: true, followTags: true }).stdout.trim().split("\n").pop()).toBe(`digest=${MOVED}`);
  });

  it("the check warns, naming the tag, both digests and how to pin, only when upstream moved", () => {
    const moved = run("check", { previous, have: true });
    const warnings = moved.stderr.split("\n").map(warningLine).filter((w) => w !== undefined);
    expect(warnings).toEqual([
      `${IMAGE} has moved upstream: the registry now names ${MOVED}, this host keeps running ${KEPT}. Nothing changes until you pin the new build (${REPO}@${MOVED}) in the stack's config, or set reprobench:followImageTags: true to follow tags.`,
    ]);
    const same = run("check", { previous: `image=${IMAGE}\ndigest=${MOVED}`, have: true });
    expect(same.stderr.split("\n").map(warningLine).filter((w) => w !== undefined)).toEqual([]);
  });
});
