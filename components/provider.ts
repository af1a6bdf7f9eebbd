// The custom resources of reprobench's provider plugin (plugin/index.ts: `pulumi-resource-reprobench`):
// HostScript (CheckedCommand) and JobName. Ordinary module code, run by the plugin process in the version of
// the checkout the engine loads it from — unlike a dynamic provider, whose code is serialized into each
// resource's state, so a fix reaches every resource at its next refresh, not only at its next update.
import { checkedCommandProvider } from "./checked-command";
import { jobNameProvider } from "./benchmark-run";
import { HOST_SCRIPT_TYPE, JOB_NAME_TYPE, type ResourceImplementation } from "./resource-types";
import { SECRET_KEYS, configSchema, runDatasetSchema, runSchema } from "./config/schema";
import { type PulumiPropertySpec, pulumiSchemaOf } from "./config/pulumi-schema";

/** How the engine marks a secret in a property map it sends a provider that accepts secrets. */
const SECRET_SIG_KEY = "4dabf18193072939515e22adb298388d";
const SECRET_SIG_VALUE = "1b47061264138c4ac30d75fd1eb44270";

type Props = Record<string, unknown>;

function isSecretValue(v: unknown): v is { value: unknown } {
  return typeof v === "object" && v !== null && (v as Props)[SECRET_SIG_KEY] === SECRET_SIG_VALUE;
}

/** A property value with every secret marker removed (the scripts need the plain values). */
export function revealSecrets(v: unknown): unknown {
  if (isSecretValue(v)) return revealSecrets(v.value);
  if (Array.isArray(v)) return v.map(revealSecrets);
  if (typeof v === "object" && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, revealSecrets(x)]));
  return v;
}

function holdsSecret(v: unknown): boolean {
  if (isSecretValue(v)) return true;
  if (Array.isArray(v)) return v.some(holdsSecret);
  if (typeof v === "object" && v !== null) return Object.values(v).some(holdsSecret);
  return false;
}

/** The top-level properties that hold a secret anywhere inside (they are returned secret as a whole). */
export function secretKeys(props: Props): Set<string> {
  return new Set(Object.entries(props).filter(([, v]) => holdsSecret(v)).map(([k]) => k));
}

/**
 * Outputs for the engine: the properties in `secret` marked secret again, and what only the dynamic provider
 * kept (its serialized code, the URN it was given as an input) left out, so state written by it shrinks.
 */
export function outputsOf(outs: Props, secret: Set<string>): Props {
  const kept = Object.entries(outs).filter(([k, v]) => k !== "__provider" && k !== "progressUrn" && v !== undefined);
  return Object.fromEntries(kept.map(([k, v]) => [k, secret.has(k) ? { [SECRET_SIG_KEY]: SECRET_SIG_VALUE, value: v } : v]));
}

/** The resource type a URN names: its last type (`urn:pulumi:stack::project::parent$type::name`). */
export function urnType(urn: string): string {
  const types = urn.split("::")[2] ?? "";
  return types.split("$").pop() ?? "";
}

// The dynamic providers' implementations, as they were, take and give plain values; the URN reaches
// CheckedCommand's as `progressUrn` (where its progress lines go, and which stack's login record it reads).
const IMPLEMENTATIONS: Record<string, ResourceImplementation> = {
  [HOST_SCRIPT_TYPE]: checkedCommandProvider,
  [JOB_NAME_TYPE]: jobNameProvider,
};

function implementationFor(urn: string): ResourceImplementation {
  const type = urnType(urn);
  const impl = IMPLEMENTATIONS[type];
  if (!impl) throw new Error(`reprobench provider: unknown resource type ${type} (${urn}); this plugin serves ${Object.keys(IMPLEMENTATIONS).join(", ")}`);
  return impl;
}

/** Plain values for an implementation: secrets revealed, the URN given, the dynamic provider's code gone. */
function plain(urn: string, props: Props): Props {
  const { __provider: _code, ...rest } = revealSecrets(props) as Props;
  return urnType(urn) === HOST_SCRIPT_TYPE ? { ...rest, progressUrn: urn } : rest;
}

/**
 * The plugin's resource methods (`pulumi.provider.Provider`'s CRUD shape, minus the components, which
 * plugin/index.ts adds). Secrets arrive marked (the server accepts secrets) and leave marked.
 */
