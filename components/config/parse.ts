// parseConfig: schema check, then the cross-field rules, reported as one problem per fault with the full
// Pulumi key ("reprobench:hosts[1].ssh.port"), the bad value (never a secret's) and what is expected.
import { posix } from "node:path";
import { z } from "zod";
import {
  configSchema,
  type Host,
  LAUNCHERS,
  RUN_STACK_KEYS,
  type ReprobenchConfig,
  type RunStackConfig,
  SECRET_KEYS,
  SECRET_PLACEHOLDER,
  cidrContains,
  isGitUrl,
  parseCidr,
  parseIpv4,
  runStackSchema,
} from "./schema";
import {
  IN_CONTAINER_AGENTS, HOST_SIDE_AGENTS, MODEL_FREE_AGENTS, ROUTER_MANAGED_FLAGS, SGLANG_MANAGED_FLAGS, SGLANG_ONLY_SETTINGS,
  VLLM_MANAGED_FLAGS, agentPlacement, hostsWithRole, settingValue, workerSettings,
} from "./derive";
import { proxyCredentials, proxyUrlProblem, redactProxyUrl } from "../host-proxy";

export const NAMESPACE = "reprobench";

export interface ConfigProblem {
  /** Full Pulumi config key with a path, e.g. "reprobench:sglang.tp" or "reprobench:hosts[1].ssh.port". */
  key: string;
  /** The bad value (or "missing") and what is expected. Never contains a secret's value. */
  message: string;
}

export type ParseResult = { ok: true; config: ReprobenchConfig } | { ok: false; problems: ConfigProblem[] };

export interface ParseOptions {
  /**
   * Report hosts without an SSH key and a missing proxyUpstream (default true). Off for reviewing a stack
   * file whose secrets are not set yet (`pulumi preview`, `config validate`); `pulumi up` always needs them.
   */
  requireSecrets?: boolean;
}

type PathPart = string | number;

/** "reprobench:" + a JS-like path: hosts[1].ssh.port. */
export function configKey(path: readonly PathPart[]): string {
  let key = "";
  for (const part of path) key += typeof part === "number" ? `[${part}]` : key === "" ? part : `.${part}`;
  return key === "" ? NAMESPACE : `${NAMESPACE}:${key}`;
}

function isSecretPath(path: readonly PathPart[]): boolean {
  return (SECRET_KEYS as readonly PathPart[]).includes(path[0]);
}

function valueAt(root: unknown, path: readonly PathPart[]): unknown {
  let value = root;
  for (const part of path) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<PathPart, unknown>)[part];
  }
  return value;
}

/** Short, single-line rendering of a bad value; secrets are never rendered. */
export function renderValue(value: unknown, path: readonly PathPart[] = []): string {
  if (isSecretPath(path)) return "a value (not shown: secret)";
  if (value === undefined) return "nothing";
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 80 ? `${text.slice(0, 77)}…` : text;
}

const TYPE_NAMES: Record<string, string> = {
  string: "a string",
  number: "a number",
  integer: "an integer",
  boolean: "true or false",
  object: "a mapping",
  array: "a list",
  null: "null",
};

// Turns zod's built-in issues into "expected …" phrases; checks with their own message keep it.
const errorMap: z.ZodErrorMap = (issue, ctx) => {
  switch (issue.code) {
    case z.ZodIssueCode.invalid_type: {
      // YAML reads unquoted 7131e43, 0755, yes… as numbers or booleans.
      const hint = issue.expected === "string" && (issue.received === "number" || issue.received === "boolean") ? " (quote the value in YAML)" : "";
      return { message: `expected ${TYPE_NAMES[issue.expected] ?? issue.expected}${hint}` };
    }
    case z.ZodIssueCode.invalid_literal:
      return { message: `expected ${JSON.stringify(issue.expected)}` };
    case z.ZodIssueCode.invalid_enum_value:
      return { message: `expected one of ${issue.options.map((o) => JSON.stringify(o)).join(", ")}` };
    case z.ZodIssueCode.too_small: {
      const op = issue.inclusive ? "≥" : ">";
      const min = Number(issue.minimum);
      if (issue.type === "array") return { message: `expected a list with at least ${min} item${min === 1 ? "" : "s"}` };
      if (issue.type === "string") return { message: `expected a string of at least ${min} character${min === 1 ? "" : "s"}` };
      return { message: `expected a number ${op} ${min}` };
    }
    case z.ZodIssueCode.too_big: {
      const op = issue.inclusive ? "≤" : "<";
      const max = Number(issue.maximum);
      if (issue.type === "array") return { message: `expected a list with at most ${max} items` };
      if (issue.type === "string") return { message: `expected a string of at most ${max} characters` };
      return { message: `expected a number ${op} ${max}` };
    }
    case z.ZodIssueCode.invalid_string:
      return { message: `expected a valid ${typeof issue.validation === "string" ? issue.validation : "string"}` };
    case z.ZodIssueCode.invalid_union:
      return { message: ctx.defaultError === "Invalid input" ? "expected one of the allowed forms" : ctx.defaultError };
    default:
      return { message: ctx.defaultError.startsWith("expected") ? ctx.defaultError : `expected a valid value (${ctx.defaultError})` };
  }
};

// Walks the schema along a data path to list the keys an object allows (for unknown-key messages).
function objectShapeAt(schema: z.ZodTypeAny, path: readonly PathPart[]): Record<string, z.ZodTypeAny> | null {
  let current: z.ZodTypeAny | undefined = schema;
  let index = 0;
  for (let guard = 0; current && guard < 100; guard++) {
    if (current instanceof z.ZodEffects) current = current.innerType();
    else if (current instanceof z.ZodDefault) current = current.removeDefault();
    else if (current instanceof z.ZodOptional || current instanceof z.ZodNullable) current = current.unwrap();
    else if (index === path.length) return current instanceof z.ZodObject ? (current.shape as Record<string, z.ZodTypeAny>) : null;
    else if (current instanceof z.ZodObject) current = (current.shape as Record<string, z.ZodTypeAny>)[String(path[index++])];
    else if (current instanceof z.ZodArray) {
      current = current.element;
      index++;
    } else if (current instanceof z.ZodRecord) {
      current = current.valueSchema;
      index++;
    } else return null;
  }
  return null;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const saved = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1].toLowerCase() === b[j - 1].toLowerCase() ? 0 : 1));
      previous = saved;
    }
  }
  return row[b.length];
}

