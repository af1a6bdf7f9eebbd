import * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import { CheckedCommand } from "./checked-command";
import { type ContainerSpec, apiKeyEntrypoint, containerLabels, ulimitList } from "./container-spec";
import { scriptWithEnv } from "./host-script";
import type { Ulimits } from "./model-server";
import type { HostConnectionInput } from "./ssh";

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
    volumes: r.modelMount ? [{ ...r.modelMount, readOnly: true }] : [],
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

export interface SglangRouterArgs {
  /** SSH connection to the router host (the gate runs there). */
  readonly connection: pulumi.Input<HostConnectionInput>;
  /** The router host's Docker engine (HostAccess.dockerProvider). */
  readonly dockerProvider: docker.Provider;
  /** "uid:gid" of the SSH login (HostAccess.loginUser), used when settings.user is "ssh-user". */
  readonly loginUser: pulumi.Input<string>;
  readonly settings: RouterSettings;
  /** The workers, each URL resolving once that worker passed its gate (SglangWorker.url, .dpSize). */
  readonly workers: { url: pulumi.Input<string>; dpSize: number }[];
  /** The workers' shared --api-key. Secret. */
  readonly apiKey: pulumi.Input<string>;
}

/**
 * The DP-aware, cache-aware sglang-router in front of every worker (seed 000 "启动 global router"): it
 * starts once every worker URL resolved (each worker passed its gate), and its gate proves routing with
 * /readiness, /workers listing every DP rank, /v1/models and a real completion (ready-probe.sh: thinking
 * off for the probe, and a budget a reasoning model cannot exhaust). Destroyed before the
 * workers, with the seed's 180 s to drain.
 */
export class SglangRouter extends pulumi.ComponentResource {
  /** Base URL on the router host; resolves once the router passed its gate. */
  public readonly url: pulumi.Output<string>;
  /** {workers, models} the router reported after its checks. */
  public readonly status: pulumi.Output<string>;
  /** The router image as pulled (name@sha256:…). */
  public readonly imageDigest: pulumi.Output<string>;
  public readonly image: docker.RemoteImage;
  public readonly container: docker.Container;

  constructor(name: string, args: SglangRouterArgs, opts?: pulumi.ComponentResourceOptions) {
    super("reprobench:cluster:SglangRouter", name, {}, opts);
    const r = args.settings;
    const urls = pulumi.all(args.workers.map((w) => w.url));
    const spec = urls.apply((u) => routerContainerSpec(r, u));
    const childOpts = { parent: this, provider: args.dockerProvider, dependsOn: opts?.dependsOn };
    this.image = new docker.RemoteImage(`${name}-image`, { name: r.image, keepLocally: true }, childOpts);
    this.container = new docker.Container(
      `${name}-container`,
      {
        name: r.containerName,
        image: this.image.imageId,
        command: spec.command,
        networkMode: "host",
        ulimits: spec.ulimits,
        envs: pulumi.all([spec.envs, pulumi.interpolate`REPROBENCH_API_KEY=${args.apiKey}`]).apply(([envs, key]) => [...envs, key]),
        volumes: spec.volumes,
        labels: spec.labels,
        stopTimeout: r.stopTimeoutSecs,
        user: r.user === "ssh-user" ? args.loginUser : r.user,
        entrypoints: apiKeyEntrypoint(),
        restart: "unless-stopped",
        mustRun: true,
        destroyGraceSeconds: r.stopTimeoutSecs,
      },
      { ...childOpts, deleteBeforeReplace: true },
    );
    const gate = new CheckedCommand(
      `${name}-ready`,
      {
        connection: args.connection,
        create: urls.apply((u) => scriptWithEnv(["sglang-router", "ready-probe"], routerGateEnv(r, u.map((url, i) => ({ url, dpSize: args.workers[i].dpSize }))))),
        environment: { API_KEY: args.apiKey },
        spec: this.container.id,
        check: scriptWithEnv("container-started", { CONTAINER_NAME: r.containerName }),
        onDrift: "update",
        timeoutSeconds: r.workerStartupTimeoutSecs + 120 + 900,
      },
      { parent: this },
    );
    this.url = gate.urn.apply(() => routerLocalUrl(r));
    this.status = gate.stdout.apply((out) => out.trim().split("\n").pop() ?? "");
    this.imageDigest = this.image.repoDigest;
    this.registerOutputs({ url: this.url, status: this.status, imageDigest: this.imageDigest, image: this.image, container: this.container });
  }
}
