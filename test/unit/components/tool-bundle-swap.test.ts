// tool-bundle.sh's swap, run for real (the host's tmux and python3, a small asciinema stand-in wheel) with a
// stand-in docker: the canary runs the bundle's wrappers here, `docker ps`/`inspect` name "running trials"
// whose mountinfo (PROC_DIR) shows which bundle version they mounted. What must hold: TOOLS_DIR is always a
// complete bundle while a rebuild runs, a version a running trial mounted stays whole, unused ones go, an
// earlier release's plain directory is taken over, anything else at TOOLS_DIR is refused.
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { scriptWithEnv } from "../../../components/host-script";

const REPO = resolve(__dirname, "../../..");
const BUILD_TIMEOUT = 180_000;
let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

// The distribution's python3 (a small stdlib), not a pyenv or venv one that may shadow it on PATH.
const SYSTEM_PYTHON = ["/usr/bin/python3", "/usr/local/bin/python3"].find((p) => existsSync(p)) ?? "python3";

const DOCKER = `#!/usr/bin/env bash
# Stand-in docker: the canary runs the entrypoint here with the volume's source in place of its target.
set -euo pipefail
state=$(dirname "$0")/../state
case "$1" in
  image) exit 0 ;;
  ps) cat "$state/ps" 2>/dev/null || true; exit 0 ;;
  inspect) cat "$state/pids"; exit 0 ;;
  run) ;;
  *) echo "docker stand-in: $*" >&2; exit 2 ;;
esac
shift
src= dst= entry=
while [ $# -gt 0 ]; do
  case "$1" in
    --rm) shift ;;
    --volume) src=\${2%%:*} rest=\${2#*:} dst=\${rest%%:*}; shift 2 ;;
    --entrypoint) entry=$2; shift 2 ;;
    *) break ;;
  esac
done
shift # the image
[ "$entry" != sh ] || exit 1 # the canary has neither tmux nor asciinema
[ -n "$src" ] || exit 2
export HARBOR_TMUX_ROOT=$src HARBOR_TOOLS_ROOT=$src
exec "$src\${entry#"$dst"}" "$@"
`;

interface Host {
  dir: string;
  tools: string;
  store: string;
  env: Record<string, string>;
  /** Makes `docker ps` show one running trial whose mountinfo holds these bind-mount roots. */
  trial(roots: string[]): void;
  noTrials(): void;
}

function host(): Host {
  const dir = mkdtempSync(join(tmpdir(), "reprobench-bundle-"));
  dirs.push(dir);
  const bin = join(dir, "bin");
  mkdirSync(bin);
  mkdirSync(join(dir, "state"));
  writeFileSync(join(bin, "docker"), DOCKER);
  chmodSync(join(bin, "docker"), 0o755);
  symlinkSync(SYSTEM_PYTHON, join(bin, "python3"));
  // A wheel whose module prints a version, as asciinema's does.
  const wheel = join(dir, "asciinema-2.4.0-py3-none-any.whl");
  const made = spawnSync(SYSTEM_PYTHON, ["-c", "import sys, zipfile\nwith zipfile.ZipFile(sys.argv[1], 'w') as z:\n  z.writestr('asciinema/__init__.py', '')\n  z.writestr('asciinema/__main__.py', 'print(\"asciinema 2.4.0\")')", wheel], { encoding: "utf8" });
  if (made.status !== 0) throw new Error(made.stderr);
  const tools = join(dir, "var/lib/reprobench/harbor-tools-amd64");
  const proc = join(dir, "proc");
  mkdirSync(proc);
  return {
    dir,
    tools,
    store: `${tools}.bundles`,
    env: {
      TOOLS_DIR: tools,
      MOUNT_PATH: "/opt/harbor-tools",
      WHEEL_URL: `file://${wheel}`,
      WHEEL_SHA256: createHash("sha256").update(readFileSync(wheel)).digest("hex"),
      CANARY_IMAGE: "registry.local/canary:1",
      PROC_DIR: proc,
      SETTLE_SECS: "0",
      PATH: `${bin}:${process.env.PATH}`,
    },
    trial(roots) {
      mkdirSync(join(proc, "4242"), { recursive: true });
      writeFileSync(join(proc, "4242/mountinfo"), ["1 0 0:1 / / rw - overlay overlay rw", ...roots.map((r, i) => `${100 + i} 1 254:1 ${r} /opt/harbor-tools${i ? "/x" : ""} ro,relatime - ext4 /dev/vda1 rw`)].join("\n") + "\n");
      writeFileSync(join(dir, "state/ps"), "c0ffee\n");
      writeFileSync(join(dir, "state/pids"), "4242\n");
    },
    noTrials() {
      rmSync(join(dir, "state/ps"), { force: true });
    },
  };
}

/** Runs tool-bundle.sh as CheckedCommand does (retry.sh, registry.sh and owned-dir.sh prepended, on `bash -s`). */
function build(h: Host): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const { PATH, ...inputs } = h.env;
    const child = spawn("bash", ["-s"], { env: { PATH, HOME: process.env.HOME ?? "/root" }, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", fail);
    child.on("close", (status) => done({ status, stdout, stderr }));
    child.stdin.end(`set -euo pipefail\n${scriptWithEnv(["retry", "registry", "owned-dir", "tool-bundle"], inputs)}\n`);
  });
}