function unknownKeyProblems(issue: z.ZodIssue & { keys: string[] }, schema: z.ZodTypeAny): ConfigProblem[] {
  const allowed = Object.keys(objectShapeAt(schema, issue.path) ?? {});
  return issue.keys.map((k) => {
    const close = allowed.filter((a) => editDistance(a, k) <= Math.max(1, Math.floor(a.length / 4)));
    const hint = close.length > 0 ? ` (did you mean ${close.map((c) => `'${c}'`).join(" or ")}?)` : "";
    return {
      key: configKey([...issue.path, k]),
      message: `unknown key${hint}; expected one of: ${allowed.join(", ")}`,
    };
  });
}

function issueProblems(issue: z.ZodIssue, raw: unknown, schema: z.ZodTypeAny = configSchema): ConfigProblem[] {
  if (issue.code === z.ZodIssueCode.unrecognized_keys) return unknownKeyProblems(issue, schema);
  const value = valueAt(raw, issue.path);
  const got = value === undefined ? "missing" : `got ${renderValue(value, issue.path)}`;
  return [{ key: configKey(issue.path), message: `${got}; ${issue.message}` }];
}

/**
 * Validates raw stack config (keys without the "reprobench:" prefix; secrets decrypted or "[secret]").
 * Cross-field rules run only once every value has the right shape.
 */
export function parseConfig(raw: Record<string, unknown>, options: ParseOptions = {}): ParseResult {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    return { ok: false, problems: [{ key: NAMESPACE, message: `got ${renderValue(raw)}; expected a mapping of config keys` }] };
  }
  const parsed = configSchema.safeParse(raw, { errorMap });
  if (!parsed.success) return { ok: false, problems: dedupe(parsed.error.issues.flatMap((i) => issueProblems(i, raw))) };
  const problems = crossFieldProblems(parsed.data);
  if (options.requireSecrets ?? true) problems.push(...missingSecretProblems(parsed.data));
  return problems.length > 0 ? { ok: false, problems } : { ok: true, config: parsed.data };
}

/** True when a stack's raw config names a cluster owner: a run stack. */
export function isRunStack(raw: Record<string, unknown>): boolean {
  return raw !== null && typeof raw === "object" && raw.cluster !== undefined;
}

export type RunStackParseResult = { ok: true; config: RunStackConfig } | { ok: false; problems: ConfigProblem[] };

/**
 * Validates a run stack's own config: `cluster`, `run`, `hfToken` and `dataset`. Anything else belongs to the owner
 * of the cluster and is refused naming that stack, so a run stack can never be taken to change the cluster.
 */
export function parseRunStackConfig(raw: Record<string, unknown>): RunStackParseResult {
  const owner = typeof raw.cluster === "string" ? `'${raw.cluster}'` : "named by reprobench:cluster";
  const foreign = Object.keys(raw).filter((k) => !(RUN_STACK_KEYS as readonly string[]).includes(k));
  const problems: ConfigProblem[] = foreign.map((k) => ({
    key: configKey([k]),
    message: `set by the cluster's owner stack ${owner}; a run stack (reprobench:cluster) sets only ${RUN_STACK_KEYS.map((r) => `reprobench:${r}`).join(", ")}`,
  }));
  const own = Object.fromEntries(Object.entries(raw).filter(([k]) => !foreign.includes(k)));
  const parsed = runStackSchema.safeParse(own, { errorMap });
  if (!parsed.success) problems.push(...dedupe(parsed.error.issues.flatMap((i) => issueProblems(i, own, runStackSchema))));
  else if (parsed.data.dataset !== undefined) {
    const d = parsed.data.dataset;
    problems.push(...datasetSourceProblems(d.repo, d.commit, { repo: ["dataset", "repo"], commit: ["dataset", "commit"], repoLabel: "dataset.repo" }));
  }
  return problems.length > 0 || !parsed.success ? { ok: false, problems } : { ok: true, config: parsed.data };
}

/**
 * Where a run stack's own dataset lives on the runner unless dataset.dir says: beside the owner's
 * harbor.datasetDir, in datasets/<project>.<stack> (/var/lib/reprobench/datasets/reprobench.<stack> with the
 * defaults), so no two stacks of any project share one.
 */
export function defaultRunDatasetDir(ownerDatasetDir: string, stackId: string): string {
  return posix.join(posix.dirname(ownerDatasetDir), "datasets", stackId);
}

/** How `dir` stands to `other`: the same directory, inside it, holding it, or apart (null). */
function pathRelation(dir: string, other: string): "is" | "is inside" | "holds" | null {
  if (dir === other) return "is";
  if (dir.startsWith(`${other}/`)) return "is inside";
  if (other.startsWith(`${dir}/`)) return "holds";
  return null;
}

/**
 * Why `dir` cannot hold a run stack's own dataset on the owner's runner, or null: it must be apart from the
 * owner's harbor.datasetDir (and the .clone/.new working copies harbor-dataset.sh makes beside it, as it makes
 * them beside `dir`), which its dataset step would replace, and from the owner's venv, jobs dir and tool
 * bundle; it may lie inside harbor.workDir, not be it or hold it.
 */
export function runDatasetDirProblem(dir: string, owner: ReprobenchConfig, ownerStack: string): string | null {
  const copies = (d: string) => [d, `${d}.clone`, `${d}.new`];
  const ownerDataset = owner.harbor.datasetDir;
  for (const mine of copies(dir)) {
    for (const theirs of copies(ownerDataset)) {
      const relation = pathRelation(mine, theirs);
      if (relation === null) continue;
      const subject = mine === dir ? "it" : `its working copy ${mine}`;
      const object = theirs === ownerDataset ? "the owner's harbor.datasetDir" : `${theirs}, the working copy of the owner's harbor.datasetDir`;
      return `${subject} ${relation} ${object} ${JSON.stringify(ownerDataset)} (stack '${ownerStack}'), which this stack's dataset step would replace; expected a directory of this stack's own`;
    }
  }
  const others: [string, string, boolean][] = [
    ["harbor.venv", owner.harbor.venv, true],
    ["harbor.jobsDir", owner.harbor.jobsDir, true],
    ["toolBundle.hostDir", owner.toolBundle.hostDir, true],
    ["harbor.workDir", owner.harbor.workDir, false],
  ];
  for (const [key, other, insideRefused] of others) {
    const relation = pathRelation(dir, other);
    if (relation === null || (relation === "is inside" && !insideRefused)) continue;
    return `it ${relation} the owner's ${key} ${JSON.stringify(other)} (stack '${ownerStack}'); expected a directory of this stack's own${insideRefused ? "" : ", which may lie inside it"}`;
  }
  return null;
}

