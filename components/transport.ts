// The one way reprobench reaches a host: OpenSSH (the `ssh` on PATH) with a pinned host key. Everything
// that talks to a host goes through here: CheckedCommand's provider runs its scripts with `runOverSsh`, the
// @pulumi/docker provider dials `ssh://` with `sshOptions` (the same key and known_hosts files), the
// remote.Commands get `commandConnection`, and the CLI (status, logs, pull, resume/rerun) uses `runScript`,
// `hostArgv` and the pull helpers; the sim's hosts are reached with `sshArgv` too (sim/ssh.ts). So a host
// that fails one fails them all the same way, and there is one of each: the ssh argv, the sudo form, the
// shell quoting, the masking of secrets, the rule that tells an unreachable host from a sudo that refused
// and from a script that failed, and the spawning of ssh and rsync (`runArgv`, `runArgvSync`, `spawnPiped`,
// `pipeArgv`: no other module starts either).
//
// The Pulumi SDK, which only the program helpers at the end use, is required by them alone, so that
// loading this module costs the CLI nothing.
/* eslint-disable @typescript-eslint/no-require-imports -- see the note above */
import type * as command from "@pulumi/command";
import type * as pulumi from "@pulumi/pulumi";
import type { ChildProcessByStdio } from "node:child_process";
import * as cp from "node:child_process";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { StringDecoder } from "node:string_decoder";
import type { Readable } from "node:stream";

/** How to reach a host over SSH. Host keys are always pinned. */
export interface HostConnection {
  /** The host's name in the stack (worker-a); error messages name it. */
  name: string;
  host: string;
  port: number;
  user: string;
  /**
   * The login is not root and runs host scripts through `sudo -n` (hosts[].ssh.sudo). Absent for root, so
   * a root connection is the same value it always was.
   */
  sudo?: boolean;
  /** OpenSSH private key (PEM). Secret. */
  privateKey: string;
  /** The host's public key, authorized_keys format ("ssh-ed25519 AAAA…"). */
  hostKey: string;
}

/** A host's login without its key: what a cluster's owner exports for the stacks that run jobs on it. */
export type HostLogin = Omit<HostConnection, "privateKey"> & { privateKey?: undefined };

/** HostConnection whose fields may be Outputs (the private key usually is a secret Output). */
export type HostConnectionInput = { [K in keyof HostConnection]: pulumi.Input<HostConnection[K]> };

/** The key material of a pinned connection, as files (ssh takes key files only). */
export interface SshFiles {
  keyFile: string;
  knownHostsFile: string;
}

/** A pinned connection by key files: what `sshArgv` needs (sim/ssh.ts has its keys as files already). */
export interface PinnedTarget extends SshFiles {
  host: string;
  port: number;
  user: string;
}

export interface SshArgvOptions {
  /** ssh's ConnectTimeout, seconds (default 15). */
  connectTimeoutSecs?: number;
  /** More `Key=Value` options, after the pinned ones (e.g. LogLevel=ERROR, GlobalKnownHostsFile=/dev/null). */
  options?: readonly string[];
  /** A remote terminal (`-t`), so that Ctrl-C ends the remote command too. */
  tty?: boolean;
  /** The login and host as one `user@host` word (sim/ssh.ts's argv, which its tests pin) instead of `-l user host`. */
  userAtHost?: boolean;
}

// ---- quoting and masking ----------------------------------------------------------------------------

/**
 * Quotes a string as one word for a POSIX shell: as it is when it is made of safe characters only, else in
 * single quotes; `always` quotes every word (the scripts' `export K='V'` lines, `bash -c '…'`).
 */