export const resourceProvider = {
  async check(_urn: string, _olds: Props, news: Props) {
    return { inputs: news };
  },
  async diff(id: string, urn: string, olds: Props, news: Props) {
    const impl = implementationFor(urn);
    // An explicit answer: an unknown one would let the engine compare every property itself, among them
    // the dynamic provider's code that state written before the plugin still holds.
    const d = await impl.diff(id, plain(urn, olds), plain(urn, news));
    return { changes: d.changes === true, replaces: d.replaces ?? [], deleteBeforeReplace: d.deleteBeforeReplace ?? false };
  },
  async create(urn: string, inputs: Props) {
    const r = await implementationFor(urn).create(plain(urn, inputs));
    return { id: r.id, outs: outputsOf(r.outs ?? {}, secretKeys(inputs)) };
  },
  async read(id: string, urn: string, props: Props) {
    const impl = implementationFor(urn);
    if (!impl.read) return { id, props: outputsOf(revealSecrets(props) as Props, secretKeys(props)) };
    const r = await impl.read(id, plain(urn, props));
    return { id: r.id ?? id, props: outputsOf(r.props ?? {}, secretKeys(props)) };
  },
  async update(id: string, urn: string, olds: Props, news: Props) {
    const impl = implementationFor(urn);
    if (!impl.update) throw new Error(`reprobench provider: ${urnType(urn)} cannot be updated in place`);
    const r = await impl.update(id, plain(urn, olds), plain(urn, news));
    return { outs: outputsOf(r.outs ?? {}, secretKeys(news)) };
  },
  async delete(id: string, urn: string, props: Props) {
    const impl = implementationFor(urn);
    if (impl.delete) await impl.delete(id, plain(urn, props));
  },
};

type SchemaProperty = { type?: string; $ref?: string; items?: SchemaProperty; additionalProperties?: SchemaProperty; description: string; secret?: boolean };
const str = (description: string, secret = false): SchemaProperty => ({ type: "string", description, ...(secret ? { secret } : {}) });
const stringMap = (description: string, secret = false): SchemaProperty => ({ type: "object", additionalProperties: { type: "string", description: "" }, description, ...(secret ? { secret } : {}) });

const HOST_SCRIPT_INPUTS: Record<string, SchemaProperty> = {
  connection: { $ref: "#/types/reprobench:index:HostConnection", description: "Where to run (secret: it carries the private key). Only host and port are the host's identity.", secret: true },
  rerunOnLogin: { type: "array", items: { type: "string", description: "" }, description: "Login fields (user, sudo) whose change re-runs create in place." },
  create: str("Bash script run on create and whenever `spec` changes; must be idempotent."),
  delete: str("Bash script run on delete."),
  check: str("Bash script that prints the observed state; run after create and on every refresh (drift)."),
  onDrift: str("What the next `up` does about drift: `update` (create again in place) or `replace`."),
  environment: stringMap("Inputs of the scripts, exported as environment variables (secret as a whole).", true),
  recorded: stringMap("Inputs exported like `environment` whose change alone never updates the resource."),
  spec: str("Anything whose change must re-run create in place."),
  summary: { type: "array", items: { type: "string", description: "" }, description: "What runs, as argv, so a preview shows which flag changes." },
  timeoutSeconds: { type: "number", description: "Upper bound for one script run, in seconds." },
  runAs: str("`root` (default) or `login` (the SSH login as it is, never sudo)."),
};
const HOST_SCRIPT_OUTPUTS: Record<string, SchemaProperty> = {
  expected: str("What `check` printed right after create or update."),
  observed: str("What `check` printed last, its `info:` lines left out."),
  info: str("The check's `info:` lines, latest."),
  stdout: str("The create script's stdout."),
};
const JOB_NAME_INPUTS: Record<string, SchemaProperty> = {
  prefix: str("Job names are `<prefix>-<UTC YYYYmmdd-HHMMSS>`."),
  spec: str("A hash of what makes a different job: a change gives a new name."),
};

/** The schema of the plugin's custom resources and their types, merged into the components' (plugin/index.ts). */
export function customResourceSchema(): { resources: Record<string, unknown>; types: Record<string, unknown> } {
  const required = (props: Record<string, SchemaProperty>, optional: string[]) => Object.keys(props).filter((k) => !optional.includes(k));
  return {
    resources: {
      [HOST_SCRIPT_TYPE]: {
        description: "A bash script run on a host over SSH, whose effect is checked on every refresh (components/checked-command.ts).",
        inputProperties: HOST_SCRIPT_INPUTS,
        requiredInputs: ["connection", "create", "check"],
        properties: { ...HOST_SCRIPT_INPUTS, ...HOST_SCRIPT_OUTPUTS },
        required: [...required(HOST_SCRIPT_INPUTS, ["delete", "runAs"]), "expected", "observed", "stdout"],
      },
      [JOB_NAME_TYPE]: {
        description: "A Harbor job's name, fixed when the job is created; a new `prefix` or `spec` gives a new one.",
        inputProperties: JOB_NAME_INPUTS,
        requiredInputs: ["prefix", "spec"],
        properties: { ...JOB_NAME_INPUTS, name: str("The job's name.") },
        required: ["prefix", "spec", "name"],
      },
    },
    types: {
      "reprobench:index:HostConnection": {
        type: "object",
        description: "An SSH login to a host.",
        properties: {
          name: str("The host's name in the stack; error messages name it."),
          host: str("Address or DNS name sshd listens on."),
          port: { type: "integer", description: "sshd's port." },
          user: str("The login."),
          sudo: { type: "boolean", description: "The login runs host scripts through `sudo -n`." },
          privateKey: str("OpenSSH private key (PEM).", true),
          hostKey: str("The host's public key, authorized_keys format."),
        },
        required: ["name", "host", "port", "user", "privateKey", "hostKey"],
      },
    },
  };
}

