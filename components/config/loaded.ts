// A validated stack config as the components take it: the files it names read from the machine running
// Pulumi (pinned host keys, key files, proxy URL and password files), its secrets as secret Outputs, and
// what each host's scripts get from it (SSH connection, proxy and registry environment). BenchCluster
// builds one from plain settings; the reprobench program from the stack's Pulumi config (infra/config.ts).
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, resolve } from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { type DaemonProxies, daemonProxies, proxyEnvironment, proxyUrlProblem } from "../host-proxy";
import { type PullLimit, type RegistryLogin, type RegistryMirror, registryAuthEnv } from "../registry-access";
import type { PullQuotaSettings } from "../task-images";
import type { HostConnectionInput } from "../transport";
import { DOCKER_HUB_PULL_LIMITS, type ReprobenchConfig, SECRET_PLACEHOLDER, checkPublicKeyLine } from "./schema";
import { type ConfigProblem, configKey, formatProblems, withStackInHints } from "./problems";
import { parseConfig } from "./parse";
import { missingSecretProblems } from "./secrets";

const PEM_PRIVATE_KEY = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/;

/** Files referenced by the config, read from the machine running Pulumi. */
export interface LocalFiles {
  /** Host name → pinned host key line (from ssh.hostKey or the ssh.hostKeyFile contents). */
  hostKeys: Record<string, string>;
  /** Host name → private key PEM read from ssh.privateKeyFile (only hosts that set it). */
  privateKeyFiles: Record<string, string>;
  /** Host name → proxy URL read from proxy.urlFile (only hosts that set it; a secret). */
  proxyUrlFiles: Record<string, string>;
  /** Registry host → password read from registries[].passwordFile (only registries that set it; a secret). */
  registryPasswordFiles?: Record<string, string>;
  problems: ConfigProblem[];
}

/** Resolves a local path: ~/… from the home directory, relative paths from the project directory. */
export function resolveLocalPath(path: string, projectDir: string): string {
  if (path === "~" || path.startsWith("~/")) return resolve(homedir(), path.slice(2));
  return isAbsolute(path) ? path : resolve(projectDir, path);
}

/** Reads ssh.hostKeyFile / ssh.privateKeyFile for every host. `read` is injectable for tests. */
export function readLocalFiles(
  config: ReprobenchConfig,
  projectDir: string,
  read: (path: string) => string = (p) => readFileSync(p, "utf8"),
): LocalFiles {
  const result: LocalFiles = { hostKeys: {}, privateKeyFiles: {}, proxyUrlFiles: {}, registryPasswordFiles: {}, problems: [] };
  const tryRead = (path: string, keyPath: (string | number)[]): string | undefined => {
    const full = resolveLocalPath(path, projectDir);
    try {
      return read(full);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? String(err);
      result.problems.push({ key: configKey(keyPath), message: `got ${JSON.stringify(path)} (${full}: ${code}); expected a readable file` });
      return undefined;
    }
  };
  config.hosts.forEach((host, i) => {
    if (host.ssh.hostKey !== undefined) {
      result.hostKeys[host.name] = host.ssh.hostKey.trim();
    } else if (host.ssh.hostKeyFile !== undefined) {
      const text = tryRead(host.ssh.hostKeyFile, ["hosts", i, "ssh", "hostKeyFile"]);
      if (text !== undefined) {
        const line = text.trim();
        const problem = checkPublicKeyLine(line);
        if (problem) result.problems.push({ key: configKey(["hosts", i, "ssh", "hostKeyFile"]), message: `got ${JSON.stringify(host.ssh.hostKeyFile)}, whose contents are not a public key line (${problem}); expected a .pub file such as ssh_host_ed25519_key.pub` });
        else result.hostKeys[host.name] = line;
      }
    }
    if (host.ssh.privateKeyFile !== undefined) {
      const text = tryRead(host.ssh.privateKeyFile, ["hosts", i, "ssh", "privateKeyFile"]);
      if (text !== undefined) {
        if (!PEM_PRIVATE_KEY.test(text)) result.problems.push({ key: configKey(["hosts", i, "ssh", "privateKeyFile"]), message: `got ${JSON.stringify(host.ssh.privateKeyFile)}, which does not hold a PEM private key (contents not shown); expected an OpenSSH/PEM private key file` });
        else result.privateKeyFiles[host.name] = text;
      }
    }
    if (host.proxy?.urlFile !== undefined) {
      const text = tryRead(host.proxy.urlFile, ["hosts", i, "proxy", "urlFile"]);
      if (text !== undefined) {
        const url = text.trim();
        const bad = url === "" ? "the file is empty" : url.includes("\n") ? "more than one line" : proxyUrlProblem(url, true);
        if (bad !== null) result.problems.push({ key: configKey(["hosts", i, "proxy", "urlFile"]), message: `got ${JSON.stringify(host.proxy.urlFile)}, which does not hold a proxy URL for host ${host.name} (contents not shown: ${bad}); expected one line http://[USER:PASSWORD@]HOST:PORT` });
        else result.proxyUrlFiles[host.name] = url;
      }
    }
  });
  config.registries.forEach((registry, i) => {
    if (registry.passwordFile === undefined) return;
    const text = tryRead(registry.passwordFile, ["registries", i, "passwordFile"]);
    if (text === undefined) return;
    const password = text.trim();
    if (password === "" || password.includes("\n")) result.problems.push({ key: configKey(["registries", i, "passwordFile"]), message: `got ${JSON.stringify(registry.passwordFile)}, which does not hold one line (contents not shown); expected the password or access token of ${registry.username ?? "the account"} on ${registry.host}` });
    else (result.registryPasswordFiles ??= {})[registry.host] = password;
  });
  return result;
}

