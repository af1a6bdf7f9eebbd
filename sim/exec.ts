// Process helpers for the simulated cluster: every external call (docker, ssh, ssh-keygen, bash) goes
// through `run`, which always has a timeout, so no step of `sim up`/`sim down` can hang forever.
import { spawn } from "node:child_process";

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Milliseconds before the process is killed (SIGKILL) and the run counts as failed. */
  timeoutMs?: number;
  /** Written to stdin, which is then closed. */
  input?: string | Buffer;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Stream the child's stderr to ours (long builds show progress). */
  inheritStderr?: boolean;
}

export class CommandError extends Error {
  constructor(
    readonly argv: string[],
    readonly result: RunResult,
  ) {
    super(`\`${describeArgv(argv)}\` exited ${result.code}: ${lastLines(result.stderr || result.stdout, 8)}`);
    this.name = "CommandError";
  }
}

/** The command line for messages: long arguments (scripts, keys) are elided so logs stay readable. */
export function describeArgv(argv: string[]): string {
  return argv.map((a) => (a.length > 80 ? `${a.slice(0, 40)}…` : a)).join(" ");
}

export function lastLines(text: string, n: number): string {
  const lines = text.trimEnd().split("\n");
  return lines.slice(-n).join("\n");
}

/** Runs argv[0] with the rest as arguments (no shell); resolves even on failure. */
export function run(argv: string[], options: RunOptions = {}): Promise<RunResult> {
  const timeoutMs = options.timeoutMs ?? 120_000;
  return new Promise((resolve) => {
    const child = spawn(argv[0], argv.slice(1), {
      env: options.env ?? process.env,
      cwd: options.cwd,
      stdio: ["pipe", "pipe", options.inheritStderr ? "inherit" : "pipe"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on("data", (b: Buffer) => out.push(b));
    child.stderr?.on("data", (b: Buffer) => err.push(b));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, timeoutMs);
    const finish = (code: number, extra = "") => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") + extra });
    };
    child.on("error", (e) => finish(127, `\n${argv[0]}: ${e.message}`));
    child.on("close", (code) => finish(timedOut ? 124 : (code ?? 1), timedOut ? `\ntimed out after ${timeoutMs} ms` : ""));
    child.stdin?.on("error", () => undefined); // the child may exit before reading its input
    child.stdin?.end(options.input ?? "");
  });
}

/** Like `run`, but rejects with a CommandError naming the command when it fails. */
export async function mustRun(argv: string[], options: RunOptions = {}): Promise<string> {
  const result = await run(argv, options);
  if (result.code !== 0) throw new CommandError(argv, result);
  return result.stdout;
}

/**
 * Polls `probe` until it returns a value other than undefined, or `timeoutMs` passes. Polling (not a
 * fixed sleep) is how readiness is waited for; the deadline keeps every wait bounded.
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  options: { timeoutMs: number; intervalMs?: number; lastError?: () => string },
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  const interval = options.intervalMs ?? 500;
  while (true) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() >= deadline) {
      const detail = options.lastError?.();
      throw new Error(`timed out after ${Math.round(options.timeoutMs / 1000)}s waiting for ${what}${detail ? `: ${detail}` : ""}`);
    }
    await new Promise((r) => setTimeout(r, interval));
  }
}

/**
 * `fetch` with a deadline whose timer keeps the process alive, covering the body too when `read` is given
 * (it runs under the same deadline). AbortSignal.timeout's timer is unref'd: when a connection stalls with
 * nothing else pending, Node's event loop empties and the process exits 0 in the middle of the step (a
 * cold `up` once ended so after "started registry", having done nothing).
 */
export async function fetchWithin(url: string, init: RequestInit, timeoutMs: number): Promise<Response>;
export async function fetchWithin<T>(url: string, init: RequestInit, timeoutMs: number, read: (res: Response) => Promise<T>): Promise<T>;
export async function fetchWithin<T>(url: string, init: RequestInit, timeoutMs: number, read?: (res: Response) => Promise<T>): Promise<Response | T> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`no answer from ${url} within ${timeoutMs} ms`)), timeoutMs);
  try {
    const res = await fetch(url, { ...init, signal: controller.signal });
    return read ? await read(res) : res;
  } finally {
    clearTimeout(timer);
  }
}
