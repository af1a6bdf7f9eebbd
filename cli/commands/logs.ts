// `reprobench logs [--stack S] [SOURCE] [-f] [-n N]`: the logs of a stack's job and servers over SSH, by
// name (cli/stack-access.ts resolves hosts, containers and files from the stack's outputs).
import { spawn } from "node:child_process";
import * as path from "node:path";
import { parseArgs } from "node:util";
import type { Command } from "./index";
import type { StackAccess } from "../stack-access";
import { shellQuote } from "../../results/pull";

const root = path.resolve(__dirname, "..", "..");

const HELP = `usage: reprobench logs [--stack NAME] [SOURCE] [-f] [-n N]

Prints (or with -f follows) a log of the stack over SSH. SOURCE:
  harbor        the output of \`harbor run\` (default; the job's log file on the runner)
  job           Harbor's job.log in the job directory
  router        the router container's log (docker logs, on the router host)
  <host>        that worker host's model server container (docker logs), e.g. worker-a
  <trial>       a trial of the job (its trial.log), e.g. hello-file__fsArgg6
A run stack's job is its own; the cluster's hosts are its owner's.

  --stack NAME  stack (default local)
  -f, --follow  keep following (Ctrl-C stops following; the job goes on)
  -n, --lines N lines from the end to start with (default 100)`;

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

export const logs: Command = {
  summary: "print or follow a stack's logs by name: harbor, job, router, a worker host, a trial",
  async run(args) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        stack: { type: "string", short: "s", default: "local" },
        follow: { type: "boolean", short: "f" },
        lines: { type: "string", short: "n", default: "100" },
        help: { type: "boolean", short: "h" },
      },
    });
    if (values.help) {
      console.log(HELP);
      return 0;
    }
    if (positionals.length > 1) {
      console.error(`reprobench logs: give at most one SOURCE\n\n${HELP}`);
      return 2;
    }
    const lines = Number(values.lines);
    if (!Number.isInteger(lines) || lines < 0) throw new Error(`--lines: got '${values.lines}'; expected a non-negative integer`);
    const { stackAccess, connectionOf, sshArgvFor } = await import("../stack-access");
    const access = await stackAccess(values.stack!, { root });
    const target = logTarget(access, positionals[0] ?? "harbor", { follow: Boolean(values.follow), lines });
    // A terminal gets a remote tty so that Ctrl-C ends the remote tail/docker logs too.
    const argv = sshArgvFor(connectionOf(access, target.host), target.command, { tty: Boolean(values.follow && process.stdin.isTTY) });
    if (process.stderr.isTTY) console.error(`== ${target.what} on ${target.host}`);
    return await new Promise<number>((resolve, reject) => {
      const child = spawn(argv[0], argv.slice(1), { stdio: "inherit" });
      child.on("error", reject);
      child.on("close", (code, signal) => resolve(signal === "SIGINT" ? 0 : (code ?? 1)));
    });
  },
};
