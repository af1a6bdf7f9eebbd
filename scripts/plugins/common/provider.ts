// Turns a table of resource handlers into the Provider object that @pulumi/pulumi/provider serves.
// This layer owns the wire concerns so handlers see plain values: it unwraps secrets on the way in,
// re-wraps secret outputs on the way out (the SDK server passes Structs through untouched, so nothing
// else would keep them secret), rejects unknown resource types, and flushes logs before replying.
import type * as pprov from "@pulumi/pulumi/provider";
import { LogSink, MemoryLog, Severity } from "./engine-log";
import { Decoded, Props, decode, encode, parseUrn } from "./wire";

export interface OperationContext {
  urn: string;
  name: string;
  type: string;
  /** Logs a message against this resource. */
  log(severity: Severity, message: string): void;
  /** Aborted when the engine cancels the operation. */
  signal: AbortSignal;
}

export interface CheckFailure {
  property: string;
  reason: string;
}

export interface CheckOutcome {
  /** Values for inputs the user left unset (defaults). Never overrides a provided value. */
  defaults?: Props;
  failures?: CheckFailure[];
}

export interface DiffOutcome {
  changes: boolean;
  replaces: string[];
  deleteBeforeReplace?: boolean;
}

export interface Outputs {
  outs: Props;
  /** Output keys that must be secret in addition to those echoing a secret input. */
  secretOuts?: Iterable<string>;
}

export interface ResourceHandler {
  check?(news: Decoded, olds: Decoded): CheckOutcome;
  diff(olds: Decoded, news: Decoded): DiffOutcome;
  create(ctx: OperationContext, inputs: Decoded): Promise<Outputs & { id: string }>;
  update?(ctx: OperationContext, id: string, olds: Decoded, news: Decoded): Promise<Outputs>;
  delete?(ctx: OperationContext, id: string, props: Decoded): Promise<void>;
}

export type InvokeHandler = (ctx: OperationContext, args: Decoded) => Promise<Outputs>;

export interface PluginSpec {
  name: string;
  version: string;
  resources: Record<string, ResourceHandler>;
  invokes?: Record<string, InvokeHandler>;
}

/** The error for a type this plugin does not implement, naming what it does implement. */
export function unsupportedTypeError(spec: PluginSpec, type: string): Error {
  const known = Object.keys(spec.resources).sort().join(", ");
  return new Error(
    `resource type "${type}" is not implemented by the offline "${spec.name}" plugin ${spec.version} ` +
      `(reprobench scripts/plugins/${spec.name}); it implements only: ${known}. ` +
      `Use the official pulumi-resource-${spec.name} plugin for other types.`,
  );
}

function failureMessage(type: string, failures: CheckFailure[]): string {
  return `invalid inputs for ${type}: ` + failures.map((f) => `${f.property}: ${f.reason}`).join("; ");
}

export function makeProvider(spec: PluginSpec, sink: LogSink = new MemoryLog()): pprov.Provider {
  let cancelled = new AbortController();

  const handlerFor = (urn: string) => {
    const { type, name } = parseUrn(urn);
    const handler = spec.resources[type];
    if (!handler) throw unsupportedTypeError(spec, type);
    return { type, name, handler };
  };

  const context = (urn: string, type: string, name: string): OperationContext => ({
    urn,
    type,
    name,
    signal: cancelled.signal,
    log: (severity, message) => sink.log(severity, message, urn || undefined),
  });

  const finish = async <T>(work: Promise<T>): Promise<T> => {
    try {
      return await work;
    } finally {
      await sink.flush();
    }
  };

  const secretsOf = (inputs: Decoded, result: Outputs) =>
    new Set([...inputs.secretKeys, ...(result.secretOuts ?? [])]);

  return {
    version: spec.version,
    getSchema: async () =>
      JSON.stringify({
        name: spec.name,
        version: spec.version,
        description: `Offline reprobench implementation of the ${spec.name} provider (subset).`,
        resources: Object.fromEntries(Object.keys(spec.resources).map((t) => [t, {}])),
        functions: Object.fromEntries(Object.keys(spec.invokes ?? {}).map((t) => [t, {}])),
      }),

    check: async (urn, olds, news) => {
      const { handler } = handlerFor(urn);
      const decoded = decode(news);
      const result = handler.check?.(decoded, decode(olds)) ?? {};
      const inputs: Props = { ...news };
      for (const [k, v] of Object.entries(result.defaults ?? {})) {
        if (inputs[k] === undefined && v !== undefined) inputs[k] = v;
      }
      // The engine prefixes each failure with the resource's type and name.
      return { inputs, failures: result.failures ?? [] };
    },

    diff: async (_id, urn, olds, news) => {
      const { handler } = handlerFor(urn);
      const d = handler.diff(decode(olds), decode(news));
      return { changes: d.changes, replaces: d.replaces, deleteBeforeReplace: d.deleteBeforeReplace };
    },

    create: async (urn, inputs) => {
      const { type, name, handler } = handlerFor(urn);
      const decoded = decode(inputs);
      const failures = handler.check?.(decoded, decode({})).failures ?? [];
      if (failures.length) throw new Error(failureMessage(type, failures));
      const result = await finish(handler.create(context(urn, type, name), decoded));
      return { id: result.id, outs: encode(result.outs, secretsOf(decoded, result)) };
    },

    read: async (id, _urn, props) => ({ id, props }),

    update: async (id, urn, olds, news) => {
      const { type, name, handler } = handlerFor(urn);
      if (!handler.update) throw new Error(`${type} does not support in-place updates (${urn})`);
      const decodedNews = decode(news);
      const result = await finish(handler.update(context(urn, type, name), id, decode(olds), decodedNews));
      return { outs: encode(result.outs, secretsOf(decodedNews, result)) };
    },

    delete: async (id, urn, props) => {
      const { type, name, handler } = handlerFor(urn);
      if (handler.delete) await finish(handler.delete(context(urn, type, name), id, decode(props)));
    },

    invoke: async (token, args) => {
      const fn = spec.invokes?.[token];
      if (!fn) {
        const known = Object.keys(spec.invokes ?? {}).join(", ") || "none";
        throw new Error(`function "${token}" is not implemented by the offline "${spec.name}" plugin; it implements: ${known}`);
      }
      const decoded = decode(args);
      const result = await finish(fn(context("", token, token), decoded));
      return { outputs: encode(result.outs, secretsOf(decoded, result)) };
    },

    cancel: async () => {
      cancelled.abort(new Error("operation cancelled by the engine"));
      cancelled = new AbortController();
    },
  };
}