/**
 * The config a run stack's job is rendered from: the owner's (as its `clusterConfig` output recorded it,
 * secrets as placeholders) with this stack's `run` and `hfToken`, checked by the same rules as any stack.
 * With this stack's own `dataset`, its harbor.dataset* are that dataset's (in `dir`, by default
 * defaultRunDatasetDir of `stackId`, "<project>.<stack>"), so the job, its spec and its task count follow
 * it; everything else of harbor.* stays the owner's.
 */
export function combineWithCluster(ownerConfig: Record<string, unknown>, runStack: RunStackConfig, runRaw: Record<string, unknown>, stackId: string): ParseResult {
  const combined: Record<string, unknown> = { ...ownerConfig, run: runRaw.run ?? {} };
  // The owner's manifest form writes null for absent secrets; absent is what the schema takes.
  for (const key of ["proxyUpstream", "hfToken"]) if (combined[key] === null) delete combined[key];
  delete combined.hfToken;
  if (runStack.hfToken !== undefined) combined.hfToken = runStack.hfToken;
  const result = parseConfig(combined, { requireSecrets: false });
  const dataset = runStack.dataset;
  if (!result.ok || dataset === undefined) return result;
  const owner = result.config;
  const dir = dataset.dir ?? defaultRunDatasetDir(owner.harbor.datasetDir, stackId);
  const bad = runDatasetDirProblem(dir, owner, runStack.cluster);
  if (bad !== null) {
    const got = dataset.dir !== undefined ? `got ${JSON.stringify(dir)}` : `missing, and its default ${JSON.stringify(dir)} cannot be used`;
    return { ok: false, problems: [problem(["dataset", "dir"], `${got}: ${bad}${dataset.dir === undefined ? " (set reprobench:dataset.dir)" : ""}`)] };
  }
  const harbor = { ...owner.harbor, datasetRepo: dataset.repo, datasetCommit: dataset.commit, datasetDir: dir, datasetTasksSubdir: dataset.tasksSubdir, expectedTaskCount: dataset.expectedTaskCount };
  return { ok: true, config: { ...owner, harbor } };
}

function dedupe(problems: ConfigProblem[]): ConfigProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const id = `${p.key}\n${p.message}`;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

// Defence in depth: even a message built from a secret by mistake is masked before printing.
const PEM_BLOCK = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g;
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@"']*@/gi;

/** One line per problem: "<key>: <bad value>; <expected>". Private keys and URL credentials are masked. */
export function formatProblems(problems: ConfigProblem[]): string {
  return problems
    .map((p) => `${p.key}: ${p.message}`.replace(PEM_BLOCK, "[private key not shown]").replace(URL_USERINFO, "$1***@"))
    .join("\n");
}

/**
 * Secret keys whose value is stored in plaintext. `isEncrypted(topKey)` says whether Pulumi holds the
 * top-level key encrypted; placeholders ("[secret]") always count as encrypted. Proxy URLs only count
 * when they carry credentials.
 */
