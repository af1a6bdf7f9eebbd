// Which stack a stack command acts on when no --stack is given: $REPROBENCH_STACK, else the stack Pulumi has
// selected for this checkout, else `local` (the simulator's) — but only while no real stack exists in the
// backend: on a machine with real stacks a bare command must not silently mean the simulator. Every stack
// command prints its choice ("stack: X (…)") on stderr. Read from files only: no Pulumi, no toolchain.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { UsageError } from "./commands/command";

export const SIM_DEFAULT_STACK = "local";

export interface StackChoice {
  stack: string;
  /** Where the name came from, for the "stack: X (…)" line. */
  from: "--stack" | "REPROBENCH_STACK" | "the selected Pulumi stack" | "the default: no real stack exists here";
}

export interface StackFacts {
  /** $REPROBENCH_STACK. */
  envStack?: string;
  /** The stack `pulumi stack select` (or the last operation) selected for this checkout. */
  selected?: string;
  /** The stacks in the backend that run on real hosts (not on the simulator). */
  realStacks: string[];
}

const STACK_NAME = /^[A-Za-z0-9_.-]+$/;

/** The stack to use; throws a UsageError naming --stack when the choice would be a guess. */
export function chooseStack(given: string | undefined, facts: StackFacts): StackChoice {
  const checked = (stack: string, from: StackChoice["from"]): StackChoice => {
    if (!STACK_NAME.test(stack)) throw new UsageError(`invalid stack name ${JSON.stringify(stack)}${from === "--stack" ? "" : ` (from ${from})`}`);
    return { stack, from };
  };
  if (given !== undefined) return checked(given, "--stack");
  if (facts.envStack) return checked(facts.envStack, "REPROBENCH_STACK");
  if (facts.selected) return checked(facts.selected, "the selected Pulumi stack");
  if (facts.realStacks.length === 0) return { stack: SIM_DEFAULT_STACK, from: "the default: no real stack exists here" };
  throw new UsageError(
    `which stack? This machine has real stacks (${facts.realStacks.join(", ")}), so there is no default: pass --stack NAME (or set REPROBENCH_STACK, or select one with \`pulumi stack select\`); --stack ${SIM_DEFAULT_STACK} is the simulator's`,
  );
}

/** The line every stack command prints first. */
export function stackLine(choice: StackChoice): string {
  return choice.from === "--stack" ? `stack: ${choice.stack}` : `stack: ${choice.stack} (${choice.from})`;
}

/** The project's name from Pulumi.yaml (its `name:` line). */
function projectName(root: string): string | undefined {
  try {
    return /^name:\s*["']?([^"'\s#]+)/m.exec(readFileSync(join(root, "Pulumi.yaml"), "utf8"))?.[1];
  } catch {
    return undefined;
  }
}

/**
 * The stack Pulumi has selected for the project at `root`: what `pulumi stack select` writes to
 * $PULUMI_HOME/workspaces/<project>-<sha1 of the Pulumi.yaml path>-workspace.json (a DIY backend may store
 * it as organization/<project>/<stack>).
 */
export function selectedPulumiStack(root: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const name = projectName(root);
  if (!name) return undefined;
  const projectFile = join(root, "Pulumi.yaml");
  const home = env.PULUMI_HOME || join(homedir(), ".pulumi");
  const file = join(home, "workspaces", `${name}-${createHash("sha1").update(projectFile).digest("hex")}-workspace.json`);
  try {
    const stack = (JSON.parse(readFileSync(file, "utf8")) as { stack?: unknown }).stack;
    return typeof stack === "string" && stack ? stack.split("/").pop() : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a stack runs on the simulator: `local`, or a stack file whose cluster is `local`. */
export function isSimStack(root: string, stack: string): boolean {
  if (stack === SIM_DEFAULT_STACK) return true;
  try {
    return /^\s*reprobench:cluster:\s*["']?local["']?\s*$/m.test(readFileSync(join(root, `Pulumi.${stack}.yaml`), "utf8"));
  } catch {
    return false;
  }
}

/** The stacks a file backend (file://DIR, the default DIR being <root>/.pulumi-state) holds for the project. */
export function backendStacks(root: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const url = env.PULUMI_BACKEND_URL || `file://${join(root, ".pulumi-state")}`;
  if (!url.startsWith("file://")) return [];
  const dir = url.slice("file://".length);
  const names = new Set<string>();
  const project = projectName(root);
  for (const d of [join(dir, ".pulumi", "stacks", project ?? "-"), join(dir, ".pulumi", "stacks")]) {
    if (!existsSync(d)) continue;
    for (const f of readdirSync(d)) if (f.endsWith(".json")) names.add(f.slice(0, -".json".length));
  }
  return [...names].sort();
}

/** The stack for `given` (the --stack value or undefined) in the checkout at `root`. */
export function resolveStack(given: string | undefined, root: string, env: NodeJS.ProcessEnv = process.env): StackChoice {
  if (given !== undefined) return chooseStack(given, { realStacks: [] });
  return chooseStack(undefined, {
    envStack: env.REPROBENCH_STACK,
    selected: selectedPulumiStack(root, env),
    realStacks: backendStacks(root, env).filter((s) => !isSimStack(root, s)),
  });
}