/** What a refresh reads (tool-bundle-check.sh) for a bundle directory. */
function digest(toolsDir: string): string {
  const r = spawnSync("bash", ["-s"], { input: scriptWithEnv("tool-bundle-check", { TOOLS_DIR: toolsDir }), encoding: "utf8" });
  return r.stdout.trim();
}
const versions = (h: Host) => readdirSync(h.store).filter((n) => !n.startsWith(".") && n !== "asciinema.whl").sort();
const current = (h: Host) => readlinkSync(h.tools).split("/").pop()!;

describe("tool-bundle.sh swap", () => {
  it("is shellcheck-clean", () => {
    const r = spawnSync("shellcheck", ["-x", "--severity=style", join(REPO, "components/scripts/tool-bundle.sh"), join(REPO, "components/scripts/tool-bundle-check.sh")], { encoding: "utf8" });
    expect(r.stdout).toBe("");
    expect(r.status).toBe(0);
  });

  it(
    "links TOOLS_DIR to a verified version; a rebuild keeps it complete throughout, keeps the version a running trial mounted, and removes unused ones later",
    async () => {
      const h = host();
      const first = await build(h);
      expect(first.status, first.stderr).toBe(0);
      expect(JSON.parse(first.stdout.trim().split("\n").pop()!)).toEqual({ tmux: expect.stringMatching(/^tmux(\.real)? \d/), asciinema: "asciinema 2.4.0", canary: "registry.local/canary:1" });
      expect(lstatSync(h.tools).isSymbolicLink()).toBe(true);
      const v1 = current(h);
      expect(readlinkSync(h.tools)).toBe(`harbor-tools-amd64.bundles/${v1}`);
      expect(versions(h)).toEqual([v1]);
      const v1Digest = digest(join(h.store, v1));
      expect(digest(h.tools)).toBe(v1Digest);
      expect(v1Digest).toMatch(/^bundle=[0-9a-f]{16}$/);

      // A trial is running with v1 mounted (the directory and the tmux wrapper bound over /usr/bin/tmux).
      h.trial([join(h.store, v1), join(h.store, v1, "bin/tmux")]);
      // While the rebuild runs, something keeps looking at TOOLS_DIR as a new trial would.
      const watcher = spawn("bash", ["-c", `while [ ! -e "$1/stop" ]; do { [ -x "$2/bin/tmux" ] && [ -x "$2/bin/asciinema" ] && [ -x "$2/python/bin/python3" ]; } || echo miss; done`, "_", h.dir, h.tools], { stdio: ["ignore", "pipe", "inherit"] });
      let misses = "";
      watcher.stdout.on("data", (d: Buffer) => (misses += d.toString()));
      const second = await build(h);
      writeFileSync(join(h.dir, "stop"), "");
      await new Promise((ok) => watcher.on("close", ok));
      expect(second.status, second.stderr).toBe(0);
      expect(misses).toBe("");
      const v2 = current(h);
      expect(v2).not.toBe(v1);
      expect(versions(h)).toEqual([v1, v2].sort());
      expect(digest(join(h.store, v1))).toBe(v1Digest);
      expect(second.stderr).toContain(`tool-bundle: kept ${v1} in ${h.store}: running containers have it mounted`);

      // The trial is over: the next build removes both earlier versions.
      h.noTrials();
      const third = await build(h);
      expect(third.status, third.stderr).toBe(0);
      expect(versions(h)).toEqual([current(h)]);
      // TOOLS_DIR is the new version. (Not compared with v1's digest: a build copies the host's python
      // stdlib as it is at that moment, and other tests running python beside this one can change it.)
      expect(current(h)).not.toBe(v2);
      expect(digest(h.tools)).toBe(digest(join(h.store, current(h))));
      expect(digest(h.tools)).toMatch(/^bundle=[0-9a-f]{16}$/);
    },
    BUILD_TIMEOUT,
  );

  it(
    "takes over an earlier release's plain bundle directory (and its .building leftover), and refuses a directory that is no bundle",
    async () => {
      const h = host();
      mkdirSync(join(h.tools, "bin"), { recursive: true });
      writeFileSync(join(h.tools, "bin/tmux.real"), "old");
      mkdirSync(join(`${h.tools}.building`, "bin"), { recursive: true });
      writeFileSync(join(`${h.tools}.building`, "bin/tmux.real"), "");
      const r = await build(h);
      expect(r.status, r.stderr).toBe(0);
      expect(lstatSync(h.tools).isSymbolicLink()).toBe(true);
      // No trial had it mounted: moved into the store, then removed with the other unused versions.
      expect(versions(h)).toEqual([current(h)]);
      expect(existsSync(`${h.tools}.building`)).toBe(false);

      const other = host();
      mkdirSync(other.tools, { recursive: true });
      writeFileSync(join(other.tools, "precious"), "data");
      const refused = await build(other);
      expect(refused.status).toBe(1);
      expect(refused.stderr).toContain(`tool-bundle: refusing to replace ${other.tools} (toolBundle.hostDir): it is a directory, and not a tool bundle`);
      expect(readFileSync(join(other.tools, "precious"), "utf8")).toBe("data");
    },
    BUILD_TIMEOUT,
  );

  it("refuses a TOOLS_DIR of '/' or with '..' before downloading anything", async () => {
    const h = host();
    for (const bad of ["/", "/var/lib/../lib"]) {
      const r = await build({ ...h, env: { ...h.env, TOOLS_DIR: bad } });
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(`tool-bundle: toolBundle.hostDir '${bad}':`);
    }
  });
});