export function shellQuote(value: string, o?: { always?: boolean }): string {
  return !o?.always && /^[A-Za-z0-9_@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * What hides secret values in text that leaves a run: `secrets` is a map of secret inputs (CheckedCommand's
 * `environment`, its secret channel: API keys, tokens, proxy URLs; the CLI's API key), and every value
 * counts: each value of 8 or more characters is replaced by "[secret not shown]", except a URL, which is
 * shown with its credentials replaced by "***" (http://***@proxy.sim:3128), and the user:password (and the
 * password alone) of any URL input wherever it appears. "values" does only that, by value: for stdout and a
 * check's output, which are parsed and kept in state (a server echoing its API key in /server_info loses it
 * here). "all" (error messages, progress lines, log tails) also masks the userinfo of any URL in the text.
 */
export function secretMasker(secrets: Record<string, string> | undefined): { all(text: string): string; values(text: string): string } {
  const decodeURIComponentSafe = (text: string): string => {
    try {
      return decodeURIComponent(text);
    } catch {
      return text;
    }
  };
  const credentialPairs: [string, string][] = [];
  const valuePairs: [string, string][] = [];
  for (const value of Object.values(secrets ?? {})) {
    if (typeof value !== "string" || value === "") continue;
    const m = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^/?#]*)(.*)$/s.exec(value);
    if (m) {
      const at = m[2].lastIndexOf("@");
      if (at === -1) continue; // a URL without credentials is no secret
      const userinfo = m[2].slice(0, at);
      credentialPairs.push([value, `${m[1]}***${m[2].slice(at)}${m[3]}`]);
      if (userinfo.length >= 4) credentialPairs.push([userinfo, "***"]);
      const password = userinfo.slice(userinfo.indexOf(":") + 1);
      if (userinfo.includes(":") && password.length >= 4) credentialPairs.push([password, "***"]);
      for (const encoded of [encodeURIComponent(userinfo), decodeURIComponentSafe(userinfo)]) {
        if (encoded !== userinfo && encoded.length >= 4) credentialPairs.push([encoded, "***"]);
      }
    } else if (value.length >= 8) valuePairs.push([value, "[secret not shown]"]);
  }
  const longestFirst = (pairs: [string, string][]) => pairs.sort((a, b) => b[0].length - a[0].length);
  const replaceAll = (text: string, pairs: [string, string][]) => pairs.reduce((t, [from, to]) => t.split(from).join(to), text);
  const userinfo = (text: string) => text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@"'<>]*@/gi, "$1***@");
  const byValue = longestFirst([...credentialPairs, ...valuePairs]);
  return {
    all: (text) => userinfo(replaceAll(text, byValue)),
    // Only the inputs' own values: stdout is parsed, and "http://10.0.0.1:30001@0" (a router's
    // worker@rank) must come through as it is.
    values: (text) => replaceAll(text, byValue),
  };
}

// ---- key material -----------------------------------------------------------------------------------

/** The known_hosts line for a pinned key (`[host]:port` when the port is not 22, as OpenSSH writes it). */
export function knownHostsLine(c: Pick<HostConnection, "host" | "port" | "hostKey">): string {
  const target = c.port === 22 ? c.host : `[${c.host}]:${c.port}`;
  return `${target} ${c.hostKey.trim()}\n`;
}

/** Where key material and login records live on the control machine (REPROBENCH_SSH_DIR overrides). */
export function sshMaterialDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.REPROBENCH_SSH_DIR ?? path.join(os.homedir(), ".reprobench", "ssh");
}

/**
 * Writes the private key and the known_hosts line as 0600 files and returns their paths. The docker
 * provider runs the `ssh` binary, which takes key files only. Without `scope` the files are named by a hash
 * of their contents (the CLI's one-off connections). With a scope (a stack's docker provider: project,
 * stack, host) they are named by the scope alone and rewritten when the key changes, so a rotated key is
 * no change of the provider's configuration, and destroy, which does not run the program, finds them where
 * up left them.
 */
export function writeSshMaterial(c: Pick<HostConnection, "host" | "port" | "privateKey" | "hostKey">, dir = sshMaterialDir(), scope?: string): SshFiles {
  const key = c.privateKey.endsWith("\n") ? c.privateKey : `${c.privateKey}\n`;
  const known = knownHostsLine(c);
  const digest = (text: string) => crypto.createHash("sha256").update(text).digest("hex").slice(0, 20);
  const named = scope === undefined ? undefined : digest(JSON.stringify([scope, c.host, c.port]));
  const keyFile = path.join(dir, named ? `id-${named}` : `id-${digest(key)}`);
  const knownHostsFile = path.join(dir, named ? `known_hosts-${named}` : `known_hosts-${digest(known)}`);
  writePrivateFile(keyFile, key);
  writePrivateFile(knownHostsFile, known);
  return { keyFile, knownHostsFile };
}

/** Writes a 0600 file when its text differs (write then rename: a concurrent run never sees half a key). */
function writePrivateFile(file: string, text: string): void {
  const dir = path.dirname(file);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.chmodSync(dir, 0o700);
  let current: string | undefined;
  try {
    current = fs.readFileSync(file, "utf8");
  } catch {
    current = undefined;
  }
  if (current === text) {
    // ssh refuses a key others can read: keep the mode right even if someone loosened it.
    fs.chmodSync(file, 0o600);
    return;
  }
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, text, { mode: 0o600 });
  fs.renameSync(tmp, file);
}

