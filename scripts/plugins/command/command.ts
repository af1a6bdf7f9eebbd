// command:remote:Command and command:local:Command. Semantics follow the official provider 1.2.1:
//   - preview never runs anything (the engine does not call create/update in a preview: we do not
//     advertise preview support);
//   - create runs `create`; a change to `triggers` replaces the resource; any other input change is an
//     update, which runs `update` if set and otherwise `create` again;
//   - delete runs `delete` with PULUMI_COMMAND_STDOUT/STDERR of the last run;
//   - outputs are the inputs plus stdout/stderr (one trailing newline trimmed);
//   - a non-zero exit fails the operation with the tail of the command's stderr in the error.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { makeRedactor } from "../common/engine-log";
import { InputReader, changedKeys } from "../common/inputs";
import { CheckFailure, CheckOutcome, DiffOutcome, OperationContext, ResourceHandler } from "../common/provider";
import { Decoded, Props, containsUnknown, isSet, stringLeaves } from "../common/wire";
import { ConnectionSpec, describe, readConnection } from "./connection";
import { ENV_NAME, LineSplitter, envLine, remoteCommand, tail } from "./shell";
import { connect, exec } from "./ssh";

export const LOGGING = ["stdout", "stderr", "stdoutAndStderr", "none"] as const;
export type Logging = (typeof LOGGING)[number];

export interface RunRequest {
  script: string;
  env: Record<string, string>;
  stdin?: string;
  logging: Logging;
  /** Replaces secret values in anything logged or put into an error message. */
  redact: (text: string) => string;
}

export interface RunResult {
  code: number | null;
  signal?: string;
  stdout: string;
  stderr: string;
}

/** Where a script runs: over SSH or in a local interpreter. */
export interface Runner {
  where: string;
  run(ctx: OperationContext, req: RunRequest): Promise<RunResult>;
}

function streamLoggers(ctx: OperationContext, req: RunRequest) {
  const line = (l: string) => ctx.log("info", req.redact(l));
  const out = new LineSplitter(req.logging === "stdout" || req.logging === "stdoutAndStderr" ? line : () => {});
  const err = new LineSplitter(req.logging === "stderr" || req.logging === "stdoutAndStderr" ? line : () => {});
  return { out, err, end: () => (out.end(), err.end()) };
}

export function remoteRunner(conn: ConnectionSpec): Runner {
  return {
    where: describe(conn),
    async run(ctx, req) {
      const session = await connect(conn, {
        signal: ctx.signal,
        onRetry: (n, limit, err, delay) =>
          ctx.log("warning", `dial ${describe(conn)} failed (attempt ${n}/${limit}): ${req.redact(err.message)}; retrying in ${delay} ms`),
      });
      const logs = streamLoggers(ctx, req);
      try {
        const hasEnv = Object.keys(req.env).length > 0;
        return await exec(session.client, remoteCommand(req.script, req.env), {
          env: req.env,
          stdin: (hasEnv ? envLine(req.env) : "") + (req.stdin ?? ""),
          onStdout: (c) => logs.out.push(c),
          onStderr: (c) => logs.err.push(c),
          signal: ctx.signal,
        });
      } finally {
        logs.end();
        session.close();
      }
    },
  };
}

export function localRunner(interpreter: string[], dir?: string): Runner {
  return {
    where: `local ${interpreter.join(" ")}${dir ? ` in ${dir}` : ""}`,
    run(ctx, req) {
      return new Promise((resolve, reject) => {
        const logs = streamLoggers(ctx, req);
        const child = spawn(interpreter[0], [...interpreter.slice(1), req.script], {
          cwd: dir,
          env: { ...process.env, ...req.env },
          stdio: ["pipe", "pipe", "pipe"],
          signal: ctx.signal,
        });
        const out: Buffer[] = [];
        const errOut: Buffer[] = [];
        const dec = new TextDecoder();
        const decErr = new TextDecoder();
        child.stdout.on("data", (b: Buffer) => (out.push(b), logs.out.push(dec.decode(b, { stream: true }))));
        child.stderr.on("data", (b: Buffer) => (errOut.push(b), logs.err.push(decErr.decode(b, { stream: true }))));
        child.stdin.on("error", () => {}); // a command that ignores stdin may exit before we finish writing
        child.on("error", (e) => {
          logs.end();
          reject(ctx.signal.aborted ? ctx.signal.reason : new Error(`cannot start ${interpreter[0]}: ${e.message}`));
        });
        child.on("close", (code, signal) => {
          logs.end();
          resolve({ code, signal: signal ?? undefined, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(errOut).toString("utf8") });
        });
        child.stdin.end(req.stdin ?? "");
      });
    },
  };
}

