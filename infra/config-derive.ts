// Values derived from a parsed config: per-worker SGLang settings, host lookups, and the exact command
// lines seed 000 runs (so components and tests share one source of flag names).
import type { Host, HostRole, ReprobenchConfig, SglangConfig } from "./config-schema";

/** One worker's SGLang settings after applying sglang.overrides.<host>, plus host-derived values. */
export type ResolvedSglangSettings = Omit<SglangConfig, "overrides"> & {
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
  "--tool-call-parser", "--api-key",
];
export const ROUTER_MANAGED_FLAGS = [
  "--host", "--port", "--worker-urls", "--policy", "--dp-aware", "--balance-abs-threshold",
  "--balance-rel-threshold", "--worker-startup-timeout-secs", "--request-timeout-secs", "--prometheus-port", "--api-key",
];

/** The server command inside the container, e.g. ["sglang", "serve", "--model-path", …] (seed 000 order). */
export function sglangCommand(s: ResolvedSglangSettings): string[] {
  const args = [
    ...s.launcher.split(" "),
    "--model-path", s.modelMountPath,
    "--served-model-name", s.servedModelName,
    "--host", s.listenAddress,
    "--port", String(s.port),
    "--tp-size", String(s.tp),
    "--dp-size", String(s.dp),
    "--context-length", String(s.contextLength),
    "--max-running-requests", String(s.maxRunningRequests),
  ];
  if (s.maxMambaCacheSize !== null) args.push("--max-mamba-cache-size", String(s.maxMambaCacheSize));
  args.push("--mem-fraction-static", formatFraction(s.memFractionStatic));
  if (s.reasoningParser !== null) args.push("--reasoning-parser", s.reasoningParser);
  if (s.toolCallParser !== null) args.push("--tool-call-parser", s.toolCallParser);
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

/** OpenAI-compatible base URL Harbor's agent uses (seed: http://127.0.0.1:30000/v1). */
export function apiBase(config: ReprobenchConfig): string {
  const router = soleHostWithRole(config, "router");
  const runner = soleHostWithRole(config, "runner");
  const r = config.router;
  // Same host: use the bind address (loopback in the seed). Otherwise the router must listen where the runner can reach it.
  const address = router.name === runner.name ? (r.host === "0.0.0.0" ? "127.0.0.1" : r.host) : r.host === "0.0.0.0" ? router.privateIp : r.host;
  return `http://${address}:${r.port}/v1`;
}