/** The BenchCluster facade's type token (plugin/index.ts). */
export const BENCH_CLUSTER_TYPE = "reprobench:index:BenchCluster";
/** The BenchmarkRun facade's type token (plugin/index.ts): a job on a cluster another stack owns. */
export const BENCHMARK_RUN_TYPE = "reprobench:index:BenchmarkRun";

/**
 * The settings' types, from the zod schema `reprobench config validate` applies (the secrets left out:
 * each is an argument of its own), for the facade's `settings` input.
 */
export function settingsSchema(): ReturnType<typeof pulumiSchemaOf> {
  return pulumiSchemaOf(configSchema, { pkg: "reprobench", root: "Cluster", omit: SECRET_KEYS });
}

type PackageSchema = { resources?: Record<string, { inputProperties?: Record<string, PulumiPropertySpec> } & Record<string, unknown>>; types?: Record<string, unknown> } & Record<string, unknown>;

/** The facades' free-form inputs typed from the zod schemas: resource, input, its schema. */
function typedInputs(): [string, string, ReturnType<typeof pulumiSchemaOf>][] {
  return [
    [BENCH_CLUSTER_TYPE, "settings", settingsSchema()],
    [BENCHMARK_RUN_TYPE, "run", pulumiSchemaOf(runSchema, { pkg: "reprobench", root: "Run" })],
    [BENCHMARK_RUN_TYPE, "dataset", pulumiSchemaOf(runDatasetSchema, { pkg: "reprobench", root: "RunDataset" })],
  ];
}

/** The facades' properties that hold secrets, which the analyzer cannot tell: marked `secret` in the schema. */
const SECRET_PROPERTIES: Record<string, { inputs: string[]; outputs: string[] }> = {
  [BENCH_CLUSTER_TYPE]: { inputs: ["sshPrivateKeys", "proxyUpstream", "hfToken", "proxyUrls", "registryPasswords"], outputs: ["apiKey"] },
  [BENCHMARK_RUN_TYPE]: { inputs: ["sshPrivateKeys", "hfToken"], outputs: [] },
};

type PropertyMap = Record<string, PulumiPropertySpec & { secret?: boolean }>;
const markSecret = (props: PropertyMap | undefined, names: string[]): PropertyMap | undefined =>
  props && Object.fromEntries(Object.entries(props).map(([k, v]) => [k, names.includes(k) ? { ...v, secret: true } : v]));

/**
 * The plugin's schema (JSON): the component package's, as the SDK's analyzer reads plugin/index.ts, with
 * the custom resources added, the facades' secrets marked, and the facades' settings (BenchCluster's `settings`, BenchmarkRun's `run`
 * and `dataset`) typed from the zod schemas instead of `any`.
 */
export function withCustomResources(schemaJson: string): string {
  const schema = JSON.parse(schemaJson) as PackageSchema;
  const extra = customResourceSchema();
  const resources = { ...(schema.resources ?? {}), ...extra.resources } as NonNullable<PackageSchema["resources"]>;
  let types: Record<string, unknown> = { ...(schema.types ?? {}), ...extra.types };
  for (const [token, input, typed] of typedInputs()) {
    const resource = resources[token];
    const given = resource?.inputProperties?.[input];
    if (!resource || !given) continue;
    const description = given.description;
    resources[token] = { ...resource, inputProperties: { ...resource.inputProperties, [input]: { ...typed.property, ...(description ? { description } : {}) } } };
    types = { ...types, ...typed.types };
  }
  for (const [token, secret] of Object.entries(SECRET_PROPERTIES)) {
    const resource = resources[token] as ({ inputProperties?: PropertyMap; properties?: PropertyMap } & Record<string, unknown>) | undefined;
    if (!resource) continue;
    resources[token] = { ...resource, inputProperties: markSecret(resource.inputProperties, secret.inputs), properties: markSecret(resource.properties, secret.outputs) };
  }
  return JSON.stringify({ ...schema, resources, types });
}
