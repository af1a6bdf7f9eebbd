// parseConfig: schema check, then the cross-field rules, reported as one problem per fault with the full
// Pulumi key ("reprobench:hosts[1].ssh.port"), the bad value (never a secret's) and what is expected.
import { type ReprobenchConfig, configSchema } from "./schema";
import { type ConfigProblem, NAMESPACE, dedupe, errorMap, issueProblems, renderValue } from "./problems";
import { asWritten, withCurrentKeys } from "./renamed-keys";
import { missingSecretProblems, secretProblems } from "./secrets";
import { hostProblems, roleProblems } from "./rules/hosts";
import { downloadProblems, engineProblems, gpuProblems, overrideProblems } from "./rules/model-server";
import { portProblems, routerReachProblems } from "./rules/ports";
import { addressPoolProblems } from "./rules/address-pools";
import { managedFlagProblems } from "./rules/managed-flags";
import { harborProblems, runProblems } from "./rules/dataset";
import { profileProblems } from "./rules/profiles";
import { hostProxyProblems } from "./rules/proxy";
import { registryProblems } from "./rules/registries";

/**
 * The config, or every problem with it. `warnings` are for the user but no fault: an old key name in use
 * ("reprobench:sglang is the old name of reprobench:modelServer; …").
 */
export type ParseResult = { ok: true; config: ReprobenchConfig; warnings: string[] } | { ok: false; problems: ConfigProblem[]; warnings: string[] };

export interface ParseOptions {
  /**
   * Report hosts without an SSH key and a missing proxyUpstream (default true). Off for reviewing a stack
   * file whose secrets are not set yet (`pulumi preview`, `config validate`); `pulumi up` always needs them.
   */
  requireSecrets?: boolean;
}

/**
 * Validates raw stack config (keys without the "reprobench:" prefix; secrets decrypted or "[secret]").
 * Cross-field rules run only once every value has the right shape. A key under its old name (RENAMED_KEYS)
 * is read as the new one, with a warning; its problems are named as the config writes it.
 */
export function parseConfig(raw: Record<string, unknown>, options: ParseOptions = {}): ParseResult {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    return { ok: false, problems: [{ key: NAMESPACE, message: `got ${renderValue(raw)}; expected a mapping of config keys` }], warnings: [] };
  }
  const current = withCurrentKeys(raw);
  const { warnings } = current;
  const named = (problems: ConfigProblem[]) => [...current.problems, ...asWritten(problems, current.writtenAs)];
  const parsed = configSchema.safeParse(current.raw, { errorMap });
  if (!parsed.success) return { ok: false, problems: named(dedupe(parsed.error.issues.flatMap((i) => issueProblems(i, current.raw)))), warnings };
  const rules = crossFieldProblems(parsed.data);
  if (options.requireSecrets ?? true) rules.push(...missingSecretProblems(parsed.data));
  const problems = named(rules);
  return problems.length > 0 ? { ok: false, problems, warnings } : { ok: true, config: parsed.data, warnings };
}

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
    ...downloadProblems(config),
    ...profileProblems(config),
    ...hostProxyProblems(config),
    ...registryProblems(config),
  ];
}
