// `reprobench up|preview|down [--stack NAME] [options]`: the Pulumi operations on a stack of this project,
// driven through the Automation API (cli/pulumi-stack.ts) with the project's toolchain and local backend
// (bin/reprobench sources scripts/env.sh for them). Pulumi's output streams to the terminal; a failed
// operation exits non-zero. On the `local` stack `up` first starts the simulated cluster; `down` leaves the
// cluster running (`sim down` ends it). Before an `up` or `down` that would stop the benchmark job or a
// model server, it says what would stop and asks (cli/confirm.ts); --yes skips that.
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { OpenStack, OperationArgs } from "../pulumi-stack";
import { InvalidArgumentError } from "commander";
import { type CliCommand, collect, command, type Command, parseCommand, UsageError } from "./command";
import { resolveStack, stackLine } from "../stack-default";

const root = resolve(__dirname, "..", "..");
/** Written when `sim up` made the default cluster's hosts anew; the next `up` of local refreshes first. */
const refreshMark = join(root, ".sim", "local-needs-refresh");

type Op = "up" | "preview" | "down";

/** What an operation gets from the command line. */
export interface StackArgs extends OperationArgs {
  /** --stack; undefined: the default stack (cli/stack-default.ts). */
  stack: string | undefined;
  /** --yes: proceed without asking even when a job or a model server would stop. */
  yes: boolean;
}

const positiveInt = (flag: string) => (value: string) => {
  if (!/^[1-9]\d*$/.test(value)) throw new InvalidArgumentError(`${flag}: got '${value}'; expected a positive integer`);
  return Number(value);
};

/** The options of `op`, on its commander command. */
function defineOp(op: Op, cmd: CliCommand): CliCommand {
  cmd.option("-s, --stack <name>", "stack name (default: $REPROBENCH_STACK, else the selected Pulumi stack, else local when no real stack exists)");
  cmd.option("-r, --refresh", "refresh the state from the hosts first");
  if (op !== "preview") cmd.option("--diff", "show a detailed diff (preview always does)");
  if (op !== "down") cmd.option("--expect-no-changes", "fail if anything would change");
  cmd.option("-t, --target <urn>", "only this resource URN (repeatable)", collect);
  cmd.option("--target-dependents", "with --target: also what depends on it");
  cmd.option("--exclude <urn>", "skip this resource URN (repeatable)", collect);
  cmd.option("--exclude-dependents", "with --exclude: also what depends on it");
  if (op !== "down") cmd.option("--replace <urn>", "replace this resource URN (repeatable)", collect);
  cmd.option("-p, --parallel <n>", "at most N resource operations at once", positiveInt("--parallel"));
  cmd.option("-m, --message <text>", "message for the update history");
  if (op !== "preview") {
    cmd.option("-y, --yes", "proceed without asking even when the change stops the running job or a model server (needed when stdin is not a terminal)");
    cmd.option("-f, --skip-preview", "accepted for muscle memory: reprobench never prints pulumi's own preview prompt");
  }
  return cmd;
}

/** The StackArgs of parsed options. */
function stackArgs(op: Op, o: Record<string, unknown>): StackArgs {
  const list = (k: string) => (o[k] as string[] | undefined) ?? [];
  const stack = o.stack as string | undefined;
  if (stack !== undefined && !/^[A-Za-z0-9_.-]+$/.test(stack)) throw new UsageError(`invalid stack name ${JSON.stringify(stack)}`);
  return {
    stack,
    yes: Boolean(o.yes),
    refresh: Boolean(o.refresh),
    diff: op === "preview" || Boolean(o.diff),
    expectNoChanges: Boolean(o.expectNoChanges),
    target: list("target"),
    replace: list("replace"),
    exclude: list("exclude"),
    targetDependents: Boolean(o.targetDependents),
    excludeDependents: Boolean(o.excludeDependents),
    parallel: o.parallel as number | undefined,
    message: o.message as string | undefined,
  };
}

const SUMMARY: Record<Op, string> = {
  up: "converge a stack (default: local, which starts the simulated cluster) and run the benchmark",
  preview: "show what `up` would change on a stack (never contacts hosts)",
  down: "destroy a stack's resources: stop the run gracefully, tear down (job results are kept)",
};

