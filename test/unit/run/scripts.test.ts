// The run's host scripts: shellcheck-clean, and the ones that need neither systemd nor a real registry
// run here against recording stand-ins for docker, skopeo and harbor (on PATH / in a fake venv).
import { createHash } from "node:crypto";
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { apiBase } from "../../../infra/config-derive";
import { preflightScriptEnv } from "../../../components/benchmark-run";
import { runPaths } from "../../../components/run-config";
import { runSettings } from "../../../infra/run-config";
import { REPO, seedConfig } from "./helpers";

const SCRIPTS = path.join(REPO, "components/scripts");
const OURS = readdirSync(SCRIPTS).filter((f) => /^(harbor-|task-images)/.test(f));

let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});
function tempDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), "reprobench-run-"));
  dirs.push(d);
  return d;
}
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
    const files = [...OURS.map((f) => path.join(SCRIPTS, f)), path.join(REPO, "sim/wheelhouse.sh")];
    const r = spawnSync("shellcheck", ["--severity=style", ...files], { encoding: "utf8" });
    expect(r.error, "shellcheck must be installed (apt-get install -y shellcheck)").toBeUndefined();
    expect(r.stdout).toBe("");
    expect(r.status).toBe(0);
  });
});

/** A PATH with stand-in docker and skopeo: images "present" are files in $STATE; skopeo fails per $FAIL_<n>. */
function fakeImageTools(dir: string): string {
  const bin = path.join(dir, "bin");
  mkdirSync(bin, { recursive: true });
  mkdirSync(path.join(dir, "state"), { recursive: true });
  executable(
    path.join(bin, "docker"),
    `#!/usr/bin/env bash
set -euo pipefail
key() { printf '%s' "$1" | tr '/:' '__'; }
echo "docker $*" >>"$STATE/calls"
case "$1 $2" in
  "image inspect")
    image=\${!#}
    [ -f "$STATE/$(key "$image")" ] || exit 1
    case "$*" in *Architecture*) cat "$STATE/$(key "$image")";; *Id*) echo "sha256:$(key "$image")";; esac ;;
  "image rm") rm -f "$STATE/$(key "\${!#}")" ;;
  *) exit 2 ;;
esac
`,
  );
  executable(
    path.join(bin, "skopeo"),
    `#!/usr/bin/env bash
set -euo pipefail
echo "skopeo $*" >>"$STATE/calls"
src=; dst=; layout=
for a in "$@"; do case "$a" in docker://*) src=\${a#docker://};; docker-daemon:*) dst=\${a#docker-daemon:};; oci:*) layout=\${a#oci:}; layout=\${layout%:image};; esac; done
if [ "$1" = inspect ]; then
  # The tag's digest (sha256 of the reference); fails as often as $STATE/failures says.
  n=$(grep -c "skopeo inspect .*docker://$src$" "$STATE/calls" || true)
  fails=$(grep -F "$src=" "$STATE/failures" 2>/dev/null | cut -d= -f2 || true)
  if [ "$n" -le "\${fails:-0}" ]; then echo "time=x level=fatal msg=\\"simulated failure $n for $src\\"" >&2; exit 1; fi
  echo "sha256:$(printf '%s' "$src" | sha256sum | cut -c1-64)"
  exit 0
fi
# docker://… → oci:LAYOUT:image keeps the source in the layout; oci:LAYOUT:image → docker-daemon:… loads it.
if [ -n "$src" ]; then mkdir -p "$layout"; echo "$src" >"$layout/src"; exit 0; fi
src=$(cat "$layout/src")
key=$(printf '%s' "$dst" | tr '/:' '__')
arch=amd64; case "$src" in *arm64*) arch=arm64;; esac
echo "$arch" >"$STATE/$key"
`,
  );
  executable(path.join(bin, "sleep"), "#!/bin/sh\necho \"sleep $*\" >>\"$STATE/calls\"\n");
  return bin;
}

