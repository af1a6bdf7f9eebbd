// `reprobench up|preview|down [--stack NAME]`: the Pulumi operations on a stack of this project, with
// the project's toolchain and local backend (bin/reprobench sources scripts/env.sh). On the `local`
// stack `up` first starts the simulated cluster; `down` leaves the cluster running (`sim down` ends it).
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "./index";
import { simUp } from "../../sim/cluster";

const root = resolve(__dirname, "..", "..");

export interface StackArgs {
  stack: string;
  rest: string[];
}

/** `--stack NAME` (default local); everything else passes through to pulumi. */
export function parseStackArgs(args: string[]): StackArgs {
  let stack = "local";
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--stack" || args[i] === "-s") {
      const value = args[++i];
      if (!value || value.startsWith("-")) throw new Error("--stack needs a stack name (local, dev, prod, …)");
      stack = value;
    } else if (args[i].startsWith("--stack=")) {
      stack = args[i].slice("--stack=".length);
    } else {
      rest.push(args[i]);
    }
  }
  if (!/^[A-Za-z0-9_.-]+$/.test(stack)) throw new Error(`invalid stack name ${JSON.stringify(stack)}`);
  return { stack, rest };
}

function pulumi(args: string[]): number {
  const r = spawnSync("pulumi", args, { cwd: root, stdio: "inherit" });
  if (r.error) throw new Error(`cannot run pulumi (${r.error.message}); run it through bin/reprobench, which installs the toolchain`);
  return r.status ?? 1;
}

function selectStack(stack: string): void {
  if (!existsSync(resolve(root, `Pulumi.${stack}.yaml`))) throw new Error(`no stack file Pulumi.${stack}.yaml in ${root}`);
  const code = pulumi(["stack", "select", "--create", stack, "--non-interactive"]);
  if (code !== 0) throw new Error(`pulumi stack select ${stack} failed`);
}

/** Prints where the run's results and log are, from the stack outputs (when a run is configured). */
function printRunLocation(stack: string): void {
  const r = spawnSync("pulumi", ["stack", "output", "--json", "--stack", stack], { cwd: root, encoding: "utf8" });
  if (r.status !== 0) return;
  const out = JSON.parse(r.stdout || "{}") as Record<string, unknown>;
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
  if (lines.length > 0) console.log(`\nbenchmark run on the runner host:\n${lines.join("\n")}`);
  if (stack === "local" && job) console.log(`  (reprobench sim down copies the jobs directory to .sim/results/ before removing the hosts)`);
}

function op(name: "up" | "preview" | "down", summary: string): Command {
  return {
    summary,
    async run(args) {
      const { stack, rest } = parseStackArgs(args);
      if (name === "up" && stack === "local") await simUp({ root });
      selectStack(stack);
      const code =
        name === "up" ? pulumi(["up", "--stack", stack, "--yes", "--skip-preview", ...rest])
        : name === "preview" ? pulumi(["preview", "--stack", stack, "--diff", ...rest])
        : pulumi(["destroy", "--stack", stack, "--yes", ...rest]);
      if (name === "up" && code === 0) printRunLocation(stack);
      return code;
    },
  };
}

export const up = op("up", "converge a stack (default: local, which starts the simulated cluster) and run the benchmark");
export const preview = op("preview", "show what `up` would change on a stack (never contacts hosts)");
export const down = op("down", "destroy a stack's resources: stop the run gracefully, tear down (job results are kept)");
