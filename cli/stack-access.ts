// How `status`, `logs` and `pull --stack` reach a stack's hosts and job: everything from the stack's outputs
// (and, for a run stack, its owner's) — host connections with pinned host keys, the cluster's public config,
// the job's name, directory, log and unit. No address is typed by hand. A stack whose outputs are gone
// (destroyed) still reaches its hosts when its stack file names key files, and finds its last job on the
// runner (runs/current.d/<project>.<stack>). Secrets (private keys, the API key) stay in memory or in 0600
// files; nothing here prints them.
import { existsSync, readFileSync } from "node:fs";
import * as path from "node:path";
import YAML from "yaml";
import { loginKeyFor, missingLoginKeyMessage } from "../components/config/login-keys";
import { withCurrentKeys } from "../components/config/renamed-keys";
import type { ReprobenchConfig } from "../components/config/schema";
import { type HostConnection, hostLabel, runScript, secretMasker, stderrTail } from "../components/transport";

/** What the CLI needs to know about the cluster, from its public config. */
export interface ClusterView {
  hosts: { name: string; roles: string[] }[];
  workers: { host: string; url: string; containerName: string }[];
  router: { host: string; containerName: string; metricsUrl: string } | null;
  runner: string;
  harbor: { workDir: string; jobsDir: string; venv: string };
}

export interface JobRef {
  name: string;
  dir: string;
  log: string | null;
  unit: string | null;
  pid: number | null;
  /** jobState as `up` recorded it. */
  state: string | null;
}

export interface StackAccess {
  stack: string;
  /** "<project>.<stack>": the runner's runs/current.d/ entry of this stack. */
  stackId: string;
  /** The owning stack of a run stack, else null. */
  owner: string | null;
  cluster: ClusterView;
  connections: Map<string, HostConnection>;
  /** The router's/servers' API key (secret), when the outputs have it. */
  apiKey: string | null;
  /** The stack's job from its outputs; null when it has none (no run, or destroyed). */
  job: JobRef | null;
  jobsDir: string;
  notes: string[];
}

export interface AccessOptions {
  root: string;
  /** Environment for pulumi (backend, passphrase, PATH). */
  env?: Record<string, string>;
  /** Injected in tests. */
  readOutputs?: (stack: string) => Promise<Record<string, unknown>>;
  /** A stack's `reprobench:sshPrivateKeys` (decrypted; {} when unset). Injected in tests. */
  readSshKeys?: (stack: string) => Promise<Record<string, string>>;
}

const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);

function projectName(root: string): string {
  const file = path.join(root, "Pulumi.yaml");
  const doc = YAML.parse(readFileSync(file, "utf8")) as { name?: unknown } | null;
  if (!doc || typeof doc.name !== "string") throw new Error(`${file} has no project name`);
  return doc.name;
}

/** The cluster view of a (public) config: workers, router, runner, Harbor paths. */
export async function clusterView(config: ReprobenchConfig): Promise<ClusterView> {
  // Loaded lazily: config-derive pulls in the component spec modules.
  const { hostsWithRole, soleHostWithRole, workerSettings } = await import("../components/config/derive");
  const workers = hostsWithRole(config, "worker").map((h) => {
    const s = workerSettings(config, h.name);
    return { host: h.name, url: s.url, containerName: s.containerName };
  });
  const routerHosts = config.router?.enabled === false ? [] : hostsWithRole(config, "router");
  const router = routerHosts.length === 1
    ? { host: routerHosts[0].name, containerName: config.router.containerName, metricsUrl: `http://127.0.0.1:${config.router.prometheusPort}/metrics` }
    : null;
  return {
    hosts: config.hosts.map((h) => ({ name: h.name, roles: [...h.roles] })),
    workers,
    router,
    runner: soleHostWithRole(config, "runner").name,
    harbor: { workDir: config.harbor.workDir, jobsDir: config.harbor.jobsDir, venv: config.harbor.venv },
  };
}

/**
 * The hosts' connections from an owner's `hostConnections` (each login without its key; an owner brought up
 * by an older release exported keys), each with the key `keyOf` finds for it; a host without one is left out.
 */
export async function connectionsFromOutputs(value: unknown, source: string, keyOf: (host: string, exported: string | undefined) => Promise<string | undefined>): Promise<Map<string, HostConnection>> {
  if (!Array.isArray(value)) throw new Error(`${source} has no hostConnections output`);
  const out = new Map<string, HostConnection>();
  for (const c of value as Partial<HostConnection>[]) {
    if (!c || typeof c.name !== "string") continue;
    const privateKey = await keyOf(c.name, typeof c.privateKey === "string" ? c.privateKey : undefined);
    if (privateKey) out.set(c.name, { ...(c as HostConnection), privateKey });
  }
  return out;
}

