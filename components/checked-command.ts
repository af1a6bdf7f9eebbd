import * as fs from "node:fs";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { HOST_SCRIPT_TYPE, LEGACY_DYNAMIC_TYPE, type ResourceImplementation } from "./resource-types";
import { type HostConnection, type HostConnectionInput, hostLabel, loginRecordFile, recordLogin, runOverSsh, scriptInvocation, secretMasker, stderrTail } from "./transport";

/** The login fields a change of which may re-run a resource's create (CheckedCommandArgs.rerunOnLogin). */
export type LoginField = "user" | "sudo";

export interface CheckedCommandArgs {
  /**
   * Where to run. Marked secret as a whole, since it carries the private key. Only the host's address and
   * port are its identity (a change replaces the resource); a new key, host-key line, user or sudo setting
   * is a new way into the same host and changes nothing on it (see `rerunOnLogin`).
   */
  readonly connection: pulumi.Input<HostConnectionInput>;
  /**
   * Login fields whose change re-runs create in place: for scripts that act as the login or report on it
   * (the rights check, the login's uid:gid, a directory the login owns). Default none.
   */
  readonly rerunOnLogin?: LoginField[];
  /** Bash script run on create and whenever `spec` changes; must be idempotent. */
  readonly create: pulumi.Input<string>;
  /** Bash script run on delete. */
  readonly delete?: pulumi.Input<string>;
  /**
   * Bash script that prints the observed state (one line, e.g. a container's config hash and state).
   * Run after create and on every refresh: when its output differs from what create left, the next
   * `up` repairs it (see `onDrift`) — the drift check the plain command provider cannot do. A refresh that
   * cannot reach the host fails naming it; it never reads as drift. Lines starting with "info:" are not
   * state: they are kept in `info` (e.g. what an upstream registry says now) and never read as drift.
   * Scripts run on update and refresh see what create printed last as PREVIOUS_STDOUT.
   */
  readonly check: pulumi.Input<string>;
  /**
   * What the next `up` does about drift: "update" (run create again in place; create scripts are
   * idempotent and repair what is missing) or "replace" (delete, then create: only for a thing that cannot
   * be repaired in place). Default "update".
   */
  readonly onDrift?: pulumi.Input<"replace" | "update">;
  /** Inputs of the scripts, exported as environment variables (values may be secrets). */
  readonly environment?: pulumi.Input<Record<string, pulumi.Input<string>>>;
  /**
   * Inputs exported like `environment` (no secrets) but recorded with the resource: a change to them
   * alone never updates it. For what is written once per run, such as the run manifest, which would
   * otherwise re-run a job's launch whenever a server it describes is re-gated.
   */
  readonly recorded?: pulumi.Input<Record<string, pulumi.Input<string>>>;
  /** Anything whose change must re-run create in place (e.g. a hash of the rendered config). */
  readonly spec?: pulumi.Input<string>;
  /** What runs, as argv (e.g. the server's command line), so a preview shows exactly which flag changes. */
  readonly summary?: pulumi.Input<pulumi.Input<string>[]>;
  /** Upper bound for one script run, in seconds. */
  readonly timeoutSeconds?: pulumi.Input<number>;
  /**
   * Who runs the scripts: "root" (default: the login itself when it is root, else through `sudo -n`) or
   * "login" (the SSH login as it is, never sudo: for checking the login's own rights).
   */
  readonly runAs?: "root" | "login";
}

interface State {
  connection: HostConnection;
  rerunOnLogin?: LoginField[];
  create: string;
  delete?: string;
  check: string;
  environment?: Record<string, string>;
  recorded?: Record<string, string>;
  spec?: string;
  summary?: string[];
  timeoutSeconds?: number;
  onDrift?: "replace" | "update";
  runAs?: "root" | "login";
  /** This resource's URN: where the scripts' "progress:" lines go while they run (progressSink). */
  progressUrn?: string;
  /** What `check` printed right after create/update. */
  expected: string;
  /** What `check` printed on the latest create/update/refresh (its "info:" lines left out). */
  observed: string;
  /** The check's "info:" lines, latest. */
  info?: string;
  stdout: string;
}

