// retry.sh: the shared retry helper prepended to host scripts (scriptWithEnv(["retry", name], env)). Proven
// with a real bash running a command that fails a given number of times (a counter file), and a stand-in
// `sleep` on PATH that records how long each wait would have been, so nothing waits.
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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

/** Runs `body` after retry.sh (as CheckedCommand would: the script on stdin of `bash -s`). */
function run(body: string, env: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), "reprobench-retry-"));
  dirs.push(dir);
  const bin = join(dir, "bin");
  spawnSync("mkdir", [bin]);
  writeFileSync(join(bin, "sleep"), `#!/bin/sh\necho "sleep $*" >>"${dir}/sleeps"\n`);
  chmodSync(join(bin, "sleep"), 0o755);
  // flaky: fails while the counter is below $FAILS, printing two stderr lines; prints "ok N" on stdout.
  writeFileSync(
    join(bin, "flaky"),
    `#!/usr/bin/env bash\nn=$(( $(cat "${dir}/count" 2>/dev/null || echo 0) + 1 ))\necho "$n" >"${dir}/count"\n` +
      `if [ "$n" -le "$FAILS" ]; then echo "noise $n" >&2; printf 'progress\\rcurl: (56) CONNECT tunnel failed, response 407 (try %s)\\n' "$n" >&2; exit 7; fi\necho "ok $n"\n`,
  );
  chmodSync(join(bin, "flaky"), 0o755);
  const script = `${scriptWithEnv(["retry"], {})}\nset -euo pipefail\n${body}\n`;
  const r = spawnSync("bash", ["-s"], { input: script, env: { PATH: `${bin}:${process.env.PATH}`, RETRY_NAME: "demo", ...env }, encoding: "utf8" });
  const read = (f: string) => {
    try {
      return readFileSync(join(dir, f), "utf8");
    } catch {
      return "";
    }
  };
  return { ...r, count: Number(read("count").trim() || 0), sleeps: read("sleeps").trim().split("\n").filter(Boolean) };
}

describe("retry.sh", () => {
  it("is shellcheck-clean", () => {
    const r = spawnSync("shellcheck", ["--severity=style", join(REPO, "components/scripts/retry.sh")], { encoding: "utf8" });
    expect(r.error, "shellcheck must be installed").toBeUndefined();
    expect(r.stdout).toBe("");
    expect(r.status).toBe(0);
  });

  it("retries a command that fails twice, says so on progress lines with the last stderr line, doubles the wait", () => {
    const r = run(`out=$(retry 5 3 "the flaky download" -- flaky)\necho "got: $out"`, { FAILS: "2" });
    expect(r.status, r.stderr).toBe(0);
    expect(r.count).toBe(3);
    expect(r.stdout).toBe("got: ok 3\n");
    const progress = r.stderr.split("\n").filter((l) => l.includes(": progress: "));
    expect(progress).toEqual([
      "demo: progress: retrying the flaky download (attempt 2/5 in 3s): curl: (56) CONNECT tunnel failed, response 407 (try 1)",
      "demo: progress: retrying the flaky download (attempt 3/5 in 6s): curl: (56) CONNECT tunnel failed, response 407 (try 2)",
    ]);
    // The failed attempts' stderr is still shown.
    expect(r.stderr).toContain("noise 1\n");
    expect(r.sleeps).toEqual(["sleep 3", "sleep 6"]);
  });

  it("returns the last attempt's status after N attempts so the caller can die with its own message", () => {
    const r = run(`retry 3 1 "the index" -- flaky || { s=$?; echo "gave up with $s" >&2; exit 9; }`, { FAILS: "99" });
    expect(r.status).toBe(9);
    expect(r.count).toBe(3);
    expect(r.stderr).toContain("gave up with 7");
    expect(r.stderr.match(/progress: retrying/g)).toHaveLength(2);
    expect(r.stderr).toContain("(attempt 3/3 in 2s)");
    expect(r.sleeps).toEqual(["sleep 1", "sleep 2"]);
  });

  it("does not wait when RETRY_BACKOFF_SCALE is 0, and runs once when the first attempt succeeds", () => {
    const r = run(`retry 4 5 x -- flaky >/dev/null\nretry 4 5 y -- flaky`, { FAILS: "1", RETRY_BACKOFF_SCALE: "0" });
    expect(r.status, r.stderr).toBe(0);
    expect(r.count).toBe(3);
    expect(r.stderr).toContain("demo: progress: retrying x (attempt 2/4 in 0s)");
    expect(r.stderr).not.toContain("retrying y");
    expect(r.sleeps).toEqual([]);
  });

  it("works under set -e with a failing shell function, and names a failure without stderr by its status", () => {
    const r = run(`f() { false; }\nretry 2 0 "a function" -- f || echo "status $?"`);
    expect(r.stdout).toBe("status 1\n");
    expect(r.stderr).toContain("demo: progress: retrying a function (attempt 2/2 in 0s): exit status 1");
  });

  it("stops at once when the command says retrying is pointless (status 97), keeping its last stderr line for the caller", () => {
    const r = run(`refuse() { echo "curl: (56) CONNECT tunnel failed, response 403" >&2; return 97; }\nretry 5 1 x -- refuse || echo "status $? / $RETRY_LAST_ERROR"`);
    expect(r.stdout).toBe("status 97 / curl: (56) CONNECT tunnel failed, response 403\n");
    expect(r.stderr).not.toContain("progress: retrying");
    expect(r.sleeps).toEqual([]);
  });

  it("redact_url drops credentials; proxy_hostport names the proxy curl would use (host:port only), honouring NO_PROXY", () => {
    const r = run(
      [
        `redact_url "https://tok:en@github.com/a/b.git"; echo`,
        `redact_url "http://pypi.sim/simple/"; echo`,
        `redact_url "http://pypi.sim/a@b"; echo`,
        `proxy_hostport "http://pypi.sim/simple/"; echo "|"`,
        `proxy_hostport "https://pypi.org/simple/"; echo "|"`,
        `proxy_hostport "http://127.0.0.1:8080/x"; echo "|"`,
        `proxy_hostport "http://a.internal.example/x"; echo "|"`,
      ].join("\n"),
      { http_proxy: "http://reprobench:p%40ss@proxy.sim:3128", HTTPS_PROXY: "http://u:v@proxy.sim:3129/", NO_PROXY: "127.0.0.1,localhost, .internal.example" },
    );
    expect(r.stdout.split("\n")).toEqual([
      "https://github.com/a/b.git",
      "http://pypi.sim/simple/",
      "http://pypi.sim/a@b",
      "proxy.sim:3128|",
      "proxy.sim:3129|",
      "|",
      "|",
      "",
    ]);
  });

  it("refuses a non-numeric attempt count", () => {
    const r = run(`retry many 1 x -- true || echo "status $?"`);
    expect(r.stdout).toBe("status 2\n");
    expect(r.stderr).toContain("attempts must be a number");
  });
});
