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

/** Whether a trial may be one Harbor cancelled after an earlier exception: worth reading its trial.log. */
export function mayBeCancelledAfterException(r: TrialResult): boolean {
  const type = r.exception_info?.exception_type;
  return type !== undefined && type !== "CancelledError" && !r.verifier_result;
}

/**
 * Harbor cancelled this trial after it had already recorded another exception: `Trial.run` logs
 * "Trial <name> cancelled" to trial.log at DEBUG, but `_record_exception` keeps the first exception, so the
 * record says e.g. AgentTimeoutError with no verifier result (a graceful stop that landed in the verifier
 * of a timed-out trial). `harbor job resume -f CancelledError` keeps such a trial as final, unscored.
 */
export function cancelledAfterException(r: TrialResult, trialLog: string | null): boolean {
  if (!mayBeCancelledAfterException(r) || trialLog === null) return false;
  return trialLog.split("\n").some((line) => line.trimEnd() === `Trial ${r.trial_name} cancelled`);
}

/**
 * A trial interrupted with nothing recorded. `harbor run` turns SIGTERM into KeyboardInterrupt (cli/jobs.py
 * `_handle_sigterm`); when that lands while a trial's own coroutine runs, `Trial.run` catches it neither as
 * CancelledError nor as Exception, yet its `finally` still writes result.json: finished, no exception, no
 * verifier result. `harbor job resume` keeps it as final, unscored; nothing in trial.log says so. A trial
 * whose verification was switched off (or that only installed) legitimately has no verifier result.
 */
export function interruptedWithoutRecord(r: TrialResult): boolean {
  if (r.exception_info || r.verifier_result || !r.finished_at) return false;
  const config = asRecord(r.config);
  return asRecord(config.verifier).disable !== true && config.install_only !== true;
}

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

/**
 * Field names whose values are secrets, compared after normalising the spelling (`apiKey`, `API_KEY`,
 * `api-key` are all `api_key`). Exact names, not a word in the name: `tokenizer_path`, `tokenizer_mode`,
 * `max_total_tokens` or `eos_token` are no secrets. Where they come from:
 * - SGLang's ServerArgs credentials, echoed by /server_info and its start-up log (sgl-project/sglang#37499):
 *   api_key, admin_api_key, ssl_keyfile_password; vLLM's --api-key (api_key, one or more) and VLLM_API_KEY;
 * - this stack: the router's/servers' key (sglangApiKey, REPROBENCH_API_KEY in the containers), hfToken,
 *   the SSH private keys, the proxy URLs (sshPrivateKeys, proxyUpstream, proxyUrls, proxyUrl);
 * - what Harbor's agents and the model hubs read from their environment: OPENAI_API_KEY, ANTHROPIC_API_KEY,
 *   HF_TOKEN and huggingface_hub's older HUGGING_FACE_HUB_TOKEN, GITHUB_TOKEN/GH_TOKEN, AWS's secret key
 *   and session token;
 * - HTTP credentials (authorization, proxy_authorization, x_api_key) and the generic password/passwd/
 *   secret/token/access_token/auth_token/bearer_token/client_secret/private_key.
 */
export const SECRET_FIELDS: ReadonlySet<string> = new Set([
  "api_key", "api_keys", "admin_api_key", "ssl_keyfile_password", "vllm_api_key",
  "sglang_api_key", "reprobench_api_key", "hf_token", "ssh_private_key", "ssh_private_keys", "proxy_upstream", "proxy_url", "proxy_urls",
  "openai_api_key", "anthropic_api_key", "hugging_face_hub_token", "github_token", "gh_token", "aws_secret_access_key", "aws_session_token",
  "authorization", "proxy_authorization", "x_api_key",
  "password", "passwd", "secret", "token", "access_token", "auth_token", "bearer_token", "client_secret", "private_key",
]);

/** `apiKey`, `API_KEY`, `Api-Key` → `api_key`: how SECRET_FIELDS compares a field name. */
export function normalizeFieldName(key: string): string {
  return key
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/[-.\s]+/g, "_")
    .toLowerCase();
}

/** Whether a field of this name holds a secret (SECRET_FIELDS). */
export function isSecretField(key: string): boolean {
  return SECRET_FIELDS.has(normalizeFieldName(key));
}

