// The model server a worker runs, as pure functions of its settings: the argv of `sglang serve` (seeds
// 000/003) or `vllm serve` (seed 002), and what its info routes must report afterwards. The ModelServer
// component and the config rules share them, so previews, gates and validation agree on every flag.

/** docker --ulimit values: one number (soft = hard; -1 unlimited) or a pair. */
export type Ulimits = Record<string, number | { soft: number; hard: number }>;

/** One worker's resolved model server settings (sglang.* with this host's override applied). */
export interface WorkerSettings {
  /** "sglang" or "vllm". */
  engine: "sglang" | "vllm";
  /** The entry point inside the image, e.g. "sglang serve" or "vllm serve". */
  launcher: string;
  /** Image reference (seed: lmsysorg/sglang:latest-runtime). */
  image: string;
  /** docker container name (seed: qwen38-worker-a). */
  containerName: string;
  /** The worker's host name in the stack. */
  hostName: string;
  /** Base URL the router dials: http://<privateIp>:<port>. */
  url: string;
  /** The address passed as --host. */
  listenAddress: string;
  port: number;
  /** Host directory of the weights and where the container sees it. */
  modelPath: string;
  modelMountPath: string;
  servedModelName: string;
  tp: number;
  dp: number;
  contextLength: number | null;
  maxRunningRequests: number | null;
  maxMambaCacheSize: number | null;
  memFractionStatic: number;
  reasoningParser: string | null;
  toolCallParser: string | null;
  trustRemoteCode: boolean;
  kvCacheDtype: string | null;
  attentionBackend: string | null;
  chunkedPrefillSize: number | null;
  maxPrefillTokens: number | null;
  mamba: { fullMemoryRatio: number | null; radixCacheStrategy: string | null; ssmDtype: string | null };
  /** false passes --default-chat-template-kwargs '{"enable_thinking": false}'; null leaves the template's default. */
  enableThinking: boolean | null;
  extraArgs: string[];
  /** docker --gpus all, or no GPUs (simulated hosts). */
  gpus: "all" | "none";
  /** docker --user: "ssh-user" (the login's uid:gid) or uid[:gid]. */
  user: string;
  ipc: "host" | "private" | "shareable";
  ulimits: Ulimits;
  shmSizeMb: number | null;
  env: Record<string, string>;
  stopTimeoutSecs: number;
  readyTimeoutMinutes: number;
}

/** The model server's argv inside the container, for the worker's engine. */
export function serverCommand(s: WorkerSettings): string[] {
  return s.engine === "vllm" ? vllmCommand(s) : sglangCommand(s);
}

/**
 * The SGLang server command inside the container, e.g. ["sglang", "serve", "--model-path", …]: seed 000's
 * flags in its order, then seed 003's (FP8 KV cache, attention backend, prefill, mamba, thinking switch).
 */
export function sglangCommand(s: WorkerSettings): string[] {
  const args = [
    ...s.launcher.split(" "),
    "--model-path", s.modelMountPath,
    "--served-model-name", s.servedModelName,
    "--host", s.listenAddress,
    "--port", String(s.port),
    "--tp-size", String(s.tp),
    "--dp-size", String(s.dp),
  ];
  if (s.contextLength !== null) args.push("--context-length", String(s.contextLength));
  if (s.maxRunningRequests !== null) args.push("--max-running-requests", String(s.maxRunningRequests));
  if (s.maxMambaCacheSize !== null) args.push("--max-mamba-cache-size", String(s.maxMambaCacheSize));
  args.push("--mem-fraction-static", formatFraction(s.memFractionStatic));
  if (s.reasoningParser !== null) args.push("--reasoning-parser", s.reasoningParser);
  if (s.toolCallParser !== null) args.push("--tool-call-parser", s.toolCallParser);
  if (s.trustRemoteCode) args.push("--trust-remote-code");
  if (s.kvCacheDtype !== null) args.push("--kv-cache-dtype", s.kvCacheDtype);
  if (s.attentionBackend !== null) args.push("--attention-backend", s.attentionBackend);
  if (s.chunkedPrefillSize !== null) args.push("--chunked-prefill-size", String(s.chunkedPrefillSize));
  if (s.maxPrefillTokens !== null) args.push("--max-prefill-tokens", String(s.maxPrefillTokens));
  if (s.mamba.fullMemoryRatio !== null) args.push("--mamba-full-memory-ratio", String(s.mamba.fullMemoryRatio));
  if (s.mamba.radixCacheStrategy !== null) args.push("--mamba-radix-cache-strategy", s.mamba.radixCacheStrategy);
  if (s.mamba.ssmDtype !== null) args.push("--mamba-ssm-dtype", s.mamba.ssmDtype);
  // Spelled as seed 002 Run 3 writes it.
  if (s.enableThinking !== null) args.push("--default-chat-template-kwargs", `{"enable_thinking": ${s.enableThinking}}`);
  return [...args, ...s.extraArgs];
}

/**
 * `vllm serve MODEL …` (seed 002 Run 2), the shared settings under vLLM's flag names. The model is
 * positional; --enable-auto-tool-choice goes with a tool-call parser (vLLM refuses the parser alone).
 */
