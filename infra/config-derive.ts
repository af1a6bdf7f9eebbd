// Values derived from a parsed config: per-worker SGLang settings, host lookups, and the exact command
// lines seed 000 runs (so components and tests share one source of flag names).
import type { Host, HostRole, ReprobenchConfig, SglangConfig } from "./config-schema";
import { LAUNCHERS } from "./config-schema";

/** One worker's SGLang settings after applying sglang.overrides.<host>, plus host-derived values. */
export type ResolvedSglangSettings = Omit<SglangConfig, "overrides" | "launcher"> & {
  /** The entry point, resolved from the engine when the config leaves it null. */
  launcher: string;
  /** The worker's host name. */
  hostName: string;
  /** The address passed as --host. */
  listenAddress: string;
  /** Base URL the router uses: http://<privateIp>:<port>. */
  url: string;
  /** docker container name (seed: qwen38-worker-a). */
  containerName: string;
};

/** Hosts carrying a role, in config order. */
export function hostsWithRole(config: ReprobenchConfig, role: HostRole): Host[] {
  return config.hosts.filter((h) => h.roles.includes(role));
}

/** The host with the given name; throws naming the known hosts when absent. */
export function hostByName(config: ReprobenchConfig, name: string): Host {
  const host = config.hosts.find((h) => h.name === name);
  if (!host) throw new Error(`unknown host '${name}' (hosts: ${config.hosts.map((h) => h.name).join(", ")})`);
  return host;
}

/** The single host with the role (parseConfig guarantees exactly one router and one runner). */
export function soleHostWithRole(config: ReprobenchConfig, role: "router" | "runner"): Host {
  const hosts = hostsWithRole(config, role);
  if (hosts.length !== 1) throw new Error(`expected exactly one ${role} host, found ${hosts.length}`);
  return hosts[0];
}

/** Merged SGLang settings for one worker host (shallow: an override's env/ulimits replace the base map). */
export function workerSettings(config: ReprobenchConfig, hostName: string): ResolvedSglangSettings {
  const host = hostByName(config, hostName);
  if (!host.roles.includes("worker")) throw new Error(`host '${hostName}' does not have the worker role`);
  const { overrides, ...base } = config.sglang;
  const override = overrides[hostName] ?? {};
  const defined = Object.fromEntries(Object.entries(override).filter(([, v]) => v !== undefined));
  const merged = { ...base, ...defined } as Omit<SglangConfig, "overrides">;
  const listenAddress = merged.bindAddress === "privateIp" ? host.privateIp : merged.bindAddress;
  return {
    ...merged,
    launcher: merged.launcher ?? LAUNCHERS[merged.engine][0],
    hostName,
    listenAddress,
    url: `http://${host.privateIp}:${merged.port}`,
    containerName: `${merged.containerNamePrefix}${hostName}`,
  };
}

/** Flags reprobench sets itself (config keys, the shared API key); extraArgs must not repeat them. */
export const SGLANG_MANAGED_FLAGS = [
  "--model-path", "--model", "--served-model-name", "--host", "--port", "--tp-size", "--tp",
  "--tensor-parallel-size", "--dp-size", "--dp", "--data-parallel-size", "--context-length",
  "--max-running-requests", "--max-mamba-cache-size", "--mem-fraction-static", "--reasoning-parser",
  "--tool-call-parser", "--api-key", "--trust-remote-code", "--kv-cache-dtype", "--attention-backend",
  "--chunked-prefill-size", "--max-prefill-tokens", "--mamba-full-memory-ratio", "--mamba-radix-cache-strategy",
  "--mamba-ssm-dtype", "--default-chat-template-kwargs",
];
/** The same for `vllm serve` (vLLM's names for the shared keys). */
export const VLLM_MANAGED_FLAGS = [
  "--model", "--served-model-name", "--host", "--port", "--tensor-parallel-size", "-tp", "--data-parallel-size", "-dp",
  "--max-model-len", "--max-num-seqs", "--gpu-memory-utilization", "--reasoning-parser", "--tool-call-parser",
  "--enable-auto-tool-choice", "--api-key", "--trust-remote-code", "--kv-cache-dtype",
];

/** Worker settings vLLM has no flag for in reprobench's mapping (the config refuses them for engine vllm). */
export const SGLANG_ONLY_SETTINGS = [
  "maxMambaCacheSize", "attentionBackend", "chunkedPrefillSize", "maxPrefillTokens", "mamba.fullMemoryRatio",
  "mamba.radixCacheStrategy", "mamba.ssmDtype", "enableThinking",
] as const;

/** The value of a (possibly dotted) SGLANG_ONLY_SETTINGS name. */
export function settingValue(s: ResolvedSglangSettings, name: string): unknown {
  return name.split(".").reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], s);
}

