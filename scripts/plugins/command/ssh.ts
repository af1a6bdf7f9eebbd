// SSH transport for command:remote:*: dial (optionally through a bastion) with bounded retries, run
// one command, copy files over SFTP. Uses the pure-JS `ssh2` client, so no local ssh binary is needed.
import { Client, ClientChannel, ConnectConfig, SFTPWrapper } from "ssh2";
import { ConnectionSpec, describe, fingerprint, hostKeyAlgorithms } from "./connection";

export class HostKeyMismatchError extends Error {}

/** The most recent transport error of each client (e.g. the connection dropped mid-command). */
const lastError = new WeakMap<Client, Error>();

/** Errors that retrying cannot fix: a wrong pinned host key or an unusable private key. */
function isPermanent(err: unknown): boolean {
  return err instanceof HostKeyMismatchError || /Cannot parse privateKey|does not contain a \(valid\) private key/.test(String(err));
}

export interface DialOptions {
  signal?: AbortSignal;
  /** Called before each retry with the failure and the wait. */
  onRetry?: (attempt: number, limit: number, err: Error, delayMs: number) => void;
  /** Backoff before retry n (1-based); exponential from 500 ms, capped at 10 s. */
  backoffMs?: (n: number) => number;
}

const UNLIMITED_ATTEMPTS = 100_000; // dialErrorLimit -1: effectively unlimited, still a bounded loop

function abortable(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

function dialOnce(spec: ConnectionSpec, sock: NodeJS.ReadableStream | undefined, signal?: AbortSignal): Promise<Client> {
  return new Promise((resolve, reject) => {
    const client = new Client();
    let mismatch: HostKeyMismatchError | undefined;
    let settled = false;
    const settle = (err?: Error) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener("abort", onAbort);
      if (err) {
        client.end();
        reject(mismatch ?? err);
      } else resolve(client);
    };
    const onAbort = () => settle(signal?.reason instanceof Error ? signal.reason : new Error("cancelled"));
    signal?.addEventListener("abort", onAbort, { once: true });

    const cfg: ConnectConfig = {
      host: spec.host,
      port: spec.port,
      username: spec.user,
      readyTimeout: Math.round(spec.perDialTimeout * 1000),
      keepaliveInterval: 30_000,
      agent: spec.agentSocketPath ?? process.env.SSH_AUTH_SOCK,
    };
    if (sock) cfg.sock = sock as ConnectConfig["sock"];
    if (spec.password !== undefined) {
      cfg.password = spec.password;
      cfg.tryKeyboard = true;
    }
    if (spec.privateKey !== undefined) {
      cfg.privateKey = spec.privateKey;
      if (spec.privateKeyPassword !== undefined) cfg.passphrase = spec.privateKeyPassword;
    }
    const pinned = spec.hostKey;
    if (pinned) {
      cfg.algorithms = { serverHostKey: hostKeyAlgorithms(pinned.type) as never };
      cfg.hostVerifier = (key: Buffer) => {
        if (key.equals(pinned.blob)) return true;
        mismatch = new HostKeyMismatchError(
          `host key mismatch for ${spec.host}:${spec.port}: connection.hostKey pins ${pinned.type} ${fingerprint(pinned.blob)}, ` +
            `the server presented ${fingerprint(key)}; refusing to connect`,
        );
        return false;
      };
    }
    // Without hostKey the server's key is accepted unchecked, as in the official provider.
    client.on("keyboard-interactive", (_n, _i, _l, prompts, finish) => finish(prompts.map(() => spec.password ?? "")));
    client.once("ready", () => settle());
    // Persistent: ssh2 may emit more than one error (or one after ready); an unhandled 'error' event
    // would crash the whole plugin process. Errors after ready surface through exec/sftp instead.
    client.on("error", (e) => {
      lastError.set(client, e);
      settle(e);
    });
    client.once("close", () => settle(new Error(`connection to ${spec.host}:${spec.port} closed during the handshake`)));
    try {
      client.connect(cfg);
    } catch (e) {
      settle(e as Error);
    }
  });
}