export function vllmCommand(s: WorkerSettings): string[] {
  const args = [
    ...s.launcher.split(" "),
    s.modelMountPath,
    "--served-model-name", s.servedModelName,
    "--host", s.listenAddress,
    "--port", String(s.port),
    "--tensor-parallel-size", String(s.tp),
    "--data-parallel-size", String(s.dp),
  ];
  if (s.contextLength !== null) args.push("--max-model-len", String(s.contextLength));
  if (s.maxRunningRequests !== null) args.push("--max-num-seqs", String(s.maxRunningRequests));
  args.push("--gpu-memory-utilization", formatFraction(s.memFractionStatic));
  if (s.reasoningParser !== null) args.push("--reasoning-parser", s.reasoningParser);
  if (s.toolCallParser !== null) args.push("--tool-call-parser", s.toolCallParser, "--enable-auto-tool-choice");
  if (s.trustRemoteCode) args.push("--trust-remote-code");
  if (s.kvCacheDtype !== null) args.push("--kv-cache-dtype", s.kvCacheDtype);
  return [...args, ...s.extraArgs];
}

/** 0.9 → "0.90" as the seed writes it; more precise values print in full. */
function formatFraction(x: number): string {
  return Math.abs(Math.round(x * 100) - x * 100) < 1e-9 ? x.toFixed(2) : String(x);
}

/**
 * The /server_info fields (SGLang's names and JSON types) that must equal the config after start. Settings
 * left to SGLang (null) are not asserted, except max_mamba_cache_size, which SGLang echoes as given.
 */
export function expectedServerInfo(s: WorkerSettings): Record<string, unknown> {
  const expected: Record<string, unknown> = {
    served_model_name: s.servedModelName,
    tp_size: s.tp,
    dp_size: s.dp,
  };
  if (s.contextLength !== null) expected.context_length = s.contextLength;
  if (s.maxRunningRequests !== null) expected.max_running_requests = s.maxRunningRequests;
  Object.assign(expected, {
    max_mamba_cache_size: s.maxMambaCacheSize,
    mem_fraction_static: s.memFractionStatic,
    reasoning_parser: s.reasoningParser,
    tool_call_parser: s.toolCallParser,
  });
  const optional: [string, unknown][] = [
    ["kv_cache_dtype", s.kvCacheDtype],
    ["attention_backend", s.attentionBackend],
    ["chunked_prefill_size", s.chunkedPrefillSize],
    ["max_prefill_tokens", s.maxPrefillTokens],
    ["mamba_full_memory_ratio", s.mamba.fullMemoryRatio],
    ["mamba_radix_cache_strategy", s.mamba.radixCacheStrategy],
    ["mamba_ssm_dtype", s.mamba.ssmDtype],
    ["default_chat_template_kwargs", s.enableThinking === null ? null : { enable_thinking: s.enableThinking }],
  ];
  for (const [field, value] of optional) if (value !== null) expected[field] = value;
  if (s.trustRemoteCode) expected.trust_remote_code = true;
  return expected;
}

/** What a vLLM worker must show on /v1/models (it has no /server_info): the served name, owned_by vllm, max_model_len. */
export function expectedVllmModel(s: WorkerSettings): Record<string, unknown> {
  const expected: Record<string, unknown> = { id: s.servedModelName, owned_by: "vllm" };
  if (s.contextLength !== null) expected.max_model_len = s.contextLength;
  return expected;
}


/**
 * The secret fields of SGLang's ServerArgs (python/sglang/srt/server_args.py; sgl-project/sglang#37499 lists
 * these three as the credentials on the record). /server_info serialises the whole ServerArgs, so it echoes
 * them as given (sgl-project/sglang#30166); nothing that records /server_info may keep them.
 */
export const SERVER_INFO_SECRET_FIELDS: readonly string[] = ["api_key", "admin_api_key", "ssl_keyfile_password"];

/** Shown in place of a secret value found in recorded text. */
export const SECRET_NOT_SHOWN = "[secret not shown]";

/** `value` without the secret fields at any depth (a DP rank's internal state repeats the args), `mask` applied to every string. */
export function withoutSecretFields(value: unknown, mask: (s: string) => string = (s) => s): unknown {
  if (typeof value === "string") return mask(value);
  if (Array.isArray(value)) return value.map((v) => withoutSecretFields(v, mask));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => !SERVER_INFO_SECRET_FIELDS.includes(k))
        .map(([k, v]) => [k, withoutSecretFields(v, mask)]),
    );
  }
  return value;
}

/**
 * /server_info text as the stack outputs and the run manifest record it: the secret fields dropped and every
 * known secret value (the API key) masked wherever else it appears, e.g. in a launch command. The gate
 * (sglang-worker.sh) already prints it so; this also cleans what an older gate left in the state. Text
 * that holds no secret comes back unchanged, byte for byte.
 */
export function recordedServerInfo(text: string, secrets: readonly string[]): string {
  const known = secrets.filter((secret) => secret.length >= 4);
  const mask = (s: string) => known.reduce((out, secret) => out.split(secret).join(SECRET_NOT_SHOWN), s);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return mask(text);
  }
  const clean = JSON.stringify(withoutSecretFields(parsed, mask));
  return clean === JSON.stringify(parsed) ? text : clean;
}
