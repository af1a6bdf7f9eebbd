// Failure taxonomy: what kind of failure a trial had, from its exception type first and its logs second.
// Seed 000's rule — "reward 0 is not automatically a model failure" — is why logs are scanned at all.
import { redactSecrets } from "./harbor";

export const CATEGORIES = [
  "task_failed", // verifier ran and gave reward 0, no exception
  "agent_error",
  "agent_timeout_with_reward",
  "agent_timeout_without_reward",
  "verifier_timeout",
  "infra",
  "setup",
  "cancelled",
  "unknown",
] as const;
export type Category = (typeof CATEGORIES)[number];

export const CATEGORY_LABELS: Record<Category, string> = {
  task_failed: "failed (reward 0)",
  agent_error: "agent error",
  agent_timeout_with_reward: "agent timeout, verifier scored",
  agent_timeout_without_reward: "agent timeout, no reward",
  verifier_timeout: "verifier timeout",
  infra: "infra / network",
  setup: "setup",
  cancelled: "cancelled",
  unknown: "unknown",
};

/** Categories whose errored trials are left out of the pass rate: the run, not the model, failed. */
export const UNSCORED_CATEGORIES: ReadonlySet<Category> = new Set(["infra", "setup", "cancelled"]);

/**
 * Exception types Harbor (and the LiteLLM/httpx/HF-sandbox layers under it) records, by category.
 * Types not listed are resolved from log signatures, else "unknown".
 */
export const EXCEPTION_CATEGORIES: Readonly<Record<string, Category>> = {
  CancelledError: "cancelled",
  VerifierTimeoutError: "verifier_timeout",
  AgentSetupTimeoutError: "setup",
  EnvironmentStartTimeoutError: "setup",
  // Transport / sandbox / model-server failures seen in seeds 002 and 003.
  SandboxError: "infra",
  InternalServerError: "infra",
  ServiceUnavailableError: "infra",
  APIConnectionError: "infra",
  APIError: "infra",
  BadGatewayError: "infra",
  ReadTimeout: "infra",
  ReadError: "infra",
  WriteTimeout: "infra",
  ConnectTimeout: "infra",
  ConnectError: "infra",
  PoolTimeout: "infra",
  RemoteProtocolError: "infra",
  ServerDisconnectedError: "infra",
  ClientConnectorError: "infra",
  // Harbor 0.21's own wrappers around model-API and environment failures.
  ApiConnectionError: "infra",
  ApiConnectionClosedError: "infra",
  ApiInternalServerError: "infra",
  ApiOverloadedError: "infra",
  ApiRateLimitError: "infra",
  ApiResponseStalledError: "infra",
  NetworkConnectionError: "infra",
  DownloadVerifierDirError: "infra",
  AddTestsDirError: "infra",
  GKEExecStreamClosedError: "infra",
  // The run was misconfigured (key, model name, quota): not the model's failure; fix, then mop up.
  AgentAuthenticationError: "infra",
  ApiKeyRejectedError: "infra",
  ModelNotFoundError: "infra",
  ApiUsageLimitError: "infra",
  SandboxBuildFailedError: "setup",
  HealthcheckError: "setup",
  // The agent itself gave up or broke.
  NonZeroAgentExitCodeError: "agent_error",
  ContextWindowExceededError: "agent_error",
  ContextLengthExceededError: "agent_error",
  OutputLengthExceededError: "agent_error",
  OutputTokenExceededError: "agent_error",
  AgentSafetyRefusalError: "agent_error",
};

/**
 * Exception types that fail the same way when run again, so a mop-up pass does not re-run them by default.
 * The first nine are Harbor 0.21's own list: the default of `RetryConfig.exclude_exceptions`
 * (src/harbor/models/job/config.py at v0.21.0, commit 64afbbcb; harbor.md §2). Harbor's retry loop
 * (`TrialQueue._should_retry_exception`, src/harbor/trial/queue.py) retries every other type, so Harbor
 * treats everything else as transient. ApiKeyRejectedError is ours: a rejected key, like a missing login
 * (AgentAuthenticationError), only changes when someone fixes the key.
 */
