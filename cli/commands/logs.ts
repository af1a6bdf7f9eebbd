// `reprobench logs [--stack S] [SOURCE] [-f] [-n N]`: the logs of a stack's job and servers over SSH, by
// name (cli/stack-access.ts resolves hosts, containers and files from the stack's outputs).
import * as path from "node:path";
import { command, stackOption } from "./command";
import type { StackAccess } from "../stack-access";
import { resolveStack, stackLine } from "../stack-default";
import { hostArgv, shellQuote, spawnPiped } from "../../components/transport";
import { SECRET_ARG_SPELLINGS, maskText, secretArgMention } from "../../results/harbor";

const root = path.resolve(__dirname, "..", "..");

const HELP = `
Prints (or with -f follows) a log of the stack over SSH. SOURCE:
  harbor        the output of \`harbor run\` (default; the job's log file on the runner)
  job           Harbor's job.log in the job directory
  router        the router container's log (docker logs, on the router host)
  <host>        that worker host's model server container (docker logs), e.g. worker-a
  <trial>       a trial of the job (its trial.log), e.g. hello-file__fsArgg6
A run stack's job is its own; the cluster's hosts are its owner's.`;

export interface LogTarget {
  host: string;
  command: string;
  what: string;
}

/** Where a log source lives and the remote command that prints it. Throws naming the known sources. */
export function logTarget(access: StackAccess, source: string, o: { follow: boolean; lines: number }): LogTarget {
  const c = access.cluster;
  const tail = (file: string) => `tail -n ${o.lines}${o.follow ? " -F" : ""} ${shellQuote(file)}`;
  const docker = (container: string) => `docker logs --tail ${o.lines}${o.follow ? " -f" : ""} ${shellQuote(container)} 2>&1`;
  const noJob = () => new Error(`stack '${access.stack}' has no job in its outputs (not run yet, or destroyed): \`reprobench status --stack ${access.stack}\` shows the last one`);
  if (source === "harbor") {
    if (!access.job) throw noJob();
    const file = access.job.log ?? path.posix.join(c.harbor.workDir, "logs", `${access.job.name}.log`);
    return { host: c.runner, command: tail(file), what: `harbor's log ${file}` };
  }
  if (source === "job") {
    if (!access.job) throw noJob();
    return { host: c.runner, command: tail(path.posix.join(access.job.dir, "job.log")), what: `${access.job.name}/job.log` };
  }
  if (source === "router") {
    if (!c.router) throw new Error(`the cluster of stack '${access.owner ?? access.stack}' runs no router (router.enabled is false)`);
    return { host: c.router.host, command: docker(c.router.containerName), what: `router container ${c.router.containerName}` };
  }
  const worker = c.workers.find((w) => w.host === source);
  if (worker) return { host: worker.host, command: docker(worker.containerName), what: `model server container ${worker.containerName}` };
  if (/^[A-Za-z0-9._-]+__[A-Za-z0-9]+$/.test(source)) {
    if (!access.job) throw noJob();
    return { host: c.runner, command: tail(path.posix.join(access.job.dir, source, "trial.log")), what: `trial ${source}` };
  }
  const known = ["harbor", "job", ...(c.router ? ["router"] : []), ...c.workers.map((w) => w.host), "<trial dir name>"];
  throw new Error(`unknown log source '${source}'; expected one of: ${known.join(", ")}`);
}

/**
 * Masks a log stream for the terminal: the stack's API key by value (SGLang prints it in its start-up line,
 * `server_args=ServerArgs(..., api_key='…')`, and vLLM in `non-default args:`), the servers' secret arguments
 * by name and URL credentials (results/harbor.ts maskText). Whole lines go out at once; a line still being
 * written waits for its end, or for `flush` (the caller's idle timer), which keeps back a tail that may be
 * the start of a key or of a key argument's name, and the rest of a line from where it names a key argument
 * (`api_key=`, `--api-key`),
 * so that no key split across two reads is printed in two halves.
 */
export class LogMasker {
  private pending = "";
  private readonly secrets: string[];

  constructor(secrets: readonly (string | null | undefined)[]) {
    this.secrets = secrets.filter((s): s is string => typeof s === "string" && s.length >= 4);
  }