/**
 * Where the program records a host's current login for one stack (recordLogin), on the machine that runs
 * Pulumi: named by the stack, the project and the host's address, never by the key, so CheckedCommand's
 * provider finds it from what state already holds (the URN, the address).
 */
export function loginRecordFile(project: string, stack: string, host: string, port: number, env: NodeJS.ProcessEnv = process.env): string {
  const id = crypto.createHash("sha256").update(JSON.stringify([project, stack, host, port])).digest("hex").slice(0, 20);
  return path.join(sshMaterialDir(env), `login-${id}.json`);
}

/**
 * Records a host's current login (user, sudo, key, host key) for a CheckedCommand's refresh and delete
 * (checked-command.ts currentLogin), 0600 on the machine that runs Pulumi. The program writes it on every
 * run, so a rotated key or a new sudo setting reaches refresh and destroy without any resource changing.
 */
export function recordLogin(file: string, c: HostConnection): void {
  writePrivateFile(file, `${JSON.stringify({ host: c.host, port: c.port, user: c.user, sudo: c.sudo === true, privateKey: c.privateKey, hostKey: c.hostKey })}\n`);
}

// ---- argv -------------------------------------------------------------------------------------------

/** A host as a URL or ssh destination writes it: an IPv6 address in brackets. */
export function bracketHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

/** `ssh://user@host:port`, the docker provider's host for a connection. */
export function dockerHostUrl(c: Pick<HostConnection, "host" | "port" | "user">): string {
  return `ssh://${c.user}@${bracketHost(c.host)}:${c.port}`;
}

/** OpenSSH options for a non-interactive, pinned connection (also the docker provider's sshOpts: keep them as they are). */
export function sshOptions(files: SshFiles, o: { connectTimeoutSecs?: number } = {}): string[] {
  return [
    "-i", files.keyFile,
    "-o", "IdentitiesOnly=yes",
    "-o", "BatchMode=yes",
    "-o", "StrictHostKeyChecking=yes",
    "-o", `UserKnownHostsFile=${files.knownHostsFile}`,
    "-o", `ConnectTimeout=${o.connectTimeoutSecs ?? 15}`,
    "-o", "ServerAliveInterval=30",
  ];
}

/** `ssh` and its options for a pinned connection, without the login and destination (rsync's `-e`, pull). */
export function sshArgs(t: Pick<PinnedTarget, "port" | "keyFile" | "knownHostsFile">, o: SshArgvOptions = {}): string[] {
  return ["ssh", ...sshOptions(t, o), ...(o.options ?? []).flatMap((x) => ["-o", x]), ...(o.tty ? ["-t"] : []), "-p", String(t.port)];
}

/** The whole `ssh` argv for a pinned connection and one remote command line. */
export function sshArgv(t: PinnedTarget, remoteCommand: string, o: SshArgvOptions = {}): string[] {
  return [...sshArgs(t, o), ...(o.userAtHost ? [`${t.user}@${t.host}`] : ["-l", t.user, t.host]), remoteCommand];
}

/**
 * Whether a run on `c` goes through sudo: a login that may sudo (hosts[].ssh.sudo, which config validation
 * allows only for a login that is not root), unless the run is the login's own (`runAs: "login"`, e.g. the
 * rights check).
 */
export function usesSudo(c: Pick<HostConnection, "sudo">, runAs?: "root" | "login"): boolean {
  return c.sudo === true && runAs !== "login";
}

