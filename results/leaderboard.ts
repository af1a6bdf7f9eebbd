// Terminal-Bench leaderboard checks, as strict as the submission rules are written (results/LEADERBOARD.md
// lists every rule with its source). Every rule is an error; warnings only say what cannot be verified here.
// The checks are pure over a SubmissionTree (a listing plus a reader); readSubmissionTree gives one from disk.
import * as fs from "node:fs";
import * as path from "node:path";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { asArray, asRecord, HarborConfig, jsonEqual, TrialResultSchema } from "./harbor";

// ---------------------------------------------------------------------------------------------------------
// Sources and rules

export const SOURCES = {
  README: "harborframework/terminal-bench-2-leaderboard README (Hugging Face dataset): layout, metadata.yaml, Validation Rules",
  INTEGRITY: "harbor-framework/terminal-bench-docs content/blog/leaderboard-integrity-update.mdx (2026-04-19)",
  ATIF: "harbor-docs content/docs/agents/trajectory-format.mdx; harbor 0.21.0 harbor/utils/trajectory_validator.py + harbor/models/trajectories/",
  UPLOADER: "harbor 0.21.0 harbor/upload/uploader.py (archive allowlist; a trial's lock.json is required)",
  HARBOR: "harbor 0.21.0 harbor/job.py, harbor/trial/trial.py, harbor/models/job/{result,lock}.py, harbor/models/trial/{config,result}.py",
  TB1: "laude-institute/terminal-bench-leaderboard README (TB 1.0): no API keys or proprietary system prompts in logs",
  SEED004: "seed 004 (a submitter's write-up: practice, not a published rule)",
} as const;
export type SourceId = keyof typeof SOURCES;

export const RULES = {
  "wrong-level": { title: "validate is pointed at the <agent>__<model> folder", sources: ["README"] },
  layout: { title: "submissions/terminal-bench/<version>/<agent>__<model(s)>/ with metadata.yaml and job folders only", sources: ["README"] },
  metadata: { title: "metadata.yaml with agent_url, agent_display_name, agent_org_display_name and models[]", sources: ["README"] },
  "job-files": { title: "every job folder has a valid config.json and result.json", sources: ["README", "HARBOR"] },
  "job-complete": { title: "the job and its trials finished (finished_at set)", sources: ["HARBOR"] },
  "lock-present": { title: "lock.json in the job folder and in every trial folder", sources: ["UPLOADER", "HARBOR"] },
  "run-conditions": { title: "timeout multipliers 1.0, no agent/verifier timeout or resource overrides", sources: ["README", "INTEGRITY"] },
  "config-consistency": { title: "config.json, result.json's config, lock.json and the job's config and lock agree", sources: ["HARBOR", "INTEGRITY"] },
  "dataset-complete": { title: "every task of the dataset is present, unfiltered", sources: ["README"] },
  "trials-per-task": { title: "at least 5 trials per task", sources: ["README"] },
  "trial-result": { title: "every trial folder has a valid result.json", sources: ["README", "HARBOR"] },
  "trial-artifacts": { title: "every trial folder holds the run's other artifacts", sources: ["README", "HARBOR"] },
  allowlist: { title: "only the files Harbor writes (its upload allowlist); no leftovers", sources: ["UPLOADER", "SEED004"] },
  "duplicate-trials": { title: "no trial or job counted twice; trial folder = its trial_name", sources: ["HARBOR"] },
  "job-counts": { title: "trial counts, reward and exception lists match the job's result.json", sources: ["HARBOR"] },
  "stale-job": { title: "every job folder is the agent and model of metadata.yaml", sources: ["README", "SEED004"] },
  trajectory: { title: "a valid ATIF trajectory for every passing trial", sources: ["INTEGRITY", "ATIF"] },
  "no-tb-access": { title: "no access to the Terminal-Bench website or repository", sources: ["README"] },
  "no-secrets": { title: "no API keys, tokens or credentials anywhere in the tree", sources: ["TB1", "UPLOADER"] },
  "no-system-prompt": { title: "no proprietary system prompt (leave the field empty, not \"REDACTED\")", sources: ["TB1", "SEED004"] },
} as const satisfies Record<string, { title: string; sources: readonly SourceId[] }>;
export type RuleId = keyof typeof RULES;

// ---------------------------------------------------------------------------------------------------------
// Run conditions (also used by the audit)

const MULTIPLIERS = [
  "timeout_multiplier",
  "agent_timeout_multiplier",
  "verifier_timeout_multiplier",
  "agent_setup_timeout_multiplier",
  "environment_build_timeout_multiplier",
] as const;
const AGENT_TIMEOUT_OVERRIDES = ["override_timeout_sec", "override_setup_timeout_sec", "max_timeout_sec"] as const;
const VERIFIER_TIMEOUT_OVERRIDES = ["override_timeout_sec", "max_timeout_sec"] as const;
const RESOURCE_OVERRIDES = ["override_cpus", "override_memory_mb", "override_storage_mb", "override_gpus"] as const;

const isSet = (v: unknown): boolean => v !== undefined && v !== null;

/**
 * Where a job or trial config (or a trial lock) departs from leaderboard conditions: any timeout
 * multiplier other than 1.0, any agent/verifier timeout override, any resource override. Works for
 * JobConfig (`agents[]`) and TrialConfig/TrialLock (`agent`).
 */
export function configDeviations(config: HarborConfig): string[] {
  const out: string[] = [];
  for (const m of MULTIPLIERS) {
    const v = config[m];
    if (isSet(v) && v !== 1) out.push(`${m} is ${JSON.stringify(v)} (leaderboard requires 1.0)`);
  }
  const agents: [string, Record<string, unknown>][] = config.agent
    ? [["agent", asRecord(config.agent)]]
    : asArray(config.agents).map((a, i) => [`agents[${i}]`, asRecord(a)]);
  for (const [where, agent] of agents) {
    for (const f of AGENT_TIMEOUT_OVERRIDES) {
      if (isSet(agent[f])) out.push(`${where}.${f} is ${JSON.stringify(agent[f])} (no timeout overrides allowed)`);
    }
  }
  const verifier = asRecord(config.verifier);
  for (const f of VERIFIER_TIMEOUT_OVERRIDES) {
    if (isSet(verifier[f])) out.push(`verifier.${f} is ${JSON.stringify(verifier[f])} (no timeout overrides allowed)`);
  }
  const env = asRecord(config.environment);
  for (const f of RESOURCE_OVERRIDES) {
    if (isSet(env[f])) out.push(`environment.${f} is ${JSON.stringify(env[f])} (no resource overrides allowed)`);
  }
  return out;
}

/** The fields two records of one trial's configuration must agree on, with Harbor's defaults filled in. */
const CONSISTENCY_FIELDS: [string, unknown][] = [
  ["timeout_multiplier", 1.0],
  ["agent_timeout_multiplier", null],
  ["verifier_timeout_multiplier", null],
  ["agent_setup_timeout_multiplier", null],
  ["environment_build_timeout_multiplier", null],
  ["agent.name", null],
  ["agent.model_name", null],
  ["agent.override_timeout_sec", null],
  ["agent.override_setup_timeout_sec", null],
  ["agent.max_timeout_sec", null],
  ["agent.extra_allowed_hosts", []],
  ["agent.kwargs", {}],
  ["environment.type", "docker"],
  ["environment.override_cpus", null],
  ["environment.override_memory_mb", null],
  ["environment.override_storage_mb", null],
  ["environment.override_gpus", null],
  ["environment.extra_allowed_hosts", []],
  ["verifier.override_timeout_sec", null],
  ["verifier.max_timeout_sec", null],
  ["verifier.disable", false],
];

function dig(v: Record<string, unknown>, dotted: string): unknown {
  let cur: unknown = v;
  for (const k of dotted.split(".")) cur = asRecord(cur)[k];
  return cur;
}

/** A TrialConfig/TrialLock (or a JobConfig with one of its agents) reduced to the consistency fields. */
export function runView(config: HarborConfig, agent?: Record<string, unknown>): Record<string, unknown> {
  const source = agent ? { ...config, agent } : config;
  return Object.fromEntries(CONSISTENCY_FIELDS.map(([f, dflt]) => [f, dig(source, f) ?? dflt]));
}

