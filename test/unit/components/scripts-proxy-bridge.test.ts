// proxy-bridge.sh as CheckedCommand runs it (retry.sh prepended, on stdin of `bash -s`), with stand-ins on
// PATH for docker, systemctl, socat and ss, and the unit written under a temporary /etc: the check image
// is pulled with retry when the host lacks it (a proxy that drops one connection in ten failed the whole
// `up` at docker run's own pull), the check container runs once, and a pull that never works is named.
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { scriptWithEnv } from "../../../components/host-script";

const REPO = resolve(__dirname, "../../..");
let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

function stub(bin: string, name: string, body: string): void {
  writeFileSync(join(bin, name), `#!/usr/bin/env bash\n${body}\n`);
  chmodSync(join(bin, name), 0o755);
}

/** Runs the bridge script with docker pulls failing `pullFailures` times (502); returns its output and the docker calls. */
function runBridge(pullFailures: number) {
  const dir = mkdtempSync(join(tmpdir(), "reprobench-bridge-"));
  dirs.push(dir);
  const bin = join(dir, "bin");
  mkdirSync(bin);
  mkdirSync(join(dir, "etc"));
  stub(bin, "sleep", "true");
  stub(bin, "socat", "true");
  stub(bin, "systemctl", "true");
  stub(bin, "ss", 'echo "LISTEN 0 5 172.17.0.1:27891 0.0.0.0:*"');
  stub(
    bin,
    "docker",
    `echo "$*" >>"${dir}/docker-calls"
case "$1 $2" in
  "network inspect") echo 172.17.0.1 ;;
  "image inspect") exit 1 ;;
  "pull --quiet")
    n=$(( $(cat "${dir}/pulls" 2>/dev/null || echo 0) + 1 )); echo "$n" >"${dir}/pulls"
    if [ "$n" -le ${pullFailures} ]; then echo "Error response from daemon: received unexpected HTTP status: 502 Bad Gateway" >&2; exit 1; fi
    echo sha256:feed ;;
  "run --rm") echo "bridge check: fetched" ;;
esac`,
  );
  // The unit file goes under the temporary /etc: the script writes /etc/systemd/system/$UNIT.service.
  const script = scriptWithEnv(["retry", "proxy-bridge"], {
    UNIT: "reprobench-proxy-bridge",
    BRIDGE_PORT: "27891",
    UPSTREAM_HOST: "127.0.0.1",
    UPSTREAM_PORT: "27890",
    CONTAINER_HOST: "host.docker.internal",
    CHECK_IMAGE: "registry.sim:5000/reprobench/task-base:latest",
    CHECK_URL: "http://proxy-check.reprobench.test/",
  }).replaceAll("/etc/systemd/system/", `${dir}/etc/`);
  const r = spawnSync("bash", ["-s"], { input: script, env: { PATH: `${bin}:/usr/bin:/bin`, RETRY_BACKOFF_SCALE: "0" }, encoding: "utf8" });
  const calls = readFileSync(join(dir, "docker-calls"), "utf8").trim().split("\n");
  return { ...r, calls };
}

describe("proxy-bridge.sh", () => {
  it("is shellcheck-clean", () => {
    const r = spawnSync("shellcheck", ["-x", join(REPO, "components/scripts/proxy-bridge.sh")], { encoding: "utf8" });
    expect(r.error, "shellcheck must be installed").toBeUndefined();
    expect(r.stdout).toBe("");
    expect(r.status).toBe(0);
  });

  it("pulls a missing check image with retry through two 502s, then runs the check once", () => {
    const r = runBridge(2);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim().split("\n").pop()).toBe("172.17.0.1:27891");
    expect(r.calls.filter((c) => c.startsWith("pull "))).toHaveLength(3);
    expect(r.calls.filter((c) => c.startsWith("run "))).toHaveLength(1);
    expect(r.stderr).toMatch(/reprobench-proxy-bridge: progress: retrying docker pull registry\.sim:5000\/reprobench\/task-base:latest \(attempt 2\/5 in \d+s\): .*502 Bad Gateway/);
  });

  it("names the image and the last error when every pull fails, and runs no check", () => {
    const r = runBridge(99);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("reprobench-proxy-bridge: cannot pull the check image registry.sim:5000/reprobench/task-base:latest: Error response from daemon: received unexpected HTTP status: 502 Bad Gateway");
    expect(r.calls.filter((c) => c.startsWith("run "))).toHaveLength(0);
  });
});