/**
 * The one sudo form: `sudo -n --` (never a password prompt, never a terminal) in front of bash. Without a
 * command line it is the shell that reads a script on stdin — `bash -s`, or `sudo -n -- bash -s` (the same
 * as host-script.ts rootShell), so that neither the script nor an input shows in `ps` or in sudo's log;
 * with one, that line as it is, or `sudo -n -- bash -c '<line>'`.
 */
export function remoteCommand(sudo: boolean, line?: string): string {
  if (line === undefined) return sudo ? "sudo -n -- bash -s" : "bash -s";
  return sudo ? `sudo -n -- bash -c ${shellQuote(line, { always: true })}` : line;
}

/**
 * `ssh` argv for a connection and a remote command line, run with root's rights (through sudo for a sudo
 * login, see remoteCommand); the key and the pinned host key go to content-named 0600 files
 * (writeSshMaterial). For commands whose output is streamed to a terminal (`reprobench logs`).
 */
export function hostArgv(c: HostConnection, line: string, o: { tty?: boolean; connectTimeoutSecs?: number } = {}): string[] {
  const files = writeSshMaterial(c);
  return sshArgv({ ...files, host: c.host, port: c.port, user: c.user }, remoteCommand(usesSudo(c), line), { connectTimeoutSecs: o.connectTimeoutSecs, options: ["LogLevel=ERROR"], tty: o.tty });
}

// ---- running a script --------------------------------------------------------------------------------

/** What the shell that runs a script prints first on stderr: proof that ssh connected and sudo ran it. */
export function connectedMarker(): string {
  return "reprobench: connected";
}

/** `host NAME (user@host:port)`: how every message names a host. */
export function hostLabel(c: Pick<HostConnection, "name" | "host" | "port" | "user">): string {
  return `host ${c.name} (${c.user}@${c.host}:${c.port})`;
}

/** A script ready to go: ssh's remote command (a fixed string) and what goes to it on stdin. */
export interface Invocation {
  command: string;
  stdin: string;
  marker: string;
  sudo: boolean;
}

/**
 * How a script runs on `c`: the remote command is `bash -s` or `sudo -n -- bash -s` (remoteCommand), and
 * stdin holds the marker line, then the inputs as `export K='V'` lines, then (`strict`) `set -euo pipefail`,
 * then the script. Inputs never reach a command line (visible in `ps`); a name a shell would misread is
 * refused.
 */
export function scriptInvocation(c: Pick<HostConnection, "sudo">, script: string, env: Record<string, string> = {}, o: { runAs?: "root" | "login"; strict?: boolean } = {}): Invocation {
  for (const k of Object.keys(env)) if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) throw new Error(`invalid variable name ${JSON.stringify(k)}`);
  const prelude = Object.entries(env).map(([k, v]) => `export ${k}=${shellQuote(v, { always: true })}`).join("\n");
  const marker = connectedMarker();
  const sudo = usesSudo(c, o.runAs);
  return { command: remoteCommand(sudo, undefined), stdin: `echo ${marker} >&2\n${prelude}\n${o.strict ? "set -euo pipefail\n" : ""}${script}\n`, marker, sudo };
}

/**
 * How a run ended, by the one rule: exit 0 is "ok"; killed by a signal (the timeout) is "killed"; ssh's own
 * exit 255 without the marker is "unreachable" (refused, timed out, host key, authentication: nothing ran);
 * a sudo run without the marker is "sudo-refused" (connected, but sudo ran nothing); anything else is
 * "failed" (the script ran and failed, even with exit 255).
 */
export type SshOutcome = "ok" | "killed" | "unreachable" | "sudo-refused" | "failed";

export function sshOutcome(r: { code: number | null; signal: string | null; stderr: string }, sudo: boolean): SshOutcome {
  const connected = r.stderr.includes(connectedMarker());
  if (r.code === 0) return "ok";
  if (r.signal) return "killed";
  if (r.code === 255 && !connected) return "unreachable";
  if (sudo && !connected) return "sudo-refused";
  return "failed";
}

/** The last `lines` lines of a run's stderr (the marker line left out), joined by `joiner`. */
export function stderrTail(stderr: string, lines: number, joiner = "\n"): string {
  return stderr.replace(`${connectedMarker()}\n`, "").trim().split("\n").slice(-lines).join(joiner);
}