/**
 * Where the CLI finds a host's key when the owner exports none: the key file the cluster's config names
 * (read from this project), else the stack's own `sshPrivateKeys`, else the owner's (read from their config,
 * decrypted, only when needed).
 */
async function loginKeys(root: string, config: ReprobenchConfig, stacks: string[], readSshKeys: (stack: string) => Promise<Record<string, string>>) {
  const { resolveLocalPath } = await import("../components/config/loaded");
  const keyFiles: Record<string, string> = {};
  for (const h of config.hosts) {
    const file = h.ssh?.privateKeyFile;
    if (file === undefined) continue;
    try {
      keyFiles[h.name] = readFileSync(resolveLocalPath(file, root), "utf8");
    } catch {
      // Not on this machine: the config's keys may still have it.
    }
  }
  const configured = new Map<string, Promise<Record<string, string>>>();
  const keysOf = (stack: string) => {
    if (!configured.has(stack)) configured.set(stack, readSshKeys(stack).catch(() => ({})));
    return configured.get(stack)!;
  };
  return async (host: string, exported: string | undefined): Promise<string | undefined> => {
    const direct = loginKeyFor(host, { keyFiles, exported });
    if (direct !== undefined) return direct;
    for (const stack of stacks) {
      const key = loginKeyFor(host, { ownKeys: await keysOf(stack) });
      if (key !== undefined) return key;
    }
    return undefined;
  };
}

/** Connections from a stack file whose hosts name key files (the simulated cluster's do). */
async function connectionsFromStackFile(root: string, stack: string, config: ReprobenchConfig): Promise<Map<string, HostConnection>> {
  const { readLocalFiles, privateKeyFor } = await import("../components/config/loaded");
  const files = readLocalFiles(config, root);
  const out = new Map<string, HostConnection>();
  const missing: string[] = [];
  for (const h of config.hosts) {
    const key = privateKeyFor(config, files, h.name);
    const hostKey = files.hostKeys[h.name];
    if (!key || key.startsWith("[secret") || !hostKey) {
      missing.push(h.name);
      continue;
    }
    out.set(h.name, { name: h.name, host: h.ssh.host, port: h.ssh.port, user: h.ssh.user, privateKey: key, hostKey, ...(h.ssh.sudo ? { sudo: true } : {}) });
  }
  if (missing.length) {
    throw new Error(
      `stack '${stack}' has no outputs (destroyed, or never up) and Pulumi.${stack}.yaml gives no readable key file for ${missing.join(", ")} ` +
        `(its keys are Pulumi secrets, which only the stack's outputs carry): bring the stack up, or use \`reprobench pull <user@host> <dir> <local dir>\``,
    );
  }
  return out;
}

async function stackFileConfig(root: string, stack: string): Promise<ReprobenchConfig> {
  const { checkStackFile } = await import("../components/config/stack-file");
  const file = path.join(root, `Pulumi.${stack}.yaml`);
  const check = checkStackFile(file);
  if (!check.ok || !check.config) throw new Error(`Pulumi.${stack}.yaml does not validate (reprobench config validate ${file})`);
  return check.config;
}

function runStackOwner(root: string, stack: string): string | null {
  const file = path.join(root, `Pulumi.${stack}.yaml`);
  if (!existsSync(file)) return null;
  const doc = YAML.parse(readFileSync(file, "utf8")) as { config?: Record<string, unknown> } | null;
  return str(doc?.config?.["reprobench:cluster"]);
}