/** Retries `attempt` per the connection's dialErrorLimit, with backoff; permanent errors end at once. */
async function withDialRetries<T>(spec: ConnectionSpec, attempt: () => Promise<T>, opts: DialOptions): Promise<T> {
  const limit = spec.dialErrorLimit < 0 ? UNLIMITED_ATTEMPTS : Math.max(1, spec.dialErrorLimit);
  const backoff = opts.backoffMs ?? ((n) => Math.min(10_000, 500 * 2 ** (n - 1)));
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (e) {
      const err = e instanceof Error ? e : new Error(String(e));
      if (isPermanent(err) || opts.signal?.aborted) throw err;
      if (n >= limit) {
        throw new Error(`could not connect to ${describe(spec)} after ${n} attempt(s) (dialErrorLimit ${spec.dialErrorLimit}): ${err.message}`);
      }
      const delay = backoff(n);
      opts.onRetry?.(n, limit, err, delay);
      await abortable(delay, opts.signal);
    }
  }
}

function forward(bastion: Client, host: string, port: number): Promise<ClientChannel> {
  return new Promise((resolve, reject) =>
    bastion.forwardOut("127.0.0.1", 0, host, port, (err, stream) => (err ? reject(err) : resolve(stream))),
  );
}

/** A ready SSH session to the target; `close()` also closes the bastion session, if any. */
export interface Session {
  client: Client;
  close(): void;
}

export async function connect(spec: ConnectionSpec, opts: DialOptions = {}): Promise<Session> {
  if (!spec.proxy) {
    const client = await withDialRetries(spec, () => dialOnce(spec, undefined, opts.signal), opts);
    return { client, close: () => client.end() };
  }
  const proxy = spec.proxy;
  const bastion = await withDialRetries(proxy, () => dialOnce(proxy, undefined, opts.signal), opts);
  try {
    const client = await withDialRetries(
      spec,
      async () => dialOnce(spec, await forward(bastion, spec.host, spec.port), opts.signal),
      opts,
    );
    return {
      client,
      close: () => {
        client.end();
        bastion.end();
      },
    };
  } catch (e) {
    bastion.end();
    throw e;
  }
}

export interface ExecResult {
  /** Exit status; null when the command was killed by a signal or the channel closed without one. */
  code: number | null;
  signal?: string;
  stdout: string;
  stderr: string;
}

export interface ExecOptions {
  env?: Record<string, string>;
  /** Written to the command's stdin, which is then closed. */
  stdin?: string;
  onStdout?: (chunk: string) => void;
  onStderr?: (chunk: string) => void;
  signal?: AbortSignal;
}

/** Variables sent with SSH setenv: all of them unless that would exceed one SSH packet comfortably. */
const SETENV_BUDGET = 32 * 1024;

export function exec(client: Client, command: string, opts: ExecOptions = {}): Promise<ExecResult> {
  return new Promise((resolve, reject) => {
    const env = opts.env ?? {};
    const size = Object.entries(env).reduce((n, [k, v]) => n + k.length + v.length, 0);
    const execOpts = size > 0 && size <= SETENV_BUDGET ? { env } : {};
    client.exec(command, execOpts, (err, stream) => {
      if (err) return reject(err);
      const out: Buffer[] = [];
      const errOut: Buffer[] = [];
      const dec = new TextDecoder();
      const decErr = new TextDecoder();
      let code: number | null = null;
      let sig: string | undefined;
      const onAbort = () => stream.close();
      opts.signal?.addEventListener("abort", onAbort, { once: true });
      stream.on("data", (b: Buffer) => {
        out.push(b);
        opts.onStdout?.(dec.decode(b, { stream: true }));
      });
      stream.stderr.on("data", (b: Buffer) => {
        errOut.push(b);
        opts.onStderr?.(decErr.decode(b, { stream: true }));
      });
      stream.on("exit", (c: number | null, s?: string) => {
        code = typeof c === "number" ? c : null;
        sig = s ?? undefined;
      });
      stream.on("close", () => {
        opts.signal?.removeEventListener("abort", onAbort);
        if (opts.signal?.aborted) return reject(opts.signal.reason);
        const lost = lastError.get(client);
        if (code === null && sig === undefined && lost) return reject(new Error(`SSH connection lost while the command ran: ${lost.message}`));
        resolve({ code, signal: sig, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(errOut).toString("utf8") });
      });
      stream.on("error", reject);
      stream.end(opts.stdin ?? "");
    });
  });
}

export function sftp(client: Client): Promise<SFTPWrapper> {
  return new Promise((resolve, reject) => client.sftp((err, s) => (err ? reject(err) : resolve(s))));
}