export function plaintextSecretProblems(raw: Record<string, unknown>, isEncrypted: (topKey: string) => boolean): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const keys = raw.sshPrivateKeys;
  if (!isEncrypted("sshPrivateKeys") && keys !== null && typeof keys === "object" && !Array.isArray(keys)) {
    for (const [name, value] of Object.entries(keys)) {
      if (typeof value === "string" && value !== SECRET_PLACEHOLDER && PEM_HEADER.test(value)) {
        out.push({ key: configKey(["sshPrivateKeys", name]), message: `stored in plaintext (not shown); expected an encrypted value: pulumi config set --secret --path 'reprobench:sshPrivateKeys.${name}' < KEYFILE` });
      }
    }
  }
  const upstream = raw.proxyUpstream;
  if (!isEncrypted("proxyUpstream") && typeof upstream === "string" && upstream !== SECRET_PLACEHOLDER && /:\/\/[^/@\s]+@/.test(upstream)) {
    out.push({ key: configKey(["proxyUpstream"]), message: "stored in plaintext with credentials (not shown); expected an encrypted value: pulumi config set --secret reprobench:proxyUpstream URL" });
  }
  const urls = raw.proxyUrls;
  if (!isEncrypted("proxyUrls") && urls !== null && typeof urls === "object" && !Array.isArray(urls)) {
    for (const [name, value] of Object.entries(urls)) {
      if (typeof value === "string" && value !== SECRET_PLACEHOLDER && proxyCredentials(value) !== "") {
        out.push({ key: configKey(["proxyUrls", name]), message: `stored in plaintext with credentials (not shown); expected an encrypted value: pulumi config set --secret --path 'reprobench:proxyUrls.${name}' URL` });
      }
    }
  }
  const passwords = raw.registryPasswords;
  if (!isEncrypted("registryPasswords") && passwords !== null && typeof passwords === "object" && !Array.isArray(passwords)) {
    for (const [name, value] of Object.entries(passwords)) {
      if (typeof value === "string" && value !== SECRET_PLACEHOLDER && value !== "") {
        out.push({ key: configKey(["registryPasswords", name]), message: `stored in plaintext (not shown); expected an encrypted value: pulumi config set --secret --path 'reprobench:registryPasswords["${name}"]' TOKEN` });
      }
    }
  }
  const token = raw.hfToken;
  if (!isEncrypted("hfToken") && typeof token === "string" && token !== SECRET_PLACEHOLDER && token !== "") {
    out.push({ key: configKey(["hfToken"]), message: "stored in plaintext (not shown); expected an encrypted value: pulumi config set --secret reprobench:hfToken TOKEN" });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Cross-field rules.

const PEM_HEADER = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/;
const PEM_PRIVATE_KEY = /^-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----\r?\n[\s\S]+\n-----END [A-Z0-9 ]*PRIVATE KEY-----\s*$/;

/** Every rule that spans more than one value (except missing secrets). Exported for focused tests. */
export function crossFieldProblems(config: ReprobenchConfig): ConfigProblem[] {
  return [
    ...hostProblems(config),
    ...roleProblems(config),
    ...gpuProblems(config),
    ...overrideProblems(config),
    ...secretProblems(config),
    ...portProblems(config),
    ...routerReachProblems(config),
    ...addressPoolProblems(config),
    ...managedFlagProblems(config),
    ...harborProblems(config),
    ...runProblems(config),
    ...engineProblems(config),
    ...profileProblems(config),
    ...hostProxyProblems(config),
    ...registryProblems(config),
  ];
}

const problem = (path: PathPart[], message: string): ConfigProblem => ({ key: configKey(path), message });

function duplicates<T>(items: T[], id: (item: T) => string, report: (index: number, first: number) => ConfigProblem): ConfigProblem[] {
  const firstIndex = new Map<string, number>();
  const out: ConfigProblem[] = [];
  items.forEach((item, index) => {
    const first = firstIndex.get(id(item));
    if (first === undefined) firstIndex.set(id(item), index);
    else out.push(report(index, first));
  });
  return out;
}

function hostProblems(config: ReprobenchConfig): ConfigProblem[] {
  const hosts = config.hosts;
  const out = [
    ...duplicates(hosts, (h) => h.name, (i, f) =>
      problem(["hosts", i, "name"], `got ${JSON.stringify(hosts[i].name)}; expected a unique host name (hosts[${f}] has it)`)),
    ...duplicates(hosts, (h) => h.privateIp, (i, f) =>
      problem(["hosts", i, "privateIp"], `got ${JSON.stringify(hosts[i].privateIp)}; expected a unique private IP (hosts[${f}] has it)`)),
    ...duplicates(hosts, (h) => `${h.ssh.host.toLowerCase()}:${h.ssh.port}`, (i, f) =>
      problem(["hosts", i, "ssh"], `got ${hosts[i].ssh.host}:${hosts[i].ssh.port}; expected a unique SSH endpoint host:port (hosts[${f}] has it)`)),
  ];
  hosts.forEach((h, i) => {
    if (h.ssh.hostKey === undefined && h.ssh.hostKeyFile === undefined) {
      out.push(problem(["hosts", i, "ssh", "hostKey"], "missing; expected exactly one of ssh.hostKey (\"ssh-ed25519 AAAA…\") or ssh.hostKeyFile: host keys are always pinned"));
    } else if (h.ssh.hostKey !== undefined && h.ssh.hostKeyFile !== undefined) {
      out.push(problem(["hosts", i, "ssh", "hostKeyFile"], "got both ssh.hostKey and ssh.hostKeyFile; expected exactly one"));
    }
    if (h.ssh.user !== "root" && !h.ssh.sudo) {
      out.push(problem(["hosts", i, "ssh", "sudo"], `missing; the login ${JSON.stringify(h.ssh.user)} is not root, and reprobench needs root's rights on ${h.name} (daemon.json, systemd units): set hosts[${i}].ssh.sudo: true (the user has NOPASSWD sudo and is in the docker group), or log in as root`));
    } else if (h.ssh.user === "root" && h.ssh.sudo) {
      out.push(problem(["hosts", i, "ssh", "sudo"], `got true for the login "root"; expected false or unset (root needs no sudo)`));
    }
  });
  return out;
}

function roleProblems(config: ReprobenchConfig): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  for (const role of ["router", "runner"] as const) {
    const indices = config.hosts.flatMap((h, i) => (h.roles.includes(role) ? [i] : []));
    if (role === "router" && !config.router.enabled) {
      for (const i of indices) out.push(problem(["hosts", i, "roles"], `got ${JSON.stringify(config.hosts[i].roles)}; expected no router role: router.enabled is false (Harbor talks to the worker directly)`));
      continue;
    }
    if (indices.length === 0) out.push(problem(["hosts"], `no host has the ${role} role; expected exactly one host with role ${role}`));
    for (const i of indices.slice(1)) {
      out.push(problem(["hosts", i, "roles"], `got ${JSON.stringify(config.hosts[i].roles)}; expected exactly one host with role ${role}, and ${config.hosts[indices[0]].name} (hosts[${indices[0]}]) already has it`));
    }
  }
  const workerCount = hostsWithRole(config, "worker").length;
  if (workerCount === 0) out.push(problem(["hosts"], "no host has the worker role; expected at least one worker"));
  if (!config.router.enabled && workerCount > 1) {
    out.push(problem(["router", "enabled"], `got false with ${workerCount} workers; expected one worker when the router is off (Harbor talks to a single endpoint), or router.enabled: true`));
  }
  return out;
}

/** Config path of a worker setting: the override's key when the override sets it. */
function settingPath(config: ReprobenchConfig, hostName: string, field: string): PathPart[] {
  const override = config.sglang.overrides[hostName] as Record<string, unknown> | undefined;
  return override && override[field] !== undefined ? ["sglang", "overrides", hostName, field] : ["sglang", field];
}

function gpuProblems(config: ReprobenchConfig): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  config.hosts.forEach((host, i) => {
    if (!host.roles.includes("worker")) return;
    const s = workerSettings(config, host.name);
    if (config.environment === "sim") {
      if (s.gpus !== "none") {
        out.push(problem(settingPath(config, host.name, "gpus"), `got ${JSON.stringify(s.gpus)} for worker ${host.name}; expected "none" on environment sim (simulated hosts have no GPUs)`));
      }
      return;
    }
    if (s.gpus === "none") {
      out.push(problem(settingPath(config, host.name, "gpus"), `got "none" for worker ${host.name}; expected "all" on environment real (SGLang needs the GPUs)`));
    }
    const needed = s.tp * s.dp;
    if (host.gpus < needed) {
      out.push(problem(["hosts", i, "gpus"], `got ${host.gpus}; expected at least tp×dp = ${s.tp}×${s.dp} = ${needed} GPUs on worker ${host.name} (environment real)`));
    }
  });
  return out;
}