describe("task-images.sh", () => {
  function pull(dir: string, images: string[], extra: Record<string, string> = {}) {
    const bin = fakeImageTools(dir);
    const daemon = path.join(dir, "daemon.json");
    writeFileSync(daemon, JSON.stringify({ "insecure-registries": ["registry.sim:5000"] }));
    return runScript("task-images.sh", {
      PATH: `${bin}:${process.env.PATH}`,
      STATE: path.join(dir, "state"),
      IMAGES: images.join("\n"),
      CONCURRENCY: "3",
      ATTEMPTS: "3",
      DAEMON_JSON: daemon,
      BACKOFF_SECONDS: "2",
      DIGESTS_DIR: path.join(dir, "digests"),
      ...extra,
    });
  }

  it("pulls what is missing, skips what is cached, uses HTTP for insecure registries, ends with N/N images ready", () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, "state"), { recursive: true });
    const r0 = pull(dir, ["registry.sim:5000/a/one:1", "alexgshaw/regex-chess:20251031", "registry.sim:5000/a/one:1"]);
    expect(r0.status, r0.stderr).toBe(0);
    expect(r0.stderr).toContain("2/2 images ready");
    const tagDigest = (ref: string) => `sha256:${createHash("sha256").update(ref).digest("hex")}`;
    const one = tagDigest("registry.sim:5000/a/one:1");
    const chess = tagDigest("alexgshaw/regex-chess:20251031");
    expect(r0.stderr).toContain(`pulled registry.sim:5000/a/one:1 at ${one}`);
    const calls = readFileSync(path.join(dir, "state/calls"), "utf8");
    // The tag is resolved first (over HTTP for an insecure registry), then exactly that digest is copied into
    // an OCI layout (a retry refetches only missing blobs), which is loaded into the daemon and removed.
    const layout = (ref: string) => path.join(dir, "digests", `.oci-${createHash("sha256").update(ref).digest("hex").slice(0, 16)}`);
    expect(calls).toContain("skopeo inspect --override-os linux --override-arch amd64 --tls-verify=false --retry-times 3 --format {{.Digest}} docker://registry.sim:5000/a/one:1");
    expect(calls).toContain(`skopeo copy --quiet --override-os linux --override-arch amd64 --src-tls-verify=false --retry-times 3 docker://registry.sim:5000/a/one@${one} oci:${layout("registry.sim:5000/a/one:1")}:image`);
    expect(calls).toContain(`skopeo copy --quiet oci:${layout("registry.sim:5000/a/one:1")}:image docker-daemon:registry.sim:5000/a/one:1`);
    expect(calls).toContain(`skopeo copy --quiet --override-os linux --override-arch amd64 --retry-times 3 docker://alexgshaw/regex-chess@${chess} oci:${layout("alexgshaw/regex-chess:20251031")}:image`);
    expect(existsSync(layout("registry.sim:5000/a/one:1"))).toBe(false);
    // The manifest records the registry digests.
    expect(JSON.parse(r0.stdout.trim().split("\n").pop()!)).toEqual({
      ready: 2,
      total: 2,
      images: { "registry.sim:5000/a/one:1": `registry.sim:5000/a/one@${one}`, "alexgshaw/regex-chess:20251031": `alexgshaw/regex-chess@${chess}` },
    });
    // A later run finds them cached and still reports the digests they were pulled at.
    const r1 = pull(dir, ["registry.sim:5000/a/one:1"]);
    expect(r1.stderr).toContain("cached registry.sim:5000/a/one:1");
    expect(JSON.parse(r1.stdout.trim().split("\n").pop()!).images).toEqual({ "registry.sim:5000/a/one:1": `registry.sim:5000/a/one@${one}` });
  });

  it("skips cached images without calling skopeo", () => {
    const dir = tempDir();
    const bin = fakeImageTools(dir);
    writeFileSync(path.join(dir, "state/x_y_1"), "amd64\n");
    const r = runScript("task-images.sh", { PATH: `${bin}:${process.env.PATH}`, STATE: path.join(dir, "state"), IMAGES: "x/y:1", CONCURRENCY: "2", ATTEMPTS: "1", DAEMON_JSON: "/nonexistent", DIGESTS_DIR: path.join(dir, "digests") });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain("cached x/y:1");
    expect(readFileSync(path.join(dir, "state/calls"), "utf8")).not.toContain("skopeo");
  });

  it("retries with exponential backoff, then fails naming every missing image (and an arm64 one)", () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, "state"), { recursive: true });
    // flaky:1 fails twice then succeeds on attempt 3; dead:1 always fails; arm64 image pulls but is the wrong architecture.
    writeFileSync(path.join(dir, "state/failures"), "r.io/flaky:1=2\nr.io/dead:1=99\n");
    const r = pull(dir, ["r.io/flaky:1", "r.io/dead:1", "r.io/arm64:1"], { INSECURE_REGISTRIES: "r.io" });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/pulled r\.io\/flaky:1 at sha256:[0-9a-f]{64}\n/);
    expect(r.stderr).toContain("FAILED r.io/dead:1 after 3 attempts");
    expect(r.stderr).toContain("r.io/arm64:1 has architecture arm64, expected amd64");
    expect(r.stderr).toContain("1/3 images ready");
    expect(r.stderr).toMatch(/missing: r.io\/arm64:1\n.*missing: r.io\/dead:1/);
    const sleeps = readFileSync(path.join(dir, "state/calls"), "utf8").split("\n").filter((l) => l.startsWith("sleep"));
    // Two waits per failing image before its 3rd attempt: 2 s then 4 s.
    expect(sleeps.sort()).toEqual(["sleep 2", "sleep 2", "sleep 4", "sleep 4"]);
    expect(readFileSync(path.join(dir, "state/calls"), "utf8")).toContain("--tls-verify=false --retry-times 3 --format {{.Digest}} docker://r.io/dead:1");
    // Each retry is a progress line naming what was retried, the next attempt and the wait.
    expect(r.stderr).toMatch(/task-images: progress: retrying skopeo inspect r\.io\/flaky:1 \(attempt 2\/3 in 2s\): .*simulated failure 1 for r\.io\/flaky:1/);
    expect(r.stderr).toMatch(/task-images: progress: retrying skopeo inspect r\.io\/flaky:1 \(attempt 3\/3 in 4s\)/);
    expect(r.stderr).toContain("FAILED r.io/dead:1 after 3 attempts (registry r.io,");
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
