// command:remote:CopyToRemote (and the deprecated CopyFile) over SFTP. Path rules of the official
// provider: the last element of remotePath is created if missing; if remotePath is an existing
// directory the source is copied *into* it; a directory source onto an existing file fails.
// Supported sources: FileAsset, StringAsset, FileArchive of a directory. Deleting copies nothing back
// and removes nothing (as upstream).
import { promises as fs } from "node:fs";
import * as path from "node:path";
import type { SFTPWrapper } from "ssh2";
import { InputReader } from "../common/inputs";
import { CheckFailure, OperationContext, ResourceHandler } from "../common/provider";
import { ARCHIVE_SIG, ASSET_SIG, Decoded, Props, SIG_KEY, containsUnknown, isSet } from "../common/wire";
import { describe, readConnection } from "./connection";
import { commandDiff } from "./command";
import { connect, sftp } from "./ssh";

export type Source = { kind: "file"; path: string } | { kind: "text"; text: string } | { kind: "dir"; path: string };

/** Interprets an asset/archive value from the wire; errors name what is unsupported. */
export function readSource(value: unknown, property = "source"): { source?: Source; failures: CheckFailure[] } {
  const fail = (reason: string) => ({ failures: [{ property, reason }] });
  if (value === undefined || value === null) return fail("is required (an asset or archive)");
  if (containsUnknown(value)) return { failures: [] };
  if (typeof value !== "object" || Array.isArray(value)) return fail("must be a pulumi.asset.Asset or Archive");
  const v = value as Props;
  if (v[SIG_KEY] === ASSET_SIG) {
    if (typeof v.path === "string") return { source: { kind: "file", path: v.path }, failures: [] };
    if (typeof v.text === "string") return { source: { kind: "text", text: v.text }, failures: [] };
    return fail("RemoteAsset (uri) sources are not supported by the offline command plugin; use a FileAsset or StringAsset");
  }
  if (v[SIG_KEY] === ARCHIVE_SIG) {
    if (typeof v.path === "string") return { source: { kind: "dir", path: v.path }, failures: [] };
    return fail("only FileArchive of a directory is supported by the offline command plugin (not AssetArchive or RemoteArchive)");
  }
  return fail("must be a pulumi.asset.Asset or Archive");
}

const sftpCall = <T>(fn: (cb: (err: Error | null | undefined, v?: T) => void) => void) =>
  new Promise<T>((resolve, reject) => fn((err, v) => (err ? reject(err) : resolve(v as T))));

async function remoteKind(s: SFTPWrapper, p: string): Promise<"dir" | "file" | "none"> {
  try {
    const st = await sftpCall<import("ssh2").Stats>((cb) => s.stat(p, cb));
    return st.isDirectory() ? "dir" : "file";
  } catch (e) {
    if ((e as { code?: number }).code === 2) return "none"; // SSH_FX_NO_SUCH_FILE
    throw e;
  }
}

async function putFile(s: SFTPWrapper, local: string, remote: string): Promise<void> {
  const mode = (await fs.stat(local)).mode & 0o7777;
  await sftpCall<void>((cb) => s.fastPut(local, remote, { mode }, (err) => cb(err)));
  await sftpCall<void>((cb) => s.chmod(remote, mode, (err) => cb(err)));
}

async function putDir(s: SFTPWrapper, local: string, remote: string, budget: { files: number }): Promise<void> {
  const mode = (await fs.stat(local)).mode & 0o7777;
  if ((await remoteKind(s, remote)) === "none") await sftpCall<void>((cb) => s.mkdir(remote, { mode }, (err) => cb(err)));
  for (const entry of await fs.readdir(local, { withFileTypes: true })) {
    if (--budget.files < 0) throw new Error(`refusing to copy more than ${MAX_FILES} files from ${local}`);
    const from = path.join(local, entry.name);
    const to = path.posix.join(remote, entry.name);
    const st = await fs.stat(from); // follows symlinks: the target's content is copied
    if (st.isDirectory()) await putDir(s, from, to, budget);
    else if (st.isFile()) await putFile(s, from, to);
  }
}
const MAX_FILES = 100_000; // bounds the walk (e.g. a symlink loop)

export async function copySource(s: SFTPWrapper, source: Source, remotePath: string): Promise<string> {
  const kind = await remoteKind(s, remotePath);
  const base = source.kind === "text" ? undefined : path.basename(path.resolve(source.path));
  const target = kind === "dir" && base ? path.posix.join(remotePath, base) : remotePath;
  if (source.kind === "text") {
    if (kind === "dir") throw new Error(`remotePath ${remotePath} is a directory; a StringAsset needs a file path`);
    await sftpCall<void>((cb) => s.writeFile(remotePath, source.text, { mode: 0o644 }, (err) => cb(err)));
    return remotePath;
  }
  const st = await fs.stat(source.path).catch(() => {
    throw new Error(`source ${source.path} does not exist on the machine running pulumi (cwd ${process.cwd()})`);
  });
  if (source.kind === "dir" || st.isDirectory()) {
    if (!st.isDirectory()) throw new Error(`source ${source.path} is a FileArchive but not a directory (tar/zip archives are not supported offline)`);
    if (kind === "file") throw new Error(`cannot copy directory ${source.path} onto the existing file ${remotePath}`);
    await putDir(s, source.path, target, { files: MAX_FILES });
  } else {
    await putFile(s, source.path, target);
  }
  return target;
}

function copyHandler(sourceOf: (values: Props) => { source?: Source; failures: CheckFailure[] }, inputKeys: string[]): ResourceHandler {
  const check = (values: Props) => {
    const r = new InputReader(values);
    r.string("remotePath", true);
    const triggers = values.triggers;
    if (isSet(triggers) && !Array.isArray(triggers)) r.failures.push({ property: "triggers", reason: "must be a list" });
    return { failures: [...readConnection(values.connection).failures, ...sourceOf(values).failures, ...r.failures] };
  };
  const copy = async (ctx: OperationContext, d: Decoded) => {
    const conn = readConnection(d.values.connection).spec;
    const { source } = sourceOf(d.values);
    if (!conn || !source) throw new Error("invalid inputs: " + JSON.stringify(check(d.values).failures));
    const remotePath = d.values.remotePath as string;
    const session = await connect(conn, {
      signal: ctx.signal,
      onRetry: (n, limit, err, delay) => ctx.log("warning", `dial ${describe(conn)} failed (attempt ${n}/${limit}): ${err.message}; retrying in ${delay} ms`),
    });
    try {
      const target = await copySource(await sftp(session.client), source, remotePath);
      ctx.log("info", `copied ${source.kind === "text" ? "text" : source.path} to ${describe(conn)}:${target}`);
    } finally {
      session.close();
    }
    return { outs: { ...d.values } };
  };
  return {
    check: (news) => check(news.values),
    diff: commandDiff(inputKeys),
    create: async (ctx, inputs) => ({ id: `${ctx.name}-copy`, ...(await copy(ctx, inputs)) }),
    update: async (ctx, _id, _olds, news) => copy(ctx, news),
  };
}

export const copyToRemoteHandler = copyHandler((v) => readSource(v.source), ["connection", "remotePath", "source", "triggers"]);

export const copyFileHandler = copyHandler((v) => {
  const r = new InputReader(v);
  const p = r.string("localPath", true);
  return { source: p === undefined ? undefined : { kind: "file", path: p }, failures: r.failures };
}, ["connection", "localPath", "remotePath", "triggers"]);
