// bin/reprobench: commands that do not drive Pulumi need only Node >= 22 and node_modules. Proven by
// running it with an empty toolchain cache: scripts/toolchain.sh would create its lock file there first
// (and then start a Go build), so the cache must stay empty. Without Node 22 it fetches one (or says what is
// needed); a
// symlinked node_modules is never reinstalled through (npm ci would empty its target).
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { run } from "../../../sim/exec";

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

// Asynchronous (sim/exec.ts run), so the worker's event loop stays free to answer Vitest's RPC.
const reprobench = async (args: string[], env: Record<string, string>, cwd: string, bin = BIN) => {
  const r = await run(["bash", bin, ...args], { cwd, env: { HOME: process.env.HOME ?? "/root", ...env }, timeoutMs: 60_000 });
  return { status: r.code, stdout: r.stdout, stderr: r.stderr };
};

describe("bin/reprobench without the Pulumi toolchain", () => {
  it("config validate runs on Node alone, from any directory, and never starts the toolchain", async () => {
    const cache = tmp("reprobench-emptycache-");
    const r = await reprobench(["config", "validate", join(REPO, "Pulumi.local.yaml")], { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, REPROBENCH_CACHE: cache }, tmpdir());
    expect(r.stderr).not.toContain("[toolchain");
    expect({ status: r.status, stdout: r.stdout.trim() }).toEqual({ status: 0, stdout: "ok" });
    expect(readdirSync(cache)).toEqual([]);
  });

  it("pull in its address form runs on Node alone too (only pull --stack reads a stack)", async () => {
    const cache = tmp("reprobench-emptycache-");
    const r = await reprobench(["pull", "--help"], { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, REPROBENCH_CACHE: cache }, tmpdir());
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("reprobench pull --stack NAME [DIR]");
    expect(r.stderr).not.toContain("[toolchain");
    expect(readdirSync(cache)).toEqual([]);
  });

  // A checkout whose toolchain.sh only records its arguments and then does what the real one's --print-env
  // does (puts a Node 22 on PATH), or fails; main.ts prints the node that runs it.
  function nodeFetchCheckout(toolchainBody: string): { checkout: string; log: string } {
    const checkout = tmp("reprobench-nodefetch-");
    for (const d of ["bin", "scripts", "cli"]) mkdirSync(join(checkout, d));
    copyFileSync(BIN, join(checkout, "bin/reprobench"));
    copyFileSync(join(REPO, "scripts/node-env.sh"), join(checkout, "scripts/node-env.sh"));
    const log = join(checkout, "toolchain.log");
    writeFileSync(join(checkout, "scripts/toolchain.sh"), `echo "$*" >>${JSON.stringify(log)}\n${toolchainBody}\n`);
    writeFileSync(join(checkout, "cli/main.ts"), "console.log(process.execPath);\n");
    symlinkSync(join(REPO, "node_modules"), join(checkout, "node_modules"));
    return { checkout, log };
  }
  // A node 20 first on PATH, with an npm beside it (whatever the machine has after it).
  function oldNodeBin(withNpm: boolean): string {
    const fakeBin = tmp("reprobench-fakenode-");
    writeFileSync(join(fakeBin, "node"), '#!/bin/sh\ncase "$1" in -p) echo 20 ;; --version) echo v20.0.0 ;; esac\n');
    chmodSync(join(fakeBin, "node"), 0o755);
    if (withNpm) {
      writeFileSync(join(fakeBin, "npm"), "#!/bin/sh\nexit 0\n");
      chmodSync(join(fakeBin, "npm"), 0o755);
    }
    return fakeBin;
  }

  it("with Node older than 22 fetches Node 22 once through toolchain.sh --node-only, then runs on it", async () => {
    const { checkout, log } = nodeFetchCheckout(`printf 'export PATH=%s:"$PATH"\\n' ${JSON.stringify(dirname(process.execPath))}`);
    const fakeBin = oldNodeBin(true);
    const r = await reprobench(["--version"], { PATH: `${fakeBin}:/usr/bin:/bin`, REPROBENCH_CACHE: tmp("reprobench-emptycache-") }, checkout, join(checkout, "bin/reprobench"));
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain(`reprobench: Node.js >= 22 needed (found: ${fakeBin}/node v20.0.0); fetching it once (scripts/toolchain.sh --node-only)`);
    expect(readFileSync(log, "utf8")).toBe("--node-only --print-env\n");
    expect(r.stdout.trim()).toBe(process.execPath);
  });

  it("says so and stops when fetching Node 22 fails", async () => {
    const { checkout } = nodeFetchCheckout("echo 'toolchain: npm pack failed' >&2; exit 1");
    const r = await reprobench(["--version"], { PATH: `${oldNodeBin(true)}:/usr/bin:/bin`, REPROBENCH_CACHE: tmp("reprobench-emptycache-") }, checkout, join(checkout, "bin/reprobench"));
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("toolchain: npm pack failed");
    expect(r.stderr).toContain("reprobench: could not install Node.js 22 (scripts/toolchain.sh --node-only failed above); put Node.js 22 on PATH");
    expect(r.stdout).toBe("");
  });

  it("without Node >= 22 and without npm says what it found and what to do", async () => {
    const { checkout, log } = nodeFetchCheckout("exit 1");
    const fakeBin = oldNodeBin(false);
    // Only the fake node and the shell's basics: no npm anywhere on PATH.
    const basics = tmp("reprobench-basics-");
    for (const tool of ["bash", "dirname", "readlink", "printf", "cat"]) {
      const found = ["/usr/bin", "/bin"].map((d) => join(d, tool)).find((f) => existsSync(f));
      if (found) symlinkSync(found, join(basics, tool));
    }
    const r = await reprobench(["--version"], { PATH: `${fakeBin}:${basics}`, REPROBENCH_CACHE: tmp("reprobench-emptycache-") }, checkout, join(checkout, "bin/reprobench"));
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`reprobench: needs Node.js >= 22 (found: ${fakeBin}/node v20.0.0) and npm to fetch it; put Node.js 22 on PATH`);
    expect(existsSync(log)).toBe(false);
  });

  it("never runs npm ci through a symlinked node_modules (it would empty the other checkout's)", async () => {
    const checkout = tmp("reprobench-linked-");
    mkdirSync(join(checkout, "bin"));
    mkdirSync(join(checkout, "scripts"));
    copyFileSync(BIN, join(checkout, "bin/reprobench"));
    copyFileSync(join(REPO, "scripts/node-env.sh"), join(checkout, "scripts/node-env.sh"));
    const shared = tmp("reprobench-shared-modules-");
    writeFileSync(join(shared, "sentinel"), "another checkout's module");
    symlinkSync(shared, join(checkout, "node_modules"));
    writeFileSync(join(checkout, "package-lock.json"), "{}"); // newer than anything in node_modules
    const r = await reprobench(["config", "--help"], { PATH: `${dirname(process.execPath)}:/usr/bin:/bin` }, checkout, join(checkout, "bin/reprobench"));
    expect(r.stderr).toContain(`${checkout}/node_modules is a symlink and may not match package-lock.json; not running npm ci through it`);
    expect(r.stderr).not.toContain("installing node_modules");
    expect(existsSync(join(shared, "sentinel"))).toBe(true);
  });
});