// HostScript's implementation, served by the provider plugin (components/provider.ts gives it plain values,
// the resource's URN as `progressUrn`, and marks its secret outputs again).
const provider: ResourceImplementation = {
  async create(inputs: State) {
    const run = sshRunner();
    const stdout = await run(inputs, inputs.create);
    const { observed, info } = splitCheck(await run(inputs, inputs.check, { PREVIOUS_STDOUT: stdout.trimEnd() }));
    return { id: `${inputs.connection.host}:${inputs.connection.port}/${Date.now().toString(36)}`, outs: { ...inputs, expected: observed, observed, info, stdout } };
  },
  async update(_id: string, olds: State, news: State) {
    const run = sshRunner();
    const stdout = await run(news, news.create, { PREVIOUS_STDOUT: (olds.stdout ?? "").trimEnd() });
    const { observed, info } = splitCheck(await run(news, news.check, { PREVIOUS_STDOUT: stdout.trimEnd() }));
    return { outs: { ...news, expected: observed, observed, info, stdout } };
  },
  async read(id: string, props: State) {
    const run = sshRunner();
    // The login the program recorded last (a rotated key, a new sudo setting), else the one in state; the
    // state then keeps the login that worked.
    const login = currentLogin(props);
    let observed: string;
    let info: string | undefined;
    let used = login;
    try {
      const out = await runWithFallback(run, { ...props, connection: login }, props.connection, props.check, { PREVIOUS_STDOUT: (props.stdout ?? "").trimEnd() });
      used = out.connection;
      ({ observed, info } = splitCheck(out.text));
    } catch (err) {
      // A host we cannot reach tells nothing about what runs there: fail the refresh (naming the host)
      // rather than record drift that the next `up` would "repair" by replacing a healthy server.
      if ((err as { unreachable?: boolean }).unreachable) throw err;
      observed = `check failed: ${String(err).slice(0, 200)}`;
      info = props.info ?? "";
    }
    return { id, props: { ...props, connection: used, observed, info } };
  },
  async diff(_id: string, olds: State, news: State) {
    return checkedCommandDiff(olds, news);
  },
  async delete(_id: string, props: State) {
    if (!props.delete) return;
    try {
      await runWithFallback(sshRunner(), { ...props, connection: currentLogin(props) }, props.connection, props.delete, {});
    } catch (err) {
      if (!(err as { unreachable?: boolean }).unreachable) throw err;
      // A host that is gone for good would fail every destroy: say how to finish.
      const stack = /^urn:pulumi:([^:]+)::/.exec(props.progressUrn ?? "")?.[1] ?? "<stack>";
      const e = new Error(`${(err as Error).message}\nIf ${props.connection.name} is gone for good: \`reprobench forget-host ${props.connection.name} --stack ${stack} --yes\` removes what this stack placed on it from the state (nothing else changes), then \`reprobench down --stack ${stack}\` finishes.`);
      (e as Error & { unreachable?: boolean }).unreachable = true;
      throw e;
    }
  },
};

/**
 * What a change of inputs means. The host's address and port are its identity: a new one is a new host,
 * replaced (delete first: the old one's delete runs there). Every other connection field is only the way
 * in (key, host-key line, user, sudo) and changes nothing on the host, unless the resource names it in
 * `rerunOnLogin`. Drift is repaired in place unless the resource says it must start over.
 */
export function checkedCommandDiff(olds: State, news: State): { changes: boolean; replaces: string[]; deleteBeforeReplace: boolean } {
  const changed: string[] = [];
  for (const key of ["create", "delete", "check", "spec", "summary", "timeoutSeconds", "runAs"] as const) {
    if (JSON.stringify(olds[key]) !== JSON.stringify(news[key])) changed.push(key);
  }
  if (JSON.stringify(olds.environment ?? {}) !== JSON.stringify(news.environment ?? {})) changed.push("environment");
  const moved = olds.connection.host !== news.connection.host || olds.connection.port !== news.connection.port;
  const loginRerun = (news.rerunOnLogin ?? []).some((k) => JSON.stringify(olds.connection[k] ?? null) !== JSON.stringify(news.connection[k] ?? null));
  if (moved || loginRerun) changed.push("connection");
  const drifted = olds.observed !== olds.expected;
  const replaces = moved ? ["connection"] : drifted && news.onDrift === "replace" ? ["observed"] : [];
  return { changes: changed.length > 0 || drifted, replaces, deleteBeforeReplace: true };
}