/** Input keys whose change re-runs the resource (all inputs); `triggers` replaces instead. */
const REMOTE_INPUTS = ["addPreviousOutputInEnv", "connection", "create", "delete", "environment", "logging", "stdin", "triggers", "update"];
const LOCAL_INPUTS = [...REMOTE_INPUTS.filter((k) => k !== "connection"), "archivePaths", "assetPaths", "dir", "interpreter"];
/** Inputs that shape what the command prints: if any is secret, stdout/stderr are secret too. */
const OUTPUT_SOURCES = ["create", "update", "delete", "environment", "stdin"];

/** Unset inputs that mean the same as their default must not look like a change (e.g. against state
 * written by the official provider, which may have stored the default). */
function withDefaults(values: Props): Props {
  return { ...values, addPreviousOutputInEnv: values.addPreviousOutputInEnv ?? true, logging: values.logging ?? "stdoutAndStderr" };
}

export function commandDiff(inputKeys: string[]) {
  return (olds: Decoded, news: Decoded): DiffOutcome => {
    const changed = changedKeys(withDefaults(olds.values), withDefaults(news.values), inputKeys);
    return { changes: changed.length > 0, replaces: changed.includes("triggers") ? ["triggers"] : [] };
  };
}

interface CommonInputs {
  create?: string;
  update?: string;
  delete?: string;
  stdin?: string;
  environment: Record<string, string>;
  logging: Logging;
  addPreviousOutputInEnv: boolean;
}

function readCommon(values: Props): { inputs: CommonInputs; failures: CheckFailure[] } {
  const r = new InputReader(values);
  const inputs: CommonInputs = {
    create: r.string("create"),
    update: r.string("update"),
    delete: r.string("delete"),
    stdin: r.string("stdin"),
    environment: r.stringMap("environment") ?? {},
    logging: r.oneOf("logging", LOGGING) ?? "stdoutAndStderr",
    addPreviousOutputInEnv: r.bool("addPreviousOutputInEnv") ?? true,
  };
  for (const k of Object.keys(inputs.environment)) {
    if (!ENV_NAME.test(k)) r.failures.push({ property: `environment.${k}`, reason: "is not a valid environment variable name ([A-Za-z_][A-Za-z0-9_]*)" });
  }
  const triggers = values.triggers;
  if (isSet(triggers) && !Array.isArray(triggers)) r.failures.push({ property: "triggers", reason: "must be a list" });
  return { inputs, failures: r.failures };
}

/** Secret strings to keep out of logs and errors. The connection is secret wholesale (the SDK marks it),
 * but only its credentials are sensitive; redacting host and user would garble ordinary output. */
export function secretStrings(d: Decoded): string[] {
  const out: string[] = [];
  for (const k of d.secretKeys) {
    if (k === "connection") {
      const c = (d.values.connection ?? {}) as Props;
      const proxy = (c.proxy ?? {}) as Props;
      stringLeaves([c.password, c.privateKey, c.privateKeyPassword, proxy.password, proxy.privateKey, proxy.privateKeyPassword], out);
    } else stringLeaves(d.values[k], out);
  }
  return out;
}

function trimNewline(s: string): string {
  return s.endsWith("\n") ? s.slice(0, -1) : s;
}

type Op = "create" | "update" | "delete";

async function runStep(ctx: OperationContext, runner: Runner, op: Op, d: Decoded, script: string, env: Record<string, string>): Promise<RunResult> {
  const common = readCommon(d.values).inputs;
  const redact = makeRedactor(secretStrings(d));
  let result: RunResult;
  try {
    result = await runner.run(ctx, { script, env, stdin: common.stdin, logging: common.logging, redact });
  } catch (e) {
    throw new Error(redact(`${op} command on ${runner.where} failed: ${e instanceof Error ? e.message : String(e)}`));
  }
  if (result.code === 0) return result;
  const status = result.code === null ? `was killed${result.signal ? ` by signal ${result.signal}` : ""}` : `exited with status ${result.code}`;
  const scriptKey = op === "update" && common.update === undefined ? "create" : op;
  const firstLine = script.split("\n").find((l) => l.trim()) ?? "";
  const shown = d.secretKeys.has(scriptKey) ? "" : ` (${JSON.stringify(firstLine.length > 120 ? firstLine.slice(0, 119) + "…" : firstLine)})`;
  const detail = result.stderr.trim() ? `stderr:\n${tail(result.stderr)}` : result.stdout.trim() ? `stdout:\n${tail(result.stdout)}` : "no output";
  throw new Error(redact(`${op} command${shown} on ${runner.where} ${status}; ${detail}`));
}

function outputsOf(d: Decoded, stdout: string, stderr: string) {
  const secret = OUTPUT_SOURCES.some((k) => d.secretKeys.has(k));
  return { outs: { ...d.values, stdout, stderr }, secretOuts: secret ? ["stdout", "stderr"] : [] };
}

function newId(name: string): string {
  return `${name}-${randomBytes(4).toString("hex")}`;
}