function overrideProblems(config: ReprobenchConfig): ConfigProblem[] {
  const workers = hostsWithRole(config, "worker").map((h) => h.name);
  return Object.keys(config.sglang.overrides).flatMap((name) =>
    workers.includes(name)
      ? []
      : [problem(["sglang", "overrides", name], `names ${config.hosts.some((h) => h.name === name) ? "a host without the worker role" : "no host"}; expected a worker host: ${workers.join(", ") || "(none)"}`)],
  );
}

function secretProblems(config: ReprobenchConfig): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const names = config.hosts.map((h) => h.name);
  for (const [name, value] of Object.entries(config.sshPrivateKeys)) {
    if (name !== "default" && !names.includes(name)) {
      out.push(problem(["sshPrivateKeys", name], `names no host; expected a host name (${names.join(", ")}) or "default"`));
    }
    if (value !== SECRET_PLACEHOLDER && !PEM_PRIVATE_KEY.test(value)) {
      out.push(problem(["sshPrivateKeys", name], "got a value that is not a PEM private key (not shown); expected -----BEGIN … PRIVATE KEY----- … -----END … PRIVATE KEY-----"));
    }
  }
  if (config.proxyUpstream !== undefined && config.proxyUpstream !== SECRET_PLACEHOLDER && !isProxyUrl(config.proxyUpstream)) {
    out.push(problem(["proxyUpstream"], "got a value that is not a proxy URL (not shown); expected an HTTP proxy URL (http or https, a host and a port, no credentials: the bridge forwards TCP and cannot add them, so run a local proxy on the runner that holds them, as the seed's 127.0.0.1:27890)"));
  }
  return out;
}

/** Secrets a `pulumi up` needs: an SSH key for every host, the proxy URL when the proxy is on. */
export function missingSecretProblems(config: ReprobenchConfig): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  config.hosts.forEach((host, i) => {
    if (host.ssh.privateKeyFile !== undefined || config.sshPrivateKeys[host.name] !== undefined || config.sshPrivateKeys.default !== undefined) return;
    out.push(problem(["sshPrivateKeys", host.name], `missing; host ${host.name} needs an SSH private key: pulumi config set --secret --path 'reprobench:sshPrivateKeys.${host.name}' < KEYFILE (or sshPrivateKeys.default, or hosts[${i}].ssh.privateKeyFile)`));
  });
  if (config.proxy.enabled && config.proxyUpstream === undefined) {
    out.push(problem(["proxyUpstream"], "missing; expected the upstream proxy URL because proxy.enabled is true: pulumi config set --secret reprobench:proxyUpstream 'http://HOST:PORT' (or set proxy.enabled: false)"));
  }
  config.hosts.forEach((host, i) => {
    if (host.proxy === undefined || host.proxy.url !== undefined || host.proxy.urlFile !== undefined) return;
    if (config.proxyUrls[host.name] !== undefined || config.proxyUrls.default !== undefined) return;
    out.push(problem(["proxyUrls", host.name], `missing; host ${host.name} has hosts[${i}].proxy but no proxy URL: pulumi config set --secret --path 'reprobench:proxyUrls.${host.name}' 'http://USER:PASSWORD@HOST:PORT' (or proxyUrls.default, hosts[${i}].proxy.urlFile, or hosts[${i}].proxy.url for a URL without credentials)`));
  });
  config.registries.forEach((registry, i) => {
    if (registry.username === null || registry.passwordFile !== undefined || config.registryPasswords[registry.host] !== undefined) return;
    out.push(problem(["registryPasswords", registry.host], `missing; registries[${i}] (${registry.host}) pulls as ${registry.username} but has no password: pulumi config set --secret --path 'reprobench:registryPasswords["${registry.host}"]' TOKEN (or registries[${i}].passwordFile)`));
  });
  if (config.run.enabled && config.run.environment === "hf-sandbox" && config.hfToken === undefined) {
    out.push(problem(["hfToken"], "missing; expected a Hugging Face token because run.environment is hf-sandbox (each task runs as an HF Jobs sandbox): pulumi config set --secret reprobench:hfToken TOKEN"));
  }
  return out;
}

function isProxyUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return ["http:", "https:"].includes(url.protocol) && url.hostname !== "" && !url.username && !url.password && (url.pathname === "" || url.pathname === "/");
  } catch {
    return false;
  }
}

function portProblems(config: ReprobenchConfig): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  for (const host of config.hosts) {
    const used: { port: number; path: PathPart[] }[] = [];
    if (host.roles.includes("worker")) used.push({ port: workerSettings(config, host.name).port, path: settingPath(config, host.name, "port") });
    if (host.roles.includes("router") && config.router.enabled) {
      used.push({ port: config.router.port, path: ["router", "port"] }, { port: config.router.prometheusPort, path: ["router", "prometheusPort"] });
    }
    if (host.roles.includes("runner") && config.proxy.enabled) used.push({ port: config.proxy.bridgePort, path: ["proxy", "bridgePort"] });
    out.push(
      ...duplicates(used, (u) => String(u.port), (i, f) =>
        problem(used[i].path, `got ${used[i].port}; expected a port not already taken on host ${host.name} by ${configKey(used[f].path)}`)),
    );
  }
  return out;
}

function routerReachProblems(config: ReprobenchConfig): ConfigProblem[] {
  const routers = hostsWithRole(config, "router");
  const runners = hostsWithRole(config, "runner");
  if (!config.router.enabled || routers.length !== 1 || runners.length !== 1) return []; // reported by roleProblems
  const [router, runner] = [routers[0], runners[0]];
  const bind = config.router.host;
  const loopback = bind.startsWith("127.");
  if (bind !== "0.0.0.0" && !loopback && bind !== router.privateIp) {
    return [problem(["router", "host"], `got ${JSON.stringify(bind)}; expected 127.0.0.1, 0.0.0.0 or the router host's privateIp (${router.privateIp})`)];
  }
  if (loopback && router.name !== runner.name) {
    return [problem(["router", "host"], `got ${JSON.stringify(bind)}; expected an address the runner host ${runner.name} can reach (router host ${router.name}'s privateIp ${router.privateIp} or 0.0.0.0): loopback only works when router and runner share a host`)];
  }
  return [];
}