// Which environment the launcher loads, told apart in a copy of the checkout whose env.sh and node-env.sh
// only record that they were sourced (node-env.sh puts node on PATH, as the real one does), whose
// cli/needs.ts is the real one (the parser decides) and whose cli/main.ts prints its arguments.
describe("bin/reprobench decides what a command needs after reading its arguments", () => {
  function launcherCheckout(): string {
    const checkout = tmp("reprobench-launcher-");
    for (const d of ["bin", "scripts", "cli"]) mkdirSync(join(checkout, d));
    copyFileSync(BIN, join(checkout, "bin/reprobench"));
    const record = (what: string) => `echo ${what} >>"$LAUNCHER_LOG"\nPATH=${JSON.stringify(dirname(process.execPath))}:$PATH\n`;
    writeFileSync(join(checkout, "scripts/env.sh"), record("toolchain"));
    writeFileSync(join(checkout, "scripts/node-env.sh"), record("node"));
    writeFileSync(join(checkout, "cli/needs.ts"), `import ${JSON.stringify(join(REPO, "cli/needs.ts"))};\n`);
    writeFileSync(join(checkout, "cli/main.ts"), 'console.log(JSON.stringify(process.argv.slice(2)));\n');
    symlinkSync(join(REPO, "node_modules"), join(checkout, "node_modules"));
    return checkout;
  }
  const loaded = async (args: string[]) => {
    const checkout = launcherCheckout();
    const log = join(checkout, "launcher.log");
    const r = await reprobench(args, { PATH: "/usr/bin:/bin", LAUNCHER_LOG: log }, checkout, join(checkout, "bin/reprobench"));
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(args);
    // node-env.sh always comes first (node is needed to ask the parser); env.sh only when needed.
    const sourced = readFileSync(log, "utf8").trim().split("\n");
    expect(sourced[0]).toBe("node");
    return sourced.length === 1 ? "node-only" : sourced.slice(1).join(",");
  };

  it.each([
    [["resume", "--stack", "prod", "--job", "j", "--wait"], "toolchain"],
    [["rerun", "--stack=prod", "--job", "j"], "toolchain"],
    [["pull", "-s", "prod"], "toolchain"],
    [["resume", "-s", "prod", "--job", "j"], "toolchain"],
    [["up"], "toolchain"],
    [["down", "-y"], "toolchain"],
    [["logs", "router"], "toolchain"],
    [["forget-host", "worker-a"], "toolchain"],
    [["status", "--stack", "dev"], "toolchain"],
    [["resume", "jobs/j"], "node-only"],
    [["rerun", "jobs/j", "--", "--stack"], "node-only"],
    [["up", "--help"], "node-only"],
    [["preview", "-h"], "node-only"],
    [["status", "--stack", "dev", "--help"], "node-only"],
    [["resume", "--stack", "prod", "--help"], "node-only"],
    [["audit", "jobs/j"], "node-only"],
    [["pull", "runner", "/jobs/j", "out"], "node-only"],
    [["help", "up"], "node-only"],
    [["--version"], "node-only"],
    // Usage errors are printed by the Node-only run: a typo never costs a toolchain build.
    [["up", "--stak", "prod"], "node-only"],
    [["updd"], "node-only"],
    [["sim", "status"], "node-only"],
    [["config", "validate", "Pulumi.local.yaml"], "node-only"],
  ])("%j loads %s", async (args, expected) => {
    expect(await loaded(args)).toBe(expected);
  });
});