/** A Command handler for one kind of runner (remote or local). */
function commandHandler(inputKeys: string[], check: (values: Props) => CheckOutcome, runnerFor: (values: Props) => Runner): ResourceHandler {
  const previousEnv = (d: Decoded, olds: Props): Record<string, string> => {
    const common = readCommon(d.values).inputs;
    if (!common.addPreviousOutputInEnv) return common.environment;
    return {
      ...common.environment,
      PULUMI_COMMAND_STDOUT: String(olds.stdout ?? ""),
      PULUMI_COMMAND_STDERR: String(olds.stderr ?? ""),
    };
  };
  return {
    check: (news) => check(news.values),
    diff: commandDiff(inputKeys),
    async create(ctx, inputs) {
      const common = readCommon(inputs.values).inputs;
      let stdout = "";
      let stderr = "";
      if (common.create !== undefined) {
        const r = await runStep(ctx, runnerFor(inputs.values), "create", inputs, common.create, common.environment);
        stdout = trimNewline(r.stdout);
        stderr = trimNewline(r.stderr);
      }
      return { id: newId(ctx.name), ...outputsOf(inputs, stdout, stderr) };
    },
    async update(ctx, _id, olds, news) {
      const common = readCommon(news.values).inputs;
      const script = common.update ?? common.create;
      let stdout = String(olds.values.stdout ?? "");
      let stderr = String(olds.values.stderr ?? "");
      if (script !== undefined) {
        const r = await runStep(ctx, runnerFor(news.values), "update", news, script, previousEnv(news, olds.values));
        stdout = trimNewline(r.stdout);
        stderr = trimNewline(r.stderr);
      }
      return outputsOf(news, stdout, stderr);
    },
    async delete(ctx, _id, props) {
      const common = readCommon(props.values).inputs;
      if (common.delete === undefined) return;
      await runStep(ctx, runnerFor(props.values), "delete", props, common.delete, previousEnv(props, props.values));
    },
  };
}

export function checkRemote(values: Props): CheckOutcome {
  const common = readCommon(values);
  const conn = readConnection(values.connection);
  return { failures: [...conn.failures, ...common.failures] };
}

function connectionOf(values: Props): ConnectionSpec {
  const conn = readConnection(values.connection);
  if (!conn.spec) throw new Error("invalid connection: " + conn.failures.map((f) => `${f.property} ${f.reason}`).join("; "));
  return conn.spec;
}

export const remoteCommandHandler = commandHandler(REMOTE_INPUTS, checkRemote, (v) => remoteRunner(connectionOf(v)));

export function readLocal(values: Props): { interpreter: string[]; dir?: string; failures: CheckFailure[] } {
  const r = new InputReader(values);
  const common = readCommon(values);
  const dir = r.string("dir");
  let interpreter = ["/bin/sh", "-c"];
  const raw = values.interpreter;
  if (isSet(raw) && !containsUnknown(raw)) {
    if (!Array.isArray(raw) || raw.length === 0 || raw.some((e) => typeof e !== "string")) {
      r.failures.push({ property: "interpreter", reason: 'must be a non-empty list of strings, e.g. ["/bin/bash", "-c"]' });
    } else interpreter = raw as string[];
  }
  for (const k of ["assetPaths", "archivePaths"]) {
    const v = values[k];
    if (isSet(v) && !(Array.isArray(v) && v.length === 0)) {
      r.failures.push({ property: k, reason: "is not supported by the offline command plugin (reprobench); use the official plugin" });
    }
  }
  return { interpreter, dir, failures: [...r.failures, ...common.failures] };
}

export const localCommandHandler = commandHandler(
  LOCAL_INPUTS,
  (v) => ({ failures: readLocal(v).failures }),
  (v) => {
    const l = readLocal(v);
    return localRunner(l.interpreter, l.dir);
  },
);

/** The `command:local:run` function (local.run / local.runOutput): runs every time, returns outputs. */
export async function localRun(ctx: OperationContext, args: Decoded) {
  const l = readLocal(args.values);
  const r = new InputReader(args.values);
  const command = r.string("command", true);
  const failures = [...l.failures, ...r.failures];
  if (failures.length || command === undefined) {
    throw new Error("invalid arguments for command:local:run: " + failures.map((f) => `${f.property} ${f.reason}`).join("; "));
  }
  const env = readCommon(args.values).inputs.environment;
  const secretKeys = new Set([...args.secretKeys, ...(args.secretKeys.has("command") ? ["create"] : [])]);
  const step: Decoded = { values: { ...args.values, create: command }, secretKeys };
  const result = await runStep(ctx, localRunner(l.interpreter, l.dir), "create", step, command, env);
  const secret = ["command", "environment", "stdin"].some((k) => args.secretKeys.has(k));
  return { outs: { ...args.values, stdout: trimNewline(result.stdout), stderr: trimNewline(result.stderr) }, secretOuts: secret ? ["stdout", "stderr"] : [] };
}
