// Harbor's on-disk records (v0.21/0.22, see shared/reference/harbor.md §3), parsed leniently: Harbor's
// models have no `extra="forbid"` and dump with exclude_defaults, so any field may be absent and unknown
// fields must be kept, not rejected.
import { z } from "zod";

const isoTime = z.string().nullable().optional();
const phase = z.object({ started_at: isoTime, finished_at: isoTime }).passthrough().nullable().optional();

export const TrialResultSchema = z
  .object({
    id: z.string().optional(),
    task_name: z.string(),
    trial_name: z.string(),
    trial_uri: z.string().optional(),
    source: z.string().nullable().optional(),
    config: z.record(z.unknown()).nullable().optional(),
    agent_info: z.record(z.unknown()).nullable().optional(),
    agent_result: z
      .object({
        n_input_tokens: z.number().nullable().optional(),
        n_cache_tokens: z.number().nullable().optional(),
        n_output_tokens: z.number().nullable().optional(),
        cost_usd: z.number().nullable().optional(),
      })
      .passthrough()
      .nullable()
      .optional(),
    verifier_result: z
      .object({ rewards: z.record(z.number().nullable()).nullable().optional() })
      .passthrough()
      .nullable()
      .optional(),
    exception_info: z
      .object({
        exception_type: z.string(),
        exception_message: z.string().nullable().optional(),
        exception_traceback: z.string().nullable().optional(),
        occurred_at: isoTime,
      })
      .passthrough()
      .nullable()
      .optional(),
    started_at: isoTime,
    finished_at: isoTime,
    environment_setup: phase,
    agent_setup: phase,
    agent_execution: phase,
    verifier: phase,
  })
  .passthrough();
export type TrialResult = z.infer<typeof TrialResultSchema>;

export const JobResultSchema = z
  .object({
    id: z.string().optional(),
    started_at: isoTime,
    updated_at: isoTime,
    finished_at: isoTime,
    n_total_trials: z.number().optional(),
    stats: z.record(z.unknown()).optional(),
  })
  .passthrough();
export type JobResult = z.infer<typeof JobResultSchema>;

/** A Harbor JobConfig / TrialConfig as plain JSON; we only read a few well-known fields from it. */
export type HarborConfig = Record<string, unknown>;

/** Harbor's JobConfig defaults for the fields the audit and the checks read (omitted when equal). */
export const HARBOR_DEFAULTS = {
  n_concurrent_trials: 4,
  n_attempts: 1,
  timeout_multiplier: 1.0,
} as const;

/** Parses a Harbor timestamp to epoch ms. Naive timestamps (no zone) are taken as UTC. */
export function parseTime(value: string | null | undefined): number | null {
  if (!value) return null;
  const hasZone = /(Z|[+-]\d\d:?\d\d)$/i.test(value);
  const ms = Date.parse(hasZone ? value : `${value}Z`);
  return Number.isNaN(ms) ? null : ms;
}

/** Seconds between two Harbor timestamps, or null when either is missing or unparsable. */
export function secondsBetween(start: string | null | undefined, end: string | null | undefined): number | null {
  const a = parseTime(start);
  const b = parseTime(end);
  return a === null || b === null ? null : Math.max(0, (b - a) / 1000);
}

export function asRecord(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** Structural equality of JSON values (key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((v, i) => jsonEqual(v, bb[i]));
  }
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(ra), ...Object.keys(rb)]);
  for (const k of keys) if (!jsonEqual(ra[k], rb[k])) return false;
  return true;
}

/** Lists the dotted paths where two JSON values differ (for "what changed" explanations). */
export function jsonDiff(a: unknown, b: unknown, path = ""): { path: string; a: unknown; b: unknown }[] {
  if (jsonEqual(a, b)) return [];
  const bothObjects =
    a !== null && b !== null && typeof a === "object" && typeof b === "object" && !Array.isArray(a) && !Array.isArray(b);
  if (!bothObjects) return [{ path: path || "(root)", a, b }];
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const keys = [...new Set([...Object.keys(ra), ...Object.keys(rb)])].sort();
  return keys.flatMap((k) => jsonDiff(ra[k], rb[k], path ? `${path}.${k}` : k));
}

const SECRET_KEY = /KEY|SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIAL|AUTH/i;

/**
 * Replaces secret-looking values before anything is printed or written: values under keys named like
 * Harbor's own sensitive-env pattern, and credentials embedded in URLs (proxy://user:pass@host).
 */
export function redactSecrets(value: unknown, key = ""): unknown {
  if (typeof value === "string") {
    if (key && SECRET_KEY.test(key) && !/^\$\{[A-Z0-9_]+\}$/.test(value)) return "[redacted]";
    return value.replace(/(\b[a-z][a-z0-9+.-]*:\/\/)[^/\s:@]+:[^/\s@]+@/gi, "$1[redacted]@");
  }
  if (Array.isArray(value)) return value.map((v) => redactSecrets(v, key));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactSecrets(v, k)]));
  }
  return value;
}
