// Test harness for the SGLang test double (sim/sglang-double): start doubles on loopback ports in
// their own process groups, wait for conditions with bounded polling, and tear everything down.
import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from "node:child_process";
import { createServer } from "node:net";
import path from "node:path";

export const repoRoot = path.resolve(__dirname, "../../..");
export const doubleDir = path.join(repoRoot, "sim/sglang-double");
export const scenariosDir = path.join(repoRoot, "sim/scenarios");
export const datasetDir = path.join(repoRoot, "sim/dataset");
export const tinyModelDir = path.join(doubleDir, "tiny-model");
export const python = process.env.PYTHON ?? "python3";

/** Seed 000's worker flags (000_745229a2bcd86dd8.txt, "启动两个 SGLang workers"), minus host/port. */
export const seed000WorkerFlags = [
  "--served-model-name", "Qwen/Qwen3.8-27B",
  "--tp-size", "4",
  "--dp-size", "2",
  "--context-length", "262144",
  "--max-running-requests", "5",
  "--max-mamba-cache-size", "25",
  "--mem-fraction-static", "0.90",
  "--reasoning-parser", "qwen3",
  "--tool-call-parser", "qwen3_coder",
];

/** A free TCP port on 127.0.0.1 (the OS picks it; the listener is closed again at once). */
/**
 * The python of the real sglang-router's venv (sim/sglang-double/router-venv.sh: built from PyPI on first use,
 * ~40 s, then reused). Run asynchronously: a cold build takes minutes, and a spawnSync would block the test
 * worker's event loop past Vitest's 60 s worker RPC timeout.
 */
export async function routerVenvPython(): Promise<string> {
  const venv = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn("bash", [path.join(doubleDir, "router-venv.sh")], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), 600_000);
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
  if (venv.code !== 0) throw new Error(`router-venv.sh failed (${venv.code}):\n${venv.stderr}`);
  return venv.stdout.trim().split("\n").pop() ?? "";
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      if (address === null || typeof address === "string") {
        reject(new Error("no port from the OS"));
        return;
      }
      server.close(() => resolve(address.port));
    });
  });
}

/** Poll `probe` until it returns a value other than undefined; fail after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs: number,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = err;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  const detail = lastError instanceof Error ? ` (last error: ${lastError.message})` : "";
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${detail}`);
}

/** A process started in its own process group, so stop() also ends anything it spawned. */
export class ManagedProcess {
  private output = "";
  readonly exited: Promise<number | null>;