export const NON_TRANSIENT_TYPES: ReadonlySet<string> = new Set([
  "AgentTimeoutError",
  "VerifierTimeoutError",
  "RewardFileNotFoundError",
  "RewardFileEmptyError",
  "VerifierOutputParseError",
  "ApiUsageLimitError",
  "AgentSafetyRefusalError",
  "AgentAuthenticationError",
  "ModelNotFoundError",
  "ApiKeyRejectedError",
]);

/**
 * Default `harbor job resume -f` set for a mop-up pass: the infra, setup and cancelled types that Harbor
 * itself would retry. Authentication, unknown-model and usage-limit errors are unscored too, but stay
 * out: re-running them burns a pass and fails again until the key, model name or quota is fixed.
 */
export function defaultMopUpErrorTypes(): string[] {
  return Object.entries(EXCEPTION_CATEGORIES)
    .filter(([t, c]) => UNSCORED_CATEGORIES.has(c) && !NON_TRANSIENT_TYPES.has(t))
    .map(([t]) => t)
    .sort();
}

/** Unscored types a mop-up skips by default because they would fail again the same way. */
export function nonTransientUnscoredTypes(): string[] {
  return Object.entries(EXCEPTION_CATEGORIES)
    .filter(([t, c]) => UNSCORED_CATEGORIES.has(c) && NON_TRANSIENT_TYPES.has(t))
    .map(([t]) => t)
    .sort();
}

export interface Signature {
  id: string;
  description: string;
  category: "infra" | "setup";
  pattern: RegExp;
}

/** Log lines that prove the environment, not the agent, failed (seed 000's audit, harbor.md §8/§7). */
export const SIGNATURES: readonly Signature[] = [
  {
    id: "proxy-502",
    description: "HTTP proxy answered 502 Bad Gateway",
    category: "infra",
    pattern: /\b502\b[^\n]{0,40}(bad gateway|proxy)|proxy[^\n]{0,80}\b502\b|HTTP\/[\d.]+ 502\b/i,
  },
  {
    id: "tls-verify-failed",
    description: "TLS certificate verification failed (missing CA store or MITM proxy)",
    category: "infra",
    pattern: /CERTIFICATE_VERIFY_FAILED|SSL certificate problem/,
  },
  { id: "tls-eof", description: "TLS connection cut mid-handshake", category: "infra", pattern: /UNEXPECTED_EOF_WHILE_READING/ },
  {
    id: "curl-timeout",
    description: "curl/transfer timed out",
    category: "infra",
    pattern: /curl: \(28\)|Operation timed out after \d+|Connection timed out/,
  },
  {
    id: "dns-failure",
    description: "host name did not resolve",
    category: "infra",
    pattern: /curl: \(6\)|Could not resolve host|Temporary failure in name resolution|Name or service not known/,
  },
  { id: "apt-fetch-failed", description: "package mirror fetch failed", category: "infra", pattern: /^(E|W): Failed to fetch /m },
  {
    id: "address-pools-exhausted",
    description: "Docker ran out of network address pools",
    category: "infra",
    pattern: /all predefined address pools have been fully subnetted|could not find an available, non-overlapping IPv4 address pool/,
  },
  {
    id: "docker-daemon-down",
    description: "Docker daemon unreachable",
    category: "infra",
    pattern: /Cannot connect to the Docker daemon|Docker daemon is not running/,
  },
  {
    id: "model-endpoint-unreachable",
    description: "model endpoint refused or dropped the connection",
    category: "infra",
    pattern: /litellm\.(APIConnectionError|InternalServerError|ServiceUnavailableError|Timeout)|Connection refused/,
  },
  {
    id: "tmux-missing",
    description: "tmux missing in the task container",
    category: "setup",
    pattern: /tmux: (command )?not found|Failed to start tmux session|exec: "?tmux"?: executable file not found/,
  },
];

export interface Evidence {
  signature: string;
  category: "infra" | "setup";
  /** Path relative to the jobs directory: "<job>/<trial>/<file>". */
  file: string;
  /** 1-based line number. */
  line: number;
  text: string;
}

