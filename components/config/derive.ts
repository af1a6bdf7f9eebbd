// Values derived from a parsed config: per-worker model server settings, host lookups, and the exact command
// lines seed 000 runs (so components and tests share one source of flag names).
import type { Host, HostRole, ModelServerConfig, ReprobenchConfig } from "./schema";
import { LAUNCHERS } from "./schema";

import type { ModelBridgeSettings } from "../model-bridge";
import type { BridgeSettings } from "../proxy-bridge";
import { type RouterSettings, routerCommand as routerCommandFor } from "../router-spec";

export { serverCommand, sglangCommand, vllmCommand } from "../model-server-spec";

/** One worker's model server settings after applying modelServer.overrides.<host>, plus host-derived values. */
export type ResolvedModelServerSettings = Omit<ModelServerConfig, "overrides" | "launcher"> & {
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

/** Merged model server settings for one worker host (shallow: an override's env/ulimits replace the base map). */
export function workerSettings(config: ReprobenchConfig, hostName: string): ResolvedModelServerSettings {
  const host = hostByName(config, hostName);
  if (!host.roles.includes("worker")) throw new Error(`host '${hostName}' does not have the worker role`);
  const { overrides, ...base } = config.modelServer;
  const override = overrides[hostName] ?? {};
  const defined = Object.fromEntries(Object.entries(override).filter(([, v]) => v !== undefined));
  const merged = { ...base, ...defined } as Omit<ModelServerConfig, "overrides">;
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
export function settingValue(s: ResolvedModelServerSettings, name: string): unknown {
  return name.split(".").reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], s);
}

export const ROUTER_MANAGED_FLAGS = [
  "--host", "--port", "--worker-urls", "--policy", "--dp-aware", "--balance-abs-threshold",
  "--balance-rel-threshold", "--worker-startup-timeout-secs", "--request-timeout-secs", "--prometheus-port", "--api-key",
];

/** The router's settings as the SglangRouter component takes them. */
export function routerSettings(config: ReprobenchConfig): RouterSettings {
  const r = config.router;
  return {
    image: r.image ?? config.modelServer.image,
    launcher: r.launcher,
    containerName: r.containerName,
    host: r.host,
    port: r.port,
    policy: r.policy,
    dpAware: r.dpAware ?? config.modelServer.engine === "sglang",
    balanceAbsThreshold: r.balanceAbsThreshold,
    balanceRelThreshold: r.balanceRelThreshold,
    workerStartupTimeoutSecs: r.workerStartupTimeoutSecs,
    requestTimeoutSecs: r.requestTimeoutSecs,
    prometheusPort: r.prometheusPort,
    user: r.user,
    env: r.env,
    ulimits: r.ulimits,
    // The router loads the tokenizer from the workers' model_path; mount it where the workers see it.
    modelMount: r.mountModel ? { hostPath: config.modelServer.modelPath, containerPath: config.modelServer.modelMountPath } : null,
    stopTimeoutSecs: r.stopTimeoutSecs,
    extraArgs: r.extraArgs,
    servedModelName: config.modelServer.servedModelName,
    modelListed: config.modelServer.engine !== "vllm",
  };
}

/** The server and router images the config names by tag rather than by digest, with their keys. */
export function mutableImageRefs(config: ReprobenchConfig): { key: string; ref: string }[] {
  const refs: { key: string; ref: string }[] = [];
  const add = (key: string, ref: string | null) => {
    if (ref !== null && !ref.includes("@sha256:") && !refs.some((r) => r.ref === ref)) refs.push({ key, ref });
  };
  add("reprobench:modelServer.image", config.modelServer.image);
  for (const [host, o] of Object.entries(config.modelServer.overrides)) add(`reprobench:modelServer.overrides.${host}.image`, o.image ?? null);
  if (config.router.enabled) add("reprobench:router.image", config.router.image);
  return refs;
}

/** The proxy bridge's settings as the ProxyBridge component takes them. */
export function bridgeSettings(config: ReprobenchConfig): BridgeSettings {
  return { bridgePort: config.proxy.bridgePort, containerHost: config.proxy.containerHost, checkImage: config.toolBundle.canaryImage, checkUrl: config.proxy.checkUrl };
}

/** The model bridge's settings: the docker gateway port, forwarding to the router or the single worker. */
export function modelBridgeSettings(config: ReprobenchConfig): ModelBridgeSettings {
  return { bridgePort: config.run.modelBridgePort, containerHost: config.proxy.containerHost, checkImage: config.toolBundle.canaryImage, upstream: modelEndpoint(config) };
}

/** The router command for a config (every worker's URL, in config order). */
export function routerCommand(config: ReprobenchConfig): string[] {
  return routerCommandFor(routerSettings(config), hostsWithRole(config, "worker").map((h) => workerSettings(config, h.name).url));
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
