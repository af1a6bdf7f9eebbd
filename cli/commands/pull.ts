// `reprobench pull --stack S [DIR]` or `reprobench pull <ssh target> <remote job dir> <local dir>` — resumable
// copy of a job dir from the runner host. argv construction is pure (results/pull.ts); this file runs it
// through components/transport.ts; the stack form finds the runner, its key and the job through the
// stack's outputs.
import * as fs from "node:fs";
import * as path from "node:path";
import { collect, command } from "./command";
import type { PullOptions } from "../../results/pull";

/** Pull options for a stack's job: its runner from the stack's outputs, the key and pinned host key in 0600 files. */
async function stackPullOptions(stack: string, localDir: string, jobName: string | undefined): Promise<{ o: PullOptions; manifest: { remote: string; local: string } }> {
  const { stackAccess, connectionOf } = await import("../stack-access");
  const { bracketHost, writeSshMaterial } = await import("../../components/transport");
  const access = await stackAccess(stack, { root: path.resolve(__dirname, "..", "..") });
  const name = jobName ?? access.job?.name;
  if (!name) throw new Error(`stack '${stack}' has no job in its outputs (not run yet, or destroyed): name one with --job (\`reprobench status --stack ${stack}\` shows the last one)`);
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) throw new Error(`--job: got '${name}'; expected a job name (letters, digits, '.', '_', '-')`);
  const c = connectionOf(access, access.cluster.runner);
  const o: PullOptions = {
    target: `${c.user}@${bracketHost(c.host)}`,
    remoteDir: path.posix.join(access.jobsDir, name),
    localDir: path.resolve(localDir),
    pinned: { ...writeSshMaterial(c), port: c.port },
  };
  return { o, manifest: { remote: path.posix.join(access.jobsDir, `${name}.reprobench-manifest.json`), local: path.join(o.localDir, `${name}.reprobench-manifest.json`) } };
}

const USAGE = `usage: reprobench pull --stack NAME [DIR] [--job NAME] [--method auto|rsync|tar]
       reprobench pull <ssh target> <remote job dir> <local dir> [--method auto|rsync|tar]
                      [--port N] [--identity FILE] [-o Key=Value]… [--ssh PROGRAM]`;

const HELP = `
${USAGE}

With --stack: the stack's job (or --job, another job in the same jobs directory) from its runner host,
reached through the stack's outputs (pinned host key, the stack's key), into DIR/<job name> (default
DIR: ./reprobench-jobs), with the run manifest beside it (what \`reprobench report\` shows on top).

Copies the job dir into <local dir>/<job name>. Resumable: run it again after an interruption or
while the job is still running. rsync over ssh when both hosts have rsync (partial files kept aside),
else tar over ssh of only the files that are missing, of another size, or older locally. Never deletes
local files. ssh runs in BatchMode (keys or an agent, no password prompts).`;

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
  const { pipeArgv, runArgvSync } = await import("../../components/transport");
  const { filesToFetch, localJobDir, localUntarArgv, parseListing, remoteListArgv, remoteTarArgv } = await import("../../results/pull");
  const listing = runArgvSync(remoteListArgv(o));
  if (listing.code !== 0) throw new Error(`listing ${o.target}:${o.remoteDir} failed (exit ${listing.code}): ${listing.stderr.trim()}`);
  const dest = localJobDir(o);
  fs.mkdirSync(dest, { recursive: true });
  const wanted = filesToFetch(parseListing(listing.stdout), localListing(dest));
  if (wanted.length === 0) return 0;
  const exit = await pipeArgv(remoteTarArgv(o), wanted.map((w) => `${w}\0`).join(""), localUntarArgv(o));
  // GNU tar exits 1 for "file changed as we read it" (a running job): the next pull completes it.
  if (exit.local !== 0) throw new Error(`local tar exited ${exit.local}`);
  if (exit.remote !== null && exit.remote > 1) throw new Error(`remote tar exited ${exit.remote}`);
  return wanted.length;
}