/** A check's output: the observed state (compared for drift) and its "info:" lines (not compared). */
export function splitCheck(text: string): { observed: string; info: string } {
  const lines = text.trim().split("\n");
  const isInfo = (l: string) => l.startsWith("info:");
  return { observed: lines.filter((l) => !isInfo(l)).join("\n").trim(), info: lines.filter(isInfo).join("\n") };
}

/**
 * The login to use for a resource's refresh and delete: the one the program recorded last for this stack
 * and host (a rotated key reaches refresh and destroy without touching the resource), else the connection
 * in state.
 */
export function currentLogin(s: Pick<State, "connection" | "progressUrn">): HostConnection {
  // urn:pulumi:<stack>::<project>::<type>::<name>
  const m = /^urn:pulumi:([^:]+)::([^:]+)::/.exec(s.progressUrn ?? "");
  if (!m) return s.connection;
  try {
    const rec = JSON.parse(fs.readFileSync(loginRecordFile(m[2], m[1], s.connection.host, s.connection.port), "utf8")) as Partial<HostConnection>;
    if (rec.host === s.connection.host && rec.port === s.connection.port && typeof rec.privateKey === "string" && rec.privateKey && typeof rec.user === "string") {
      // No undefined values: what read() returns goes to the engine as a protobuf Struct, which has none.
      const { sudo: _stored, ...rest } = s.connection;
      return { ...rest, user: rec.user, ...(rec.sudo === true ? { sudo: true } : {}), privateKey: rec.privateKey, hostKey: rec.hostKey ?? s.connection.hostKey };
    }
  } catch {
    // No record (another machine, a destroy before any program run): the state's connection.
  }
  return s.connection;
}

/** Runs with the current login; when ssh itself fails with it, once more with the state's login. */
async function runWithFallback(
  run: ReturnType<typeof sshRunner>,
  s: State,
  stored: HostConnection,
  script: string,
  extra: Record<string, string>,
): Promise<{ text: string; connection: HostConnection }> {
  try {
    return { text: await run(s, script, extra), connection: s.connection };
  } catch (err) {
    const same = JSON.stringify(stored) === JSON.stringify(s.connection);
    if (same || !(err as { unreachable?: boolean }).unreachable) throw err;
    return { text: await run({ ...s, connection: stored }, script, extra), connection: stored };
  }
}

/** The provider itself, exported for tests (its read/diff semantics are tested without Pulumi). */
export const checkedCommandProvider = provider;

/**
 * How the provider runs a script: ssh's remote command and what goes to it on stdin (transport.ts
 * scriptInvocation). The command is one of two fixed strings — `bash -s`, or `sudo -n -- bash -s` for a sudo
 * login running as root — so neither the script nor an input ever shows in `ps` or in sudo's log. The
 * marker, printed first by the shell that runs the script, tells a connection that failed from a script
 * that failed, and a sudo that refused from both.
 */
export function remoteInvocation(
  s: Pick<State, "connection" | "environment" | "recorded" | "runAs">,
  script: string,
  extra: Record<string, string> = {},
): { command: string; stdin: string; marker: string; sudo: boolean } {
  return scriptInvocation(s.connection, script, { ...extra, ...(s.recorded ?? {}), ...(s.environment ?? {}) }, { runAs: s.runAs, strict: true });
}

/**
 * The engine's address among a provider process's arguments: the first that is not one of the flags the
 * engine may put before it (`--logtostderr`, `-v=N`, `--tracing ADDR`), when it is host:port.
 */
export function engineAddressOf(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--logtostderr" || a.startsWith("-v=")) continue;
    if (a === "--tracing") {
      i++;
      continue;
    }
    return /^[\w.[\]:-]+:\d+$/.test(a) ? a : undefined;
  }
  return undefined;
}

/**
 * Where a script's progress goes while it runs: the engine's log stream, as an ephemeral status of the
 * resource (`pulumi up` prints it on the resource's line as it comes, and leaves it out of the summary).
 * The engine's Log RPC takes a URN and an `ephemeral` flag (what providers' LogStatus uses; @pulumi/command's
 * remote.Command streams its output the same way); the plugin process is given the engine's address as its
 * first argument (engineAddressOf). Anything that goes wrong here only loses progress lines, never fails
 * the resource.
 */