function addressPoolProblems(config: ReprobenchConfig): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const pools = config.docker.addressPools.map((p) => ({ ...p, cidr: parseCidr(p.base)! }));
  let networks = 0;
  pools.forEach((pool, i) => {
    if (pool.size < pool.cidr.prefix) {
      out.push(problem(["docker", "addressPools", i, "size"], `got ${pool.size}; expected a prefix length ≥ ${pool.cidr.prefix} (networks are carved out of ${pool.base})`));
      return;
    }
    networks += 2 ** (pool.size - pool.cidr.prefix);
    for (let j = 0; j < i; j++) {
      const other = pools[j].cidr;
      if (cidrContains(other, pool.cidr.network) || cidrContains(pool.cidr, other.network)) {
        out.push(problem(["docker", "addressPools", i, "base"], `got ${JSON.stringify(pool.base)}; expected a range that does not overlap docker.addressPools[${j}] (${pools[j].base})`));
      }
    }
    for (const host of config.hosts) {
      const ip = parseIpv4(host.privateIp)!;
      if (cidrContains(pool.cidr, ip)) {
        out.push(problem(["docker", "addressPools", i, "base"], `got ${JSON.stringify(pool.base)}; expected a range that does not contain host ${host.name}'s privateIp ${host.privateIp}`));
      }
    }
  });
  // Harbor makes one network per running trial (seed: "all predefined address pools have been fully subnetted").
  if (out.length === 0 && networks < config.run.nConcurrentTrials) {
    out.push(problem(["docker", "addressPools"], `the pools provide ${networks} network${networks === 1 ? "" : "s"}; expected at least run.nConcurrentTrials = ${config.run.nConcurrentTrials} (one network per running trial)`));
  }
  return out;
}

function flagName(arg: string): string {
  return arg.split("=")[0];
}

function managedFlagProblems(config: ReprobenchConfig): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const check = (args: string[] | undefined, managed: string[], path: PathPart[]) =>
    (args ?? []).forEach((arg, i) => {
      if (managed.includes(flagName(arg))) {
        out.push(problem([...path, i], `got ${JSON.stringify(arg)}; expected a flag reprobench does not set itself (${flagName(arg)} is managed: use the ${String(path[0])} keys)`));
      }
    });
  const serverFlags = config.sglang.engine === "vllm" ? VLLM_MANAGED_FLAGS : SGLANG_MANAGED_FLAGS;
  check(config.sglang.extraArgs, serverFlags, ["sglang", "extraArgs"]);
  for (const [name, override] of Object.entries(config.sglang.overrides)) check(override.extraArgs, serverFlags, ["sglang", "overrides", name, "extraArgs"]);
  check(config.router.extraArgs, ROUTER_MANAGED_FLAGS, ["router", "extraArgs"]);
  return out;
}

/** Where a dataset's source is configured: the key paths of its repo and commit, and how messages name the repo. */
interface DatasetSourceKeys {
  repo: PathPart[];
  commit: PathPart[];
  repoLabel: string;
}

/**
 * The rules of a dataset's source, for harbor.datasetRepo/datasetCommit and a run stack's dataset.repo/commit
 * alike: a git URL needs its commit; a project directory is relative, inside the project, and has none.
 */
function datasetSourceProblems(repo: string, commit: string | null, keys: DatasetSourceKeys): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  if (isGitUrl(repo)) {
    if (commit === null) out.push(problem(keys.commit, "missing; expected the 40-character commit to pin the git dataset to"));
  } else {
    if (repo.startsWith("/") || repo.startsWith("~") || repo.split("/").includes("..")) {
      out.push(problem(keys.repo, `got ${JSON.stringify(repo)}; expected a git URL or a directory inside this project (relative, no '..')`));
    }
    if (commit !== null) {
      out.push(problem(keys.commit, `got ${JSON.stringify(commit)}; expected null: ${keys.repoLabel} ${JSON.stringify(repo)} is a project directory, not a git URL`));
    }
  }
  return out;
}

function harborProblems(config: ReprobenchConfig): ConfigProblem[] {
  const h = config.harbor;
  const out: ConfigProblem[] = datasetSourceProblems(h.datasetRepo, h.datasetCommit, { repo: ["harbor", "datasetRepo"], commit: ["harbor", "datasetCommit"], repoLabel: "datasetRepo" });
  if (Number(h.pythonVersion.split(".")[1]) < 12) {
    out.push(problem(["harbor", "pythonVersion"], `got ${JSON.stringify(h.pythonVersion)}; expected 3.12 or newer (Harbor requires Python ≥ 3.12)`));
  }
  return out;
}

function runProblems(config: ReprobenchConfig): ConfigProblem[] {
  const run = config.run;
  const out: ConfigProblem[] = [];
  if (run.nConcurrentAgents !== null && run.nConcurrentAgents > run.nConcurrentTrials) {
    out.push(problem(["run", "nConcurrentAgents"], `got ${run.nConcurrentAgents}; expected ≤ run.nConcurrentTrials (${run.nConcurrentTrials}): Harbor rejects agents[].n_concurrent above n_concurrent_trials`));
  }
  const known = [...HOST_SIDE_AGENTS, ...IN_CONTAINER_AGENTS, ...MODEL_FREE_AGENTS] as string[];
  if (!known.includes(run.agent)) {
    out.push(problem(["run", "agent"], `got ${JSON.stringify(run.agent)}; expected one of ${known.join(", ")} (the agents reprobench knows how to wire to the model)`));
  }
  if (agentPlacement(run.agent) !== "none") {
    const served = config.sglang.servedModelName;
    const slash = run.modelName.indexOf("/");
    if (slash <= 0 || run.modelName.slice(slash + 1) !== served) {
      out.push(problem(["run", "modelName"], `got ${JSON.stringify(run.modelName)}; expected <provider>/${served} (the router serves sglang.servedModelName), e.g. "openai/${served}"`));
    }
  }
  const workers: Host[] = hostsWithRole(config, "worker");
  if (workers.length > 0) {
    const contexts = workers.map((w) => workerSettings(config, w.name).contextLength).filter((c): c is number => c !== null);
    const context = contexts.length > 0 ? Math.min(...contexts) : Infinity;
    if (run.modelInfo.maxInputTokens > context) {
      out.push(problem(["run", "modelInfo", "maxInputTokens"], `got ${run.modelInfo.maxInputTokens}; expected ≤ the workers' contextLength (${context})`));
    }
    if (run.modelInfo.maxOutputTokens > context) {
      out.push(problem(["run", "modelInfo", "maxOutputTokens"], `got ${run.modelInfo.maxOutputTokens}; expected ≤ the workers' contextLength (${context})`));
    }
  }
  return out;
}

