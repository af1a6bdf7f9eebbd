// Reads a Pulumi.<stack>.yaml without the engine: keeps the reprobench:* keys (prefix stripped) and
// replaces encrypted values ({ secure: … }) by "[secret]" so they can be validated but never decrypted.
import { existsSync, readFileSync } from "node:fs";
import * as nodePath from "node:path";
import { parseDocument } from "yaml";
import { type ReprobenchConfig, SECRET_PLACEHOLDER } from "./schema";
import { type ConfigProblem, NAMESPACE } from "./problems";
import { parseConfig } from "./parse";
import { combineWithCluster, isRunStack, parseRunStackConfig } from "./run-stack";
import { missingSecretProblems, plaintextSecretProblems } from "./secrets";

function isSecureValue(value: unknown): boolean {
  return (
    value !== null &&
    typeof value === "object" &&
    !Array.isArray(value) &&
    Object.keys(value).length === 1 &&
    typeof (value as Record<string, unknown>).secure === "string"
  );
}

/** Replaces every { secure: "v1:…" } leaf with the placeholder. */
export function maskSecureValues(value: unknown): unknown {
  if (isSecureValue(value)) return SECRET_PLACEHOLDER;
  if (Array.isArray(value)) return value.map(maskSecureValues);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskSecureValues(v)]));
  }
  return value;
}

/** Extracts the reprobench:* keys from parsed stack-file YAML (other namespaces are ignored). */
export function stackConfigFromYaml(text: string, source = "stack file"): Record<string, unknown> {
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length > 0) throw new Error(`${source}: invalid YAML: ${doc.errors[0].message}`);
  const root: unknown = doc.toJS();
  if (root === null || root === undefined) return {};
  if (typeof root !== "object" || Array.isArray(root)) throw new Error(`${source}: expected a YAML mapping at the top level`);
  const config = (root as Record<string, unknown>).config;
  if (config === undefined || config === null) return {};
  if (typeof config !== "object" || Array.isArray(config)) throw new Error(`${source}: 'config' must be a mapping of namespace:key entries`);
  const out: Record<string, unknown> = {};
  const prefix = `${NAMESPACE}:`;
  for (const [key, value] of Object.entries(config)) {
    if (key.startsWith(prefix)) out[key.slice(prefix.length)] = maskSecureValues(value);
  }
  return out;
}

/** Parses Pulumi.<stack>.yaml at `path`; throws an Error naming the file when it is unreadable or not YAML. */
export function readStackFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new Error(`cannot read stack file ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  return stackConfigFromYaml(text, path);
}

/**
 * "<project>.<stack>" of a stack file, as the program's pulumi.getProject()/getStack() name it: the name in
 * the Pulumi.yaml beside it (reprobench when there is none) and the <stack> of Pulumi.<stack>.yaml.
 */
export function stackIdOfFile(path: string): string {
  const stack = nodePath.basename(path).replace(/^Pulumi\./, "").replace(/\.ya?ml$/, "");
  let project = "reprobench";
  for (const name of ["Pulumi.yaml", "Pulumi.yml"]) {
    const file = nodePath.join(nodePath.dirname(path), name);
    if (!existsSync(file)) continue;
    try {
      const parsed: unknown = parseDocument(readFileSync(file, "utf8")).toJS();
      const named = parsed !== null && typeof parsed === "object" ? (parsed as Record<string, unknown>).name : undefined;
      if (typeof named === "string" && named !== "") project = named;
    } catch {
      // An unreadable project file: the default name.
    }
    break;
  }
  return `${project}.${stack}`;
}

export interface StackFileCheck {
  ok: boolean;
  /** What makes the file invalid (empty when ok). */
  problems: ConfigProblem[];
  /** Secrets not set yet, when not required: fine for preview, fatal for `pulumi up`. */
  missingSecrets: ConfigProblem[];
  /** Not faults, but for the user: a key under its old name. */
  warnings: string[];
  config?: ReprobenchConfig;
}

/**
 * Validates a stack file the way loadConfig validates the running stack (minus reading key files). A run
 * stack's `config` is its run combined with the owner's stack file (Pulumi.<cluster>.yaml beside it).
 */
export function checkStackFile(path: string, options: { requireSecrets?: boolean } = {}): StackFileCheck {
  const raw = readStackFile(path);
  // readStackFile turns encrypted values into placeholders, so any real value here is plaintext.
  const plaintext = plaintextSecretProblems(raw, () => false);
  if (isRunStack(raw)) {
    // A run stack: its own keys, then its run against the owner's stack file beside it (when there is one;
    // on a real cluster the owner's outputs are what count, and preview checks against them).
    const run = parseRunStackConfig(raw);
    if (!run.ok) return { ok: false, problems: [...plaintext, ...run.problems], missingSecrets: [], warnings: [] };
    const ownerFile = nodePath.join(nodePath.dirname(path), `Pulumi.${run.config.cluster}.yaml`);
    if (!existsSync(ownerFile)) return { ok: plaintext.length === 0, problems: plaintext, missingSecrets: [], warnings: [] };
    const combined = combineWithCluster(readStackFile(ownerFile), run.config, raw, stackIdOfFile(path));
    if (!combined.ok) return { ok: false, problems: [...plaintext, ...combined.problems], missingSecrets: [], warnings: [] };
    return { ok: plaintext.length === 0, problems: plaintext, missingSecrets: [], warnings: [], config: combined.config };
  }
  const parsed = parseConfig(raw, { requireSecrets: options.requireSecrets ?? false });
  if (!parsed.ok) return { ok: false, problems: [...plaintext, ...parsed.problems], missingSecrets: [], warnings: parsed.warnings };
  const missingSecrets = options.requireSecrets ? [] : missingSecretProblems(parsed.config);
  return { ok: plaintext.length === 0, problems: plaintext, missingSecrets, warnings: parsed.warnings, config: parsed.config };
}
