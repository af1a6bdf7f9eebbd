// The Pulumi side of `reprobench up|preview|down`: a stack of this project through the Automation API
// (LocalWorkspace, workDir = the checkout), with the environment bin/reprobench got from scripts/env.sh
// (pulumi on PATH, PULUMI_HOME, backend, passphrase).
//
// The tracked stack files stay exactly as committed. Pulumi writes per-checkout settings into the stack
// file it uses (the passphrase's `encryptionsalt` on `stack init`, and it re-serialises the YAML when it
// saves), so every operation runs with `--config-file` pointing at a copy under STACK_CONFIG_DIR
// (ignored by git) that is refreshed from the tracked file first. The salt itself lives in the stack's
// state, where `stack init` puts it too; PULUMI_FALLBACK_TO_STATE_SECRETS_MANAGER makes Pulumi read it
// from there when the copy has none. A salt or secrets provider committed in the tracked file is honoured.
import { copyFileSync, existsSync, mkdirSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { LocalWorkspace, PulumiCommand, Stack, StackNotFoundError } from "@pulumi/pulumi/automation";

/** Project-relative directory of the CLI's per-checkout copies of the stack files. */
export const STACK_CONFIG_DIR = ".pulumi-state/stack-config";

/** Environment every Pulumi command of the CLI gets on top of the process's. */
export const PULUMI_ENV: Readonly<Record<string, string>> = { PULUMI_FALLBACK_TO_STATE_SECRETS_MANAGER: "true" };

export interface StackConfigCopy {
  /** A directory with a copy of Pulumi.yaml: `stack init` runs here, so it writes nothing in the checkout. */
  dir: string;
  /** The copy of Pulumi.<stack>.yaml every operation gets as `--config-file`. */
  file: string;
}

/** Refreshes the per-checkout copy of Pulumi.yaml and Pulumi.<stack>.yaml from the tracked files. */
export function refreshStackConfigCopy(root: string, stack: string): StackConfigCopy {
  const tracked = join(root, `Pulumi.${stack}.yaml`);
  if (!existsSync(tracked)) throw new Error(`no stack file Pulumi.${stack}.yaml in ${root} (stacks are the Pulumi.<name>.yaml files there)`);
  const dir = join(root, STACK_CONFIG_DIR);
  mkdirSync(dir, { recursive: true });
  copyFileSync(join(root, "Pulumi.yaml"), join(dir, "Pulumi.yaml"));
  const file = join(dir, `Pulumi.${stack}.yaml`);
  copyFileSync(tracked, file);
  return { dir, file };
}

export interface OpenStack {
  stack: Stack;
  /** Pass as `configFile` to every operation. */
  configFile: string;
}

/**
 * The `pulumi` first on PATH (env.sh puts the toolchain's there), as an install root <root>/bin/pulumi so
 * that the Automation API also puts its directory, with the language host, first on PATH.
 */
export async function findPulumiCommand(env: Record<string, string> = {}): Promise<PulumiCommand> {
  try {
    const dir = (env.PATH ?? process.env.PATH ?? "").split(":").find((d) => d && existsSync(join(d, "pulumi")));
    return await PulumiCommand.get(dir && basename(dir) === "bin" ? { root: dirname(dir) } : {});
  } catch (err) {
    throw new Error(`cannot run pulumi (${(err as Error).message.split("\n")[0]}); run reprobench through bin/reprobench, which installs the toolchain`);
  }
}

/**
 * A stack's outputs (secrets in plaintext: the caller must never print them), read through the Automation
 * API (`pulumi stack output --json [--show-secrets]`) in the directory of the config copy, as `stack init`
 * runs: that command takes no --config-file, and whatever it might write lands in the ignored copy, never
 * in the tracked Pulumi.<stack>.yaml. Never creates a stack: a missing one is an error naming it.
 */
export async function readStackOutputs(root: string, name: string, env: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const copy = refreshStackConfigCopy(root, name);
  const pulumiCommand = await findPulumiCommand(env);
  const workspace = await LocalWorkspace.create({ envVars: { ...env, ...PULUMI_ENV }, pulumiCommand, workDir: copy.dir });
  try {
    const outputs = await workspace.stackOutputs(name);
    return Object.fromEntries(Object.entries(outputs).map(([k, v]) => [k, v.value]));
  } catch (err) {
    const stderr = pulumiStderr(err);
    if (/no stack named/i.test(stderr)) throw new Error(`no stack '${name}' in the Pulumi backend (${env.PULUMI_BACKEND_URL ?? process.env.PULUMI_BACKEND_URL ?? "default"}): it was never brought up here (reprobench up --stack ${name})`);
    throw new Error(`pulumi stack output --stack ${name}: ${stderr.split("\n").slice(-3).join(" ")}`);
  }
}

/**
 * A stack's `reprobench:sshPrivateKeys` (host or "default" → key PEM), decrypted; {} when it sets none. Read
 * as readStackOutputs reads outputs, in the directory of the config copy; the caller must never print them.
 */
export async function readStackSshKeys(root: string, name: string, env: Record<string, string> = {}): Promise<Record<string, string>> {
  const copy = refreshStackConfigCopy(root, name);
  const pulumiCommand = await findPulumiCommand(env);
  const workspace = await LocalWorkspace.create({ envVars: { ...env, ...PULUMI_ENV }, pulumiCommand, workDir: copy.dir });
  const value = (await workspace.getAllConfig(name))["reprobench:sshPrivateKeys"]?.value;
  if (value === undefined) return {};
  const keys = JSON.parse(value) as unknown;
  if (keys === null || typeof keys !== "object" || Array.isArray(keys)) throw new Error(`stack '${name}': reprobench:sshPrivateKeys is not a map of host → key`);
  return Object.fromEntries(Object.entries(keys).filter((e): e is [string, string] => typeof e[1] === "string"));
}

/**
 * Selects the stack in the checkout's workspace, creating it (outside the checkout's files) if needed.
 * `env` adds to the process environment (which bin/reprobench filled from scripts/env.sh).
 */
export async function openStack(root: string, name: string, env: Record<string, string> = {}): Promise<OpenStack> {
  const copy = refreshStackConfigCopy(root, name);
  const pulumiCommand = await findPulumiCommand(env);
  const options = { envVars: { ...env, ...PULUMI_ENV }, pulumiCommand };
  const workspace = await LocalWorkspace.create({ ...options, workDir: root });
  try {
    return { stack: await Stack.select(name, workspace), configFile: copy.file };
  } catch (err) {
    if (!(err instanceof StackNotFoundError)) throw new Error(`pulumi stack select ${name}: ${pulumiStderr(err)}`);
  }
  // `stack init` writes the new salt into the stack file of its working directory: the copy's.
  const initWorkspace = await LocalWorkspace.create({ ...options, workDir: copy.dir });
  try {
    await initWorkspace.createStack(name);
    return { stack: await Stack.select(name, workspace), configFile: copy.file };
  } catch (err) {
    throw new Error(`pulumi stack init ${name}: ${pulumiStderr(err)}`);
  }
}

/** The stderr part of an Automation API CommandError (its message is "code: … stdout: … stderr: …"). */
export function pulumiStderr(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const m = /\n stderr: ([\s\S]*?)\n err\?: /.exec(message);
  return (m ? m[1] : message).trim();
}

/** What an operation gets from the command line (the Automation API's option names). */
export interface OperationArgs {
  refresh: boolean;
  diff: boolean;
  expectNoChanges: boolean;
  target: string[];
  replace: string[];
  exclude: string[];
  targetDependents: boolean;
  excludeDependents: boolean;
  parallel?: number;
  message?: string;
}

export interface OperationIo {
  onOutput(text: string): void;
  onError(text: string): void;
  color: "always" | "never";
}

/** Runs `up`, `preview` or `down` (destroy) the CLI's way; resolves to the stack outputs after `up`. */
export async function runOperation(open: OpenStack, op: "up" | "preview" | "down", args: OperationArgs, io: OperationIo): Promise<Record<string, unknown> | undefined> {
  const common = {
    configFile: open.configFile,
    color: io.color,
    onOutput: io.onOutput,
    onError: io.onError,
    target: args.target,
    exclude: args.exclude,
    targetDependents: args.targetDependents,
    excludeDependents: args.excludeDependents,
    parallel: args.parallel,
    message: args.message,
    refresh: args.refresh,
    diff: args.diff,
  };
  // After up and destroy the Automation API reads the summary with `stack history`, with --show-secrets
  // unless told otherwise; that command has no --config-file, so it would load the TRACKED stack file,
  // take the salt from the state and save it there. Without secrets it loads no secrets manager at all.
  const noSecrets = { showSecrets: false };
  if (op === "up") {
    // A refresh runs the program so that hosts are read with the connection the config gives now: after
    // a host is rebuilt (a new host key) the one in the state cannot reach it.
    const result = await open.stack.up({ ...common, ...noSecrets, runProgram: args.refresh, replace: args.replace, expectNoChanges: args.expectNoChanges });
    return Object.fromEntries(Object.entries(result.outputs).map(([k, v]) => [k, v.value]));
  }
  if (op === "preview") {
    await open.stack.preview({ ...common, replace: args.replace, expectNoChanges: args.expectNoChanges });
    return undefined;
  }
  // The program runs during destroy when the state holds resources with delete hooks (the restart guard):
  // the engine refuses such a destroy without their program. A stack without them (never brought up, or
  // a run stack) is destroyed without its program, which may not even load (a preview-only stack file).
  await open.stack.destroy({ ...common, ...noSecrets, runProgram: await hasDeleteHooks(open.stack) });
  return undefined;
}

/** Whether any resource in the stack's state carries a delete hook (state field `resourceHooks`). */
export async function hasDeleteHooks(stack: Stack): Promise<boolean> {
  const exported = await stack.exportStack();
  const resources = ((exported.deployment as { resources?: { resourceHooks?: Record<string, string[]> }[] }).resources ?? []);
  return resources.some((r) => (r.resourceHooks?.BeforeDelete?.length ?? 0) + (r.resourceHooks?.AfterDelete?.length ?? 0) > 0);
}

/**
 * The steps `up` with these arguments would take, from a preview's engine events (each step's op, URN and
 * type), without printing the preview. For the confirmation before a change that stops a job or a server.
 */
export async function previewSteps(open: OpenStack, args: OperationArgs): Promise<{ op: string; urn: string; type?: string }[]> {
  const steps: { op: string; urn: string; type?: string }[] = [];
  await open.stack.preview({
    configFile: open.configFile,
    color: "never",
    target: args.target,
    exclude: args.exclude,
    targetDependents: args.targetDependents,
    excludeDependents: args.excludeDependents,
    parallel: args.parallel,
    refresh: args.refresh,
    replace: args.replace,
    onOutput: () => undefined,
    onEvent: (event) => {
      const m = event.resourcePreEvent?.metadata;
      if (m) steps.push({ op: m.op, urn: m.urn, type: m.type });
    },
  });
  return steps;
}

/** The resources in the stack's state (URN and type). */
export async function stateResources(stack: Stack): Promise<{ urn?: string; type?: string }[]> {
  const exported = await stack.exportStack();
  return ((exported.deployment as { resources?: { urn?: string; type?: string }[] }).resources ?? []);
}