function progressSink(urn: string | undefined): { send(text: string): void; warn(text: string): void; close(): Promise<void> } {
  const none = { send: () => undefined, warn: () => undefined, close: async () => undefined };
  const engine = engineAddressOf(process.argv.slice(2));
  if (!urn || !engine) return none;
  try {
    // Loaded when a script runs, not when a program or the CLI imports this module. gRPC is the copy the
    // SDK's generated client uses (it checks its credentials by class): one copy, whatever the layout.
    /* eslint-disable @typescript-eslint/no-require-imports */
    const stub = require.resolve("@pulumi/pulumi/proto/engine_grpc_pb");
    const grpc = require(require.resolve("@grpc/grpc-js", { paths: [path.dirname(stub)] }));
    const rpc = require(stub);
    const proto = require("@pulumi/pulumi/proto/engine_pb");
    /* eslint-enable @typescript-eslint/no-require-imports */
    const client = new rpc.EngineClient(engine, grpc.credentials.createInsecure());
    let pending: Promise<void> = Promise.resolve();
    const log = (text: string, severity: number, ephemeral: boolean) => {
      const req = new proto.LogRequest();
      req.setSeverity(severity);
      req.setMessage(text);
      req.setUrn(urn);
      req.setEphemeral(ephemeral);
      // In order, one at a time, as the SDK's own log does.
      pending = pending.then(() => new Promise<void>((resolve) => client.log(req, () => resolve())));
    };
    return {
      send: (text: string) => log(text, proto.LogSeverity.INFO, true),
      // A warning stays: `pulumi preview`/`up` list it with the resource's diagnostics.
      warn: (text: string) => log(text, proto.LogSeverity.WARNING, false),
      async close() {
        await Promise.race([pending, new Promise((r) => setTimeout(r, 2000))]);
        client.close();
      },
    };
  } catch {
    return none;
  }
}

/**
 * A "warning:" line of a script's stderr ("image-digest: warning: …"), shown as a warning of the resource
 * (e.g. a tag that moved upstream, read on refresh), or undefined.
 */
export function warningLine(line: string): string | undefined {
  const m = /^([^\s:][^:]{0,80}): warning: (.+)$/.exec(line.trim());
  return m ? m[2] : undefined;
}

/** A "progress:" line of a script's stderr, as shown ("task-images: progress: 3/89 …" → "task-images: 3/89 …"). */
export function progressLine(line: string): string | undefined {
  const m = /^([^\s:][^:]{0,80}): progress: (.+)$/.exec(line.trim());
  return m ? `${m[1]}: ${m[2]}` : undefined;
}

/**
 * Returns a function that runs a bash script on the state's host (transport.ts runOverSsh) and words the
 * outcome; rejects with the stderr tail. Neither a progress line nor an error message shows a secret input
 * (secretMasker).
 */
function sshRunner(): (s: Pick<State, "connection" | "environment" | "recorded" | "timeoutSeconds" | "runAs" | "progressUrn">, script: string, extra?: Record<string, string>) => Promise<string> {
  return async (s, script, extra = {}) => {
    const c = s.connection;
    const progress = progressSink(s.progressUrn);
    const mask = secretMasker(s.environment);
    const timeoutSeconds = s.timeoutSeconds ?? 1800;
    try {
      // Long steps (model load, image pre-pull, Harbor install, the job) say how far they are.
      const onStderrLine = (line: string) => {
        const p = progressLine(line);
        if (p !== undefined) progress.send(mask.all(p));
        const w = warningLine(line);
        if (w !== undefined) progress.warn(mask.all(w));
      };
      const r = await runOverSsh(c, remoteInvocation(s, script, extra), { timeoutMs: timeoutSeconds * 1000, onStderrLine });
      const where = hostLabel(c);
      if (r.outcome === "ok") return mask.values(r.stdout);
      if (r.outcome === "unreachable") {
        // ssh's own failure: refused, timed out, host key, authentication.
        const e = new Error(`${where} cannot be reached over SSH (the connection or the login failed); nothing on it was changed or read as drift. Bring the host back (sshd, network, its key) and retry:\n${mask.all(stderrTail(r.stderr, 5))}`);
        (e as Error & { unreachable?: boolean }).unreachable = true;
        throw e;
      }
      if (r.outcome === "sudo-refused") {
        // Connected, but sudo ran nothing (the login's rights changed since the rights check passed).
        throw new Error(`${where}: sudo refused to run the script as root, so nothing ran; the login ${c.user} needs NOPASSWD sudo there (hosts[].ssh.sudo): ${mask.all(stderrTail(r.stderr, 3, " "))}`);
      }
      throw new Error(`${where}: script failed (${r.signal ? `killed by ${r.signal}, timeout ${timeoutSeconds}s` : `exit ${r.code}`}):\n${mask.all(stderrTail(r.stderr, 25))}`);
    } finally {
      await progress.close();
    }
  };
}

