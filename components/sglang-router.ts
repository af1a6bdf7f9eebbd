import * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import { CheckedCommand } from "./checked-command";
import { apiKeyEntrypoint } from "./container-spec";
import { type ClusterHost, loginUserOf, onHost } from "./host";
import { scriptWithEnv } from "./host-script";
import { pinnedImageRef, registryDigest } from "./image-digest";
import { guardHooks } from "./restart-guard";
import { RESTART } from "./model-server";
import { type RouterSettings, routerContainerSpec, routerGateEnv, routerLocalUrl } from "./router-spec";

export * from "./router-spec";

export interface SglangRouterArgs {
  /**
   * The router host: the gate runs over its connection, the image and container go to its Docker engine,
   * and its login's uid:gid is the container's user when settings.user is "ssh-user".
   */
  readonly host: ClusterHost;
  readonly settings: RouterSettings;
  /** The workers, each URL resolving once that worker passed its gate (ModelServer.url, .dpSize). */
  readonly workers: { url: pulumi.Input<string>; dpSize: number }[];
  /** The workers' shared --api-key. Secret. */
  readonly apiKey: pulumi.Input<string>;
  /** Registry credentials and mirrors for the image pull (registries[]; components/registry-access.ts); secret. */
  readonly registryEnv?: pulumi.Input<Record<string, string>>;
  /** Pull the build the image's tag names now on every `up` (reprobench:followImageTags; default false). */
  readonly followImageTags?: boolean;
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
    super("reprobench:cluster:SglangRouter", name, {}, onHost(args.host, opts));
    const r = args.settings;
    const host = args.host;
    const urls = pulumi.all(args.workers.map((w) => w.url));
    const spec = urls.apply((u) => routerContainerSpec(r, u));
    const childOpts = { parent: this, dependsOn: opts?.dependsOn };
    // The build the tag named when first pulled, kept until the config pins another (or follows tags).
    const what = `the router (${r.containerName})`;
    const digest = registryDigest(
      `${name}-image-digest`,
      { connection: host.connection, image: r.image, proxyEnv: host.proxyEnv, registryEnv: args.registryEnv, followTags: args.followImageTags, what },
      { parent: this, dependsOn: opts?.dependsOn },
    );
    this.image = new docker.RemoteImage(`${name}-image`, { name: digest.apply((d) => pinnedImageRef(r.image, d)), keepLocally: true }, childOpts);
    this.container = new docker.Container(
      `${name}-container`,
      {
        name: r.containerName,
        image: this.image.imageId,
        command: spec.command,
        networkMode: "host",
        ulimits: spec.ulimits,
        envs: pulumi.all([spec.envs, pulumi.interpolate`REPROBENCH_API_KEY=${args.apiKey}`]).apply(([envs, key]) => [...envs, key]),
        mounts: spec.mounts,
        labels: spec.labels,
        stopTimeout: r.stopTimeoutSecs,
        user: r.user === "ssh-user" ? loginUserOf(host) : r.user,
        entrypoints: apiKeyEntrypoint(),
        ...RESTART,
        mustRun: true,
        destroyGraceSeconds: r.stopTimeoutSecs,
      },
      // Any update or replacement asks the restart guard first, as part of that very step.
      { ...childOpts, deleteBeforeReplace: true, hooks: guardHooks(`${name}-container`, host.restartGuard, what) },
    );
    const gate = new CheckedCommand(
      `${name}-ready`,
      {
        connection: host.connection,
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
