// The run's host scripts: shellcheck-clean, and the ones that need neither systemd nor a real registry run
// here against recording stand-ins for docker, skopeo and harbor (on PATH / in a fake venv). task-images.sh
// talks to a Docker-Hub-like registry in this process (test/helpers/fake-registry.ts: digests, pull quota,
// Basic auth, a fake clock the stand-in sleep advances), so it runs asynchronously.
import { createHash } from "node:crypto";
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { apiBase } from "../../../components/config/derive";
import { preflightScriptEnv } from "../../../components/benchmark-run";
import { progressLine, warningLine } from "../../../components/checked-command";
import { scriptWithEnv } from "../../../components/host-script";
import { registryScriptEnv } from "../../../components/registry-access";
import { runPaths } from "../../../components/run-config";
import { taskImagesScriptEnv } from "../../../components/task-images";
import { runSettings } from "../../../components/config/job";
import { type FakeImageTools, type FakeRegistry, type FakeRegistryOptions, type ScriptResult, fakeImageTools, proxyEnv, runBash, scratchSpace, startFakeRegistry, tagDigest } from "../../helpers/fake-registry";
import { REPO, seedConfig } from "./helpers";

const SCRIPTS = path.join(REPO, "components/scripts");
const OURS = readdirSync(SCRIPTS).filter((f) => /^(harbor-|task-images)/.test(f));

const scratch = scratchSpace("reprobench-run-");
const tempDir = scratch.tempDir;
function executable(file: string, text: string): void {
  writeFileSync(file, text);
  chmodSync(file, 0o755);
}
function runScript(name: string, env: Record<string, string>) {
  return spawnSync("bash", [path.join(SCRIPTS, name)], { env: { ...process.env, ...env }, encoding: "utf8", timeout: 60_000 });
}

describe("host scripts", () => {
  it("are shellcheck-clean", () => {
    expect(OURS.length).toBeGreaterThanOrEqual(10);
    const files = [...OURS.map((f) => path.join(SCRIPTS, f)), path.join(REPO, "sim/wheelhouse.sh"), path.join(REPO, "sim/hf-wheelhouse.sh")];
    const r = spawnSync("shellcheck", ["--severity=style", ...files], { encoding: "utf8" });
    expect(r.error, "shellcheck must be installed (apt-get install -y shellcheck)").toBeUndefined();
    expect(r.stdout).toBe("");
    expect(r.status).toBe(0);
  });
});