/** The SSH private key for a host: sshPrivateKeys.<host>, else ssh.privateKeyFile, else sshPrivateKeys.default. */
export function privateKeyFor(config: ReprobenchConfig, files: LocalFiles, hostName: string): string | undefined {
  return config.sshPrivateKeys[hostName] ?? files.privateKeyFiles[hostName] ?? config.sshPrivateKeys.default;
}

/**
 * A host's proxy URL: proxy.urlFile's contents, proxy.url, proxyUrls.<host>, proxyUrls.default; undefined
 * for a host without hosts[].proxy (or, in a preview without secrets, without a URL).
 */
export function proxyUrlFor(config: ReprobenchConfig, files: Pick<LocalFiles, "proxyUrlFiles">, hostName: string): string | undefined {
  const host = config.hosts.find((h) => h.name === hostName);
  if (host?.proxy === undefined) return undefined;
  return files.proxyUrlFiles[hostName] ?? host.proxy.url ?? config.proxyUrls[hostName] ?? config.proxyUrls.default;
}

export interface LoadedConfig {
  config: ReprobenchConfig;
  /** Host name → pinned host key line. */
  hostKeys: Record<string, string>;
  secrets: {
    /** Host name → private key PEM, marked secret. */
    sshPrivateKey: Record<string, pulumi.Output<string>>;
    /** The upstream proxy URL, marked secret; undefined when not configured. */
    proxyUpstream: pulumi.Output<string> | undefined;
    /** The Hugging Face token (hf-sandbox runs), marked secret; undefined when not configured. */
    hfToken: pulumi.Output<string> | undefined;
    /** Host name → its proxy URL (hosts[].proxy), marked secret; only hosts with a proxy. */
    proxyUrl?: Record<string, pulumi.Output<string>>;
    /** Every registries[] account with its password, marked secret (empty: anonymous everywhere). */
    registryLogins?: pulumi.Output<RegistryLogin[]>;
  };
}

/** The mirrors of registries[] (registry → mirror URL). */
export function registryMirrors(config: ReprobenchConfig): RegistryMirror[] {
  return config.registries.filter((r) => r.mirror !== null).map((r) => ({ registry: r.host, url: r.mirror as string }));
}

/**
 * What the stack knows of its registries' pull limits: registries[].pullLimit, else Docker Hub's documented
 * limits for docker.io (anonymous, or an account's), none known elsewhere.
 */
