// `reprobench resume|rerun --stack S --job NAME`: the same plans as for a local job dir, for a job that
// lives on the stack's runner. The job's JSON files are fetched (results/remote/job-files.sh) into a
// temporary copy that the pure planners read; the planned files and the Harbor command then run on the
// runner (results/remote/harbor-pass.sh) under a systemd unit, with the stack's API key in its
// environment file, as the job itself was started.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { readJob } from "../results/load";
import type { JobInput } from "../results/audit";
import { connectionOf, runRemoteScript, type StackAccess } from "./stack-access";
import { type HostConnection, secretMasker } from "../components/transport";

const JOB_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export interface RemoteJob {
  access: StackAccess;
  runner: HostConnection;
  /** The job dir on the runner. */
  remoteDir: string;
  /** The job as the planners see it, read from the fetched copy. */
  job: JobInput;
  /** Removes the temporary copy. */
  dispose(): void;
}

/** A script of results/remote/, from this checkout (the stack files may live in another directory). */
function remoteScript(name: string): string {
  return fs.readFileSync(path.join(__dirname, "..", "results", "remote", `${name}.sh`), "utf8");
}

/** Reads a stack's job from its runner (JSON files only) into a temporary copy. */
export async function fetchRemoteJob(where: { root: string; env?: Record<string, string> }, stack: string, jobName: string | undefined): Promise<RemoteJob> {
  const { stackAccess } = await import("./stack-access");
  const root = where.root;
  const access = await stackAccess(stack, { root, env: where.env });
  const name = jobName ?? access.job?.name;
  if (!name) throw new Error(`stack '${stack}' has no job in its outputs (not run yet, or destroyed): name one with --job (\`reprobench status --stack ${stack}\` shows the last one)`);
  if (!JOB_NAME.test(name)) throw new Error(`--job: got '${name}'; expected a job name (letters, digits, '.', '_', '-')`);
  const runner = connectionOf(access, access.cluster.runner);
  const remoteDir = path.posix.join(access.jobsDir, name);
  const encoded = await runRemoteScript(runner, remoteScript("job-files"), { JOB_DIR: remoteDir }, { timeoutMs: 120_000 });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "reprobench-job-"));
  const dispose = () => fs.rmSync(tmp, { recursive: true, force: true });
  try {
    const local = path.join(tmp, name);
    fs.mkdirSync(local);
    execFileSync("tar", ["-xzf", "-", "-C", local], { input: Buffer.from(encoded.trim(), "base64") });
    return { access, runner, remoteDir, job: readJob(local), dispose };
  } catch (err) {
    dispose();
    throw err;
  }
}

export interface RemotePass {
  /** Harbor's argv as planned (argv[0] "harbor" is the runner's harbor.venv one). */
  argv: string[];
  /** Harbor's working directory on the runner. */
  cwd: string;
  /** Absolute runner paths and the content to write there (the current file is backed up first). */
  files: { path: string; content: string }[];
  /** Absolute runner dirs to move before Harbor starts (trials set aside for re-running); none by default. */
  moves?: { from: string; to: string }[];
  /** A name for the unit and the log: "resume" or "rerun". */
  kind: "resume" | "rerun";
  jobName: string;
  /** The job dir this pass writes (the old job's for a resume, the new one's for a rerun). */
  jobDir: string;
  wait: boolean;
}

/** Line-oriented, base64 twice: the file list survives any content, the script needs no JSON parser. */
export function encodeFiles(files: readonly { path: string; content: string }[]): string {
  const lines = files.map((f) => `${f.path}\t${Buffer.from(f.content).toString("base64")}`).join("\n");
  return Buffer.from(lines ? `${lines}\n` : "").toString("base64");
}

/** Lines "<from>\t<to>", each ending in a newline (bash's `read` drops a last line without one), base64. */
export function encodeMoves(moves: readonly { from: string; to: string }[]): string {
  return Buffer.from(moves.map((m) => `${m.from}\t${m.to}\n`).join("")).toString("base64");
}

/** The unit a pass runs under; one pass of a kind per job at a time. */
export function passUnit(kind: RemotePass["kind"], jobName: string): string {
  return `reprobench-${kind}-${jobName.replace(/[^A-Za-z0-9_.-]/g, "_")}.service`;
}

/** Runs the pass on the runner; resolves to what harbor-pass.sh reported (and its log path). */
export async function runRemotePass(remote: Pick<RemoteJob, "access" | "runner">, pass: RemotePass): Promise<{ unit: string; log: string; exitStatus: string | null; logTail: string }> {
  if (!remote.access.apiKey) throw new Error(`the outputs of ${remote.access.owner ? `stack '${remote.access.owner}'` : `stack '${remote.access.stack}'`} have no sglangApiKey: Harbor's agent needs it to reach the model`);
  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace(/\..*$/, "");
  const unit = passUnit(pass.kind, pass.jobName);
  const log = path.posix.join(remote.access.cluster.harbor.workDir, "logs", `${pass.jobName}.${pass.kind}-${stamp}.log`);
  const out = await runRemoteScript(
    remote.runner,
    remoteScript("harbor-pass"),
    {
      WORK_DIR: pass.cwd,
      UNIT: unit,
      LOG_FILE: log,
      API_KEY: remote.access.apiKey,
      ARGV_B64: Buffer.from(pass.argv.join("\0")).toString("base64"),
      VENV: remote.access.cluster.harbor.venv,
      FILES_B64: encodeFiles(pass.files),
      MOVES_B64: encodeMoves(pass.moves ?? []),
      STAMP: stamp,
      WAIT: pass.wait ? "1" : "0",
      // The stack's last job is now this pass's: `reprobench status --stack` follows it.
      JOB_DIR: pass.jobDir,
      CURRENT_FILE: path.posix.join(remote.access.cluster.harbor.workDir, "runs", "current.d", remote.access.stackId),
    },
    { timeoutMs: pass.wait ? 12 * 3600_000 : 120_000, secret: ["API_KEY"] },
  );
  const last = out.trim().split("\n").pop() ?? "{}";
  const reported = JSON.parse(last) as { exitStatus: string | null; logTail?: string };
  // Harbor's log may echo what it was started with: never print the key.
  const logTail = secretMasker({ API_KEY: remote.access.apiKey }).all(reported.logTail ?? "");
  return { unit, log, exitStatus: reported.exitStatus, logTail };
}
