// `reprobench pull <ssh target> <remote job dir> <local dir>` — resumable copy of a job dir from the runner
// host. argv construction is pure (results/pull.ts); this file runs the processes.
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { parseArgs } from "node:util";
import type { Command } from "./index";
import {
  filesToFetch,
  localJobDir,
  localUntarArgv,
  parseListing,
  PullOptions,
  remoteHasRsyncArgv,
  remoteListArgv,
  remoteTarArgv,
  rsyncArgv,
  validatePull,
} from "../../results/pull";

const HELP = `usage: reprobench pull <ssh target> <remote job dir> <local dir> [--method auto|rsync|tar]
                      [--port N] [--identity FILE] [-o Key=Value]… [--ssh PROGRAM]

Copies the job dir into <local dir>/<job name>. Resumable: run it again after an interruption or
while the job is still running. rsync over ssh when both hosts have rsync (partial files kept aside),
else tar over ssh of only the files that are missing, of another size, or older locally. Never deletes
local files. ssh runs in BatchMode (keys or an agent, no password prompts).`;

function run(argv: string[], opts: { input?: string } = {}): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(argv[0], argv.slice(1), { input: opts.input, encoding: "utf8", maxBuffer: 512 * 1024 * 1024 });
  if (r.error) throw new Error(`${argv[0]}: ${r.error.message}`);
  return { code: r.status ?? 1, stdout: r.stdout, stderr: r.stderr };
}

function localListing(root: string): Map<string, { size: number; mtime: number }> {
  const out = new Map<string, { size: number; mtime: number }>();
  const walk = (rel: string): void => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(path.join(root, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(r);
      else if (e.isFile()) {
        const st = fs.statSync(path.join(root, r));
        out.set(r, { size: st.size, mtime: st.mtimeMs / 1000 });
      }
    }
  };
  walk("");
  return out;
}

/** tar-over-ssh pass: returns the number of files fetched. */
export async function pullWithTar(o: PullOptions): Promise<number> {
  const listing = run(remoteListArgv(o));
  if (listing.code !== 0) throw new Error(`listing ${o.target}:${o.remoteDir} failed (exit ${listing.code}): ${listing.stderr.trim()}`);
  const dest = localJobDir(o);
  fs.mkdirSync(dest, { recursive: true });
  const wanted = filesToFetch(parseListing(listing.stdout), localListing(dest));
  if (wanted.length === 0) return 0;
  const [sshBin, ...sshArgs] = remoteTarArgv(o);
  const [tarBin, ...tarArgs] = localUntarArgv(o);
  await new Promise<void>((resolve, reject) => {
    const remote = spawn(sshBin, sshArgs, { stdio: ["pipe", "pipe", "inherit"] });
    const local = spawn(tarBin, tarArgs, { stdio: ["pipe", "inherit", "inherit"] });
    remote.stdout.pipe(local.stdin);
    remote.stdin.end(wanted.map((w) => `${w}\0`).join(""));
    let remoteCode: number | null = null;
    remote.on("error", reject);
    local.on("error", reject);
    remote.on("exit", (code) => (remoteCode = code));
    local.on("exit", (code) => {
      // GNU tar exits 1 for "file changed as we read it" (a running job): the next pull completes it.
      if (code !== 0) reject(new Error(`local tar exited ${code}`));
      else if (remoteCode !== null && remoteCode > 1) reject(new Error(`remote tar exited ${remoteCode}`));
      else resolve();
    });
  });
  return wanted.length;
}

export const pull: Command = {
  summary: "copy a job dir from the runner host over ssh (resumable, never deletes local files)",
  async run(args) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        method: { type: "string", default: "auto" },
        port: { type: "string" },
        identity: { type: "string" },
        option: { type: "string", short: "o", multiple: true },
        ssh: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
    if (values.help) {
      console.log(HELP);
      return 0;
    }
    if (positionals.length !== 3) {
      console.error(`reprobench pull: give <ssh target> <remote job dir> <local dir>\n\n${HELP}`);
      return 2;
    }
    const [target, remoteDir, localDir] = positionals;
    const o: PullOptions = {
      target,
      remoteDir,
      localDir: path.resolve(localDir),
      port: values.port === undefined ? undefined : Number(values.port),
      identity: values.identity,
      sshOptions: values.option,
      ssh: values.ssh,
    };
    validatePull(o);
    if (!["auto", "rsync", "tar"].includes(values.method!)) throw new Error(`--method '${values.method}' must be auto, rsync or tar`);
    fs.mkdirSync(o.localDir, { recursive: true });
    let method = values.method;
    if (method === "auto") {
      const localRsync = spawnSync("rsync", ["--version"], { stdio: "ignore" }).status === 0;
      method = localRsync && run(remoteHasRsyncArgv(o)).code === 0 ? "rsync" : "tar";
    }
    if (method === "rsync") {
      const argv = rsyncArgv(o);
      console.log(`rsync → ${localJobDir(o)}`);
      const r = spawnSync(argv[0], argv.slice(1), { stdio: "inherit" });
      if (r.error) throw new Error(`rsync: ${r.error.message}`);
      return r.status ?? 1;
    }
    const n = await pullWithTar(o);
    console.log(`tar over ssh → ${localJobDir(o)}: ${n} file(s) fetched${n === 0 ? " (already complete)" : ""}`);
    return 0;
  },
};