export interface SshRun {
  outcome: SshOutcome;
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs an invocation on `c` with the `ssh` on PATH: the key and the pinned host key in a private temporary
 * directory (removed afterwards), the script on stdin, killed after `timeoutMs`. Each complete stderr line
 * goes to `onStderrLine` as it comes (progress). Resolves with the outcome (sshOutcome) whatever it is;
 * rejects only when ssh cannot be started. The caller words the outcome.
 */
export async function runOverSsh(c: HostConnection, inv: Pick<Invocation, "command" | "stdin" | "sudo">, o: { timeoutMs: number; onStderrLine?: (line: string) => void }): Promise<SshRun> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "reprobench-ssh-"));
  try {
    const keyFile = path.join(dir, "id");
    const knownHostsFile = path.join(dir, "known_hosts");
    fs.writeFileSync(keyFile, c.privateKey.endsWith("\n") ? c.privateKey : `${c.privateKey}\n`, { mode: 0o600 });
    fs.writeFileSync(knownHostsFile, knownHostsLine(c), { mode: 0o600 });
    const argv = sshArgv({ host: c.host, port: c.port, user: c.user, keyFile, knownHostsFile }, inv.command);
    const r = await runArgv(argv, { input: inv.stdin, timeoutMs: o.timeoutMs, onStderrLine: o.onStderrLine });
    return { outcome: sshOutcome(r, inv.sudo), code: r.code, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** A bash script with its inputs on `c` (scriptInvocation, then runOverSsh). */
export function runScript(
  c: HostConnection,
  script: string,
  o: { env?: Record<string, string>; runAs?: "root" | "login"; strict?: boolean; timeoutMs: number; onStderrLine?: (line: string) => void },
): Promise<SshRun> {
  return runOverSsh(c, scriptInvocation(c, script, o.env, o), o);
}

// ---- running the argv built here ---------------------------------------------------------------------
// The only process spawning of ssh and rsync in reprobench: the CLI (pull, logs) and sim/ssh.ts hand the argv
// this module built to these, and never spawn ssh or rsync themselves.

/** How a run of an argv ended: its exit status, or the signal that ended it; whether the timeout did. */
export interface ArgvRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
}

/**
 * Runs `argv` (ssh, from sshArgv) with `input` on stdin (then closed; a child that exits without reading it
 * is no error), killed (SIGKILL) after `timeoutMs`. Each complete stderr line goes to `onStderrLine` as it
 * comes. Resolves with how it ended whatever that is; rejects only when it cannot be started.
 */
export function runArgv(argv: readonly string[], o: { input?: string | Buffer; timeoutMs: number; onStderrLine?: (line: string) => void }): Promise<ArgvRun> {
  return new Promise<ArgvRun>((resolve, reject) => {
    const child = cp.spawn(argv[0], argv.slice(1), { stdio: ["pipe", "pipe", "pipe"] });
    const outText = new StringDecoder("utf8");
    const errText = new StringDecoder("utf8");
    let stdout = "";
    let stderr = "";
    let partial = "";
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, o.timeoutMs);
    const onStderr = (text: string) => {
      stderr += text;
      if (!o.onStderrLine) return;
      const lines = (partial + text).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) o.onStderrLine(line);
    };
    child.stdout.on("data", (d: Buffer) => (stdout += outText.write(d)));
    child.stderr.on("data", (d: Buffer) => onStderr(errText.write(d)));
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      stdout += outText.end();
      onStderr(errText.end());
      resolve({ code, signal, timedOut, stdout, stderr });
    });
    child.stdin.on("error", () => undefined);
    child.stdin.end(o.input ?? "");
  });
}

/**
 * Runs `argv` (ssh or rsync, from this module) to its end, synchronously: with `input` on stdin and its
 * output captured, or (`inherit`) on this process's terminal. Throws `<program>: <why>` when it cannot be
 * started; else its exit status (1 after a signal) and output.
 */
