// bin/reprobench: commands that do not drive Pulumi need only Node >= 22 and node_modules. Proven by
// running it with an empty toolchain cache: scripts/toolchain.sh would create its lock file there first
// (and then start a Go build), so the cache must stay empty. Without Node 22 it says what is needed; a
// symlinked node_modules is never reinstalled through (npm ci would empty its target).
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const REPO = resolve(__dirname, "../../..");
const BIN = join(REPO, "bin/reprobench");
let dirs: string[] = [];
const tmp = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

const reprobench = (args: string[], env: Record<string, string>, cwd: string, bin = BIN) =>
  spawnSync("bash", [bin, ...args], { cwd, env: { HOME: process.env.HOME ?? "/root", ...env }, encoding: "utf8", timeout: 60_000 });

describe("bin/reprobench without the Pulumi toolchain", () => {
  it("config validate runs on Node alone, from any directory, and never starts the toolchain", () => {
    const cache = tmp("reprobench-emptycache-");
    const r = reprobench(["config", "validate", join(REPO, "Pulumi.local.yaml")], { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, REPROBENCH_CACHE: cache }, tmpdir());
    expect(r.stderr).not.toContain("[toolchain");
    expect({ status: r.status, stdout: r.stdout.trim() }).toEqual({ status: 0, stdout: "ok" });
    expect(readdirSync(cache)).toEqual([]);
  });

  it("pull in its address form runs on Node alone too (only pull --stack reads a stack)", () => {
    const cache = tmp("reprobench-emptycache-");
    const r = reprobench(["pull", "--help"], { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, REPROBENCH_CACHE: cache }, tmpdir());
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("reprobench pull --stack NAME [DIR]");
    expect(r.stderr).not.toContain("[toolchain");
    expect(readdirSync(cache)).toEqual([]);
  });

  it("without Node >= 22 says what it found and what to do", () => {
    const fakeBin = tmp("reprobench-fakenode-");
    // A node 20 first on PATH (whatever the machine has after it).
    writeFileSync(join(fakeBin, "node"), '#!/bin/sh\ncase "$1" in -p) echo 20 ;; --version) echo v20.0.0 ;; esac\n');
    chmodSync(join(fakeBin, "node"), 0o755);
    const r = reprobench(["config", "validate", "Pulumi.local.yaml"], { PATH: `${fakeBin}:/usr/bin:/bin`, REPROBENCH_CACHE: tmp("reprobench-emptycache-") }, REPO);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`reprobench: needs Node.js >= 22 (found: ${fakeBin}/node v20.0.0). Put one on PATH, or run scripts/toolchain.sh once`);
  });

  it("never runs npm ci through a symlinked node_modules (it would empty the other checkout's)", () => {
    const checkout = tmp("reprobench-linked-");
    mkdirSync(join(checkout, "bin"));
    mkdirSync(join(checkout, "scripts"));
    copyFileSync(BIN, join(checkout, "bin/reprobench"));
    copyFileSync(join(REPO, "scripts/node-env.sh"), join(checkout, "scripts/node-env.sh"));
    const shared = tmp("reprobench-shared-modules-");
    writeFileSync(join(shared, "sentinel"), "another checkout's module");
    symlinkSync(shared, join(checkout, "node_modules"));
    writeFileSync(join(checkout, "package-lock.json"), "{}"); // newer than anything in node_modules
    const r = reprobench(["config", "--help"], { PATH: `${dirname(process.execPath)}:/usr/bin:/bin` }, checkout, join(checkout, "bin/reprobench"));
    expect(r.stderr).toContain(`${checkout}/node_modules is a symlink and may not match package-lock.json; not running npm ci through it`);
    expect(r.stderr).not.toContain("installing node_modules");
    expect(existsSync(join(shared, "sentinel"))).toBe(true);
  });
});
