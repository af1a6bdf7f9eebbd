// `reprobench up|preview|down [--stack NAME] [options]`: the Pulumi operations on a stack of this project,
// driven through the Automation API (cli/pulumi-stack.ts) with the project's toolchain and local backend
// (bin/reprobench sources scripts/env.sh for these three commands only). Pulumi's output streams to the
// terminal; a failed operation exits non-zero. On the `local` stack `up` first starts the simulated
// cluster; `down` leaves the cluster running (`sim down` ends it).
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { stackConfigFromYaml } from "../../components/config/stack-file";
import type { OperationArgs } from "../pulumi-stack";
import type { Command } from "./command";

const root = resolve(__dirname, "..", "..");
/** Written when `sim up` made the default cluster's hosts anew; the next `up` of local refreshes first. */
const refreshMark = join(root, ".sim", "local-needs-refresh");

type Op = "up" | "preview" | "down";

/** What an operation gets from the command line. */
export interface StackArgs extends OperationArgs {
  stack: string;
}

const FLAGS: Record<string, { ops: Op[]; value?: true; help: string }> = {
  "--stack": { ops: ["up", "preview", "down"], value: true, help: "stack name (default local)" },
  "--refresh": { ops: ["up", "preview", "down"], help: "refresh the state from the hosts first" },
  "--diff": { ops: ["up", "preview", "down"], help: "show a detailed diff (preview always does)" },
  "--expect-no-changes": { ops: ["up", "preview"], help: "fail if anything would change" },
  "--target": { ops: ["up", "preview", "down"], value: true, help: "only this resource URN (repeatable)" },
  "--target-dependents": { ops: ["up", "preview", "down"], help: "with --target: also what depends on it" },
  "--exclude": { ops: ["up", "preview", "down"], value: true, help: "skip this resource URN (repeatable)" },
  "--exclude-dependents": { ops: ["up", "preview", "down"], help: "with --exclude: also what depends on it" },
  "--replace": { ops: ["up", "preview"], value: true, help: "replace this resource URN (repeatable)" },
  "--parallel": { ops: ["up", "preview", "down"], value: true, help: "at most N resource operations at once" },
  "--message": { ops: ["up", "preview", "down"], value: true, help: "message for the update history" },
  // Accepted for muscle memory: the CLI never prompts.
  "--yes": { ops: ["up", "down"], help: "(implied)" },
  "--skip-preview": { ops: ["up", "down"], help: "(implied)" },
};
const SHORT: Record<string, string> = { "-s": "--stack", "-r": "--refresh", "-t": "--target", "-p": "--parallel", "-m": "--message", "-y": "--yes", "-f": "--skip-preview" };

export function usage(op: Op): string {
  const lines = Object.entries(FLAGS)
    .filter(([, f]) => f.ops.includes(op))
    .map(([flag, f]) => `  ${`${flag}${f.value ? " VALUE" : ""}`.padEnd(24)} ${f.help}`);
  return [`usage: reprobench ${op} [--stack NAME] [options]`, "", "options:", ...lines].join("\n");
}

/** Parses an operation's arguments; throws an Error naming the bad one. */
export function parseStackArgs(args: string[], op: Op = "up"): StackArgs {
  const out: StackArgs = { stack: "local", refresh: false, diff: op === "preview", expectNoChanges: false, target: [], replace: [], exclude: [], targetDependents: false, excludeDependents: false };
  for (let i = 0; i < args.length; i++) {
    const eq = args[i].startsWith("-") ? args[i].indexOf("=") : -1;
    const [raw, inline] = eq > 0 ? [args[i].slice(0, eq), args[i].slice(eq + 1)] : [args[i], undefined];
    const flag = SHORT[raw] ?? raw;
    const spec = FLAGS[flag];
    if (!spec || !spec.ops.includes(op)) throw new Error(`unknown argument '${args[i]}' for '${op}'\n\n${usage(op)}`);
    let value: string | undefined;
    if (spec.value) {
      value = inline ?? args[++i];
      if (value === undefined || (inline === undefined && value.startsWith("-"))) throw new Error(`${flag} needs a value`);
    } else if (inline !== undefined) {
      throw new Error(`${flag} takes no value`);
    }
    switch (flag) {
      case "--stack": out.stack = value!; break;
      case "--refresh": out.refresh = true; break;
      case "--diff": out.diff = true; break;
      case "--expect-no-changes": out.expectNoChanges = true; break;
      case "--target": out.target.push(value!); break;
      case "--replace": out.replace.push(value!); break;
      case "--exclude": out.exclude.push(value!); break;
      case "--target-dependents": out.targetDependents = true; break;
      case "--exclude-dependents": out.excludeDependents = true; break;
      case "--parallel":
        if (!/^[1-9]\d*$/.test(value!)) throw new Error(`--parallel: got '${value}'; expected a positive integer`);
        out.parallel = Number(value);
        break;
      case "--message": out.message = value; break;
    }
  }
  if (!/^[A-Za-z0-9_.-]+$/.test(out.stack)) throw new Error(`invalid stack name ${JSON.stringify(out.stack)}`);
  return out;
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

function op(name: Op, summary: string): Command {
  return {
    summary,
    async run(args) {
      if (args.includes("--help") || args.includes("-h")) {
        console.log(usage(name));
        return 0;
      }
      let parsed: StackArgs;
      try {
        parsed = parseStackArgs(args, name);
      } catch (err) {
        console.error(`reprobench ${name}: ${(err as Error).message}`);
        return 2;
      }
      // Loaded here, not at the top: the other commands must not need the Pulumi SDK or the sim code.
      const { openStack, runOperation } = await import("../pulumi-stack");
      if (name === "up" && parsed.stack === "local") {
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
      const open = await openStack(root, parsed.stack);
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
        if (name === "up" && parsed.stack === "local") rmSync(refreshMark, { force: true });
        const where = outputs && runLocation(parsed.stack, outputs);
        if (where) console.log(where);
        return 0;
      } catch (err) {
        // Pulumi's own output (already streamed) says why; only name the failure and pulumi's exit code.
        const code = pulumiExitCode(err);
        console.error(`reprobench ${name}: pulumi ${name === "down" ? "destroy" : name} on stack ${parsed.stack} failed${code ? ` (exit code ${code})` : ""}`);
        if (name === "down") {
          for (const host of unreachableHosts(said, stackHosts(root, parsed.stack))) {
            console.error(`reprobench down: host ${host} could not be reached. If it is gone for good: reprobench forget-host ${host} --stack ${parsed.stack} --yes (drops what this stack placed on it from the state; nothing else changes), then reprobench down --stack ${parsed.stack} again.`);
          }
        }
        return code ?? 1;
      } finally {
        process.off("SIGINT", onSigint);
      }
    },
  };
}

export const up = op("up", "converge a stack (default: local, which starts the simulated cluster) and run the benchmark");
export const preview = op("preview", "show what `up` would change on a stack (never contacts hosts)");
export const down = op("down", "destroy a stack's resources: stop the run gracefully, tear down (job results are kept)");

/** The stack file's hosts as name → "address:port" (none when it cannot be read). */
function stackHosts(root: string, stack: string): Record<string, string> {
  try {
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