// The real scripts/env.sh over a toolchain.sh that fails (no plugin source archives offline, a failed
// build): nothing may run without pulumi — neither the command nor anything it would change first.
describe("bin/reprobench when the toolchain cannot be installed", () => {
  function failingToolchainCheckout(): string {
    const checkout = tmp("reprobench-notoolchain-");
    for (const d of ["bin", "scripts", "cli"]) mkdirSync(join(checkout, d));
    copyFileSync(BIN, join(checkout, "bin/reprobench"));
    copyFileSync(join(REPO, "scripts/env.sh"), join(checkout, "scripts/env.sh"));
    writeFileSync(join(checkout, "scripts/node-env.sh"), `PATH=${JSON.stringify(dirname(process.execPath))}:$PATH\n`);
    writeFileSync(join(checkout, "scripts/toolchain.sh"), "echo '[toolchain] error: no plugin source archives' >&2\nexit 1\n");
    writeFileSync(join(checkout, "cli/needs.ts"), `import ${JSON.stringify(join(REPO, "cli/needs.ts"))};\n`);
    writeFileSync(join(checkout, "cli/main.ts"), 'console.log("the command ran");\n');
    symlinkSync(join(REPO, "node_modules"), join(checkout, "node_modules"));
    return checkout;
  }

  it("stops with the toolchain's error before the command runs (up would start the sim first)", async () => {
    const checkout = failingToolchainCheckout();
    const r = await reprobench(["up"], { PATH: "/usr/bin:/bin" }, checkout, join(checkout, "bin/reprobench"));
    expect(r.status).toBe(1);
    expect(r.stdout).not.toContain("the command ran");
    expect(r.stderr).toContain("[toolchain] error: no plugin source archives");
    expect(r.stderr).toContain("reprobench: the Pulumi toolchain is not installed (scripts/toolchain.sh failed; its error is above)");
  });

  it("leaves an interactive shell that sources env.sh running, with a failed status", async () => {
    const checkout = failingToolchainCheckout();
    const r = await run(["bash", "-c", 'source scripts/env.sh; echo "status $?"; command -v pulumi || echo "no pulumi"'], { cwd: checkout, env: { PATH: "/usr/bin:/bin" }, timeoutMs: 60_000 });
    expect(r.stdout).toContain("status 1");
    expect(r.stdout).toContain("no pulumi");
  });
});

describe("bin/reprobench up --help in a fresh clone", () => {
  it("prints the usage in seconds and builds nothing (the toolchain cache stays empty)", async () => {
    const cache = tmp("reprobench-emptycache-");
    const t0 = Date.now();
    const r = await reprobench(["up", "--help"], { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, REPROBENCH_CACHE: cache }, tmpdir());
    const seconds = (Date.now() - t0) / 1000;
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/usage: reprobench up/);
    expect(r.stdout).toContain("-y, --yes");
    expect(seconds).toBeLessThan(2 * 3); // < 2 s on an idle machine; slack for a loaded CI runner
    expect(r.stderr).not.toContain("[toolchain");
    expect(readdirSync(cache)).toEqual([]);
    console.log(`bin/reprobench up --help: ${seconds.toFixed(2)} s`);
  });
});
