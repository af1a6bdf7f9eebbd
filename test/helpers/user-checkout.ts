// A throw-away checkout of the project for tests that run `bin/reprobench` as a user types it: a subprocess
// that takes its own checkout as the project root (its stack files Pulumi.<stack>.yaml, its .sim/ key
// files), so the copy is what those runs read and write — never the checkout the tests run from, which
// stays byte for byte as it was (other suites run beside this one). The copy holds the files git tracks or
// would track (`git ls-files -co --exclude-standard`: the working tree's edits included, ignored files not),
// node_modules as a symlink (scripts/node-env.sh never runs npm ci through one; the lock file's time is kept,
// so it does not warn either), its own Pulumi state and passphrase in the temporary directory, and the
// checkout's toolchain on PATH (scripts/env.sh in the copy then takes that `pulumi` as an installed one and
// builds nothing). Commands run asynchronously (sim/exec.ts run, with a deadline each): a blocked worker
// misses Vitest's RPC deadline.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { mustRun, run, type RunResult } from "../../sim/exec";
import { repoRoot, toolchainEnv } from "./project";

export interface Ran extends RunResult {
  /** The command line as typed, for messages. */
  line: string;
  seconds: number;
}

export interface UserCheckout {
  /** The copy's root: what `bin/reprobench` there takes as the project. */
  dir: string;
  /** The environment every command gets (the caller's, the toolchain, the copy's backend and passphrase). */
  env: Record<string, string>;
  /** `<copy>/bin/reprobench ARGS` in the copy (cwd), stdin not a terminal; resolves with the exit code. */
  reprobench(args: string[], options?: { timeoutMs?: number; cwd?: string }): Promise<Ran>;
  /** `bash -c SCRIPT` in the copy with the same environment (what a user types after `source scripts/env.sh`). */
  bash(script: string, options?: { timeoutMs?: number }): Promise<Ran>;
  /** Removes the copy, its state and everything the commands wrote into it. */
  cleanup(): void;
}

/** Shell-quoted for the log line. */
const quote = (a: string) => (/^[A-Za-z0-9_./:=@,+-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`);

/**
 * Copies the checkout into a new temporary directory; `extraFiles` (copy-relative path → source) are copied
 * in as well, e.g. a sim instance's key files. `log` gets every command line, its exit code and duration.
 */
export async function userCheckout(options: { extraFiles?: Record<string, string>; log?: (m: string) => void } = {}): Promise<UserCheckout> {
  const log = options.log ?? (() => undefined);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "reprobench-user-"));
  try {
    const dir = path.join(tmp, "checkout");
    fs.mkdirSync(dir);
    const listed = await mustRun(["git", "-C", repoRoot, "ls-files", "-z", "--cached", "--others", "--exclude-standard"], { timeoutMs: 60_000 });
    for (const rel of new Set(listed.split("\0").filter(Boolean))) {
      const src = path.join(repoRoot, rel);
      const st = fs.lstatSync(src, { throwIfNoEntry: false });
      if (!st) continue; // deleted in the working tree, not yet in the index
      const dst = path.join(dir, rel);
      fs.mkdirSync(path.dirname(dst), { recursive: true });
      if (st.isSymbolicLink()) fs.symlinkSync(fs.readlinkSync(src), dst);
      else if (st.isFile()) fs.cpSync(src, dst, { preserveTimestamps: true });
    }
    fs.symlinkSync(path.join(repoRoot, "node_modules"), path.join(dir, "node_modules"));
    for (const [rel, src] of Object.entries(options.extraFiles ?? {})) {
      fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
      fs.cpSync(src, path.join(dir, rel), { recursive: true });
    }
    const state = path.join(tmp, "pulumi-state");
    fs.mkdirSync(state);
    const inherited = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
    // Nothing of the caller's choice of stack or passphrase: every command names its stack.
    for (const k of ["REPROBENCH_STACK", "PULUMI_CONFIG_PASSPHRASE_FILE", "PULUMI_BACKEND_URL"]) delete inherited[k];
    const env = {
      ...inherited,
      ...(await toolchainEnv()),
      PULUMI_BACKEND_URL: `file://${state}`,
      PULUMI_CONFIG_PASSPHRASE: "reprobench-user-path",
      NO_COLOR: "1",
    };
    const launch = async (argv: string[], line: string, cwd: string, timeoutMs: number): Promise<Ran> => {
      const t0 = Date.now();
      log(`$ ${line}`);
      const r = await run(argv, { cwd, env, timeoutMs });
      const seconds = (Date.now() - t0) / 1000;
      log(`  → exit ${r.code} in ${seconds.toFixed(1)}s`);
      return { ...r, line, seconds };
    };
    return {
      dir,
      env,
      reprobench: (args, o = {}) => launch([path.join(dir, "bin/reprobench"), ...args], `bin/reprobench ${args.map(quote).join(" ")}`, o.cwd ?? dir, o.timeoutMs ?? 600_000),
      bash: (script, o = {}) => launch(["bash", "-c", script], script, dir, o.timeoutMs ?? 120_000),
      cleanup: () => fs.rmSync(tmp, { recursive: true, force: true }),
    };
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
}
