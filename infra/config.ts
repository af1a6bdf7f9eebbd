// The stack configuration for the reprobench program: loadConfig() reads every reprobench:* key of the
// stack's Pulumi config, refuses secrets set in plain text, and resolves the rest as BenchCluster's
// settings would be (components/config/loaded.ts resolveClusterConfig): ONE error listing every problem
// before any resource exists.
import * as pulumi from "@pulumi/pulumi";
import {
  type LoadedConfig, NAMESPACE, type RunStackConfig, SECRET_KEYS, formatProblems, parseConfig, parseRunStackConfig, plaintextSecretProblems, resolveClusterConfig, withStackInHints,
} from "../components/config";

/**
 * Turns Pulumi's flat config map ("reprobench:hosts" → JSON text) into the raw object parseConfig takes.
 * Structured values arrive as JSON text; plain strings (environment, proxyUpstream) stay strings.
 */
export function rawFromPulumiConfig(all: Record<string, string>): Record<string, unknown> {
  const prefix = `${NAMESPACE}:`;
  const raw: Record<string, unknown> = {};
  for (const [key, text] of Object.entries(all)) {
    if (!key.startsWith(prefix)) continue;
    let value: unknown = text;
    if (/^\s*[[{]/.test(text)) {
      try {
        value = JSON.parse(text);
      } catch {
        value = text; // the schema reports it with the expected type
      }
    }
    raw[key.slice(prefix.length)] = value;
  }
  return raw;
}

// pulumi.runtime.isConfigSecret exists at run time but is not in the typings.
function isConfigSecret(fullKey: string): boolean {
  const fn = (pulumi.runtime as unknown as { isConfigSecret?: (k: string) => boolean }).isConfigSecret;
  return typeof fn === "function" ? fn(fullKey) : false;
}

export interface LoadOptions {
  /** Where relative key files resolve from (default: the directory of Pulumi.yaml). */
  projectDir?: string;
  /** The flat config map (default: pulumi.runtime.allConfig()). */
  all?: Record<string, string>;
  /**
   * Fail on missing secrets (default: not during preview, so a stack can be reviewed on a machine that
   * has neither the keys nor the cluster; `pulumi up` always needs them).
   */
  requireSecrets?: boolean;
  /** Receives notes such as "preview without secrets" (default: pulumi.log.warn). */
  warn?: (message: string) => void;
}

/**
 * Reads and validates the stack config. Throws one Error listing every problem (never a secret value),
 * a secret key set in plain text among them. Reads config through pulumi.runtime so Pulumi does not warn
 * about reading secrets as plain values.
 */
export function loadConfig(options: LoadOptions = {}): LoadedConfig {
  const raw = rawFromPulumiConfig(options.all ?? pulumi.runtime.allConfig());
  const plaintext = plaintextSecretProblems(raw, (k) => isConfigSecret(`${NAMESPACE}:${k}`));
  const resolveOptions = {
    projectDir: options.projectDir ?? (pulumi.runtime.getRootDirectory() || process.cwd()),
    requireSecrets: options.requireSecrets ?? !pulumi.runtime.isDryRun(),
    warn: options.warn ?? ((m: string) => void pulumi.log.warn(m)),
    stack: pulumi.getStack(),
  };
  if (plaintext.length === 0) return resolveClusterConfig(raw, resolveOptions);
  // A plain-text secret is reported with every other problem, and fails even when they are all.
  const parsed = parseConfig(raw, { requireSecrets: resolveOptions.requireSecrets });
  const problems = [...plaintext, ...(parsed.ok ? [] : parsed.problems)];
  throw new pulumi.RunError(`invalid stack configuration (${problems.length} problem${problems.length === 1 ? "" : "s"}):\n${formatProblems(withStackInHints(problems, pulumi.getStack()))}`);
}

/**
 * The stack's raw config (reprobench:* without the namespace) for BenchCluster, which validates the rest;
 * a secret set in plain text fails here, reported with every other problem (loadConfig).
 */
export function clusterStackConfig(all: Record<string, string> = pulumi.runtime.allConfig()): Record<string, unknown> {
  const raw = rawFromPulumiConfig(all);
  if (plaintextSecretProblems(raw, (k) => isConfigSecret(`${NAMESPACE}:${k}`)).length > 0) loadConfig({ all });
  return raw;
}

/**
 * Reads and validates a run stack's config (reprobench:cluster set): its own keys only, secrets encrypted.
 * Throws one Error listing every problem.
 */
export function loadRunStackConfig(all: Record<string, string> = pulumi.runtime.allConfig()): { config: RunStackConfig; raw: Record<string, unknown> } {
  const raw = rawFromPulumiConfig(all);
  const plaintext = plaintextSecretProblems(raw, (k) => isConfigSecret(`${NAMESPACE}:${k}`));
  const parsed = parseRunStackConfig(raw);
  const problems = [...plaintext, ...(parsed.ok ? [] : parsed.problems)];
  if (problems.length > 0 || !parsed.ok) {
    throw new pulumi.RunError(`invalid stack configuration (${problems.length} problem${problems.length === 1 ? "" : "s"}):\n${formatProblems(withStackInHints(problems, pulumi.getStack()))}`);
  }
  return { config: parsed.config, raw };
}

/** Keys that hold secrets, as full Pulumi keys (for documentation and tests). */
export const SECRET_CONFIG_KEYS = SECRET_KEYS.map((k) => `${NAMESPACE}:${k}`);