/** vLLM differs from SGLang where reprobench relies on SGLang: flags, /server_info, the router's DP discovery. */
function engineProblems(config: ReprobenchConfig): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const engine = config.sglang.engine;
  const launchers = LAUNCHERS[engine];
  const launcherPaths: PathPart[][] = [["sglang", "launcher"], ...Object.keys(config.sglang.overrides).map((n) => ["sglang", "overrides", n, "launcher"])];
  for (const path of launcherPaths) {
    const value = path.length === 2 ? config.sglang.launcher : config.sglang.overrides[String(path[2])]?.launcher;
    if (value !== undefined && value !== null && !launchers.includes(value)) {
      out.push(problem(path, `got ${JSON.stringify(value)}; expected ${launchers.map((l) => JSON.stringify(l)).join(" or ")} for sglang.engine ${engine} (or null)`));
    }
  }
  if (engine !== "vllm") return out;
  for (const host of hostsWithRole(config, "worker")) {
    const s = workerSettings(config, host.name);
    for (const name of SGLANG_ONLY_SETTINGS) {
      if (settingValue(s, name) !== null) {
        const [head, ...rest] = name.split(".");
        out.push(problem([...settingPath(config, host.name, head), ...rest], `got ${JSON.stringify(settingValue(s, name))}; expected null for sglang.engine vllm (an SGLang flag with no vLLM equivalent here: pass vLLM's own flag in extraArgs)`));
      }
    }
  }
  if (config.router.enabled) {
    if (config.router.dpAware) {
      out.push(problem(["router", "dpAware"], "got true; expected false for sglang.engine vllm: --dp-aware discovers DP ranks through SGLang's /server_info, which vLLM does not have (vLLM balances its --data-parallel-size ranks itself)"));
    }
    if (config.router.image === null) {
      out.push(problem(["router", "image"], "missing; expected an image with sglang-router 0.3.2 for sglang.engine vllm (the vLLM image has no router; e.g. the SGLang image), or router.enabled: false to use the worker directly"));
    }
  }
  return out;
}

/** Harbor version order for release and .devN versions (enough for Harbor's own version scheme). */
export function compareHarborVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const m = /^(\d+)\.(\d+)\.(\d+)(?:\.?(dev|rc|a|b)(\d+))?/.exec(v);
    if (!m) return [0, 0, 0, 0, 0];
    const stage = m[4] === undefined ? 4 : { dev: 0, a: 1, b: 2, rc: 3 }[m[4] as "dev" | "a" | "b" | "rc"];
    return [Number(m[1]), Number(m[2]), Number(m[3]), stage, Number(m[5] ?? 0)];
  };
  const [x, y] = [parse(a), parse(b)];
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i] - y[i];
  return 0;
}

/**
 * The first Harbor build whose hf-sandbox exec runs commands with bash (argv mode) instead of /bin/sh:
 * installed agents prefix `set -o pipefail;`, which dash rejects (seed 002 Run 3; harbor PR #3016;
 * harbor/environments/hf_sandbox.py in 0.22.1.dev202609020403 and 0.23.0 vs 0.22.0).
 */
export const HF_SANDBOX_PIPEFAIL_FIX = "0.22.1.dev202609020403";

/** Seconds of an hf-sandbox job_timeout ("2h", "90m", "7200"); Infinity for none/off. */
function durationSeconds(text: string): number {
  if (text === "none" || text === "off") return Infinity;
  const m = /^([0-9.]+)([smhd]?)$/.exec(text)!;
  return Number(m[1]) * { "": 1, s: 1, m: 60, h: 3600, d: 86400 }[m[2] as "" | "s" | "m" | "h" | "d"];
}

/** Agent placement, reasoning effort and the hf-sandbox environment (seeds 002/003). */
function profileProblems(config: ReprobenchConfig): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const run = config.run;
  const placement = agentPlacement(run.agent);
  if (run.reasoningEffort !== null && placement === "container" && run.modelName.startsWith("openai/")) {
    out.push(problem(["run", "reasoningEffort"], `got ${JSON.stringify(run.reasoningEffort)}; expected null for ${run.agent} with an openai/ model: Harbor then switches mini-swe-agent to the Responses API (/v1/responses), which the SGLang/vLLM endpoint is not set up for; use sglang.enableThinking to bound thinking instead`));
  }
  if (run.reasoningEffort !== null && placement === "none") {
    out.push(problem(["run", "reasoningEffort"], `got ${JSON.stringify(run.reasoningEffort)}; expected null: agent ${run.agent} calls no model`));
  }
  if (run.containerApiBase !== null && placement !== "container") {
    out.push(problem(["run", "containerApiBase"], `got ${JSON.stringify(run.containerApiBase)}; expected null: ${run.agent} does not run inside the task container (${placement === "host" ? "it calls the model from the runner" : "it calls no model"})`));
  }
  if (run.agentVersion !== null && placement !== "container") {
    out.push(problem(["run", "agentVersion"], `got ${JSON.stringify(run.agentVersion)}; expected null: ${run.agent} is not installed into the task container (its version is Harbor's)`));
  }
  if (run.environment !== "hf-sandbox") return out;
  if (!config.harbor.extras.includes("hf-sandbox")) {
    out.push(problem(["harbor", "extras"], `got ${JSON.stringify(config.harbor.extras)}; expected it to include "hf-sandbox" for run.environment hf-sandbox (Harbor needs harbor[hf-sandbox], i.e. huggingface-hub ≥ 1.22, for that environment)`));
  }
  if (run.taskMounts.length > 0) {
    out.push(problem(["run", "taskMounts"], "got bind mounts; expected none for run.environment hf-sandbox (a sandbox runs on HF Jobs and cannot see the runner's directories)"));
  }
  if (placement === "container") {
    if (run.containerApiBase === null) {
      out.push(problem(["run", "containerApiBase"], `missing; expected the model endpoint's public URL for ${run.agent} on hf-sandbox (the agent runs in the sandbox on HF Jobs and cannot reach the cluster's private addresses)`));
    }
    if (compareHarborVersions(config.harbor.version, HF_SANDBOX_PIPEFAIL_FIX) < 0) {
      out.push(problem(["harbor", "version"], `got ${JSON.stringify(config.harbor.version)}; expected ${HF_SANDBOX_PIPEFAIL_FIX} or newer (first stable: 0.23.0) for ${run.agent} on hf-sandbox: older Harbor runs sandbox commands with /bin/sh (dash), which rejects the installed agent's 'set -o pipefail' ("Illegal option -o pipefail" on every trial, seed 002 Run 3)`));
    }
    if (run.hfSandbox.jobTimeout === null || durationSeconds(run.hfSandbox.jobTimeout) <= 600) {
      out.push(problem(["run", "hfSandbox", "jobTimeout"], `got ${JSON.stringify(run.hfSandbox.jobTimeout)}; expected more than the sandbox's 600 s idle default, e.g. "2h": ${run.agent} runs its whole loop as one exec, and an idle sandbox is shut down mid-task (seed 002 Run 3)`));
    }
  }
  return out;
}