/** Resolves a stack to its hosts and job. Throws with the reason (no stack file, no stack, no cluster). */
export async function stackAccess(stack: string, o: AccessOptions): Promise<StackAccess> {
  if (!/^[A-Za-z0-9_.-]+$/.test(stack)) throw new Error(`invalid stack name ${JSON.stringify(stack)}`);
  if (!existsSync(path.join(o.root, `Pulumi.${stack}.yaml`))) throw new Error(`no stack file Pulumi.${stack}.yaml in ${o.root} (stacks are the Pulumi.<name>.yaml files there)`);
  const readOutputs = o.readOutputs ?? (async (s: string) => (await import("./pulumi-stack")).readStackOutputs(o.root, s, o.env ?? {}));
  const notes: string[] = [];
  const outputs = await readOutputs(stack);
  const owner = str(outputs.cluster) ?? runStackOwner(o.root, stack);
  let ownerOutputs: Record<string, unknown> = outputs;
  if (owner) {
    // The owner's stack name may be qualified (org/project/name); its stack file is Pulumi.<name>.yaml.
    const ownerFile = owner.split("/").pop()!;
    ownerOutputs = await readOutputs(existsSync(path.join(o.root, `Pulumi.${ownerFile}.yaml`)) ? ownerFile : owner).catch((err: Error) => {
      throw new Error(`stack '${stack}' runs on the cluster of stack '${owner}', which cannot be read: ${err.message}`);
    });
  }
  const clusterSource = owner ? `stack '${owner}'` : `stack '${stack}'`;
  let config: ReprobenchConfig;
  let connections: Map<string, HostConnection>;
  if (ownerOutputs.clusterConfig && ownerOutputs.hostConnections) {
    // An owner brought up before the model server section was renamed still exports it as `sglang`.
    config = withCurrentKeys(ownerOutputs.clusterConfig as Record<string, unknown>).raw as unknown as ReprobenchConfig;
    const readSshKeys = o.readSshKeys ?? (async (s: string) => (await import("./pulumi-stack")).readStackSshKeys(o.root, s, o.env ?? {}));
    const ownerFile = owner?.split("/").pop();
    const keyStacks = owner ? [stack, ...(ownerFile && existsSync(path.join(o.root, `Pulumi.${ownerFile}.yaml`)) ? [ownerFile] : [])] : [stack];
    connections = await connectionsFromOutputs(ownerOutputs.hostConnections, clusterSource, await loginKeys(o.root, config, keyStacks, readSshKeys));
    const keyless = config.hosts.map((h) => h.name).filter((h) => !connections.has(h));
    if (keyless.length > 0) notes.push(...keyless.map((h) => missingLoginKeyMessage(h, owner ?? stack, stack)));
  } else if (owner) {
    throw new Error(`stack '${stack}' runs on the cluster of stack '${owner}', which has no outputs: it is not up (reprobench up --stack ${owner})`);
  } else {
    config = await stackFileConfig(o.root, stack);
    connections = await connectionsFromStackFile(o.root, stack, config);
    notes.push(`stack ${stack} has no outputs (destroyed, or never up): hosts reached with the key files of Pulumi.${stack}.yaml`);
  }
  const cluster = await clusterView(config);
  const jobName = str(outputs.jobName);
  const jobsDir = str(outputs.jobsDir) ?? cluster.harbor.jobsDir;
  const job: JobRef | null = jobName
    ? {
        name: jobName,
        dir: path.posix.join(jobsDir, jobName),
        log: str(outputs.jobLog),
        unit: str(outputs.harborUnit),
        pid: typeof outputs.harborPid === "number" && outputs.harborPid > 0 ? outputs.harborPid : null,
        state: str(outputs.jobState),
      }
    : null;
  return {
    stack,
    stackId: `${projectName(o.root)}.${stack}`,
    owner,
    cluster,
    connections,
    apiKey: str(ownerOutputs.sglangApiKey),
    job,
    jobsDir,
    notes,
  };
}

/** The connection of a host, or an error naming the host and the stack. */
export function connectionOf(access: StackAccess, host: string): HostConnection {
  const c = access.connections.get(host);
  if (!c) throw new Error(`no SSH connection for host '${host}' in the outputs of ${access.owner ? `stack '${access.owner}'` : `stack '${access.stack}'`}`);
  return c;
}

export class UnreachableHostError extends Error {}

/**
 * Runs a bash script on a host (components/transport.ts runScript: its inputs exported first, all on stdin,
 * secrets never on a command line; through `sudo -n` for a sudo login). Resolves to stdout; rejects naming
 * the host (UnreachableHostError when ssh itself failed or no answer came in time). The inputs named in
 * `secret` are masked in the messages.
 */
export async function runRemoteScript(c: HostConnection, script: string, env: Record<string, string>, opts: { timeoutMs?: number; secret?: string[] } = {}): Promise<string> {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const r = await runScript(c, script, { env, timeoutMs });
  if (r.outcome === "ok") return r.stdout;
  const mask = secretMasker(Object.fromEntries((opts.secret ?? []).filter((k) => k in env).map((k) => [k, env[k]])));
  const where = hostLabel(c);
  const tail = mask.all(stderrTail(r.stderr, 5));
  if (r.outcome === "killed") throw new UnreachableHostError(`${where}: no answer within ${Math.round(timeoutMs / 1000)}s`);
  if (r.outcome === "unreachable") throw new UnreachableHostError(`${where} is unreachable over SSH: ${tail || "ssh exited 255"}`);
  throw new Error(`${where}: remote script failed (exit ${r.code}): ${tail}`);
}