function viewDiff(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  return Object.keys(a).filter((k) => !jsonEqual(a[k], b[k]));
}

// ---------------------------------------------------------------------------------------------------------
// The tree being checked

export interface TreeEntry {
  /** Path relative to the submission folder, with "/" separators. */
  rel: string;
  kind: "file" | "dir" | "symlink" | "other";
  size: number;
}

export interface SubmissionTree {
  /** The folder's own name (<agent>__<model>). */
  name: string;
  /** Names of the folders above it, nearest last (…, "submissions", "terminal-bench", "2.0"). */
  ancestors: string[];
  entries: TreeEntry[];
  /** Text of a file of the tree, or null when it is missing or unreadable. */
  read(rel: string): string | null;
}

const MAX_READ_BYTES = 256 * 1024 * 1024;

/** Lists a folder on disk (symlinks are listed, never followed) and reads its files on demand. */
export function readSubmissionTree(dir: string): SubmissionTree {
  const abs = path.resolve(dir);
  if (!fs.existsSync(abs) || !fs.statSync(abs).isDirectory()) throw new Error(`${dir}: not a directory`);
  const entries: TreeEntry[] = [];
  const walk = (rel: string): void => {
    for (const e of fs.readdirSync(path.join(abs, rel), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isSymbolicLink()) entries.push({ rel: r, kind: "symlink", size: 0 });
      else if (e.isDirectory()) {
        entries.push({ rel: r, kind: "dir", size: 0 });
        walk(r);
      } else if (e.isFile()) entries.push({ rel: r, kind: "file", size: fs.statSync(path.join(abs, r)).size });
      else entries.push({ rel: r, kind: "other", size: 0 });
    }
  };
  walk("");
  const files = new Map(entries.filter((e) => e.kind === "file").map((e) => [e.rel, e]));
  return {
    name: path.basename(abs),
    ancestors: path.dirname(abs).split(path.sep).filter(Boolean),
    entries,
    read(rel) {
      const e = files.get(rel);
      if (!e || e.size > MAX_READ_BYTES) return null;
      try {
        return fs.readFileSync(path.join(abs, rel), "utf8");
      } catch {
        return null;
      }
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// ATIF (the rules of Harbor 0.21.0's pydantic models: extra fields forbidden, agent and steps required, …)

const ISO_TIME = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}(?::?\d{2}(?::?\d{2}(?:[.,]\d+)?)?)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?$/;
const optional = <T extends z.ZodTypeAny>(t: T) => t.nullable().optional();
const extra = optional(z.record(z.unknown()));
const int = z.number().int();
const timestamp = optional(z.string().refine((s) => ISO_TIME.test(s) && !Number.isNaN(Date.parse(s.replace(" ", "T"))), "not an ISO 8601 timestamp"));

const ContentPart = z
  .object({
    type: z.enum(["text", "image"]),
    text: optional(z.string()),
    source: optional(z.object({ media_type: z.enum(["image/jpeg", "image/png", "image/gif", "image/webp"]), path: z.string() }).strict()),
  })
  .strict()
  .superRefine((p, ctx) => {
    const has = (v: unknown): boolean => v !== undefined && v !== null;
    if (p.type === "text" && (!has(p.text) || has(p.source))) ctx.addIssue({ code: "custom", message: "a text part has 'text' and no 'source'" });
    if (p.type === "image" && (!has(p.source) || has(p.text))) ctx.addIssue({ code: "custom", message: "an image part has 'source' and no 'text'" });
  });
const Content = z.union([z.string(), z.array(ContentPart)]);
const ToolCall = z.object({ tool_call_id: z.string(), function_name: z.string(), arguments: z.record(z.unknown()), extra }).strict();
const SubagentRef = z
  .object({ trajectory_id: optional(z.string()), session_id: optional(z.string()), trajectory_path: optional(z.string()), extra })
  .strict()
  .refine((r) => isSet(r.trajectory_id) || isSet(r.trajectory_path), "a subagent reference needs trajectory_id or trajectory_path");
const ObservationResult = z
  .object({ source_call_id: optional(z.string()), content: optional(Content), subagent_trajectory_ref: optional(z.array(SubagentRef)), extra })
  .strict();
const Metrics = z
  .object({
    prompt_tokens: optional(int),
    completion_tokens: optional(int),
    cached_tokens: optional(int),
    cost_usd: optional(z.number()),
    prompt_token_ids: optional(z.array(int)),
    completion_token_ids: optional(z.array(int)),
    logprobs: optional(z.array(z.number())),
    extra,
  })
  .strict();
const AGENT_ONLY = ["model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics"] as const;
const Step = z
  .object({
    step_id: int.min(1),
    timestamp,
    source: z.enum(["system", "user", "agent"]),
    model_name: optional(z.string()),
    reasoning_effort: optional(z.union([z.string(), z.number()])),
    message: Content,
    reasoning_content: optional(z.string()),
    tool_calls: optional(z.array(ToolCall)),
    observation: optional(z.object({ results: z.array(ObservationResult) }).strict()),
    metrics: optional(Metrics),
    is_copied_context: optional(z.boolean()),
    llm_call_count: optional(int.min(0)),
    extra,
  })
  .strict()
  .superRefine((s, ctx) => {
    if (s.source !== "agent") {
      for (const f of AGENT_ONLY) if (isSet(s[f])) ctx.addIssue({ code: "custom", path: [f], message: `only allowed on agent steps (source is '${s.source}')` });
    }
    if (s.source === "agent" && s.llm_call_count === 0) {
      for (const f of ["metrics", "reasoning_content"] as const) if (isSet(s[f])) ctx.addIssue({ code: "custom", path: [f], message: "must be absent when llm_call_count is 0" });
    }
    const ids = new Set((s.tool_calls ?? []).map((t) => t.tool_call_id));
    (s.observation?.results ?? []).forEach((r, i) => {
      if (isSet(r.source_call_id) && !ids.has(r.source_call_id!)) {
        ctx.addIssue({ code: "custom", path: ["observation", "results", i, "source_call_id"], message: `'${r.source_call_id}' is not a tool_call_id of this step` });
      }
    });
  });
const FinalMetrics = z
  .object({
    total_prompt_tokens: optional(int),
    total_completion_tokens: optional(int),
    total_cached_tokens: optional(int),
    total_cost_usd: optional(z.number()),
    total_steps: optional(int.min(0)),
    extra,
  })
  .strict();
const SCHEMA_VERSIONS = ["ATIF-v1.0", "ATIF-v1.1", "ATIF-v1.2", "ATIF-v1.3", "ATIF-v1.4", "ATIF-v1.5", "ATIF-v1.6", "ATIF-v1.7"] as const;

interface AtifTrajectory {
  steps: { step_id: number }[];
  subagent_trajectories?: ({ trajectory_id?: string | null } & AtifTrajectory)[] | null;
}
// Built once; only the recursion into subagent trajectories is lazy (a lazy root would rebuild every parse).
const Trajectory: z.ZodType<AtifTrajectory> = z
  .object({
    schema_version: z.enum(SCHEMA_VERSIONS).optional(),
    session_id: optional(z.string()),
    trajectory_id: optional(z.string()),
    agent: z.object({ name: z.string(), version: z.string(), model_name: optional(z.string()), tool_definitions: optional(z.array(z.record(z.unknown()))), extra }).strict(),
    steps: z.array(Step).min(1),
    notes: optional(z.string()),
    final_metrics: optional(FinalMetrics),
    continued_trajectory_ref: optional(z.string()),
    extra,
    subagent_trajectories: optional(z.array(z.lazy(() => Trajectory))),
  })
  .strict()
  .superRefine((t, ctx) => {
    t.steps.forEach((s, i) => {
      if (s.step_id !== i + 1) ctx.addIssue({ code: "custom", path: ["steps", i, "step_id"], message: `expected ${i + 1} (sequential from 1), got ${s.step_id}` });
    });
    const seen = new Set<string>();
    (t.subagent_trajectories ?? []).forEach((sub, i) => {
      const id = (sub as { trajectory_id?: string | null }).trajectory_id;
      if (!isSet(id)) ctx.addIssue({ code: "custom", path: ["subagent_trajectories", i, "trajectory_id"], message: "required for embedded subagents" });
      else if (seen.has(id!)) ctx.addIssue({ code: "custom", path: ["subagent_trajectories", i, "trajectory_id"], message: `'${id}' is not unique` });
      else seen.add(id!);
    });
  });

/** Why a trajectory is not valid ATIF (empty when it is), in "trajectory.<path>: <problem>" form. */
export function atifErrors(text: string): string[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return [`not JSON (${err instanceof Error ? err.message : String(err)})`];
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return ["trajectory must be a JSON object"];
  const parsed = Trajectory.safeParse(value);
  if (parsed.success) return [];
  return parsed.error.issues.map((i) => {
    const where = ["trajectory", ...i.path].join(".");
    const message = i.code === "unrecognized_keys" ? `unexpected field(s) ${i.keys.join(", ")} (not part of ATIF)` : i.message === "Required" ? "required field is missing" : i.message;
    return `${where}: ${message}`;
  });
}

// ---------------------------------------------------------------------------------------------------------
// Secrets, system prompts, Terminal-Bench references

export interface SecretFinding {
  file: string;
  /** JSON/YAML field path, or "line N". */
  field: string;
  kind: "secret" | "system-prompt";
  /** What was found, with the value masked. */
  what: string;
}

/** Token formats that are credentials wherever they appear (vendor API keys, tokens, private keys). */
const TOKEN_PATTERNS: [string, RegExp][] = [
  ["an OpenAI/Anthropic-style API key", /\bsk-(?:proj-|ant-[a-z0-9]+-|live-)?[A-Za-z0-9_-]{20,}/g],
  ["a Hugging Face token", /\bhf_[A-Za-z0-9]{30,}\b/g],
  ["a GitHub token", /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})\b/g],
  ["an AWS access key id", /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g],
  ["a Google API key", /\bAIza[0-9A-Za-z_-]{35}\b/g],
  ["a Slack token", /\bxox[abposr]-[A-Za-z0-9-]{10,}/g],
  ["a private key", /-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----/g],
  ["a bearer token", /\bBearer\s+[A-Za-z0-9._~+/-]{24,}=*/g],
];
/** scheme://user:password@host — a credential unless the password is a placeholder. */
const URL_CREDENTIALS = /\b[a-z][a-z0-9+.-]*:\/\/([^\s/:@"']+):([^\s/@"']+)@/gi;
/** Field names whose values are credentials (Harbor's own sensitive-env pattern, narrowed to whole words). */
const SECRET_FIELD = /(?:^|[_.-])(?:api[_-]?key|apikey|secret(?:[_-]?key)?|access[_-]?key|private[_-]?key|token|access[_-]?token|auth[_-]?token|password|passwd|credentials?|authorization)$/i;
/** KEY=value / key: value in logs and dotfiles. */
const SECRET_ASSIGNMENT = /(?:^|[\s"'{,;])([A-Za-z0-9_.-]*(?:api[_-]?key|apikey|secret|token|password|passwd|credentials?))["']?\s*[=:]\s*["']?([^\s"',}]+)/gim;
/** Values that stand in for a secret rather than being one (Harbor writes ${VAR} templates and abcd****xyz). */
const PLACEHOLDER = /^(?:\$\{[^}]+\}|\$[A-Z_][A-Z0-9_]*|.*\*{3,}.*|\[?redacted\]?|<[^>]*>|empty|none|null|nil|dummy|fake|test|x+|not[-_ ]?(?:needed|set|used)|sk-(?:placeholder|dummy|fake|test|no-key|none|x+))$/i;

const isPlaceholder = (v: string): boolean => PLACEHOLDER.test(v.trim()) || v.trim().length < 8;
const mask = (v: string): string => (v.length <= 8 ? "****" : `${v.slice(0, 4)}…(${v.length} chars)`);

function lineOf(text: string, index: number): number {
  let n = 1;
  for (let i = 0; i < index && i < text.length; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
}

const isSystemPromptField = (key: string): boolean => /(?:systemprompt|systemmessage)s?$/.test(key.toLowerCase().replace(/[_-]/g, ""));

function tokenFindings(file: string, text: string, field: (index: number) => string): SecretFinding[] {
  return TOKEN_PATTERNS.flatMap(([label, re]) => [...text.matchAll(re)].map((m) => ({ file, field: field(m.index!), kind: "secret" as const, what: `${label} (${mask(m[0])})` })));
}

function urlCredentialFindings(file: string, text: string, field: (index: number) => string): SecretFinding[] {
  return [...text.matchAll(URL_CREDENTIALS)]
    .filter((m) => !isPlaceholder(m[2]) && !/^\[?redacted\]?$/i.test(m[1]))
    .map((m) => ({ file, field: field(m.index!), kind: "secret" as const, what: `a password in a URL (${m[1]}:${mask(m[2])}@…)` }));
}

/**
 * Secrets and system prompts in a parsed JSON/YAML value, by field path. `fieldChecks` says where a field's
 * name decides (credential fields, system prompts) and passwords in URLs count; token formats count everywhere.
 */
export function structuredFindings(file: string, value: unknown, fieldChecks: (fieldPath: string) => boolean = () => true): SecretFinding[] {
  const out: SecretFinding[] = [];
  const walk = (v: unknown, at: string, key: string): void => {
    if (typeof v === "string") {
      const named = fieldChecks(at);
      if (named && key && isSystemPromptField(key) && v.trim() !== "") {
        out.push({ file, field: at, kind: "system-prompt", what: /^\[?redacted\]?$/i.test(v.trim()) ? `"${v.trim()}" (leave it empty instead)` : `a ${v.length}-character system prompt` });
      } else if (named && key && SECRET_FIELD.test(key) && !isPlaceholder(v)) {
        out.push({ file, field: at, kind: "secret", what: `a value under '${key}' (${mask(v)})` });
      } else {
        out.push(...tokenFindings(file, v, () => at));
        if (named) out.push(...urlCredentialFindings(file, v, () => at));
      }
    } else if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${at}[${i}]`, key));
    else if (v !== null && typeof v === "object") for (const [k, x] of Object.entries(v)) walk(x, at ? `${at}.${k}` : k, k);
  };
  walk(value, "", "");
  return out;
}

/**
 * Secrets in a file's text. Harbor's records and anything that is not run output get the full scan
 * (credential fields, KEY=value, passwords in URLs, token formats); run output (agent/, verifier/,
 * artifacts/ — task content the agent read and wrote) gets the token formats only, and for trajectories
 * also the fields of the agent's record, where Terminus-2 copies its llm_kwargs.
 */
export function findSecrets(file: string, text: string, scope: "full" | "run-output"): SecretFinding[] {
  let parsed: unknown;
  if (/\.(json|ya?ml)$/.test(file)) {
    try {
      parsed = /\.json$/.test(file) ? JSON.parse(text) : parseYaml(text);
    } catch {
      parsed = undefined;
    }
  }
  if (parsed !== null && typeof parsed === "object") {
    return structuredFindings(file, parsed, scope === "full" ? () => true : (at) => at.startsWith("agent."));
  }
  const line = (index: number): string => `line ${lineOf(text, index)}`;
  const out = tokenFindings(file, text, line);
  if (scope === "run-output") return out;
  for (const m of text.matchAll(SECRET_ASSIGNMENT)) {
    if (!isPlaceholder(m[2])) out.push({ file, field: line(m.index!), kind: "secret", what: `${m[1]}=${mask(m[2])}` });
  }
  // One finding per line: a key assignment that is also a known token format is one secret.
  const all = [...out, ...urlCredentialFindings(file, text, line)];
  return all.filter((f, i) => all.findIndex((g) => g.field === f.field) === i);
}

/** The Terminal-Bench website and its task repositories (agents may not reach them). */
const TB_REFERENCE = /\b(?:(?:www\.)?tbench\.ai|(?:github\.com|raw\.githubusercontent\.com|codeload\.github\.com)\/(?:laude-institute|harbor-framework)\/terminal-bench[\w.-]*|huggingface\.co\/datasets\/(?:harborframework|laude-institute)\/terminal-bench[\w.-]*)/gi;

/** Where a text names the Terminal-Bench site or repository: "line N: <match>". */
export function terminalBenchReferences(text: string): string[] {
  return [...text.matchAll(TB_REFERENCE)].map((m) => `line ${lineOf(text, m.index!)}: ${m[0]}`);
}

// ---------------------------------------------------------------------------------------------------------
// Score

export interface ScoredTrial {
  task: string;
  reward: number | null;
  errored: boolean;
  startedAt: string | null;
}

export interface ScoreSummary {
  trials: number;
  tasks: number;
  passed: number;
  zeroReward: number;
  errors: number;
  /** Mean reward over every trial, a missing reward counted as 0 (Harbor's Mean metric). */
  score: number | null;
  /** 95 % CI half-widths (1.96 · standard error), by method; null where a method does not apply. */
  ci: { binomial: number | null; clusteredByTask: number | null; attemptRuns: number | null };
  /** Number of attempt-runs (the i-th trial of every task forms run i). */
  attemptRuns: number;
}

const Z95 = 1.96;

function sampleSd(xs: number[]): number | null {
  if (xs.length < 2) return null;
  const m = xs.reduce((a, b) => a + b, 0) / xs.length;
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1));
}

/**
 * Score and its 95 % CI half-width three ways, because the board prints accuracy ± 1.96·stderr without
 * saying which stderr: binomial over trials, clustered by task (sd of the task means / √tasks), and over
 * the k attempt-runs (sd of the run scores / √k).
 */
export function summarizeScore(trials: readonly ScoredTrial[]): ScoreSummary {
  const n = trials.length;
  const rewardOf = (t: ScoredTrial): number => t.reward ?? 0;
  const byTask = new Map<string, ScoredTrial[]>();
  for (const t of trials) byTask.set(t.task, [...(byTask.get(t.task) ?? []), t]);
  const score = n ? trials.reduce((a, t) => a + rewardOf(t), 0) / n : null;
  const taskMeans = [...byTask.values()].map((ts) => ts.reduce((a, t) => a + rewardOf(t), 0) / ts.length);
  const k = Math.max(0, ...[...byTask.values()].map((ts) => ts.length));
  const runs: number[] = [];
  for (let i = 0; i < k; i++) {
    const ith = [...byTask.values()]
      .map((ts) => [...ts].sort((a, b) => (a.startedAt ?? "").localeCompare(b.startedAt ?? ""))[i])
      .filter((t): t is ScoredTrial => t !== undefined);
    runs.push(ith.reduce((a, t) => a + rewardOf(t), 0) / ith.length);
  }
  const sdTasks = sampleSd(taskMeans);
  const sdRuns = sampleSd(runs);
  return {
    trials: n,
    tasks: byTask.size,
    passed: trials.filter((t) => (t.reward ?? 0) > 0).length,
    zeroReward: trials.filter((t) => (t.reward ?? 0) === 0).length,
    errors: trials.filter((t) => t.errored).length,
    score,
    ci: {
      binomial: score === null ? null : Z95 * Math.sqrt((score * (1 - score)) / n),
      clusteredByTask: sdTasks === null ? null : (Z95 * sdTasks) / Math.sqrt(taskMeans.length),
      attemptRuns: sdRuns === null ? null : (Z95 * sdRuns) / Math.sqrt(runs.length),
    },
    attemptRuns: k,
  };
}

const pp = (x: number | null): string => (x === null ? "n/a" : `±${(x * 100).toFixed(1)} pp`);

/** The official-like summary lines (seed 004's validation output, with every CI method labelled). */
export function summaryLines(v: LeaderboardVerdict): string[] {
  const s = v.score;
  return [
    `official_like_errors: ${v.violations.length}`,
    `jobs: ${v.counts.jobs}`,
    `trials: ${s.trials}`,
    `tasks: ${s.tasks}`,
    `passed: ${s.passed}`,
    `zero-reward: ${s.zeroReward}`,
    `errors (trials with an exception): ${s.errors}`,
    `score: ${s.score === null ? "n/a" : `${(s.score * 100).toFixed(1)}% (mean reward over ${s.trials} trials)`}`,
    `95% CI half-width, binomial over ${s.trials} trials: ${pp(s.ci.binomial)}`,
    `95% CI half-width, clustered by task (${s.tasks} tasks): ${pp(s.ci.clusteredByTask)}`,
    `95% CI half-width, over the ${s.attemptRuns} attempt-runs: ${pp(s.ci.attemptRuns)}`,
  ];
}

// ---------------------------------------------------------------------------------------------------------
// Datasets

export const MIN_TRIALS_PER_TASK = 5;
export const METADATA_FIELDS = ["agent_url", "agent_display_name", "agent_org_display_name"] as const;
export const MODEL_FIELDS = ["model_name", "model_provider", "model_display_name", "model_org_display_name"] as const;

/** What the tasks of the dataset are: their names, or only how many there are. */
export interface DatasetExpectation {
  label: string;
  names?: string[];
  count?: number;
}

/** Registry datasets whose size is published (terminal-bench@2.0: 89 tasks, 445 trials at -k 5). */
const KNOWN_DATASETS: { match: (d: Record<string, unknown>) => boolean; label: string; count: number }[] = [
  {
    label: "terminal-bench@2.0",
    count: 89,
    match: (d) => /^(?:[\w.-]+\/)?terminal-bench(?:-2)?$/.test(String(d.name ?? "")) && ["2.0", "v2.0"].includes(String(d.version ?? d.ref ?? "")),
  },
];

const lastSegment = (name: string): string => name.split("/").pop()!.toLowerCase();

// ---------------------------------------------------------------------------------------------------------
// The check

export interface Violation {
  kind: "structure" | "conditions";
  rule: RuleId;
  sources: readonly SourceId[];
  message: string;
  /** Paths affected (identical findings are grouped, so 445 of them read as one). */
  where: string[];
}

export interface LeaderboardVerdict {
  label: "submission" | "reproduction" | "invalid";
  summary: string;
  violations: Violation[];
  warnings: string[];
  counts: { jobs: number; trials: number; tasks: number; passed: number };
  score: ScoreSummary;
  /** Job folder names found in the submission. */
  jobs: string[];
}

export interface CheckOptions {
  /** The dataset's tasks as given by `--dataset`. */
  dataset?: DatasetExpectation;
  /** Lists a local dataset's task names (for a job run with `-p DIR`), or null when it is not readable here. */
  localDatasetTasks?: (datasetPath: string) => string[] | null;
}

class Findings {
  readonly violations: Violation[] = [];
  readonly warnings: string[] = [];
  add(rule: RuleId, message: string, where: string): void {
    const existing = this.violations.find((v) => v.rule === rule && v.message === message);
    if (existing) {
      if (!existing.where.includes(where)) existing.where.push(where);
    }
    else this.violations.push({ kind: rule === "run-conditions" ? "conditions" : "structure", rule, sources: RULES[rule].sources, message, where: [where] });
  }
}

interface ParsedTrial {
  job: string;
  dir: string;
  where: string;
  result: z.infer<typeof TrialResultSchema> | null;
  config: HarborConfig | null;
  lock: HarborConfig | null;
}

interface ParsedJob {
  name: string;
  config: HarborConfig | null;
  lock: HarborConfig | null;
  result: Record<string, unknown> | null;
  trials: ParsedTrial[];
}

export const JOB_ALLOWLIST = ["config.json", "lock.json", "result.json", "analysis.md", "job.log"] as const;
export const TRIAL_ALLOWLIST = ["config.json", "lock.json", "result.json", "analysis.md", "agent", "verifier", "artifacts", "trial.log", "exception.txt"] as const;
export const STEP_ALLOWLIST = ["agent", "verifier", "artifacts"] as const;
/** Files in a trial that are Harbor's records rather than run output (full secret scan). */
const RUN_OUTPUT_DIRS = new Set(["agent", "verifier", "artifacts", "steps"]);

function parseJson(text: string | null): { value: Record<string, unknown> } | { error: string } | null {
  if (text === null) return null;
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === "object" && !Array.isArray(v) ? { value: v as Record<string, unknown> } : { error: "not a JSON object" };
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) };
  }
}

/** When the folder is a job, a trial or a parent of submissions rather than one submission: the hint. */
export function wrongLevelHint(tree: SubmissionTree): string | null {
  const top = new Set(tree.entries.filter((e) => !e.rel.includes("/")).map((e) => e.rel));
  if (top.has("metadata.yaml")) return null;
  const childDirs = tree.entries.filter((e) => e.kind === "dir" && !e.rel.includes("/")).map((e) => e.rel);
  const hasFile = (rel: string): boolean => tree.entries.some((e) => e.rel === rel && e.kind === "file");
  if (hasFile("config.json") && (hasFile("result.json") || hasFile("lock.json"))) {
    const trials = childDirs.filter((d) => hasFile(`${d}/result.json`)).length;
    if (trials > 0 || hasFile("lock.json")) {
      return `'${tree.name}' is a Harbor job folder (${trials} trial folders), not a submission: point validate at the <agent>__<model>/ folder that holds metadata.yaml and this job folder, or make one with \`reprobench pack ${tree.name} --out DIR --agent NAME --model NAME\``;
    }
  }
  if (hasFile("result.json") && (top.has("agent") || top.has("verifier"))) {
    return `'${tree.name}' is a trial folder; point validate at the <agent>__<model>/ folder two levels up`;
  }
  const submissions = tree.entries.filter((e) => e.kind === "file" && e.rel.endsWith("/metadata.yaml")).map((e) => e.rel.slice(0, -"/metadata.yaml".length));
  if (submissions.length) {
    const shown = submissions.slice(0, 5).map((s) => `${tree.name}/${s}`).join(", ");
    return `'${tree.name}' holds ${submissions.length} submission folder(s); validate one at a time: ${shown}${submissions.length > 5 ? ", …" : ""}`;
  }
  return null;
}

/** Runs every rule over a submission folder; each violation names its rule and its sources. */
export function checkSubmission(tree: SubmissionTree, opts: CheckOptions = {}): LeaderboardVerdict {
  const f = new Findings();
  const hint = wrongLevelHint(tree);
  if (hint) {
    f.add("wrong-level", hint, tree.name);
    return verdict(f, [], []);
  }
  checkLayout(tree, f);
  const metadata = checkMetadata(tree.read("metadata.yaml"), f);
  const jobs = readJobs(tree, f);
  for (const job of jobs) checkJob(job, f);
  const trials = jobs.flatMap((j) => j.trials);
  checkDataset(jobs, opts, f);
  checkTrialsPerTask(trials, f);
  checkDuplicates(jobs, f);
  checkStaleJobs(jobs, metadata, f);
  checkTrees(tree, jobs, f);
  return verdict(f, jobs, trials);
}

function verdict(f: Findings, jobs: ParsedJob[], trials: ParsedTrial[]): LeaderboardVerdict {
  const scored = trials.filter((t) => t.result).map((t) => ({
    task: t.result!.task_name,
    reward: t.result!.verifier_result?.rewards?.reward ?? null,
    errored: Boolean(t.result!.exception_info),
    startedAt: t.result!.started_at ?? null,
  }));
  const score = summarizeScore(scored);
  const structural = f.violations.some((v) => v.kind === "structure");
  const conditions = f.violations.filter((v) => v.kind === "conditions");
  const label = structural ? "invalid" : conditions.length ? "reproduction" : "submission";
  const summary =
    label === "submission"
      ? "passes every leaderboard rule checked here (results/LEADERBOARD.md)"
      : label === "reproduction"
        ? `a reproduction, not a leaderboard submission: ${[...new Set(conditions.map((c) => c.message))].slice(0, 3).join("; ")}`
        : `not a valid submission: ${f.violations.length} rule violation(s) (${[...new Set(f.violations.map((v) => v.rule))].join(", ")})`;
  return {
    label,
    summary,
    violations: f.violations,
    warnings: f.warnings,
    counts: { jobs: jobs.length, trials: score.trials, tasks: score.tasks, passed: score.passed },
    score,
    jobs: jobs.map((j) => j.name),
  };
}

function checkLayout(tree: SubmissionTree, f: Findings): void {
  const [version, bench, submissions] = [...tree.ancestors].reverse();
  if (submissions !== "submissions" || bench !== "terminal-bench" || !/^\d+\.\d+$/.test(version ?? "")) {
    const at = [...tree.ancestors.slice(-3), tree.name].join("/");
    f.add("layout", `the folder must sit at submissions/terminal-bench/<version>/${tree.name} of the leaderboard repository (it is at …/${at})`, tree.name);
  }
  const parts = tree.name.split("__");
  if (parts.length < 2 || parts.some((p) => p.trim() === "")) f.add("layout", `folder name '${tree.name}' is not <agent>__<model(s)>`, tree.name);
  for (const e of tree.entries.filter((x) => !x.rel.includes("/"))) {
    if (e.kind === "file" && e.rel !== "metadata.yaml") f.add("layout", "only metadata.yaml and job folders belong in a submission folder", e.rel);
  }
}

interface Metadata {
  models: { model_name: string; model_provider: string }[];
  agentName: string | null;
}

function checkMetadata(text: string | null, f: Findings): Metadata | null {
  if (text === null) {
    f.add("metadata", "metadata.yaml missing", "metadata.yaml");
    return null;
  }
  let meta: Record<string, unknown>;
  try {
    meta = asRecord(parseYaml(text));
  } catch (err) {
    f.add("metadata", `metadata.yaml does not parse: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}`, "metadata.yaml");
    return null;
  }
  const filled = (v: unknown): boolean => typeof v === "string" && v.trim() !== "";
  for (const field of METADATA_FIELDS) if (!filled(meta[field])) f.add("metadata", `metadata.yaml: ${field} missing or empty`, "metadata.yaml");
  const models = asArray(meta.models).map(asRecord);
  if (models.length === 0) f.add("metadata", "metadata.yaml: models must list at least one model", "metadata.yaml");
  models.forEach((m, i) => {
    for (const field of MODEL_FIELDS) if (!filled(m[field])) f.add("metadata", `metadata.yaml: models[${i}].${field} missing or empty`, "metadata.yaml");
  });
  return {
    models: models.map((m) => ({ model_name: String(m.model_name ?? ""), model_provider: String(m.model_provider ?? "") })),
    agentName: filled(meta.agent_name) ? String(meta.agent_name) : null,
  };
}

function readJobs(tree: SubmissionTree, f: Findings): ParsedJob[] {
  const rels = new Set(tree.entries.map((e) => e.rel));
  const has = (rel: string): boolean => rels.has(rel);
  const childDirsOf = new Map<string, TreeEntry[]>();
  for (const e of tree.entries) {
    const parts = e.rel.split("/");
    if (e.kind === "dir" && parts.length === 2) childDirsOf.set(parts[0], [...(childDirsOf.get(parts[0]) ?? []), e]);
  }
  const jobs: ParsedJob[] = [];
  for (const e of tree.entries.filter((x) => !x.rel.includes("/") && x.kind !== "file")) {
    const isJob = e.kind === "dir" && (has(`${e.rel}/config.json`) || has(`${e.rel}/result.json`) || has(`${e.rel}/lock.json`));
    if (!isJob) {
      f.add("layout", e.kind === "dir" ? "a folder that is not a Harbor job folder (no config.json, result.json or lock.json)" : `a ${e.kind} where only job folders belong`, e.rel);
      continue;
    }
    const name = e.rel;
    const cfg = parseJson(tree.read(`${name}/config.json`));
    const res = parseJson(tree.read(`${name}/result.json`));
    const lock = parseJson(tree.read(`${name}/lock.json`));
    if (!cfg) f.add("job-files", "job config.json missing", name);
    else if ("error" in cfg) f.add("job-files", `job config.json is not valid JSON (${cfg.error})`, name);
    if (!res) f.add("job-files", "job result.json missing", name);
    else if ("error" in res) f.add("job-files", `job result.json is not valid JSON (${res.error})`, name);
    if (!lock) f.add("lock-present", "job lock.json missing (Harbor writes it when the run starts)", name);
    else if ("error" in lock) f.add("lock-present", `job lock.json is not valid JSON (${lock.error})`, name);
    const trials: ParsedTrial[] = [];
    for (const t of childDirsOf.get(name) ?? []) {
      const dir = t.rel.slice(name.length + 1);
      if (!["result.json", "config.json", "lock.json"].some((file) => has(`${t.rel}/${file}`))) continue;
      trials.push(readTrial(tree, name, dir, f));
    }
    jobs.push({
      name,
      config: cfg && "value" in cfg ? cfg.value : null,
      lock: lock && "value" in lock ? lock.value : null,
      result: res && "value" in res ? res.value : null,
      trials,
    });
  }
  if (jobs.length === 0) f.add("layout", "no job folder in the submission", tree.name);
  return jobs;
}

/** Fields Harbor's TrialResult model requires beyond what the audit's lenient schema does. */
const TRIAL_RESULT_REQUIRED = ["trial_uri", "task_id", "task_checksum", "config", "agent_info"] as const;

function readTrial(tree: SubmissionTree, job: string, dir: string, f: Findings): ParsedTrial {
  const where = `${job}/${dir}`;
  const t: ParsedTrial = { job, dir, where, result: null, config: null, lock: null };
  const res = parseJson(tree.read(`${where}/result.json`));
  if (!res) f.add("trial-result", "trial has no result.json", where);
  else if ("error" in res) f.add("trial-result", `trial result.json is not valid JSON (${res.error})`, where);
  else {
    const parsed = TrialResultSchema.safeParse(res.value);
    const missing = TRIAL_RESULT_REQUIRED.filter((k) => !isSet(res.value[k]));
    if (!parsed.success) {
      const i = parsed.error.issues[0];
      f.add("trial-result", `trial result.json invalid: ${i.path.join(".") || "(root)"}: ${i.message}`, where);
    } else if (missing.length) f.add("trial-result", `trial result.json lacks ${missing.join(", ")} (required by Harbor's TrialResult)`, where);
    else t.result = parsed.data;
  }
  const cfg = parseJson(tree.read(`${where}/config.json`));
  if (cfg && "value" in cfg) t.config = cfg.value;
  else if (cfg) f.add("trial-artifacts", `trial config.json is not valid JSON (${cfg.error})`, where);
  const lock = parseJson(tree.read(`${where}/lock.json`));
  if (!lock) f.add("lock-present", "trial lock.json missing (Harbor's uploader refuses a trial without it)", where);
  else if ("error" in lock) f.add("lock-present", `trial lock.json is not valid JSON (${lock.error})`, where);
  else t.lock = lock.value;
  return t;
}

function checkJob(job: ParsedJob, f: Findings): void {
  if (job.result && !job.result.finished_at) f.add("job-complete", "job result.json finished_at is null (the job never completed)", job.name);
  if (job.config) for (const d of configDeviations(job.config)) f.add("run-conditions", `job config.json: ${d}`, job.name);
  const lockTrials = asArray(job.lock?.trials).map(asRecord);
  lockTrials.forEach((lt) => {
    for (const d of configDeviations(lt)) f.add("run-conditions", `job lock.json: ${d}`, job.name);
  });
  for (const t of job.trials) {
    if (t.config) for (const d of configDeviations(t.config)) f.add("run-conditions", `trial config.json: ${d}`, t.where);
    if (t.result?.config) for (const d of configDeviations(asRecord(t.result.config))) f.add("run-conditions", `trial result.json config: ${d}`, t.where);
    if (t.lock) for (const d of configDeviations(t.lock)) f.add("run-conditions", `trial lock.json: ${d}`, t.where);
    if (t.result && !t.result.finished_at) f.add("job-complete", "trial result.json has no finished_at", t.where);
    checkTrialConsistency(job, t, lockTrials, f);
  }
  checkJobCounts(job, f);
}

function taskLockName(lock: HarborConfig | null): string | null {
  const name = asRecord(lock?.task).name;
  return typeof name === "string" ? name : null;
}

function checkTrialConsistency(job: ParsedJob, t: ParsedTrial, lockTrials: Record<string, unknown>[], f: Findings): void {
  const views: [string, Record<string, unknown>][] = [];
  if (t.config) views.push(["config.json", runView(t.config)]);
  if (t.result?.config) views.push(["result.json config", runView(asRecord(t.result.config))]);
  if (t.lock) views.push(["lock.json", runView(t.lock)]);
  if (job.config) {
    const agents = asArray(job.config.agents).map(asRecord);
    const trialAgent = asRecord((t.config ?? t.result?.config ?? t.lock ?? {}).agent);
    const agent = agents.find((a) => a.name === trialAgent.name && a.model_name === trialAgent.model_name) ?? agents[0] ?? {};
    views.push(["job config.json", runView(job.config, agent)]);
  }
  if (views.length < 2) return;
  const [firstName, first] = views[0];
  for (const [name, view] of views.slice(1)) {
    for (const field of viewDiff(first, view)) {
      f.add("config-consistency", `${field}: trial ${firstName} says ${JSON.stringify(first[field])}, ${name} says ${JSON.stringify(view[field])}`, t.where);
    }
  }
  if (t.lock && job.lock) {
    const mine = runView(t.lock);
    const name = taskLockName(t.lock);
    const sameTask = lockTrials.filter((lt) => taskLockName(lt) === name);
    if (sameTask.length === 0) f.add("config-consistency", `task ${name} of trial lock.json is not among the job lock.json's planned trials`, t.where);
    else if (!sameTask.some((lt) => viewDiff(mine, runView(lt)).length === 0)) {
      const fields = viewDiff(mine, runView(sameTask[0]));
      f.add("config-consistency", `trial lock.json differs from the job lock.json's entry for its task in ${fields.join(", ")}`, t.where);
    }
  }
}

function rewardOf(t: ParsedTrial): number | null {
  const r = t.result?.verifier_result?.rewards;
  if (!r) return null;
  if (typeof r.reward === "number") return r.reward;
  const values = Object.values(r).filter((v): v is number => typeof v === "number");
  return values.length === 1 ? values[0] : null;
}

/** Harbor's evals key: agent__model__dataset source (models/job/result.py format_agent_evals_key). */
function evalKeyOf(t: ParsedTrial): string {
  const info = asRecord(t.result?.agent_info);
  const model = asRecord(info.model_info).name;
  const source = t.result?.source || "adhoc";
  return model ? `${info.name}__${model}__${source}` : `${info.name}__${source}`;
}

function checkJobCounts(job: ParsedJob, f: Findings): void {
  if (!job.result) return;
  const trials = job.trials.filter((t) => t.result);
  const r = job.result;
  const stats = asRecord(r.stats);
  const count = (what: string, claimed: unknown, actual: number): void => {
    if (typeof claimed === "number" && claimed !== actual) f.add("job-counts", `job result.json ${what} is ${claimed}, the folder holds ${actual}`, job.name);
  };
  count("n_total_trials", r.n_total_trials, job.trials.length);
  if (r.finished_at) count("stats.n_completed_trials", stats.n_completed_trials, trials.length);
  count("stats.n_errored_trials", stats.n_errored_trials, trials.filter((t) => t.result!.exception_info).length);
  const evals = asRecord(stats.evals);
  const byKey = new Map<string, ParsedTrial[]>();
  for (const t of trials) byKey.set(evalKeyOf(t), [...(byKey.get(evalKeyOf(t)) ?? []), t]);
  for (const key of new Set([...Object.keys(evals), ...byKey.keys()])) {
    const e = asRecord(evals[key]);
    const ts = byKey.get(key) ?? [];
    if (!(key in evals)) {
      f.add("job-counts", `job result.json has no stats.evals entry '${key}' for ${ts.length} trial(s)`, job.name);
      continue;
    }
    const rewarded = ts.filter((t) => t.result!.verifier_result?.rewards);
    count(`stats.evals['${key}'].n_trials (trials with a reward)`, e.n_trials, rewarded.length);
    count(`stats.evals['${key}'].n_errors`, e.n_errors, ts.filter((t) => t.result!.exception_info).length);
    const listed = new Map<string, number>();
    for (const [value, names] of Object.entries(asRecord(asRecord(e.reward_stats).reward))) for (const n of asArray(names)) listed.set(String(n), Number(value));
    const actual = new Map(rewarded.map((t) => [t.result!.trial_name, rewardOf(t)]));
    const gone = [...listed.keys()].filter((n) => !actual.has(n));
    if (gone.length) f.add("job-counts", `job result.json lists ${gone.length} rewarded trial(s) that are not in the folder (e.g. ${gone.slice(0, 3).join(", ")})`, job.name);
    const changed = [...actual].filter(([n, v]) => listed.has(n) && listed.get(n) !== v).map(([n]) => n);
    if (changed.length) f.add("job-counts", `${changed.length} trial(s) have another reward than job result.json lists (e.g. ${changed.slice(0, 3).join(", ")})`, job.name);
    const unlisted = [...actual.keys()].filter((n) => !listed.has(n));
    if (unlisted.length) f.add("job-counts", `${unlisted.length} rewarded trial(s) are missing from job result.json's reward_stats (e.g. ${unlisted.slice(0, 3).join(", ")})`, job.name);
    const mean = asArray(e.metrics).map((m) => asRecord(m).mean).find((m) => typeof m === "number") as number | undefined;
    const recomputed = ts.reduce((a, t) => a + (rewardOf(t) ?? 0), 0) / Math.max(1, ts.length);
    if (mean !== undefined && ts.length && Math.abs(mean - recomputed) > 1e-9) f.add("job-counts", `job result.json's mean for '${key}' is ${mean.toFixed(4)}, the trials give ${recomputed.toFixed(4)}`, job.name);
  }
}

function checkDataset(jobs: ParsedJob[], opts: CheckOptions, f: Findings): void {
  const present = new Set<string>();
  for (const t of jobs.flatMap((j) => j.trials)) {
    const lockName = taskLockName(t.lock);
    if (lockName) present.add(lockName);
    else if (t.result) present.add(t.result.task_name);
  }
  const presentShort = new Set([...present].map(lastSegment));
  const expectations: { label: string; names?: string[]; count?: number; where: string }[] = [];
  if (opts.dataset) expectations.push({ ...opts.dataset, label: `--dataset ${opts.dataset.label}`, where: "--dataset" });
  for (const job of jobs) {
    const cfg = job.config;
    if (!cfg) continue;
    const datasets = asArray(cfg.datasets).map(asRecord);
    if (asArray(cfg.tasks).length) f.add("dataset-complete", `job config.json runs ${asArray(cfg.tasks).length} hand-picked task(s) (tasks: […]) instead of the dataset`, job.name);
    for (const d of datasets) {
      for (const filter of ["task_names", "exclude_task_names", "n_tasks"]) {
        if (isSet(d[filter]) && !(Array.isArray(d[filter]) && (d[filter] as unknown[]).length === 0)) f.add("dataset-complete", `the dataset is filtered (${filter}: ${JSON.stringify(d[filter])})`, `${job.name}/config.json`);
      }
      const known = KNOWN_DATASETS.find((k) => k.match(d));
      if (known) expectations.push({ label: known.label, count: known.count, where: `${job.name}/config.json` });
      else if (typeof d.path === "string") {
        const names = opts.localDatasetTasks?.(d.path) ?? null;
        if (names) expectations.push({ label: `local dataset ${d.path}`, names, where: `${job.name}/config.json` });
        // With --dataset given, that is the list the job is checked against: nothing to ask for.
        else if (!opts.dataset) f.warnings.push(`${job.name}: its dataset is a local folder (${d.path}) not readable here; only the job's lock.json says which tasks it had — pass --dataset to check against the real task list`);
      }
    }
    const planned = [...new Set(asArray(job.lock?.trials).map((lt) => taskLockName(asRecord(lt))).filter((n): n is string => n !== null))];
    if (planned.length) expectations.push({ label: `${job.name}/lock.json's planned trials`, names: planned, where: `${job.name}/lock.json` });
  }
  if (expectations.length === 0) {
    f.add("dataset-complete", "cannot tell which tasks the dataset has (no known dataset in config.json, no planned trials in lock.json): pass --dataset", jobs[0]?.name ?? "(submission)");
    return;
  }
  for (const e of expectations) {
    if (e.names) {
      const missing = e.names.filter((n) => !present.has(n) && !presentShort.has(lastSegment(n)));
      if (missing.length) f.add("dataset-complete", `${e.names.length - missing.length} of ${e.names.length} tasks of ${e.label} present; missing: ${missing.slice(0, 10).join(", ")}${missing.length > 10 ? `, … (${missing.length} in all)` : ""}`, e.where);
    } else if (e.count !== undefined && presentShort.size < e.count) {
      f.add("dataset-complete", `${presentShort.size} of ${e.count} tasks of ${e.label} present`, e.where);
    }
  }
}

function checkTrialsPerTask(trials: ParsedTrial[], f: Findings): void {
  const perTask = new Map<string, number>();
  for (const t of trials) if (t.result) perTask.set(t.result.task_name, (perTask.get(t.result.task_name) ?? 0) + 1);
  for (const [task, n] of [...perTask].sort()) {
    if (n < MIN_TRIALS_PER_TASK) f.add("trials-per-task", `fewer than ${MIN_TRIALS_PER_TASK} trials for the task`, `${task} (${n})`);
  }
}

function checkDuplicates(jobs: ParsedJob[], f: Findings): void {
  const jobIds = new Map<string, string>();
  for (const j of jobs) {
    const id = j.result?.id;
    if (typeof id !== "string") continue;
    if (jobIds.has(id)) f.add("duplicate-trials", `job folders ${jobIds.get(id)} and ${j.name} are the same job (result.json id ${id})`, j.name);
    else jobIds.set(id, j.name);
  }
  const trialIds = new Map<string, string>();
  for (const t of jobs.flatMap((j) => j.trials)) {
    if (!t.result) continue;
    if (t.result.trial_name !== t.dir) f.add("duplicate-trials", `result.json trial_name '${t.result.trial_name}' is not the folder's name`, t.where);
    const id = t.result.id;
    if (!id) continue;
    if (trialIds.has(id)) f.add("duplicate-trials", "the same trial twice (its result.json id is also another folder's)", `${t.where} (= ${trialIds.get(id)})`);
    else trialIds.set(id, t.where);
  }
}

/** The agent and model a job ran, from its trials (or its config). */
function jobIdentity(job: ParsedJob): { agent: string | null; model: string | null; startedAt: string } {
  const t = job.trials.find((x) => x.result)?.result;
  const cfgAgent = asRecord(asArray(job.config?.agents)[0]);
  const info = asRecord(t?.agent_info);
  const agent = (info.name as string | undefined) ?? (cfgAgent.name as string | undefined) ?? null;
  const model = (asRecord(t?.config).agent ? (asRecord(asRecord(t?.config).agent).model_name as string | undefined) : undefined) ?? (cfgAgent.model_name as string | undefined) ?? null;
  return { agent, model, startedAt: String(job.result?.started_at ?? "") };
}

function modelMatches(jobModel: string, meta: Metadata): boolean {
  return meta.models.some((m) => m.model_name && lastSegment(m.model_name) === lastSegment(jobModel));
}

function checkStaleJobs(jobs: ParsedJob[], meta: Metadata | null, f: Findings): void {
  const ids = jobs.map((j) => ({ job: j, ...jobIdentity(j) }));
  const newest = [...ids].sort((a, b) => b.startedAt.localeCompare(a.startedAt))[0];
  const agentOfSubmission = meta?.agentName ?? newest?.agent ?? null;
  for (const i of ids) {
    if (meta && i.model && !modelMatches(i.model, meta)) {
      f.add("stale-job", `job ${i.job.name} ran model ${i.model}, which metadata.yaml does not list (${meta.models.map((m) => m.model_name).join(", ")}): a stale job of another model? remove it`, i.job.name);
    }
    if (agentOfSubmission && i.agent && i.agent !== agentOfSubmission) {
      f.add("stale-job", `job ${i.job.name} ran agent ${i.agent}, the submission is agent ${agentOfSubmission}: a stale job of another agent? remove it`, i.job.name);
    }
  }
}

/** Per-file rules: the allowlist, trial artifacts, trajectories, Terminal-Bench references, secrets. */
function checkTrees(tree: SubmissionTree, jobs: ParsedJob[], f: Findings): void {
  const jobNames = new Set(jobs.map((j) => j.name));
  const trialsByPath = new Map(jobs.flatMap((j) => j.trials).map((t) => [t.where, t]));
  const files = tree.entries.filter((e) => e.kind === "file");
  const fileSet = new Set(files.map((e) => e.rel));
  const filesByTrial = new Map<string, string[]>();
  for (const e of files) {
    const trial = e.rel.split("/").slice(0, 2).join("/");
    if (trialsByPath.has(trial)) filesByTrial.set(trial, [...(filesByTrial.get(trial) ?? []), e.rel]);
  }
  const filesUnder = (trial: string, sub: string): string[] => (filesByTrial.get(trial) ?? []).filter((rel) => rel.startsWith(`${trial}/${sub}`));

  for (const e of tree.entries) {
    const parts = e.rel.split("/");
    if (!jobNames.has(parts[0]) || parts.length < 2) continue;
    if (e.kind === "symlink" || e.kind === "other") {
      f.add("allowlist", `a ${e.kind} (Harbor's archive and the leaderboard take regular files only)`, e.rel);
      continue;
    }
    if (parts.length === 2) {
      if (e.kind === "file" && !(JOB_ALLOWLIST as readonly string[]).includes(parts[1])) f.add("allowlist", "not a file Harbor writes in a job folder (leftover)", e.rel);
      if (e.kind === "dir" && !trialsByPath.has(e.rel)) f.add("allowlist", "not a trial folder (leftover)", e.rel);
    } else if (parts.length === 3 && trialsByPath.has(`${parts[0]}/${parts[1]}`)) {
      const isStepDir = parts[2] === "steps" && e.kind === "dir";
      if (!isStepDir && !(TRIAL_ALLOWLIST as readonly string[]).includes(parts[2])) f.add("allowlist", "not a file Harbor writes in a trial folder (leftover)", e.rel);
    } else if (parts.length === 5 && parts[2] === "steps" && !(STEP_ALLOWLIST as readonly string[]).includes(parts[4])) {
      f.add("allowlist", "not a step output Harbor writes (leftover)", e.rel);
    }
  }

  for (const t of trialsByPath.values()) {
    const has = (rel: string): boolean => fileSet.has(`${t.where}/${rel}`);
    const missing = ["config.json", "trial.log"].filter((x) => !has(x));
    if (t.result?.verifier_result?.rewards && !has("verifier/reward.txt") && !has("verifier/reward.json")) missing.push("verifier/reward.txt or reward.json (the reward's source)");
    if (missing.length) f.add("trial-artifacts", `trial folder lacks ${missing.join(", ")}`, t.where);
    const reward = rewardOf(t);
    if (reward !== null && reward > 0) {
      const text = tree.read(`${t.where}/agent/trajectory.json`);
      if (text === null) f.add("trajectory", "passing trial has no agent/trajectory.json", t.where);
      else {
        const errors = atifErrors(text);
        if (errors.length) f.add("trajectory", `agent/trajectory.json is not valid ATIF: ${errors.slice(0, 3).join("; ")}${errors.length > 3 ? ` (+${errors.length - 3} more)` : ""}`, t.where);
      }
    }
  }

  for (const job of jobs) {
    const configs: [string, HarborConfig | null][] = [[`${job.name}/config.json`, job.config], [`${job.name}/lock.json`, job.lock]];
    for (const t of job.trials) configs.push([`${t.where}/config.json`, t.config], [`${t.where}/lock.json`, t.lock], [`${t.where}/result.json`, t.result?.config ? asRecord(t.result.config) : null]);
    for (const [file, cfg] of configs) {
      if (!cfg) continue;
      const hosts = [
        ...asArray(asRecord(cfg.environment).extra_allowed_hosts),
        ...asArray(asRecord(cfg.agent).extra_allowed_hosts),
        ...asArray(cfg.agents).flatMap((a) => asArray(asRecord(a).extra_allowed_hosts)),
        ...asArray(cfg.trials).flatMap((lt) => [...asArray(asRecord(asRecord(lt).environment).extra_allowed_hosts), ...asArray(asRecord(asRecord(lt).agent).extra_allowed_hosts)]),
      ].map(String);
      for (const h of hosts) if (terminalBenchReferences(h).length || /(^|\.)tbench\.ai$/i.test(h)) f.add("no-tb-access", `extra_allowed_hosts lets the agent reach ${h}`, file);
    }
    for (const t of job.trials) {
      for (const rel of filesUnder(t.where, "agent/")) {
        const text = tree.read(rel);
        if (text === null) continue;
        const refs = terminalBenchReferences(text);
        if (refs.length) f.add("no-tb-access", `the agent's record names the Terminal-Bench site or repository (${refs.slice(0, 2).join("; ")})`, rel);
      }
    }
  }

  for (const e of files) {
    const text = tree.read(e.rel);
    if (text === null) {
      f.add("no-secrets", `cannot be read to scan for secrets (${e.size} bytes)`, e.rel);
      continue;
    }
    for (const finding of findSecrets(e.rel, text, scopeOf(e.rel, jobNames))) {
      // Grouped by what was found; the file and field (entry indices folded) go in `where`.
      f.add(finding.kind === "secret" ? "no-secrets" : "no-system-prompt", finding.what, `${e.rel} at ${finding.field.replace(/\[\d+\]/g, "[*]")}`);
    }
  }
}

/** Run output (what the agent and verifier wrote inside a trial) or a record/leftover (full scan). */
export function scopeOf(rel: string, jobNames: ReadonlySet<string>): "full" | "run-output" {
  const parts = rel.split("/");
  return parts.length >= 4 && jobNames.has(parts[0]) && RUN_OUTPUT_DIRS.has(parts[2]) ? "run-output" : "full";
}

// ---------------------------------------------------------------------------------------------------------
// Old snapshot types, still produced by load.ts's readSubmission (validate reads a SubmissionTree instead).

export interface TrialSnapshot {
  dir: string;
  resultText: string | null;
  trajectoryText: string | null;
  config: HarborConfig | null;
}

export interface JobSnapshot {
  name: string;
  config: HarborConfig | null;
  resultText: string | null;
  topLevelFiles: string[];
  trials: TrialSnapshot[];
}

export interface SubmissionSnapshot {
  dirName: string;
  metadataText: string | null;
  jobs: JobSnapshot[];
}

// ---------------------------------------------------------------------------------------------------------
// Datasets on disk (for --dataset and for jobs run from a local task folder)

/** Task folder names of a local dataset (children holding a task.toml), or null when it is not readable. */
export function localDatasetTasks(dir: string): string[] | null {
  try {
    const names = fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory() && fs.existsSync(path.join(dir, d.name, "task.toml")))
      .map((d) => d.name)
      .sort();
    return names.length ? names : null;
  } catch {
    return null;
  }
}

/** `--dataset`: a known dataset (terminal-bench@2.0), a folder of task folders, or a file of task names. */
export function datasetFromOption(value: string): DatasetExpectation {
  const known = KNOWN_DATASETS.find((k) => k.label === value);
  if (known) return { label: known.label, count: known.count };
  if (!fs.existsSync(value)) {
    throw new Error(`--dataset ${value}: not a known dataset (${KNOWN_DATASETS.map((k) => k.label).join(", ")}), folder or file`);
  }
  if (fs.statSync(value).isDirectory()) {
    const names = localDatasetTasks(value);
    if (!names) throw new Error(`--dataset ${value}: no task folders (subfolders with a task.toml) in it`);
    return { label: value, names };
  }
  const names = fs
    .readFileSync(value, "utf8")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"));
  if (names.length === 0) throw new Error(`--dataset ${value}: the file lists no task names (one per line)`);
  return { label: value, names };
}