  constructor(readonly name: string, readonly child: ChildProcess) {
    child.stdout?.on("data", (chunk: Buffer) => (this.output += chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => (this.output += chunk.toString()));
    this.exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
  }

  get logs(): string {
    return this.output;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** SIGTERM the process group, SIGKILL it if it is still there after `graceMs`. */
  async stop(graceMs = 5000): Promise<void> {
    const pid = this.child.pid;
    if (pid === undefined || !this.running) return;
    const signalGroup = (signal: NodeJS.Signals) => {
      try {
        process.kill(-pid, signal);
      } catch {
        // already gone
      }
    };
    signalGroup("SIGTERM");
    const timer = new Promise<"timeout">((r) => setTimeout(() => r("timeout"), graceMs));
    if ((await Promise.race([this.exited, timer])) === "timeout") {
      signalGroup("SIGKILL");
      await this.exited;
    }
  }
}

export function spawnManaged(name: string, command: string, args: string[], env: NodeJS.ProcessEnv): ManagedProcess {
  const child = spawn(command, args, { env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  return new ManagedProcess(name, child);
}

export function doubleEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  // No __pycache__ in the source tree (it is an image build context).
  const env: NodeJS.ProcessEnv = { ...process.env, PYTHONPATH: doubleDir, PYTHONUNBUFFERED: "1", PYTHONDONTWRITEBYTECODE: "1", ...extra };
  for (const [key, value] of Object.entries(extra)) if (value === undefined) delete env[key];
  return env;
}

export interface DoubleOptions {
  /** Server flags after `sglang serve` (host/port are added unless given). */
  flags?: string[];
  hostTag?: string;
  loadSeconds?: number;
  scenario?: string;
  env?: Record<string, string | undefined>;
  /** "serve" = `python3 bin/sglang serve`, "launch_server" = `python3 -m sglang.launch_server`. */
  entry?: "serve" | "launch_server";
}

export interface RunningDouble {
  url: string;
  port: number;
  hostTag: string;
  process: ManagedProcess;
}

/** Start a double on 127.0.0.1 and wait until its port accepts HTTP (any status). */
export async function startDouble(options: DoubleOptions = {}): Promise<RunningDouble> {
  const port = await freePort();
  const hostTag = options.hostTag ?? `double-${port}`;
  const flags = ["--model-path", tinyModelDir, "--host", "127.0.0.1", "--port", String(port), ...(options.flags ?? [])];
  const argv =
    options.entry === "launch_server"
      ? ["-m", "sglang.launch_server", ...flags]
      : [path.join(doubleDir, "bin/sglang"), "serve", ...flags];
  const env = doubleEnv({
    SGLANG_DOUBLE_HOST_TAG: hostTag,
    SGLANG_DOUBLE_LOAD_SECONDS: String(options.loadSeconds ?? 0.2),
    SGLANG_DOUBLE_SCENARIO: options.scenario,
    ...options.env,
  });
  const proc = spawnManaged(`double ${hostTag}`, python, argv, env);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitFor(
      `double ${hostTag} to listen on ${url}`,
      async () => {
        if (!proc.running) throw new Error(`double exited early:\n${proc.logs}`);
        await fetch(`${url}/_double/stats`);
        return true;
      },
      15_000,
      50,
    );
  } catch (err) {
    await proc.stop();
    throw err;
  }
  return { url, port, hostTag, process: proc };
}

export async function waitReady(double: RunningDouble, timeoutMs = 15_000): Promise<void> {
  await waitFor(`${double.url}/health to be 200`, async () => ((await fetch(`${double.url}/health`)).status === 200 ? true : undefined), timeoutMs, 50);
}

/** Run the double's CLI to completion (for flag-rejection tests). */
export function runDoubleCli(args: string[], env: Record<string, string | undefined> = {}): SpawnSyncReturns<string> {
  return spawnSync(python, args, { env: doubleEnv(env), encoding: "utf-8", timeout: 20_000, cwd: doubleDir });
}

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export async function chat(
  baseUrl: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; json: Record<string, unknown> }> {
  const response = await fetch(`${baseUrl}/v1/chat/completions`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    json = { raw: text };
  }
  return { status: response.status, headers: response.headers, json };
}

/** choices[0].message of an OpenAI chat completion, typed loosely for assertions. */
export function firstMessage(json: Record<string, unknown>): { content: string; reasoning_content: string | null } {
  const choices = json.choices as Array<{ message: { content: string; reasoning_content: string | null } }>;
  return choices[0].message;
}

/** Start the double in vLLM mode (`vllm serve <tiny-model> ...`) on 127.0.0.1 and wait for /health 200. */
export async function startVllmDouble(options: { flags?: string[]; hostTag?: string; scenario?: string } = {}): Promise<RunningDouble> {
  const port = await freePort();
  const hostTag = options.hostTag ?? `vllm-${port}`;
  const argv = [path.join(doubleDir, "bin/vllm"), "serve", tinyModelDir, "--host", "127.0.0.1", "--port", String(port), ...(options.flags ?? [])];
  const env = doubleEnv({ SGLANG_DOUBLE_HOST_TAG: hostTag, SGLANG_DOUBLE_LOAD_SECONDS: "0.2", SGLANG_DOUBLE_SCENARIO: options.scenario });
  const proc = spawnManaged(`vllm double ${hostTag}`, python, argv, env);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitFor(
      `vllm double ${hostTag} /health to be 200`,
      async () => {
        if (!proc.running) throw new Error(`double exited early:\n${proc.logs}`);
        return (await fetch(`${url}/health`)).status === 200 ? true : undefined;
      },
      15_000,
      50,
    );
  } catch (err) {
    await proc.stop();
    throw err;
  }
  return { url, port, hostTag, process: proc };
}

/** The `data: {...}` frames of an SSE body, parsed; [DONE] must be the last frame. */
export function sseFrames(text: string): Array<Record<string, unknown>> {
  const frames = text.split("\n\n").filter(Boolean);
  if (frames[frames.length - 1] !== "data: [DONE]") throw new Error(`stream does not end with [DONE]: ${text.slice(-200)}`);
  return frames.slice(0, -1).map((f) => JSON.parse(f.replace(/^data: /, "")) as Record<string, unknown>);
}