  /** What may be printed now that `chunk` arrived. */
  push(chunk: string): string {
    this.pending += chunk;
    const end = this.pending.lastIndexOf("\n");
    if (end === -1) return "";
    const ready = this.pending.slice(0, end + 1);
    this.pending = this.pending.slice(end + 1);
    return maskText(ready, this.secrets);
  }

  /** The partial line, masked; unless `final`, minus what may still become a key (see the class). */
  flush(final = false): string {
    const text = maskText(this.pending, this.secrets);
    let keep = 0;
    const named = secretArgMention(text);
    if (!final && named !== -1) keep = text.length - named;
    else if (!final) {
      // The longest tail that may be the start of a key or of a key argument's name.
      for (const word of [...this.secrets, ...SECRET_ARG_SPELLINGS]) {
        for (let n = Math.min(word.length - 1, text.length); n > keep; n--) {
          if (text.endsWith(word.slice(0, n))) {
            keep = n;
            break;
          }
        }
      }
    }
    this.pending = text.slice(text.length - keep);
    return text.slice(0, text.length - keep);
  }
}

/** Copies `from` to `to` through `masker`; a partial line is printed after `idleMs` without more data. */
function pipeMasked(from: NodeJS.ReadableStream, to: NodeJS.WritableStream, masker: LogMasker, idleMs = 200): Promise<void> {
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    from.setEncoding("utf8");
    from.on("data", (chunk: string) => {
      const out = masker.push(chunk);
      if (out) to.write(out);
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => {
        const partial = masker.flush();
        if (partial) to.write(partial);
      }, idleMs);
    });
    from.on("end", () => {
      if (timer) clearTimeout(timer);
      const rest = masker.flush(true);
      if (rest) to.write(rest);
      resolve();
    });
  });
}

export const logs = command("logs", {
  summary: "print or follow a stack's logs by name: harbor, job, router, a worker host, a trial",
  define: (cmd) =>
    stackOption(cmd)
      .argument("[source]", "harbor (default), job, router, a worker host or a trial")
      .option("-f, --follow", "keep following (Ctrl-C stops following; the job goes on)")
      .option("-n, --lines <n>", "lines from the end to start with", "100")
      .addHelpText("after", HELP),
  toolchain: () => true,
  async action({ opts, args }) {
    const lines = Number(opts.lines);
    if (!Number.isInteger(lines) || lines < 0) throw new Error(`--lines: got '${String(opts.lines)}'; expected a non-negative integer`);
    const choice = resolveStack(opts.stack as string | undefined, root);
    console.error(stackLine(choice));
    const { stackAccess, connectionOf } = await import("../stack-access");
    const access = await stackAccess(choice.stack, { root });
    const target = logTarget(access, args[0] ?? "harbor", { follow: Boolean(opts.follow), lines });
    // A terminal gets a remote tty so that Ctrl-C ends the remote tail/docker logs too.
    const argv = hostArgv(connectionOf(access, target.host), target.command, { tty: Boolean(opts.follow && process.stdin.isTTY) });
    if (process.stderr.isTTY) console.error(`== ${target.what} on ${target.host}`);
    // Never straight to the terminal: the model servers print the API key in their start-up log.
    return await spawnMasked(argv, [access.apiKey]);
  },
});

/**
 * Runs `argv` (the ssh command, started by the transport's spawnPiped) with its stdout and stderr masked
 * by LogMasker on the way to `out`/`err`; resolves to its exit status (0 after Ctrl-C). Ctrl-C ends ssh
 * (and the remote tail); this process stays to print what ssh still sends, masked.
 */
export async function spawnMasked(
  argv: readonly string[],
  secrets: readonly (string | null)[],
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Promise<number> {
  const onSigint = (): void => undefined;
  process.on("SIGINT", onSigint);
  try {
    return await new Promise<number>((resolve, reject) => {
      const child = spawnPiped(argv);
      const copied = Promise.all([pipeMasked(child.stdout, out, new LogMasker(secrets)), pipeMasked(child.stderr, err, new LogMasker(secrets))]);
      child.on("error", reject);
      child.on("close", (code, signal) => void copied.then(() => resolve(signal === "SIGINT" ? 0 : (code ?? 1))));
    });
  } finally {
    process.off("SIGINT", onSigint);
  }
}
