// Test helpers for the fake Hugging Face Hub (sim/hub/hub.py): the real huggingface_hub venv (sim/hub/hf-venv.sh),
// the hub and the sim's egress proxy as child processes on 127.0.0.1, async commands with bounded time, and the
// hub's JSON-lines request log. Nothing here uses spawnSync: a cold venv build takes tens of seconds, and a
// blocked test worker misses Vitest's 60 s worker RPC timeout.
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { createReadStream, existsSync, readFileSync } from "node:fs";
import path from "node:path";

export const repoRoot = path.resolve(__dirname, "../..");
export const hubScript = path.join(repoRoot, "sim/hub/hub.py");
export const hfVenvScript = path.join(repoRoot, "sim/hub/hf-venv.sh");
export const proxyScript = path.join(repoRoot, "sim/proxy/sim-proxy.py");
export const modelScript = path.join(repoRoot, "sim/models/hf_model.py");
export const tinyTokenizerDir = path.join(repoRoot, "sim/sglang-double/tiny-model");

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs a command to its end, in its own process group, killed (the whole group) after `timeoutMs`. */
export function run(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs: number; input?: string }): Promise<RunResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: opts.env ?? process.env, cwd: opts.cwd, stdio: ["pipe", "pipe", "pipe"], detached: true });
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(() => killGroup(child), opts.timeoutMs);
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - started });
    });
    child.stdin.end(opts.input ?? "");
  });
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    child.kill("SIGKILL");
  }
}

/** The python of the pinned huggingface_hub venv (built from PyPI with --require-hashes on first use, then reused). */
export async function hfVenvPython(): Promise<string> {
  const r = await run("bash", [hfVenvScript], { timeoutMs: 600_000 });
  if (r.code !== 0) throw new Error(`hf-venv.sh failed (${r.code ?? r.signal}):\n${r.stderr}`);
  const python = r.stdout.trim().split("\n").pop() ?? "";
  if (!existsSync(python)) throw new Error(`hf-venv.sh printed no python: ${r.stdout}`);
  return python;
}

export interface Service {
  port: number;
  output: () => string;
  stop: () => Promise<void>;
}

/** Starts a long-running child and resolves once its output matches `ready` (group 1: the port); bounded. */
export function startService(cmd: string, args: string[], ready: RegExp, timeoutMs = 15_000): Promise<Service> {
  const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"], detached: true });
  const chunks: string[] = [];
  const output = () => chunks.join("");
  const exited = new Promise<void>((r) => child.once("close", () => r()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      killGroup(child);
      await exited;
    }
  };
  return new Promise((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer);
      void stop().then(() => reject(new Error(`${path.basename(args[0] ?? cmd)}: ${why}\n${output()}`)));
    };
    const timer = setTimeout(() => fail(`not ready in ${timeoutMs} ms`), timeoutMs);
    const onData = (b: Buffer) => {
      chunks.push(b.toString());
      const m = ready.exec(output());
      if (m) {
        clearTimeout(timer);
        resolve({ port: Number(m[1]), output, stop });
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("error", (err) => fail(String(err)));
    child.once("exit", (code) => fail(`exited ${code} before it was ready`));
  });
}

export function startHub(opts: { root: string; tokenFile?: string; faults?: string; log?: string }): Promise<Service> {
  const args = [hubScript, "serve", "--root", opts.root, "--listen", "127.0.0.1", "--port", "0"];
  if (opts.tokenFile) args.push("--token-file", opts.tokenFile);
  if (opts.faults) args.push("--faults", opts.faults);
  if (opts.log) args.push("--log", opts.log);
  return startService("python3", args, /hub: listening on 127\.0\.0\.1:(\d+)/);
}

/** sim-proxy.py in egress mode: Basic auth from `credentialsFile`, only `allow`, names resolved by `resolve`. */
export function startEgressProxy(opts: { credentialsFile: string; allow: string; resolve: string }): Promise<Service> {
  const args = [proxyScript, "--mode", "egress", "--listen", "127.0.0.1", "--port", "0", "--credentials-file", opts.credentialsFile, "--allow", opts.allow, "--resolve", opts.resolve];
  return startService("python3", args, /listening on 127\.0\.0\.1:(\d+)/);
}

/** One line of the hub's request log (sim/hub/hub.py, "Every request is one JSON line"). */
export interface HubLogEntry {
  t: string;
  client: string;
  method: string;
  endpoint: "info" | "tree" | "resolve" | "other";
  repo: string | null;
  revision: string | null;
  file: string | null;
  range: string | null;
  status: number;
  bytes: number;
  fault: string | null;
  auth: "none" | "ok" | "bad";
  ua: string;
}

export function readHubLog(file: string): HubLogEntry[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as HubLogEntry);
}

export function sha256File(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash("sha256");
    createReadStream(file)
      .on("data", (d) => h.update(d))
      .on("error", reject)
      .on("end", () => resolve(h.digest("hex")));
  });
}

/** What `hub.py add-repo` prints. */
export interface HubManifest {
  repo: string;
  revision: string;
  gated: boolean;
  changed: boolean;
  files: { path: string; size: number; sha256: string; gitSha1: string; lfs: boolean }[];
}