const MAX_HITS_PER_SIGNATURE = 3;
const MAX_EVIDENCE_TEXT = 240;

/** Finds signature lines in one log file's text (first few hits of each signature). */
export function scanText(text: string, file: string): Evidence[] {
  const hits: Evidence[] = [];
  const counts = new Map<string, number>();
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.length === 0) continue;
    for (const sig of SIGNATURES) {
      const n = counts.get(sig.id) ?? 0;
      if (n >= MAX_HITS_PER_SIGNATURE || !sig.pattern.test(line)) continue;
      counts.set(sig.id, n + 1);
      // Proxy URLs in logs may carry credentials; evidence ends up in reports and JSON.
      const trimmed = (redactSecrets(line) as string).trim();
      hits.push({
        signature: sig.id,
        category: sig.category,
        file,
        line: i + 1,
        text: trimmed.length > MAX_EVIDENCE_TEXT ? `${trimmed.slice(0, MAX_EVIDENCE_TEXT)}…` : trimmed,
      });
    }
  }
  return hits;
}

export interface Classification {
  category: Category | null;
  /** Reward-0 trial whose logs show infra trouble: still scored, but worth a manual verdict. */
  suspectedInfra: boolean;
}

/**
 * Classifies one trial. Clear exception types decide on their own; ambiguous ones (RuntimeError,
 * RewardFileNotFoundError, unknown types) take the category of the log evidence when there is some.
 */
export function classifyTrial(
  reward: number | null,
  exceptionType: string | null,
  exceptionMessage: string | null,
  evidence: readonly Evidence[],
  /** Finished with neither exception nor reward because a stop landed in it: a cancellation. */
  interruptedWithoutRecord = false,
): Classification {
  const fromLogs: Category | null = evidence.some((e) => e.category === "setup")
    ? "setup"
    : evidence.length > 0
      ? "infra"
      : null;
  if (!exceptionType) {
    if (reward === null) return { category: interruptedWithoutRecord ? "cancelled" : (fromLogs ?? "unknown"), suspectedInfra: false };
    if (reward > 0) return { category: null, suspectedInfra: false };
    return { category: "task_failed", suspectedInfra: fromLogs !== null };
  }
  if (exceptionType === "AgentTimeoutError") {
    return {
      category: reward === null ? "agent_timeout_without_reward" : "agent_timeout_with_reward",
      suspectedInfra: fromLogs !== null && (reward ?? 0) <= 0,
    };
  }
  const known = EXCEPTION_CATEGORIES[exceptionType];
  if (known && known !== "agent_error") return { category: known, suspectedInfra: false };
  const msgCategory = categoryFromMessage(exceptionMessage ?? "");
  const resolved = msgCategory ?? fromLogs ?? known ?? "unknown";
  return { category: resolved, suspectedInfra: false };
}

/**
 * Whether the audit scores a trial: every trial with a reward, and errored trials whose failure is the
 * model's or agent's (not infra, setup or a cancellation).
 */
export function isScored(reward: number | null, category: Category | null): boolean {
  return reward !== null || !(category !== null && UNSCORED_CATEGORIES.has(category));
}

/**
 * Whether reading the trial's logs could change whether it is scored. Only unrewarded trials whose
 * exception type (and message) leave the category open; selection reads logs only for those.
 */
export function scoringDependsOnLogs(reward: number | null, exceptionType: string | null, exceptionMessage: string | null): boolean {
  if (reward !== null) return false;
  if (!exceptionType) return true;
  if (exceptionType === "AgentTimeoutError") return false;
  const known = EXCEPTION_CATEGORIES[exceptionType];
  if (known && known !== "agent_error") return false;
  return categoryFromMessage(exceptionMessage ?? "") === null;
}

function categoryFromMessage(message: string): Category | null {
  const hits = scanText(message, "(exception message)");
  if (hits.some((h) => h.category === "setup")) return "setup";
  if (hits.length > 0) return "infra";
  return null;
}