/** The model server's argv inside the container, for the worker's engine. */
export function serverCommand(s: ResolvedSglangSettings): string[] {
  return s.engine === "vllm" ? vllmCommand(s) : sglangCommand(s);
}
export const ROUTER_MANAGED_FLAGS = [
  "--host", "--port", "--worker-urls", "--policy", "--dp-aware", "--balance-abs-threshold",
  "--balance-rel-threshold", "--worker-startup-timeout-secs", "--request-timeout-secs", "--prometheus-port", "--api-key",
];

/**
 * The SGLang server command inside the container, e.g. ["sglang", "serve", "--model-path", …]: seed 000's
 * flags in its order, then seed 003's (FP8 KV cache, attention backend, prefill, mamba, thinking switch).
 */
export function sglangCommand(s: ResolvedSglangSettings): string[] {
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
export function vllmCommand(s: ResolvedSglangSettings): string[] {
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

/** The router command inside the container; every worker URL follows ONE --worker-urls (0.3.2 keeps only the last list). */
export function routerCommand(config: ReprobenchConfig): string[] {
  const r = config.router;
  const args = [
    ...r.launcher.split(" "),
    "--host", r.host,
    "--port", String(r.port),
    "--worker-urls", ...hostsWithRole(config, "worker").map((h) => workerSettings(config, h.name).url),
  ];
  if (r.dpAware) args.push("--dp-aware");
  args.push(
    "--policy", r.policy,
    "--balance-abs-threshold", String(r.balanceAbsThreshold),
    "--balance-rel-threshold", String(r.balanceRelThreshold),
    "--worker-startup-timeout-secs", String(r.workerStartupTimeoutSecs),
    "--request-timeout-secs", String(r.requestTimeoutSecs),
    "--prometheus-port", String(r.prometheusPort),
  );
  return [...args, ...r.extraArgs];
}

/**
 * Where the model endpoint is as host:port for a client on the runner: the router, or with router.enabled
 * false the single worker (its privateIp; loopback is not used because the worker binds privateIp).
 */
export function modelEndpoint(config: ReprobenchConfig): { host: string; port: number } {
  if (!config.router.enabled) {
    const worker = hostsWithRole(config, "worker")[0];
    const s = workerSettings(config, worker.name);
    return { host: worker.privateIp, port: s.port };
  }
  const url = new URL(apiBase(config));
  return { host: url.hostname, port: Number(url.port) };
}

/** OpenAI-compatible base URL Harbor's agent uses on the runner (seed: http://127.0.0.1:30000/v1). */
export function apiBase(config: ReprobenchConfig): string {
  if (!config.router.enabled) {
    const { host, port } = modelEndpoint(config);
    return `http://${host}:${port}/v1`;
  }
  const router = soleHostWithRole(config, "router");
  const runner = soleHostWithRole(config, "runner");
  const r = config.router;
  // Same host: use the bind address (loopback in the seed). Otherwise the router must listen where the runner can reach it.
  const address = router.name === runner.name ? (r.host === "0.0.0.0" ? "127.0.0.1" : r.host) : r.host === "0.0.0.0" ? router.privateIp : r.host;
  return `http://${address}:${r.port}/v1`;
}

/** Agents Harbor runs on the runner, calling the model through LiteLLM (api_base kwarg + OPENAI_API_KEY). */
export const HOST_SIDE_AGENTS = ["terminus-2", "terminus", "terminus-1"] as const;
/** Agents Harbor installs and runs inside the task container (model endpoint through the agent env). */
export const IN_CONTAINER_AGENTS = ["mini-swe-agent"] as const;
/** Agents that call no model. */
export const MODEL_FREE_AGENTS = ["oracle", "nop"] as const;

/** How the agent reaches the model: from the runner, from inside the task container, or not at all. */
export function agentPlacement(agent: string): "host" | "container" | "none" {
  if ((MODEL_FREE_AGENTS as readonly string[]).includes(agent)) return "none";
  if ((IN_CONTAINER_AGENTS as readonly string[]).includes(agent)) return "container";
  return "host";
}

/** True when task containers on the runner reach the model through the model bridge on the docker gateway. */
export function usesModelBridge(config: ReprobenchConfig): boolean {
  return config.run.enabled && config.run.environment === "docker" && agentPlacement(config.run.agent) === "container" && config.run.containerApiBase === null;
}

/** The OpenAI base URL an in-container agent uses: run.containerApiBase, else the model bridge. */
export function containerApiBase(config: ReprobenchConfig): string {
  return config.run.containerApiBase ?? `http://${config.proxy.containerHost}:${config.run.modelBridgePort}/v1`;
}