export const pull = command("pull", {
  summary: "copy a job dir from the runner host over ssh (resumable, never deletes local files)",
  define: (cmd) =>
    cmd
      .usage("[options] --stack NAME [DIR] | <ssh target> <remote job dir> <local dir>")
      .argument("[args...]", "with --stack: DIR (default ./reprobench-jobs); else <ssh target> <remote job dir> <local dir>")
      .option("-s, --stack <name>", "the job of that stack, from its runner (read through the stack's outputs)")
      .option("--job <name>", "with --stack: another job in the same jobs directory")
      .option("--method <m>", "auto, rsync or tar", "auto")
      .option("--port <n>", "ssh port (address form)")
      .option("--identity <file>", "ssh key (address form)")
      .option("-o, --option <Key=Value>", "ssh option, repeatable (address form)", collect)
      .option("--ssh <program>", "ssh program (address form)")
      .addHelpText("after", HELP),
  // Only the stack form reads a stack; the address form is plain ssh.
  toolchain: ({ opts }) => opts.stack !== undefined,
  async action({ opts, args: positionals }) {
    const values = opts as { stack?: string; job?: string; method: string; port?: string; identity?: string; option?: string[]; ssh?: string };
    const { localHasRsync, runArgvSync, shellQuote } = await import("../../components/transport");
    const { localJobDir, remoteHasRsyncArgv, rsyncArgv, sshArgv, validatePull } = await import("../../results/pull");
    let o: PullOptions;
    let manifest: { remote: string; local: string } | undefined;
    if (values.stack !== undefined) {
      if (positionals.length > 1) {
        console.error(`reprobench pull --stack: give at most one local DIR\n\n${USAGE}`);
        return 2;
      }
      for (const flag of ["port", "identity", "option", "ssh"] as const) {
        if (values[flag] !== undefined) throw new Error(`--${flag} does not go with --stack: the stack's outputs say how to reach its runner`);
      }
      console.error(`stack: ${values.stack}`);
      ({ o, manifest } = await stackPullOptions(values.stack, positionals[0] ?? "reprobench-jobs", values.job));
    } else {
      if (values.job !== undefined) throw new Error("--job goes with --stack");
      if (positionals.length !== 3) {
        console.error(`reprobench pull: give --stack NAME [DIR], or <ssh target> <remote job dir> <local dir>\n\n${USAGE}`);
        return 2;
      }
      const [target, remoteDir, localDir] = positionals;
      o = {
        target,
        remoteDir,
        localDir: path.resolve(localDir),
        port: values.port === undefined ? undefined : Number(values.port),
        identity: values.identity,
        sshOptions: values.option,
        ssh: values.ssh,
      };
    }
    validatePull(o);
    if (!["auto", "rsync", "tar"].includes(values.method)) throw new Error(`--method '${values.method}' must be auto, rsync or tar`);
    fs.mkdirSync(o.localDir, { recursive: true });
    let method = values.method;
    if (method === "auto") {
      method = localHasRsync() && runArgvSync(remoteHasRsyncArgv(o)).code === 0 ? "rsync" : "tar";
    }
    let code = 0;
    if (method === "rsync") {
      const argv = rsyncArgv(o);
      console.log(`rsync → ${localJobDir(o)}`);
      code = runArgvSync(argv, { inherit: true }).code;
    } else {
      const n = await pullWithTar(o);
      console.log(`tar over ssh → ${localJobDir(o)}: ${n} file(s) fetched${n === 0 ? " (already complete)" : ""}`);
    }
    if (code === 0 && manifest) {
      const r = runArgvSync([...sshArgv(o), o.target, `cat ${shellQuote(manifest.remote)}`]);
      if (r.code === 0) {
        fs.writeFileSync(manifest.local, r.stdout);
        console.log(`run manifest → ${manifest.local}`);
      } else console.log(`(no run manifest at ${manifest.remote})`);
    }
    return code;
  },
});