export function runArgvSync(argv: readonly string[], o: { input?: string; inherit?: boolean } = {}): { code: number; stdout: string; stderr: string } {
  const r = o.inherit
    ? { ...cp.spawnSync(argv[0], argv.slice(1), { stdio: "inherit" }), stdout: "", stderr: "" }
    : cp.spawnSync(argv[0], argv.slice(1), { input: o.input, encoding: "utf8", maxBuffer: 512 * 1024 * 1024 });
  if (r.error) throw new Error(`${argv[0]}: ${r.error.message}`);
  return { code: r.status ?? 1, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Starts `argv` (ssh, from hostArgv) on this process's stdin, its stdout and stderr piped to the caller
 * (`reprobench logs`, which masks them on the way to the terminal).
 */
export function spawnPiped(argv: readonly string[]): ChildProcessByStdio<null, Readable, Readable> {
  return cp.spawn(argv[0], argv.slice(1), { stdio: ["inherit", "pipe", "pipe"] });
}

/**
 * Runs `remote` (ssh, e.g. remoteTarCommand's stream) with `input` on stdin, its stdout piped into `local`
 * (the local tar that unpacks it); both stderrs and local's stdout on this process's. Resolves when `local`
 * exits, with both exit statuses (remote's null if it has not exited yet); rejects when either cannot be
 * started.
 */
export function pipeArgv(remote: readonly string[], input: string, local: readonly string[]): Promise<{ remote: number | null; local: number | null }> {
  return new Promise((resolve, reject) => {
    const from = cp.spawn(remote[0], remote.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
    const to = cp.spawn(local[0], local.slice(1), { stdio: ["pipe", "inherit", "inherit"] });
    from.stdout.pipe(to.stdin);
    from.stdin.end(input);
    let remoteCode: number | null = null;
    from.on("error", reject);
    to.on("error", reject);
    from.on("exit", (code) => (remoteCode = code));
    to.on("exit", (code) => resolve({ remote: remoteCode, local: code }));
  });
}

// ---- copying files over the same ssh (pull) ---------------------------------------------------------

/**
 * `ssh` and its options for a destination the user names (host, user@host, an ~/.ssh/config alias): their
 * own config and keys, BatchMode (never a password prompt).
 */
export function adHocSshArgs(o: { ssh?: string; port?: number; identity?: string; options?: readonly string[] }): string[] {
  const argv = [o.ssh ?? "ssh", "-o", "BatchMode=yes", "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=4"];
  if (o.port !== undefined) argv.push("-p", String(o.port));
  if (o.identity) argv.push("-i", o.identity);
  for (const opt of o.options ?? []) argv.push("-o", opt);
  return argv;
}

/**
 * rsync over `ssh` (sshArgs or adHocSshArgs) of `source` ("dest:dir") into `localDir`: archive mode,
 * partial files kept in a hidden dir so an interrupted copy resumes and a half-copied file never looks
 * complete; no --delete, so local files are never removed.
 */
export function rsyncArgv(ssh: readonly string[], source: string, localDir: string): string[] {
  return ["rsync", "-a", "--partial-dir=.rsync-partial", "--protect-args", "--human-readable", "--info=stats1", "-e", ssh.map((a) => shellQuote(a)).join(" "), source, `${localDir.replace(/\/+$/, "")}/`];
}

/** The remote command that streams a tar of `dir`'s files named (NUL-separated) on stdin. */
export function remoteTarCommand(dir: string): string {
  return `tar -C ${shellQuote(dir)} -cf - --null -T -`;
}

/** Whether this machine has rsync. */
export function localHasRsync(): boolean {
  return cp.spawnSync("rsync", ["--version"], { stdio: "ignore" }).status === 0;
}

// ---- the Pulumi program's view ----------------------------------------------------------------------

/** Whether a connection's login uses sudo: not secret, though the connection as a whole is (its private key). */
export function loginSudo(c: pulumi.Input<HostConnectionInput>): pulumi.Output<boolean> {
  const pulumi = require("@pulumi/pulumi") as typeof import("@pulumi/pulumi");
  return pulumi.unsecret(pulumi.output(c).apply((x) => x.sudo === true));
}

/** The fields @pulumi/command's remote connection takes (the host's stack name is reprobench's alone). */
export function commandConnection(c: pulumi.Input<HostConnectionInput>): pulumi.Output<command.types.input.remote.ConnectionArgs> {
  const pulumi = require("@pulumi/pulumi") as typeof import("@pulumi/pulumi");
  return pulumi.output(c).apply(({ host, port, user, privateKey, hostKey }) => ({ host, port, user, privateKey, hostKey }));
}