/** Parses an operation's arguments as the CLI does; throws a UsageError naming the bad one. */
export function parseStackArgs(args: string[], op: Op = "up"): StackArgs {
  const parsed = parseCommand(op, { summary: SUMMARY[op], define: (cmd) => defineOp(op, cmd) }, args);
  if (!parsed) throw new UsageError("--help is no operation");
  return stackArgs(op, parsed.opts);
}

/**
 * pulumi's exit code from an Automation API error: its message is "code: N …", where N is -2 when the
 * process failed (execa's error, whose own message then says "Command failed with exit code N").
 */
export function pulumiExitCode(err: unknown): number | undefined {
  const message = err instanceof Error ? err.message : String(err);
  const code = Number(/^code: (-?\d+)/.exec(message)?.[1]);
  if (code > 0) return code;
  const failed = Number(/Command failed with exit code (\d+)/.exec(message)?.[1]);
  return failed > 0 ? failed : undefined;
}

/** Where the run's results and log are, from the stack outputs (when a run is configured). */
export function runLocation(stack: string, out: Record<string, unknown>): string | undefined {
  const job = typeof out.jobName === "string" && !out.jobName.includes(" ") ? out.jobName : undefined;
  const lines = [
    ["job", job],
    ["results", job && out.jobsDir ? `${out.jobsDir}/${job}` : undefined],
    ["log", out.jobLog || undefined],
    ["state", job ? out.jobState : undefined],
    ["summary", job && out.jobSummary ? JSON.stringify(out.jobSummary) : undefined],
  ]
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => `  ${k}: ${v}`);
  if (lines.length === 0) return undefined;
  const note = stack === "local" && job ? "\n  (reprobench sim down copies the jobs directory to .sim/results/ before removing the hosts)" : "";
  return `\nbenchmark run on the runner host:\n${lines.join("\n")}${note}`;
}

/**
 * Whether to go on with an `up`/`down` of `stack`: when it would stop the job or a model server, says what
 * and asks (or, with no terminal to ask and no --yes, refuses). A stack whose state holds neither is not
 * previewed at all; --yes skips the check.
 */
async function confirmed(name: "up" | "down", open: OpenStack, parsed: StackArgs, stack: string): Promise<boolean> {
  if (parsed.yes) return true;
  const { ask, decide, describeStopping, destroySteps, nothingStops, refusal, whatWouldStop } = await import("../confirm");
  const { previewSteps, stateResources } = await import("../pulumi-stack");
  const inState = whatWouldStop(destroySteps(await stateResources(open.stack)));
  if (nothingStops(inState)) return true;
  let stopping = inState;
  if (name === "up") {
    console.error(`reprobench up: stack ${stack} runs a job or model servers; previewing the change first (--yes skips this)`);
    stopping = whatWouldStop(await previewSteps(open, parsed));
  }
  const decision = decide(stopping, { yes: parsed.yes, interactive: Boolean(process.stdin.isTTY) });
  if (decision === "proceed") return true;
  const outputs = await open.stack.outputs().catch(() => ({}) as Record<string, { value: unknown }>);
  const jobName = typeof outputs.jobName?.value === "string" && !outputs.jobName.value.includes(" ") ? outputs.jobName.value : undefined;
  console.error(describeStopping(stopping, { op: name, stack, jobName }));
  if (decision === "refuse") {
    console.error(refusal(name, stack));
    return false;
  }
  return ask(`${name === "up" ? "Apply the change" : "Destroy"} on stack ${stack}?`);
}