/** Shown in place of a secret. */
export const REDACTED = "[redacted]";

/** `text` with every known secret value replaced (values shorter than 4 characters would mangle text). */
export function maskSecretValues(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const secret of secrets) if (secret && secret.length >= 4) out = out.split(secret).join(REDACTED);
  return out;
}

/** `text` with the credentials of any URL in it (scheme://user:pass@host) replaced. */
export function maskUrlCredentials(text: string): string {
  return text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/)[^/\s:@]+:[^/\s@]+@/gi, `$1${REDACTED}@`);
}

/** The model servers' secret arguments (SGLang's ServerArgs credentials; vLLM's api_key). */
const SERVER_SECRET_ARGS = ["api_key", "admin_api_key", "ssl_keyfile_password"];
const ARG_NAMES = SERVER_SECRET_ARGS.join("|");
const ARG_FLAGS = SERVER_SECRET_ARGS.map((n) => n.replace(/_/g, "-")).join("|");
const QUOTED_OR_LIST = `'[^']*'|"(?:[^"\\\\]|\\\\.)*"|\\[[^\\]]*\\]`;
const ARG_ASSIGNMENT = new RegExp(`\\b(${ARG_NAMES})=(?:${QUOTED_OR_LIST})`, "g");
const ARG_ENTRY = new RegExp(`(['"])(${ARG_NAMES})\\1:\\s*(?:${QUOTED_OR_LIST})`, "g");
const ARG_FLAG = new RegExp(`(--(?:${ARG_FLAGS}))(=|\\s+)(?!-)[^\\s'"]+`, "g");

/** How the servers spell their secret arguments in a log: field names and flags without the dashes. */
export const SECRET_ARG_SPELLINGS: readonly string[] = [...SERVER_SECRET_ARGS, ...SERVER_SECRET_ARGS.map((n) => n.replace(/_/g, "-"))];

/** Where `text` first names one of the servers' secret arguments (api_key, --api-key, …), or -1. */
export function secretArgMention(text: string): number {
  return text.search(new RegExp(`${ARG_NAMES}|${ARG_FLAGS}`));
}

/**
 * `text` with the model servers' secret arguments masked where a server prints them by name, whatever their
 * value: SGLang's start-up line `server_args=ServerArgs(..., api_key='K', admin_api_key='A', ...)`, vLLM's
 * `non-default args: {..., 'api_key': ['K'], ...}` (or `args: Namespace(..., api_key=['K'])`), the same
 * fields in JSON, and `--api-key K` on a command line. For logs read without the key's value at hand.
 */
export function maskSecretArgs(text: string): string {
  return text
    .replace(ARG_ASSIGNMENT, `$1='${REDACTED}'`)
    .replace(ARG_ENTRY, `$1$2$1: $1${REDACTED}$1`)
    .replace(ARG_FLAG, `$1$2${REDACTED}`);
}

/** Free text (a log line, an error message) with its secrets masked: by value, by argument name, URL credentials. */
export function maskText(text: string, secrets: readonly string[] = []): string {
  return maskUrlCredentials(maskSecretArgs(maskSecretValues(text, secrets)));
}

/**
 * Replaces secrets before anything is printed or written: every value under a known secret field
 * (SECRET_FIELDS; a `${VAR}` placeholder stays, it names the variable, not its value), and in every other
 * string what maskText masks: each of `secrets` (the values this caller knows, such as the stack's API
 * key), the servers' secret arguments quoted by name, the credentials of any URL.
 */
export function redactSecrets(value: unknown, opts: { secrets?: readonly string[] } = {}): unknown {
  const secrets = opts.secrets ?? [];
  const visit = (v: unknown, secretField: boolean): unknown => {
    if (typeof v === "string") {
      if (secretField && !/^\$\{[A-Z0-9_]+\}$/.test(v)) return REDACTED;
      return maskText(v, secrets);
    }
    if (Array.isArray(v)) return v.map((item) => visit(item, secretField));
    if (v !== null && typeof v === "object") {
      return Object.fromEntries(Object.entries(v).map(([k, item]) => [k, visit(item, secretField || isSecretField(k))]));
    }
    return v;
  };
  return visit(value, false);
}
