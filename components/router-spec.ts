// The router as pure functions of its settings: argv, container spec, gate inputs. The SglangRouter
// component and the config rules (components/config/derive.ts) share them; nothing here loads Pulumi.
import { type ContainerSpec, containerLabels, ulimitList } from "./container-spec";
import type { Ulimits } from "./model-server-spec";

/** The router's settings (router.* of the stack, plus what it shares with the workers). */
export interface RouterSettings {
  /** Image with sglang-router (seed: the SGLang image). */
  image: string;
  /** Entry point, e.g. "python3 -m sglang_router.launch_router". */
  launcher: string;
  containerName: string;
  /** --host bind address and --port. */
  host: string;
  port: number;
  policy: string;
  /** --dp-aware: route to each worker's DP ranks (needs SGLang workers). */
  dpAware: boolean;
  balanceAbsThreshold: number;
  balanceRelThreshold: number;
  workerStartupTimeoutSecs: number;
  requestTimeoutSecs: number;
  prometheusPort: number;
  /** docker --user: "ssh-user" (the login's uid:gid) or uid[:gid]. */
  user: string;
  env: Record<string, string>;
  ulimits: Ulimits;
  /** The weights directory mounted read-only so the router loads the tokenizer; null mounts nothing. */
  modelMount: { hostPath: string; containerPath: string } | null;
  stopTimeoutSecs: number;
  extraArgs: string[];
  /** The model id /v1/models and the READY completion use. */
  servedModelName: string;
  /** The router's /v1/models lists the model (SGLang workers); vLLM workers make 0.3.2 list "unknown". */
  modelListed: boolean;
}

/** A worker as the router sees it: its URL and its DP size. */
export interface RouterWorker {
  url: string;
  dpSize: number;
}

/** The router's argv; every worker URL follows ONE --worker-urls (0.3.2 keeps only the last list). */
export function routerCommand(r: RouterSettings, workerUrls: string[]): string[] {
  const args = [...r.launcher.split(" "), "--host", r.host, "--port", String(r.port), "--worker-urls", ...workerUrls];
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

/** Every DP rank as the dp-aware router names it: http://<ip>:<port>@<rank> (one entry per worker otherwise). */
export function expectedRouterWorkers(dpAware: boolean, workers: RouterWorker[]): string[] {
  return workers.flatMap((w) => (dpAware ? Array.from({ length: w.dpSize }, (_, rank) => `${w.url}@${rank}`) : [w.url]));
}

/** The router's base URL as seen from its own host. */
export function routerLocalUrl(r: Pick<RouterSettings, "host" | "port">): string {
  const host = r.host === "0.0.0.0" ? "127.0.0.1" : r.host;
  return `http://${host}:${r.port}`;
}

/** The router container as `@pulumi/docker` takes it, minus image, user and API key (seed 000: host network, nofile 65536). */
export function routerContainerSpec(r: RouterSettings, workerUrls: string[]): ContainerSpec {
  return {
    name: r.containerName,
    command: routerCommand(r, workerUrls),
    networkMode: "host",
    ulimits: ulimitList(r.ulimits),
    envs: Object.entries(r.env).map(([k, v]) => `${k}=${v}`),
    mounts: r.modelMount ? [{ type: "bind", source: r.modelMount.hostPath, target: r.modelMount.containerPath, readOnly: true }] : [],
    labels: containerLabels("router"),
    stopTimeout: r.stopTimeoutSecs,
  };
}

/** Inputs of sglang-router.sh and ready-probe.sh (the completion through the router), minus the API key. */
export function routerGateEnv(r: RouterSettings, workers: RouterWorker[]): Record<string, string> {
  return {
    CONTAINER_NAME: r.containerName,
    ROUTER_URL: routerLocalUrl(r),
    PROBE_URL: routerLocalUrl(r),
    PROBE_NAME: `sglang-router[${r.containerName}]`,
    EXPECTED_WORKERS: JSON.stringify(expectedRouterWorkers(r.dpAware, workers)),
    SERVED_MODEL_NAME: r.servedModelName,
    MODEL_LISTED: r.modelListed ? "1" : "0",
    READY_TIMEOUT_SECONDS: String(r.workerStartupTimeoutSecs + 120),
  };
}