export function pullQuotaSettings(config: ReprobenchConfig): PullQuotaSettings {
  const limits: Record<string, PullLimit | undefined> = { "docker.io": { pulls: DOCKER_HUB_PULL_LIMITS.anonymous, windowSeconds: DOCKER_HUB_PULL_LIMITS.windowSeconds } };
  for (const r of config.registries) {
    const hub = r.host === "docker.io" ? { pulls: r.username !== null ? DOCKER_HUB_PULL_LIMITS.authenticated : DOCKER_HUB_PULL_LIMITS.anonymous, windowSeconds: DOCKER_HUB_PULL_LIMITS.windowSeconds } : undefined;
    limits[r.host] = r.pullLimit === null ? undefined : (r.pullLimit ?? hub);
  }
  return {
    limits,
    mirrored: config.registries.filter((r) => r.mirror !== null).map((r) => r.host),
    credentialed: config.registries.filter((r) => r.username !== null).map((r) => r.host),
  };
}

/**
 * The secret environment of the steps that pull images (image digests, task images, the tool bundle's
 * canary): the registry accounts (components/registry-access.ts registryAuthEnv); undefined when
 * registries[] has none, so such a stack keeps the inputs it had. Mirrors are not secret
 * (registryMirrors, for the pre-pull's script).
 */
export function hostRegistryEnv(loaded: LoadedConfig): pulumi.Output<Record<string, string>> | undefined {
  if (!loaded.config.registries.some((r) => r.username !== null)) return undefined;
  return pulumi.secret(pulumi.output(loaded.secrets.registryLogins ?? []).apply((l) => registryAuthEnv(l)));
}

/**
 * The standard proxy variables (HTTP(S)_PROXY, NO_PROXY, lower-case too) for a host's outbound scripts, as
 * a secret; undefined for a host without a proxy. Merged into a CheckedCommand's `environment`.
 */
export function hostProxyEnv(loaded: LoadedConfig, hostName: string): pulumi.Output<Record<string, string>> | undefined {
  const host = loaded.config.hosts.find((h) => h.name === hostName);
  const url = loaded.secrets.proxyUrl?.[hostName];
  if (host?.proxy === undefined || url === undefined) return undefined;
  const noProxy = host.proxy.noProxy;
  return pulumi.secret(url.apply((u): Record<string, string> => proxyEnvironment(u, noProxy)));
}

/** daemon.json "proxies" for a host's dockerd, as a secret; undefined for a host without a proxy. */
export function hostDaemonProxies(loaded: LoadedConfig, hostName: string): pulumi.Output<DaemonProxies> | undefined {
  const host = loaded.config.hosts.find((h) => h.name === hostName);
  const url = loaded.secrets.proxyUrl?.[hostName];
  if (host?.proxy === undefined || url === undefined) return undefined;
  const noProxy = host.proxy.noProxy;
  return pulumi.secret(url.apply((u) => daemonProxies(u, noProxy)));
}

/** How the program reaches a host: the one SSH transport every component uses (components/ssh.ts). */
export function sshConnection(loaded: LoadedConfig, hostName: string): HostConnectionInput {
  const host = loaded.config.hosts.find((h) => h.name === hostName);
  if (!host) throw new Error(`unknown host '${hostName}'`);
  return {
    name: host.name, host: host.ssh.host, port: host.ssh.port, user: host.ssh.user, privateKey: loaded.secrets.sshPrivateKey[hostName], hostKey: loaded.hostKeys[hostName],
    // Only when set: a root connection stays the value it was before sudo existed (no diff in state).
    ...(host.ssh.sudo ? { sudo: true } : {}),
  };
}

export interface ResolveOptions {
  /** Where relative key, host key, proxy URL and password files resolve from. */
  projectDir: string;
  /** Fail on missing secrets (a preview may do without them; `up` needs them). */
  requireSecrets: boolean;
  /** Receives notes such as "preview without secrets" and parseConfig's warnings (a key's old name). */
  warn: (message: string) => void;
  /** The stack, named in the `pulumi config set` hints (that command needs it outside the selected stack). */
  stack?: string;
}

/**
 * Validates raw settings (a stack file's reprobench:* keys without the namespace) and reads the files they
 * name, into the config the components take: its secrets as secret Outputs, placeholders in the config
 * object itself; a placeholder in the raw settings takes its value from `deferred` (a secret given as an
 * Output, as a program in another language gives them). Throws one RunError listing every problem (never a
 * secret value).
 */