describe("task-images.sh", () => {
  interface Pull {
    registry: FakeRegistry;
    tools: FakeImageTools;
    dir: string;
    /** Runs the step as CheckedCommand does (retry.sh + registry.sh + task-images.sh on stdin of bash -s). */
    run(images: string[], opts?: { budget?: number; insecure?: string[]; secret?: Record<string, string>; attempts?: number }): Promise<ScriptResult>;
  }
  /** A fake registry, the stand-in tools, and a daemon.json listing registry.sim:5000 as insecure. */
  async function setup(options: FakeRegistryOptions = {}): Promise<Pull> {
    const registry = await startFakeRegistry(options);
    scratch.keep(registry);
    const dir = tempDir();
    const tools = fakeImageTools(dir);
    const daemon = path.join(dir, "daemon.json");
    writeFileSync(daemon, JSON.stringify({ "insecure-registries": ["registry.sim:5000"] }));
    return {
      registry,
      tools,
      dir,
      run: (images, opts = {}) => {
        const inputs = {
          ...taskImagesScriptEnv({ imagePullConcurrency: 3, imagePullAttempts: opts.attempts ?? 3, insecureRegistries: opts.insecure ?? [] }, images, daemon, opts.budget ?? 0),
          BACKOFF_SECONDS: "2",
          DIGESTS_DIR: path.join(dir, "digests"),
        };
        // The secret environment (credentials, mirrors) travels as the process environment, as CheckedCommand's does.
        const env = { PATH: `${tools.bin}:${process.env.PATH}`, HOME: dir, TMPDIR: dir, STATE: tools.state, ...proxyEnv(registry), ...(opts.secret ?? {}) };
        return runBash(scriptWithEnv(["retry", "registry", "task-images"], inputs), env);
      },
    };
  }
  const layout = (dir: string, ref: string) => path.join(dir, "digests", `.oci-${createHash("sha256").update(ref).digest("hex").slice(0, 16)}`);
  const lastJson = (r: ScriptResult) => JSON.parse(r.stdout.trim().split("\n").pop()!) as { ready: number; total: number; images: Record<string, string> };
  const progress = (stderr: string) => stderr.split("\n").map(progressLine).filter((x): x is string => x !== undefined);
  const warnings = (stderr: string) => stderr.split("\n").map(warningLine).filter((x): x is string => x !== undefined);
  /** How many times each repo's manifest was copied from a registry (skopeo copy docker://…). */
  const copies = (tools: FakeImageTools) => {
    const out: Record<string, number> = {};
    for (const c of tools.calls()) {
      const m = / docker:\/\/(\S+)@sha256:/.exec(c);
      if (c.startsWith("skopeo copy") && m) out[m[1]] = (out[m[1]] ?? 0) + 1;
    }
    return out;
  };
  /** The GETs per repo the registry saw (counted or not). */
  const gets = (registry: FakeRegistry, host = "registry.sim:5000") => {
    const out: Record<string, number> = {};
    for (const r of registry.manifests({ method: "GET", host })) out[r.repo!] = (out[r.repo!] ?? 0) + 1;
    return out;
  };
  const images = (n: number) => Array.from({ length: n }, (_, i) => `registry.sim:5000/q/img${i + 1}:1`);

  it("pulls what is missing with one counted GET each (the HEADs are free), skips what is cached, uses HTTP for insecure registries, ends with N/N images ready", async () => {
    const p = await setup();
    const pinned = tagDigest("pinned build");
    // Cached: present in the daemon, amd64.
    writeFileSync(path.join(p.tools.state, "registry.sim_5000_c_cached_1"), "amd64\n");
    const refs = ["registry.sim:5000/a/one:1", "registry.sim:5000/b/two:2", "registry.sim:5000/a/one:1", "registry.sim:5000/c/cached:1", `registry.sim:5000/d/pinned@${pinned}`];
    const r0 = await p.run(refs);
    expect(r0.status, r0.stderr).toBe(0);
    const one = tagDigest("registry.sim:5000/a/one:1");
    const two = tagDigest("registry.sim:5000/b/two:2");
    expect(r0.stderr).toContain("task-images: 4 images, 3 at a time");
    expect(r0.stderr).toContain("task-images: cached registry.sim:5000/c/cached:1\n");
    expect(r0.stderr).toContain(`task-images: pulled registry.sim:5000/a/one:1 at ${one}\n`);
    expect(r0.stderr).toContain(`task-images: pulled registry.sim:5000/b/two:2 at ${two}\n`);
    expect(r0.stderr).toContain(`task-images: pulled registry.sim:5000/d/pinned@${pinned} at ${pinned}\n`);
    expect(r0.stderr).toContain("task-images: 4/4 images ready\n");
    expect(warnings(r0.stderr)).toEqual([]);
    // What the step said as it went (CheckedCommand forwards these to `pulumi up`).
    const lines = progress(r0.stderr);
    expect(lines).toContain("task-images: registry registry.sim:5000 allows 100 more pulls now (limit 100 per 21600s, anonymous); 3 images to pull from it");
    expect(lines.filter((l) => / images ready or tried$/.test(l))).toEqual([1, 2, 3, 4].map((n) => `task-images: ${n}/4 images ready or tried`));

    // The registry saw a HEAD per tag (none for the pinned digest, none for the cached image) and one counted
    // GET per image, by digest: the HEADs counted nothing. All plain HTTP (no CONNECT), anonymous.
    const seen = p.registry.requests.map((r) => `${r.method} ${r.host}/${r.repo}:${r.ref} ${r.status}${r.counted ? " counted" : ""}`);
    expect(seen.filter((s) => s.startsWith("HEAD")).sort()).toEqual(["HEAD registry.sim:5000/a/one:1 200", "HEAD registry.sim:5000/b/two:2 200"]);
    expect(seen.filter((s) => s.startsWith("GET")).sort()).toEqual([`GET registry.sim:5000/a/one:${one} 200 counted`, `GET registry.sim:5000/b/two:${two} 200 counted`, `GET registry.sim:5000/d/pinned:${pinned} 200 counted`]);
    expect(p.registry.requests.filter((r) => r.method === "CONNECT" || r.user !== undefined)).toEqual([]);
    expect(p.registry.counted()).toHaveLength(3);

    // Exactly that digest is copied into an OCI layout (a retry refetches only missing blobs), loaded into the daemon, removed.
    const calls = p.tools.calls();
    expect(calls).toContain(`skopeo copy --quiet --override-os linux --override-arch amd64 --src-tls-verify=false --retry-times 3 docker://registry.sim:5000/a/one@${one} oci:${layout(p.dir, "registry.sim:5000/a/one:1")}:image`);
    expect(calls).toContain(`skopeo copy --quiet oci:${layout(p.dir, "registry.sim:5000/a/one:1")}:image docker-daemon:registry.sim:5000/a/one:1`);
    expect(calls.filter((c) => c.startsWith("curl ") && c.includes("--head")).map((c) => c.split(" ").pop())).toEqual(["http://registry.sim:5000/v2/a/one/manifests/1", "http://registry.sim:5000/v2/b/two/manifests/2"]);
    expect(copies(p.tools)).toEqual({ "registry.sim:5000/a/one": 1, "registry.sim:5000/b/two": 1, "registry.sim:5000/d/pinned": 1 });
    expect(existsSync(layout(p.dir, "registry.sim:5000/a/one:1"))).toBe(false);
    // The manifest records the registry digests (the local id for the image no pull recorded).
    expect(lastJson(r0)).toEqual({
      ready: 4,
      total: 4,
      images: {
        "registry.sim:5000/a/one:1": `registry.sim:5000/a/one@${one}`,
        "registry.sim:5000/b/two:2": `registry.sim:5000/b/two@${two}`,
        "registry.sim:5000/c/cached:1": "sha256:registry.sim_5000_c_cached_1",
        [`registry.sim:5000/d/pinned@${pinned}`]: `registry.sim:5000/d/pinned@${pinned}`,
      },
    });
    // The step's private registry directory is gone.
    expect(readdirSync(p.dir).filter((f) => f.startsWith("registry."))).toEqual([]);

    // A later run finds them cached: no registry request, no skopeo; it still reports the digests they were pulled at.
    const before = { requests: p.registry.requests.length, calls: calls.length };
    const r1 = await p.run(["registry.sim:5000/a/one:1"]);
    expect(r1.status, r1.stderr).toBe(0);
    expect(r1.stderr).toContain("cached registry.sim:5000/a/one:1");
    expect(p.registry.requests).toHaveLength(before.requests);
    expect(p.tools.calls().slice(before.calls).filter((c) => !c.startsWith("docker "))).toEqual([]);
    expect(lastJson(r1).images).toEqual({ "registry.sim:5000/a/one:1": `registry.sim:5000/a/one@${one}` });
  });

  it("retries a HEAD that fails with exponential backoff, not a 404, then fails naming every missing image (and removes an arm64 one)", async () => {
    // flaky:1's HEAD answers 503 twice, then 200 (attempt 3); dead:1's always 503; gone:1 is unknown (404);
    // arm64:1 pulls but is the wrong architecture.
    const p = await setup({ headFailures: { "r.io/flaky:1": 2, "r.io/dead:1": Infinity }, missing: ["r.io/gone:1"] });
    const r = await p.run(["r.io/flaky:1", "r.io/dead:1", "r.io/arm64:1", "r.io/gone:1"], { insecure: ["r.io"] });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`task-images: pulled r.io/flaky:1 at ${tagDigest("r.io/flaky:1")}\n`);
    expect(r.stderr).toContain("task-images: FAILED r.io/dead:1: cannot read its digest (registry r.io): HEAD http://r.io/v2/dead/manifests/1: HTTP 503\n");
    expect(r.stderr).toContain("task-images: FAILED r.io/gone:1: cannot read its digest (registry r.io): HEAD http://r.io/v2/gone/manifests/1: HTTP 404\n");
    expect(r.stderr).toContain("r.io/arm64:1 has architecture arm64, expected amd64; removing it");
    expect(r.stderr).toContain("1/4 images ready");
    expect(r.stderr).toMatch(/missing: r\.io\/arm64:1\n.*missing: r\.io\/dead:1\n.*missing: r\.io\/gone:1\n/);
    expect(existsSync(path.join(p.tools.state, "r.io_arm64_1"))).toBe(false);
    // Each retry is a progress line naming what was retried, the next attempt, the wait and why.
    const lines = progress(r.stderr);
    expect(lines).toContain("task-images: retrying HEAD r.io/flaky:1 (attempt 2/3 in 2s): HEAD http://r.io/v2/flaky/manifests/1: HTTP 503");
    expect(lines).toContain("task-images: retrying HEAD r.io/flaky:1 (attempt 3/3 in 4s): HEAD http://r.io/v2/flaky/manifests/1: HTTP 503");
    expect(lines).toContain("task-images: retrying HEAD r.io/dead:1 (attempt 3/3 in 4s): HEAD http://r.io/v2/dead/manifests/1: HTTP 503");
    expect(lines.filter((l) => l.includes("gone"))).toEqual([]);
    // Two waits per failing image before its 3rd attempt: 2 s then 4 s; none for the 404.
    expect(p.tools.sleeps().sort()).toEqual([2, 2, 4, 4]);
    const heads = (repo: string) => p.registry.manifests({ method: "HEAD", repo }).map((x) => x.status);
    expect(heads("flaky")).toEqual([503, 503, 200]);
    expect(heads("dead")).toEqual([503, 503, 503]);
    expect(heads("gone")).toEqual([404]);
    // Nothing is copied without a digest; what is copied is copied once.
    expect(gets(p.registry, "r.io")).toEqual({ flaky: 1, arm64: 1 });
    expect(p.registry.counted()).toHaveLength(2);
  });

  it("copies no more images than the registry's quota allows, then fails naming the limit, the images left, when the window reopens, credentials and mirror", async () => {
    const p = await setup({ quota: { anonymous: 2, authenticated: 200, windowSeconds: 21_600 } });
    const r = await p.run(images(5), { budget: 0 });
    expect(r.status).toBe(1);
    const lines = progress(r.stderr);
    expect(lines).toContain("task-images: registry registry.sim:5000 allows 2 more pulls now (limit 2 per 21600s, anonymous); 5 images to pull from it");
    expect(warnings(r.stderr)).toEqual([
      "the 5 images from registry.sim:5000 need 2 more pull window(s) of 21600s (43200 s) beyond the 2 pulls left, more than this step may wait (0s); set credentials for registry.sim:5000 (reprobench:registries) or a mirror",
    ]);
    // The fake clock starts at 2026-01-01T00:00:00Z: the window of the first pull reopens 6 h later.
    expect(r.stderr.trim().split("\n").pop()).toBe(
      "task-images: registry registry.sim:5000's pull limit is used up (anonymous: 2 pulls per 21600s): 3 images left, the window reopens by 06:00:02 UTC; " +
        "that is after this step's time budget (0s, until 00:00:00 UTC), so 3 of 5 images are not pulled. " +
        "Set credentials for the registry (reprobench:registries[].username and the secret reprobench:registryPasswords) or a pull-through mirror (reprobench:registries[].mirror), then run up again",
    );
    expect(r.stderr.match(/^task-images: not pulled \(quota\) registry\.sim:5000\/q\/img\d:1$/gm)).toHaveLength(3);
    // Exactly the 2 pulls the quota had, no 429 (nothing was tried beyond it), no image copied twice, no waiting.
    expect(p.registry.counted()).toHaveLength(2);
    expect(p.registry.requests.filter((x) => x.status === 429)).toEqual([]);
    expect(Object.values(gets(p.registry))).toEqual([1, 1]);
    expect(Object.values(copies(p.tools))).toEqual([1, 1]);
    expect(p.registry.manifests({ method: "HEAD" }).every((x) => !x.counted)).toBe(true);
    expect(p.tools.sleeps()).toEqual([]);
    expect(r.stdout).toBe("");
  });

  it("waits for the pull window when the time budget allows it, and pulls the rest in the next passes", async () => {
    const p = await setup({ quota: { anonymous: 2, authenticated: 200, windowSeconds: 600 } });
    const r = await p.run(images(5), { budget: 1500 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain("task-images: 5/5 images ready\n");
    // Two windows of 600 s fit the 1500 s budget: no warning.
    expect(warnings(r.stderr)).toEqual([]);
    const lines = progress(r.stderr);
    expect(lines).toContain("task-images: registry registry.sim:5000 allows 2 more pulls now (limit 2 per 600s, anonymous); 5 images to pull from it");
    expect(lines).toContain("task-images: registry registry.sim:5000's pull limit is used up (anonymous: 2 pulls per 600s): 3 images left, the window reopens by 00:10:02 UTC; waiting until then (3 images left, pass 1)");
    expect(lines).toContain("task-images: registry registry.sim:5000's pull limit is used up (anonymous: 2 pulls per 600s): 1 images left, the window reopens by 00:20:04 UTC; waiting until then (1 images left, pass 2)");
    // The stand-in sleep advanced the registry's clock by each wait.
    expect(p.tools.sleeps()).toEqual([602, 602]);
    expect(p.registry.now() - 1_767_225_600).toBe(1204);
    // One counted GET per image, spread over the windows; never over the quota.
    expect(p.registry.counted().map((x) => x.repo).sort()).toEqual(["q/img1", "q/img2", "q/img3", "q/img4", "q/img5"]);
    expect(p.registry.requests.filter((x) => x.status === 429)).toEqual([]);
    expect(Object.values(copies(p.tools))).toEqual([1, 1, 1, 1, 1]);
    expect(lastJson(r).ready).toBe(5);
  });

  it("after the wait, reads the quota again with a HEAD that is retried like the others (a transient 503 costs no window)", async () => {
    // Whichever image waits for the window: its second HEAD (the one after the wait) answers 503 once.
    const p = await setup({ quota: { anonymous: 1, authenticated: 200, windowSeconds: 600 }, headFailOn: { "registry.sim:5000/q/img1:1": [2], "registry.sim:5000/q/img2:1": [2] } });
    const r = await p.run(images(2), { budget: 1000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain("task-images: 2/2 images ready\n");
    expect(progress(r.stderr).filter((l) => l.startsWith("task-images: retrying HEAD"))).toEqual([
      expect.stringMatching(/^task-images: retrying HEAD registry\.sim:5000\/q\/img[12]:1 \(attempt 2\/3 in 2s\): HEAD http:\/\/registry\.sim:5000\/v2\/q\/img[12]\/manifests\/1: HTTP 503$/),
    ]);
    // The wait, then the retry's 2 s: not a second window.
    expect(p.tools.sleeps()).toEqual([602, 2]);
    expect(p.registry.counted()).toHaveLength(2);
  });

  it("does not retry a 429 from the copy: the image waits for the window (or the step fails saying so)", async () => {
    // The HEAD announces one pull more than the registry then allows (someone else pulled meanwhile).
    const options = { quota: { anonymous: 2, authenticated: 200, windowSeconds: 21_600 }, overstate: 1 };
    const p = await setup(options);
    const r = await p.run(images(3), { budget: 0 });
    expect(r.status).toBe(1);
    const refused = p.registry.requests.filter((x) => x.status === 429);
    expect(refused).toHaveLength(1);
    expect(r.stderr).toContain("toomanyrequests: You have reached your unauthenticated pull rate limit. https://www.docker.com/increase-rate-limit");
    expect(r.stderr).not.toMatch(/retrying skopeo copy/);
    expect(r.stderr).toContain(`task-images: not pulled (quota) registry.sim:5000/${refused[0].repo}:1\n`);
    expect(r.stderr).toContain("(anonymous: 2 pulls per 21600s): 1 images left, the window reopens by 06:00:02 UTC");
    expect(Object.values(gets(p.registry))).toEqual([1, 1, 1]);

    // With a budget that covers the window, the refused image is pulled after it.
    const q = await setup(options);
    const r2 = await q.run(images(3), { budget: 30_000 });
    expect(r2.status, r2.stderr).toBe(0);
    expect(q.tools.sleeps()).toEqual([21_602]);
    const again = q.registry.requests.filter((x) => x.status === 429)[0].repo;
    expect(q.registry.manifests({ method: "GET", repo: again }).map((x) => x.status)).toEqual([429, 200]);
    expect(q.registry.counted()).toHaveLength(3);
    expect(r2.stderr).toContain("task-images: 3/3 images ready\n");
  });

  it("pulls with the stack's credentials: the account's limit applies, and the password is in no output and on no command line", async () => {
    const password = "s3cr3t-Pa55word";
    const p = await setup({ users: { "ci-user": password }, quota: { anonymous: 1, authenticated: 10, windowSeconds: 21_600 } });
    const secret = registryScriptEnv([{ registry: "registry.sim:5000", username: "ci-user", password }], []);
    const r = await p.run(images(3), { secret });
    expect(r.status, r.stderr).toBe(0);
    expect(progress(r.stderr)).toContain("task-images: registry registry.sim:5000 allows 10 more pulls now (limit 10 per 21600s, with this stack's credentials); 3 images to pull from it");
    expect(warnings(r.stderr)).toEqual([]);
    expect(r.stderr).toContain("task-images: 3/3 images ready\n");
    // Every HEAD and GET came as ci-user (skopeo read the step's auth file), 3 counted against the account.
    expect(new Set(p.registry.requests.map((x) => x.user))).toEqual(new Set(["ci-user"]));
    expect(p.registry.counted({ user: "ci-user" })).toHaveLength(3);
    const base64 = Buffer.from(`ci-user:${password}`).toString("base64");
    const argv = p.tools.calls().join("\n");
    for (const text of [r.stdout, r.stderr, argv]) {
      expect(text).not.toContain(password);
      expect(text).not.toContain(base64);
    }
    // The credentials' private directory is removed at the end.
    expect(readdirSync(p.dir).filter((f) => f.startsWith("registry."))).toEqual([]);
  });

  it("does not gate a mirrored registry on the upstream's quota: its images come through the mirror", async () => {
    const p = await setup({ hostQuota: { "registry.sim:5000": { anonymous: 1, authenticated: 10, windowSeconds: 21_600 }, "mirror.sim:5000": null } });
    const secret = registryScriptEnv([], [{ registry: "registry.sim:5000", url: "http://mirror.sim:5000" }]);
    expect(secret.MIRRORED_REGISTRIES).toBe("registry.sim:5000");
    const r = await p.run(images(3), { secret });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain("task-images: 3/3 images ready\n");
    expect(progress(r.stderr).filter((l) => l.includes("more pulls now") || l.includes("limit is used up"))).toEqual([]);
    expect(warnings(r.stderr)).toEqual([]);
    // The digests by a (free) HEAD upstream, the manifests from the mirror; the upstream counted nothing.
    expect(p.registry.manifests({ method: "HEAD", host: "registry.sim:5000" })).toHaveLength(3);
    expect(p.registry.manifests({ method: "GET", host: "registry.sim:5000" })).toEqual([]);
    expect(gets(p.registry, "mirror.sim:5000")).toEqual({ "q/img1": 1, "q/img2": 1, "q/img3": 1 });
    expect(p.tools.sleeps()).toEqual([]);
  });
});

describe("harbor-preflight.sh", () => {
  /** A fake venv: bin/harbor prints $PRINTED (what --print-config would) and records its argv; bin/python is python3 (PyYAML). */
  function fakeVenv(dir: string): string {
    const venv = path.join(dir, "venv");
    mkdirSync(path.join(venv, "bin"), { recursive: true });
    executable(path.join(venv, "bin/harbor"), `#!/usr/bin/env bash\necho "$*" >"${dir}/harbor-argv"\nenv >"${dir}/harbor-env"\nprintf '%s' "$PRINTED"\n`);
    executable(path.join(venv, "bin/python"), `#!/usr/bin/env bash\nexec python3 "$@"\n`);
    return venv;
  }

  function setup(mutatePrinted: (printed: Record<string, unknown>) => void = () => undefined) {
    const dir = tempDir();
    const tools = path.join(dir, "tools/bin");
    mkdirSync(tools, { recursive: true });
    executable(path.join(tools, "tmux"), "#!/bin/sh\n");
    executable(path.join(tools, "asciinema"), "#!/bin/sh\n");
    const c = seedConfig({ harbor: { venv: fakeVenv(dir), workDir: dir }, toolBundle: { hostDir: path.join(dir, "tools") } });
    const paths = runPaths(c.harbor, "job-1");
    const env = preflightScriptEnv(runSettings(c, apiBase(c), "reprobench.test"), paths);
    // What harbor 0.21 printed for the seed config (run against the real harbor: defaults omitted).
    const printed: Record<string, unknown> = {
      agent_timeout_multiplier: 6.0,
      agent_setup_timeout_multiplier: 5.0,
      n_concurrent_trials: 25,
      environment: { type: "docker", extra_docker_compose: [paths.composeOverride] },
      agents: [{ name: "terminus-2", model_name: "openai/Qwen/Qwen3.8-27B", n_concurrent: 20, kwargs: { api_base: "http://127.0.0.1:30000/v1", temperature: 1.0, record_terminal_session: true, llm_call_kwargs: { top_p: 0.95 }, model_info: { max_input_tokens: 262144, max_output_tokens: 65536, input_cost_per_token: 0, output_cost_per_token: 0 } } }],
      datasets: [{ path: "/var/lib/reprobench/terminal-bench-2-1/tasks" }],
    };
    mutatePrinted(printed);
    // The dataset Harbor resolves is harbor-resolve-dataset.test.ts's: here a stand-in that resolves none.
    const resolveStub = `echo '{"datasets":[]}'`;
    return { dir, paths, run: () => runScript("harbor-preflight.sh", { ...env, PRINTED: JSON.stringify(printed), RESOLVE_SCRIPT: resolveStub }) };
  }

  it("writes both files, runs harbor --print-config with them, and passes when the fields match", () => {
    const { dir, paths, run } = setup();
    const r = run();
    expect(r.status, r.stderr).toBe(0);
    expect(readFileSync(path.join(dir, "harbor-argv"), "utf8").trim()).toBe(`run --config ${paths.jobConfig} --extra-docker-compose ${paths.composeOverride} --print-config`);
    expect(readFileSync(path.join(dir, "harbor-env"), "utf8")).toMatch(/^HARBOR_TELEMETRY=0$/m);
    expect(readFileSync(paths.jobConfig, "utf8")).toContain("agent_timeout_multiplier: 6.0");
    expect(readFileSync(paths.composeOverride, "utf8")).toContain("host.docker.internal:host-gateway");
    expect(r.stderr).toMatch(/16 fields match .* 2 default-valued fields match/);
  });

  it("names every field where --print-config disagrees", () => {
    const { run } = setup((p) => {
      p.agent_timeout_multiplier = 3.0;
      (p.agents as Record<string, Record<string, unknown>>[])[0].kwargs.api_base = "http://elsewhere/v1";
    });
    const r = run();
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("agent_timeout_multiplier: expected 6, got 3");
    expect(r.stderr).toContain('agents.0.kwargs.api_base: expected "http://127.0.0.1:30000/v1", got "http://elsewhere/v1"');
  });

  it("fails when the override is not in the resolved config", () => {
    const { run } = setup((p) => {
      p.environment = { type: "docker" };
    });
    const r = run();
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/does not list .*docker-override.yaml/);
  });
});

describe("harbor-install.sh", () => {
  it("refuses a wheel whose sha256 differs, naming both hashes", () => {
    const dir = tempDir();
    const links = path.join(dir, "wheels");
    mkdirSync(links);
    writeFileSync(path.join(links, "harbor-0.21.0-py3-none-any.whl"), "not the real wheel");
    const got = execFileSync("sha256sum", [path.join(links, "harbor-0.21.0-py3-none-any.whl")], { encoding: "utf8" }).split(" ")[0];
    const want = "c77d779a03f1a9e8ecb3c449e17f39a9728b82238832f1fd28632eb9426c0a21";
    const r = runScript("harbor-install.sh", { HARBOR_VERSION: "0.21.0", WHEEL_SHA256: want, VENV: path.join(dir, "venv"), PYTHON_VERSION: "3.13", FIND_LINKS: links, WORK_DIR: dir, JOBS_DIR: path.join(dir, "jobs"), UPLOADS_DIR: path.join(dir, "uploads") });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`expected ${want} (harbor.wheelSha256), got ${got}`);
  });

  it("names harbor.pipFindLinks when the wheel is not there", () => {
    const dir = tempDir();
    const r = runScript("harbor-install.sh", { HARBOR_VERSION: "0.21.0", WHEEL_SHA256: "0".repeat(64), VENV: path.join(dir, "venv"), PYTHON_VERSION: "3.13", FIND_LINKS: dir, WORK_DIR: dir, JOBS_DIR: path.join(dir, "jobs"), UPLOADS_DIR: path.join(dir, "uploads") });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/harbor-0.21.0-py3-none-any.whl not found \(harbor.pipFindLinks/);
  });
});

describe("harbor-dataset.sh", () => {
  it("swaps an uploaded dataset in and asserts the task count, printing every task.toml", () => {
    const dir = tempDir();
    const upload = path.join(dir, "upload");
    execFileSync("cp", ["-a", path.join(REPO, "sim/dataset"), upload]);
    const env = { UPLOAD_DIR: upload, DATASET_DIR: path.join(dir, "ds"), TASKS_DIR: path.join(dir, "ds"), EXPECTED_COUNT: "3" };
    const r = runScript("harbor-dataset.sh", env);
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout.trim().split("\n").pop()!);
    expect(report.count).toBe(3);
    expect(report.identity).toMatch(/^dir:[0-9a-f]{64}$/);
    expect(Object.keys(report.taskTomls).sort()).toEqual(["hello-file/task.toml", "sha-preimage/task.toml", "sum-numbers/task.toml"]);
    const check = runScript("harbor-dataset-check.sh", { DATASET_DIR: env.DATASET_DIR, TASKS_DIR: env.TASKS_DIR, GIT: "0" });
    expect(check.stdout.trim()).toBe(`dataset=${report.identity} tasks=3`);
    const wrong = runScript("harbor-dataset.sh", { ...env, EXPECTED_COUNT: "89" });
    expect(wrong.status).toBe(1);
    expect(wrong.stderr).toContain("found 3 task.toml files under");
    expect(wrong.stderr).toContain("expected 89 (harbor.expectedTaskCount)");
  });

  it("checks out a git dataset at the pinned commit", () => {
    const dir = tempDir();
    const repo = path.join(dir, "origin");
    execFileSync("cp", ["-a", path.join(REPO, "sim/dataset"), path.join(dir, "tasks-src")]);
    mkdirSync(repo);
    const git = (...a: string[]) => execFileSync("git", ["-C", repo, "-c", "user.email=t@t", "-c", "user.name=t", ...a], { encoding: "utf8" }).trim();
    git("init", "-q");
    execFileSync("cp", ["-a", path.join(dir, "tasks-src"), path.join(repo, "tasks")]);
    git("add", ".");
    git("commit", "-qm", "one");
    const pinned = git("rev-parse", "HEAD");
    rmSync(path.join(repo, "tasks/hello-file"), { recursive: true });
    git("commit", "-qam", "two");
    const env = { DATASET_REPO: `file://${repo}`, DATASET_COMMIT: pinned, DATASET_DIR: path.join(dir, "ds"), TASKS_DIR: path.join(dir, "ds/tasks"), EXPECTED_COUNT: "3" };
    const r = runScript("harbor-dataset.sh", env);
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout.trim().split("\n").pop()!).identity).toBe(pinned);
    expect(runScript("harbor-dataset-check.sh", { DATASET_DIR: env.DATASET_DIR, TASKS_DIR: env.TASKS_DIR, GIT: "1" }).stdout.trim()).toBe(`dataset=${pinned} tasks=3`);
  });
});