/**
 * hosts[].proxy and the secret proxyUrls: one source of URL per host, every URL a proxy URL (http(s), host,
 * port), credentials only in a secret (proxyUrls or a urlFile). Secret values are never quoted; a
 * credential-free url is.
 */
function hostProxyProblems(config: ReprobenchConfig): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const names = config.hosts.map((h) => h.name);
  config.hosts.forEach((host, i) => {
    const proxy = host.proxy;
    if (proxy === undefined) return;
    if (proxy.url !== undefined && proxy.urlFile !== undefined) {
      out.push(problem(["hosts", i, "proxy", "urlFile"], `got both proxy.url and proxy.urlFile for host ${host.name}; expected one of them`));
    }
    if (proxy.url !== undefined) {
      const bad = proxyUrlProblem(proxy.url, false);
      if (bad !== null && proxyCredentials(proxy.url) !== "") {
        out.push(problem(["hosts", i, "proxy", "url"], `got a URL with credentials for host ${host.name} (not shown: ${redactProxyUrl(proxy.url)}); expected credentials only in a secret: pulumi config set --secret --path 'reprobench:proxyUrls.${host.name}' URL (and drop hosts[${i}].proxy.url), or hosts[${i}].proxy.urlFile`));
      } else if (bad !== null) {
        out.push(problem(["hosts", i, "proxy", "url"], `got ${JSON.stringify(proxy.url)} for host ${host.name}: ${bad}`));
      }
    }
    const own = config.proxyUrls[host.name];
    if (own !== undefined && (proxy.url !== undefined || proxy.urlFile !== undefined)) {
      out.push(problem(["proxyUrls", host.name], `set, but host ${host.name} takes its proxy URL from hosts[${i}].proxy.${proxy.url !== undefined ? "url" : "urlFile"}; expected one source per host`));
    }
  });
  for (const [name, value] of Object.entries(config.proxyUrls)) {
    if (name !== "default") {
      const index = names.indexOf(name);
      if (index === -1) {
        out.push(problem(["proxyUrls", name], `names no host; expected a host name (${names.join(", ")}) or "default"`));
        continue;
      }
      if (config.hosts[index].proxy === undefined) {
        out.push(problem(["proxyUrls", name], `set, but host ${name} has no hosts[${index}].proxy; expected proxy: { noProxy: [...] } on that host (or remove proxyUrls.${name})`));
      }
    }
    if (value === SECRET_PLACEHOLDER) continue;
    const bad = proxyUrlProblem(value, true);
    if (bad !== null) out.push(problem(["proxyUrls", name], `got a value that is not a proxy URL (not shown): ${bad}`));
  }
  return out;
}

/**
 * registries[] and the secret registryPasswords: one entry per registry, a password only for an account and
 * from one source, mirrors as plain http(s)://HOST[:PORT] URLs (credentials belong in the mirror's own
 * config, not in a URL the hosts' files show).
 */
function registryProblems(config: ReprobenchConfig): ConfigProblem[] {
  const out: ConfigProblem[] = duplicates(config.registries, (r) => r.host, (i, first) => problem(["registries", i, "host"], `got ${config.registries[i].host} again (also registries[${first}]); expected one entry per registry`));
  config.registries.forEach((registry, i) => {
    const secret = config.registryPasswords[registry.host] !== undefined;
    if (registry.username === null && (registry.passwordFile !== undefined || secret)) {
      out.push(problem(["registries", i, "username"], `missing; registries[${i}] (${registry.host}) has a password (${secret ? `registryPasswords.${registry.host}` : "passwordFile"}) but no account; expected the user name the password belongs to`));
    }
    if (registry.passwordFile !== undefined && secret) {
      out.push(problem(["registryPasswords", registry.host], `set, but registries[${i}] takes its password from passwordFile; expected one source per registry`));
    }
    if (registry.mirror !== null) {
      const url = new URL(registry.mirror);
      if (!["http:", "https:"].includes(url.protocol)) out.push(problem(["registries", i, "mirror"], `got scheme ${url.protocol.replace(/:$/, "")}; expected http or https`));
      else if (url.username !== "" || url.password !== "") out.push(problem(["registries", i, "mirror"], "got a URL with credentials (not shown); expected http(s)://HOST[:PORT] (a pull-through cache takes its upstream credentials in its own config)"));
      else if ((url.pathname !== "" && url.pathname !== "/") || url.search !== "") out.push(problem(["registries", i, "mirror"], `got ${JSON.stringify(registry.mirror)}; expected http(s)://HOST[:PORT] with nothing after it`));
    }
  });
  const hosts = config.registries.map((r) => r.host);
  for (const name of Object.keys(config.registryPasswords)) {
    if (!hosts.includes(name)) out.push(problem(["registryPasswords", name], `names no registry; expected one of registries[].host (${hosts.length > 0 ? hosts.join(", ") : "none configured"})`));
  }
  return out;
}