/** Secrets whose values come later (secret Outputs), each standing behind the placeholder in the raw settings. */
export interface DeferredSecrets {
  readonly sshPrivateKeys?: Record<string, pulumi.Input<string>>;
  readonly proxyUpstream?: pulumi.Input<string>;
  readonly hfToken?: pulumi.Input<string>;
  readonly proxyUrls?: Record<string, pulumi.Input<string>>;
  readonly registryPasswords?: Record<string, pulumi.Input<string>>;
}

export function resolveClusterConfig(raw: Record<string, unknown>, options: ResolveOptions, deferred: DeferredSecrets = {}): LoadedConfig {
  const fail = (problems: ConfigProblem[]): never => {
    throw new pulumi.RunError(`invalid stack configuration (${problems.length} problem${problems.length === 1 ? "" : "s"}):\n${formatProblems(withStackInHints(problems, options.stack))}`);
  };
  const parsed = parseConfig(raw, { requireSecrets: options.requireSecrets });
  for (const warning of parsed.warnings) options.warn(warning);
  if (!parsed.ok) return fail(parsed.problems);
  const config = parsed.config;
  const files = readLocalFiles(config, options.projectDir);
  if (files.problems.length > 0) fail(files.problems);
  if (!options.requireSecrets) {
    const missing = missingSecretProblems(config);
    if (missing.length > 0) options.warn(`secrets not set (fine for preview; pulumi up needs them):\n${formatProblems(withStackInHints(missing, options.stack))}`);
  }
  // A placeholder chosen by the usual precedence (privateKeyFor, proxyUrlFor) came from the entry of the
  // host, else the default: the deferred value of that entry.
  const fromMap = (value: string | undefined, map: Record<string, pulumi.Input<string>> | undefined, key: string): pulumi.Input<string> | undefined =>
    value === SECRET_PLACEHOLDER ? (map?.[key] ?? map?.default ?? value) : value;
  const fromValue = (value: string | undefined, later: pulumi.Input<string> | undefined) => (value === SECRET_PLACEHOLDER && later !== undefined ? later : value);
  const sshPrivateKey: Record<string, pulumi.Output<string>> = {};
  for (const host of config.hosts) sshPrivateKey[host.name] = pulumi.secret(fromMap(privateKeyFor(config, files, host.name), deferred.sshPrivateKeys, host.name) ?? "");
  const upstream = fromValue(config.proxyUpstream, deferred.proxyUpstream);
  const proxyUpstream = upstream === undefined ? undefined : pulumi.secret(upstream);
  const token = fromValue(config.hfToken, deferred.hfToken);
  const hfToken = token === undefined ? undefined : pulumi.secret(token);
  const proxyUrl: Record<string, pulumi.Output<string>> = {};
  for (const host of config.hosts) {
    const url = fromMap(proxyUrlFor(config, files, host.name), deferred.proxyUrls, host.name);
    if (url !== undefined && url !== SECRET_PLACEHOLDER) proxyUrl[host.name] = pulumi.secret(url);
  }
  const logins: pulumi.Output<RegistryLogin>[] = [];
  for (const r of config.registries) {
    const password = files.registryPasswordFiles?.[r.host] ?? fromValue(config.registryPasswords[r.host], deferred.registryPasswords?.[r.host]);
    if (r.username !== null && password !== undefined && password !== SECRET_PLACEHOLDER) logins.push(pulumi.output({ registry: r.host, username: r.username, password }));
  }
  const registryLogins = pulumi.secret(pulumi.all(logins));
  // Keep the plain copies out of the config object handed to components.
  const publicConfig: ReprobenchConfig = {
    ...config,
    sshPrivateKeys: Object.fromEntries(Object.keys(config.sshPrivateKeys).map((k) => [k, SECRET_PLACEHOLDER])),
    proxyUpstream: proxyUpstream === undefined ? undefined : SECRET_PLACEHOLDER,
    hfToken: hfToken === undefined ? undefined : SECRET_PLACEHOLDER,
    proxyUrls: Object.fromEntries(Object.keys(config.proxyUrls).map((k) => [k, SECRET_PLACEHOLDER])),
    registryPasswords: Object.fromEntries(Object.keys(config.registryPasswords).map((k) => [k, SECRET_PLACEHOLDER])),
  };
  return { config: publicConfig, hostKeys: files.hostKeys, secrets: { sshPrivateKey, proxyUpstream, hfToken, proxyUrl, registryLogins } };
}
