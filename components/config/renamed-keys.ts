// Top-level keys read under their old name (schema.ts RENAMED_KEYS): the old name still works with a
// warning, both at once is a problem, and problems name the key the way the stack file writes it.
import { RENAMED_KEYS } from "./schema";
import { type ConfigProblem, NAMESPACE } from "./problems";

export interface CurrentKeys {
  /** The raw config with each old name replaced by its new one (the input is not changed). */
  raw: Record<string, unknown>;
  /** New name → the old name this config writes it as. */
  writtenAs: Record<string, string>;
  /** An old name set together with its new one. */
  problems: ConfigProblem[];
  /** One per old name in use, naming both. */
  warnings: string[];
}

/** Reads a raw config's old key names as their new ones. */
export function withCurrentKeys(raw: Record<string, unknown>): CurrentKeys {
  const out: CurrentKeys = { raw: { ...raw }, writtenAs: {}, problems: [], warnings: [] };
  for (const [old, current] of Object.entries(RENAMED_KEYS)) {
    if (raw[old] === undefined) continue;
    delete out.raw[old];
    if (raw[current] !== undefined) {
      out.problems.push({
        key: `${NAMESPACE}:${old}`,
        message: `set together with ${NAMESPACE}:${current}, its new name; expected only one of them (move these settings into ${NAMESPACE}:${current} and remove ${NAMESPACE}:${old})`,
      });
      continue;
    }
    out.raw[current] = raw[old];
    out.writtenAs[current] = old;
    out.warnings.push(`${NAMESPACE}:${old} is the old name of ${NAMESPACE}:${current}; rename it (both work for now)`);
  }
  return out;
}

/**
 * Problems as the stack file names its keys: with the old name in use, "reprobench:modelServer.tp" is
 * "reprobench:sglang.tp", in keys and in messages ("modelServer.engine vllm" is "sglang.engine vllm").
 * Unknown-key messages keep the schema's names: their lists are of the keys allowed.
 */
export function asWritten(problems: ConfigProblem[], writtenAs: Record<string, string>): ConfigProblem[] {
  const renames = Object.entries(writtenAs).map(([current, old]) => ({ old, pattern: new RegExp(`(?<![\\w$])${current}(?![\\w$])`, "g") }));
  if (renames.length === 0) return problems;
  const rename = (text: string) => renames.reduce((t, r) => t.replace(r.pattern, r.old), text);
  return problems.map((p) => ({ key: rename(p.key), message: p.message.startsWith("unknown key") ? p.message : rename(p.message) }));
}
