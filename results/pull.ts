// `reprobench pull`: argv construction for copying a job dir from the runner host, resumable and never
// deleting local files. rsync over ssh when both ends have rsync; otherwise tar over ssh restricted to the
// files that are missing or incomplete locally. The ssh, rsync and tar argv are components/transport.ts's.
import * as path from "node:path";
import { type SshFiles, adHocSshArgs, rsyncArgv as rsyncOverSsh, remoteTarCommand, shellQuote, sshArgs } from "../components/transport";

export interface PullOptions {
  /** ssh destination: host, user@host or an ~/.ssh/config alias. */
  target: string;
  /** Job dir on the remote host (absolute, or relative to the remote home). */
  remoteDir: string;
  /** Local parent dir; the job lands in localDir/<basename of remoteDir>. */
  localDir: string;
  port?: number;
  identity?: string;
  /** Extra `-o Key=Value` ssh options. */
  sshOptions?: string[];
  /** ssh program (tests use a stand-in). */
  ssh?: string;
  /**
   * A pinned connection (the stack form: the stack's key and the host's key in 0600 files, and its port)
   * instead of port, identity, sshOptions and ssh.
   */
  pinned?: SshFiles & { port: number };
}

export function validatePull(o: PullOptions): void {
  if (!o.target || o.target.startsWith("-") || /\s/.test(o.target)) {
    throw new Error(`ssh target '${o.target}' must be host, user@host or an ssh config alias (no leading '-', no spaces)`);
  }
  const trimmed = o.remoteDir.replace(/\/+$/, "");
  if (!trimmed || trimmed === "." || trimmed === "~") throw new Error(`remote job dir '${o.remoteDir}' must name the job directory itself`);
  if (!o.localDir) throw new Error("local dir is required");
  if (o.port !== undefined && (!Number.isInteger(o.port) || o.port < 1 || o.port > 65535)) throw new Error(`--port ${o.port} is not a TCP port`);
  for (const opt of o.sshOptions ?? []) {
    if (!/^[A-Za-z]+=\S+$/.test(opt)) throw new Error(`ssh option '${opt}' must look like Key=Value`);
  }
}

/** The ssh invocation (without the destination and the remote command). BatchMode: never hang on a password prompt. */
export function sshArgv(o: PullOptions): string[] {
  if (o.pinned) return sshArgs(o.pinned, { options: ["LogLevel=ERROR"] });
  return adHocSshArgs({ ssh: o.ssh, port: o.port, identity: o.identity, options: o.sshOptions });
}

export const jobBaseName = (remoteDir: string): string => path.posix.basename(remoteDir.replace(/\/+$/, ""));
export const localJobDir = (o: PullOptions): string => path.join(o.localDir, jobBaseName(o.remoteDir));

/**
 * rsync argv (transport.ts rsyncArgv): resumable, partial files kept aside so a half-copied result.json
 * never looks complete; no --delete, so local files are never removed.
 */
export function rsyncArgv(o: PullOptions): string[] {
  validatePull(o);
  return rsyncOverSsh(sshArgv(o), `${o.target}:${o.remoteDir.replace(/\/+$/, "")}`, o.localDir);
}

/** ssh argv running `command -v rsync` remotely (exit 0 when the remote has rsync). */
export function remoteHasRsyncArgv(o: PullOptions): string[] {
  return [...sshArgv(o), o.target, "command -v rsync >/dev/null"];
}

/** ssh argv listing every file as "size mtime relpath\0" (GNU find on the runner host). */
export function remoteListArgv(o: PullOptions): string[] {
  validatePull(o);
  return [...sshArgv(o), o.target, `cd ${shellQuote(o.remoteDir)} && find . -type f -printf '%s %T@ %P\\0'`];
}

/** ssh argv streaming a tar of the NUL-separated file list given on stdin. */
export function remoteTarArgv(o: PullOptions): string[] {
  validatePull(o);
  return [...sshArgv(o), o.target, remoteTarCommand(o.remoteDir)];
}

/** Local tar extracting into the job dir; keeps permissions and mtimes (the skip test uses mtimes). */
export function localUntarArgv(o: PullOptions): string[] {
  return ["tar", "-C", localJobDir(o), "-xpf", "-"];
}

export interface FileStat {
  path: string;
  size: number;
  /** Seconds since the epoch. */
  mtime: number;
}

/** Parses the remote listing produced by remoteListArgv. */
export function parseListing(text: string): FileStat[] {
  return text
    .split("\0")
    .filter((r) => r.length > 0)
    .map((record) => {
      const m = /^(\d+) (\d+(?:\.\d+)?) (.+)$/s.exec(record);
      if (!m) throw new Error(`unexpected remote listing entry: ${JSON.stringify(record.slice(0, 80))}`);
      return { size: Number(m[1]), mtime: Number(m[2]), path: m[3] };
    });
}

/**
 * Files to copy: missing locally, a different size (partial copy or grown log), or older locally than
 * remotely (rewritten, e.g. result.json). Complete files are skipped.
 */
export function filesToFetch(remote: readonly FileStat[], local: ReadonlyMap<string, { size: number; mtime: number }>): string[] {
  return remote
    .filter((r) => {
      if (r.path.split("/").includes("..")) return false;
      const l = local.get(r.path);
      return !l || l.size !== r.size || Math.floor(l.mtime) < Math.floor(r.mtime);
    })
    .map((r) => r.path);
}