function op(name: Op): Command {
  return command(name, {
    summary: SUMMARY[name],
    define: (cmd) => defineOp(name, cmd),
    toolchain: () => true,
    async action(p) {
      const parsed = stackArgs(name, p.opts);
      const choice = resolveStack(parsed.stack, root);
      const stack = choice.stack;
      console.error(stackLine(choice));
      // Loaded here, not at the top: the other commands must not need the Pulumi SDK or the sim code.
      const { openStack, runOperation } = await import("../pulumi-stack");
      if (name === "up" && stack === "local") {
        const { simUp } = await import("../../sim/cluster");
        const sim = await simUp({ root });
        // New hosts hold nothing a state from earlier hosts describes: read them before planning, or `up`
        // trusts the old state (a finished job, installed Harbor) and changes nothing. The mark stays until
        // an `up` succeeds, so that an interrupted or failed one still refreshes next time.
        if (sim.createdHosts.length > 0) writeFileSync(refreshMark, `${sim.createdHosts.join(" ")}\n`);
        if (existsSync(refreshMark) && !parsed.refresh) {
          const hosts = readFileSync(refreshMark, "utf8").trim().split(/\s+/).join(", ");
          console.error(`reprobench up: the simulated hosts ${hosts} were created anew; refreshing the local stack's state from them first`);
          parsed.refresh = true;
        }
      }
      const open = await openStack(root, stack);
      if (name !== "preview" && !(await confirmed(name, open, parsed, stack))) return 2;
      // The tail of what pulumi said, for the hint when a destroy cannot reach a host.
      let said = "";
      const keep = (s: string) => (said = (said + s).slice(-200_000));
      const io = {
        color: process.stdout.isTTY ? ("always" as const) : ("never" as const),
        onOutput: (s: string) => void (keep(s), process.stdout.write(s)),
        onError: (s: string) => void (keep(s), process.stderr.write(s)),
      };
      // Ctrl-C reaches pulumi through the terminal's process group and it stops gracefully; this
      // process must stay to relay its output (a second Ctrl-C makes pulumi stop at once).
      const onSigint = () => console.error("\nreprobench: waiting for pulumi to stop (Ctrl-C again forces it)");
      process.on("SIGINT", onSigint);
      try {
        const outputs = await runOperation(open, name, parsed, io);
        if (name === "up" && stack === "local") rmSync(refreshMark, { force: true });
        const where = outputs && runLocation(stack, outputs);
        if (where) console.log(where);
        return 0;
      } catch (err) {
        // Pulumi's own output (already streamed) says why; only name the failure and pulumi's exit code.
        const code = pulumiExitCode(err);
        console.error(`reprobench ${name}: pulumi ${name === "down" ? "destroy" : name} on stack ${stack} failed${code ? ` (exit code ${code})` : ""}`);
        if (name === "down") {
          for (const host of unreachableHosts(said, await stackHosts(root, stack))) {
            console.error(`reprobench down: host ${host} could not be reached. If it is gone for good: reprobench forget-host ${host} --stack ${stack} --yes (drops what this stack placed on it from the state; nothing else changes), then reprobench down --stack ${stack} again.`);
          }
        }
        return code ?? 1;
      } finally {
        process.off("SIGINT", onSigint);
      }
    },
  });
}

export const up = op("up");
export const preview = op("preview");
export const down = op("down");

/** The stack file's hosts as name → "address:port" (none when it cannot be read). */
async function stackHosts(root: string, stack: string): Promise<Record<string, string>> {
  try {
    const { stackConfigFromYaml } = await import("../../components/config/stack-file");
    const config = stackConfigFromYaml(readFileSync(join(root, `Pulumi.${stack}.yaml`), "utf8"));
    const hosts = (config.hosts ?? []) as { name?: string; ssh?: { host?: string; port?: number } }[];
    return Object.fromEntries(hosts.filter((h) => h.name && h.ssh?.host).map((h) => [h.name!, `${h.ssh!.host}:${h.ssh!.port ?? 22}`]));
  } catch {
    return {};
  }
}

/**
 * The hosts a failed destroy could not reach, from what pulumi printed: our host scripts name the host
 * ("host worker-a (bench@…) cannot be reached over SSH"), the Docker provider its ssh:// address.
 */
export function unreachableHosts(output: string, hosts: Record<string, string>): string[] {
  const found = new Set<string>();
  for (const m of output.matchAll(/host ([A-Za-z0-9][A-Za-z0-9-]*) \([^)]*\) cannot be reached over SSH/g)) found.add(m[1]);
  for (const m of output.matchAll(/Error pinging Docker server, please make sure that ssh:\/\/[^@\s]+@\[?([^\]\s:]+)\]?:(\d+) is reachable/g)) {
    const name = Object.entries(hosts).find(([, address]) => address === `${m[1]}:${m[2]}`)?.[0];
    found.add(name ?? `${m[1]}:${m[2]}`);
  }
  return [...found].sort();
}