/**
 * Runs a bash script on a host the way CheckedCommand does (same ssh options, sudo form, marker, masking
 * and error messages), from the program itself: for resource hooks, which run while `up` applies a step.
 * Resolves to stdout.
 */
export function runHostScript(connection: HostConnection, script: string, options: { environment?: Record<string, string>; timeoutSeconds?: number } = {}): Promise<string> {
  return sshRunner()({ connection, environment: options.environment, timeoutSeconds: options.timeoutSeconds ?? 120 }, script);
}

/**
 * A resource's aliases plus the same under the type it had as a dynamic resource, and that type alone: state
 * written before the provider plugin answers to one of them, also where the resource has moved since
 * (an alias of its old parent is an old URN only with the old type too).
 */
export function withLegacyType(aliases: pulumi.Input<pulumi.URN | pulumi.Alias>[] = []): pulumi.Input<pulumi.URN | pulumi.Alias>[] {
  const retyped = aliases.flatMap((a) => (typeof a === "object" && a !== null && !pulumi.Output.isInstance(a) && (a as pulumi.Alias).type === undefined ? [{ ...(a as pulumi.Alias), type: LEGACY_DYNAMIC_TYPE }] : []));
  return [...aliases, ...retyped, { type: LEGACY_DYNAMIC_TYPE }];
}

/**
 * A bash script run on a host over SSH, whose effect is checked on every refresh: the building block
 * for long-running things (containers, systemd units) that can die or be changed behind our back.
 */
export class CheckedCommand extends pulumi.CustomResource {
  /** What the check printed last (without its "info:" lines). */
  declare public readonly observed: pulumi.Output<string>;
  /** The check's "info:" lines, as of the latest create, update or refresh. */
  declare public readonly info: pulumi.Output<string>;
  /** The create script's stdout. */
  declare public readonly stdout: pulumi.Output<string>;

  constructor(name: string, args: CheckedCommandArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      HOST_SCRIPT_TYPE,
      name,
      {
        ...args,
        // The login as of this run, recorded on this machine for refresh and destroy (currentLogin); not
        // an input of its own, so a new key is no change of the resource.
        connection: pulumi.secret(pulumi.output(args.connection).apply((c) => {
          if (c.privateKey) recordLogin(loginRecordFile(pulumi.getProject(), pulumi.getStack(), c.host, c.port), c as HostConnection);
          return c;
        })),
        rerunOnLogin: args.rerunOnLogin ?? [],
        // Script inputs may carry secrets (API keys): keep the whole map secret.
        environment: pulumi.secret(args.environment ?? {}),
        recorded: args.recorded ?? {},
        spec: args.spec ?? "",
        summary: args.summary ?? [],
        timeoutSeconds: args.timeoutSeconds ?? 1800,
        onDrift: args.onDrift ?? "update",
        // Absent unless "login": the state of every resource made before runAs existed stays as it was.
        runAs: args.runAs === "login" ? "login" : undefined,
        expected: undefined,
        observed: undefined,
        info: undefined,
        stdout: undefined,
      },
      // Aliased to its dynamic-resource type: state written before the plugin changes nothing on any host.
      { ...opts, additionalSecretOutputs: ["connection", "environment"], aliases: withLegacyType(opts?.aliases) },
    );
  }
}
