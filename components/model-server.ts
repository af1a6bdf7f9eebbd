import * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import { CheckedCommand } from "./checked-command";
import { type ContainerSpec, WEIGHTS_COMMIT_LABEL, apiKeyEntrypoint, containerLabels, ulimitList } from "./container-spec";
import { scriptWithEnv, specHash } from "./host-script";
import { pinnedImageRef, registryDigest } from "./image-digest";
import { guardHooks } from "./restart-guard";
import { type WorkerSettings, expectedServerInfo, expectedVllmModel, recordedServerInfo, serverCommand } from "./model-server-spec";
import { type ClusterHost, loginUserOf, onHost } from "./host";
import { type HostPlan, WorkerPreflight } from "./preflight";

/**
 * Docker restarts a server that crashes, but not forever: one that fails while loading stops after a few
 * tries instead of reloading its weights in a loop (it stays in Pulumi's state, so `destroy` removes it).
 */
export const RESTART = { restart: "on-failure", maxRetryCount: 2 } as const;

/**
 * The worker's container as `@pulumi/docker` takes it, minus the image id, the user and the API key: what
 * seed 000 passes to `docker run` (host network, ipc host, GPUs, ulimits, the weights read-only) and the
 * server's argv. A preview shows exactly which of these a config change touches.
 */
export function workerContainerSpec(s: WorkerSettings): ContainerSpec {
  const spec: ContainerSpec = {
    name: s.containerName,
    command: serverCommand(s),
    networkMode: "host",
    ipcMode: s.ipc,
    ulimits: ulimitList(s.ulimits),
    envs: Object.entries(s.env).map(([k, v]) => `${k}=${v}`),
    // The weights must exist: a bind mount refuses a missing source instead of mounting an empty directory.
    mounts: [{ type: "bind", source: s.modelPath, target: s.modelMountPath, readOnly: true }],
    labels: containerLabels("worker"),
    stopTimeout: s.stopTimeoutSecs,
  };
  if (s.gpus === "all") spec.gpus = "all";
  if (s.shmSizeMb !== null) spec.shmSize = s.shmSizeMb;
  return spec;
}

/** Inputs of the worker's gate scripts (server-health + the engine's own), minus the API key. */
export function workerGateEnv(s: WorkerSettings): Record<string, string> {
  return {
    CONTAINER_NAME: s.containerName,
    BASE_URL: s.url,
    READY_TIMEOUT_SECONDS: String(s.readyTimeoutMinutes * 60),
    EXPECTED_JSON: JSON.stringify(s.engine === "vllm" ? expectedVllmModel(s) : expectedServerInfo(s)),
    SERVED_MODEL_NAME: s.servedModelName,
    // Seed 002 Run 3's check after disabling thinking: a completion carries no reasoning_content.
    EXPECT_NO_REASONING: s.enableThinking === false ? "1" : "0",
  };
}

/** The gate script for the worker's engine. */
export function workerGateScript(s: WorkerSettings): string {
  return s.engine === "vllm" ? "vllm-worker" : "sglang-worker";
}

/** The type the model server had before it was named for what it is (it runs SGLang or vLLM). */
const FORMER_TYPE = "reprobench:cluster:SglangWorker";

/**
 * Options whose aliases also name the former type, alone and with each alias given (a server moved under
 * a new parent had the old type there), so that no stack replaces a server it brought up before.
 */
export function withFormerType(opts: pulumi.ComponentResourceOptions, formerType: string): pulumi.ComponentResourceOptions {
  const given = opts.aliases ?? [];
  const specs = given.filter((a): a is pulumi.Alias => typeof a === "object" && !pulumi.Output.isInstance(a));
  return { ...opts, aliases: [...given, { type: formerType }, ...specs.map((a) => ({ ...a, type: formerType }))] };
}

export interface ModelServerArgs {
  /**
   * The worker host: the gates run over its connection, the image and container go to its Docker engine,
   * and its login's uid:gid is the container's user when settings.user is "ssh-user".
   */
  readonly host: ClusterHost;
  /** The worker's resolved settings (the model server section with this host's override). */
  readonly settings: WorkerSettings;
  /** The --api-key every worker and the router share. Secret. */
  readonly apiKey: pulumi.Input<string>;
  /** Registry credentials and mirrors for the image pull (registries[]; components/registry-access.ts); secret. */
  readonly registryEnv?: pulumi.Input<Record<string, string>>;
  /** Pull the build the image's tag names now on every `up` (reprobench:followImageTags; default false). */
  readonly followImageTags?: boolean;
  /**
   * The host's preflight plan (components/preflight/plan.ts hostPlan): when given, the container is created
   * or replaced only after the host passed the preflight (WorkerPreflight, `<name>-preflight`). Omitted: none.
   */
  readonly preflight?: HostPlan;
  /**
   * The commit of the weights the server loads (modelServer.download's WeightsDownload report): a new one
   * re-runs the preflight and restarts the server, which would otherwise go on serving the weights it
   * loaded before the download replaced them. Omitted (weights put there by other means): nothing changes.
   */
  readonly weightsCommit?: pulumi.Input<string>;
}

/**
 * One model server container on a worker host (seed 000 "启动两个 SGLang workers"): the image pulled
 * through the host's dockerd (digest recorded), the container, and a gate on /health within the load
 * budget and /server_info matching the config (vLLM: /v1/models). `url` resolves only once the gate
 * passed; a refresh notices a dead or restarted container and the next `up` restarts and re-gates it.
 */
export class ModelServer extends pulumi.ComponentResource {
  /** http://<privateIp>:<port>, what the router dials; resolves when the server passed its gate. */
  public readonly url: pulumi.Output<string>;
  /** DP ranks the server runs (the dp-aware router addresses each). */
  public readonly dpSize: number;
  /**
   * /server_info as the worker reported it after start (without internal_states), minus its secrets: no
   * api_key, admin_api_key or ssl_keyfile_password field, the API key masked wherever else it appears.
   * Plain (not a Pulumi secret): it can hold no secret the stack knows, and the run manifest shows it.
   */
  public readonly serverInfo: pulumi.Output<string>;
  /** The image as pulled: repo digest (name@sha256:…). */
  public readonly imageDigest: pulumi.Output<string>;
  public readonly image: docker.RemoteImage;
  public readonly container: docker.Container;
  /** The host's preflight, which the container waits for (absent without ModelServerArgs.preflight). */
  public readonly preflight?: WorkerPreflight;

  constructor(name: string, args: ModelServerArgs, opts?: pulumi.ComponentResourceOptions) {
    super("reprobench:cluster:ModelServer", name, {}, withFormerType(onHost(args.host, opts), FORMER_TYPE));
    const s = args.settings;
    const host = args.host;
    const spec = workerContainerSpec(s);
    // A component's dependsOn does not reach its children by itself: pass it on (no container starts
    // before daemon.json is settled, since a docker restart would kill it).
    const childOpts = { parent: this, dependsOn: opts?.dependsOn };
    // Model server images are tens of GB: a destroy leaves them on the host.
    // The build the tag named when first pulled, kept until the config pins another (or follows tags).
    const what = `${s.hostName}'s model server (${s.containerName})`;
    const digest = registryDigest(
      `${name}-image-digest`,
      { connection: host.connection, image: s.image, proxyEnv: host.proxyEnv, registryEnv: args.registryEnv, followTags: args.followImageTags, what },
      { parent: this, dependsOn: opts?.dependsOn },
    );
    this.image = new docker.RemoteImage(`${name}-image`, { name: digest.apply((d) => pinnedImageRef(s.image, d)), keepLocally: true }, childOpts);
    const user = s.user === "ssh-user" ? loginUserOf(host) : pulumi.output(s.user);
    const weightsCommit = args.weightsCommit === undefined ? undefined : pulumi.output(args.weightsCommit);
    // The host's preflight, with the very image the container runs, before the container is created or
    // replaced: run again whenever what would restart the server changes (spec, image, user, weights).
    this.preflight = args.preflight
      ? new WorkerPreflight(
          `${name}-preflight`,
          {
            host, plan: args.preflight, image: this.image.imageId,
            trigger: pulumi.all([this.image.imageId, user, weightsCommit]).apply(([id, u, weights]) => specHash({ spec, image: id, user: u, ...(weights === undefined ? {} : { weights }) })),
          },
          childOpts,
        )
      : undefined;
    const given = opts?.dependsOn;
    const containerDeps = this.preflight
      ? [...(given === undefined ? [] : Array.isArray(given) ? given : [given as pulumi.Input<pulumi.Resource>]), this.preflight]
      : given;
    this.container = new docker.Container(
      `${name}-container`,
      {
        ...spec,
        // The weights' commit as a label: labels are fixed at creation, so a new commit replaces (restarts) it.
        labels: weightsCommit === undefined ? spec.labels : weightsCommit.apply((commit) => [...spec.labels, { label: WEIGHTS_COMMIT_LABEL, value: commit }]),
        image: this.image.imageId,
        user,
        entrypoints: apiKeyEntrypoint(),
        envs: [...spec.envs, pulumi.interpolate`REPROBENCH_API_KEY=${args.apiKey}`],
        ...RESTART,
        mustRun: true,
        // destroy: `docker stop` with the server's grace time first (in-flight requests finish).
        destroyGraceSeconds: s.stopTimeoutSecs,
      },
      // Same name, same GPUs, same port: the old container must be gone before the new one starts.
      // Any update or replacement asks the restart guard first, as part of that very step.
      { ...childOpts, dependsOn: containerDeps, deleteBeforeReplace: true, hooks: guardHooks(`${name}-container`, host.restartGuard, what) },
    );
    const gate = new CheckedCommand(
      `${name}-ready`,
      {
        connection: host.connection,
        create: scriptWithEnv(["server-health", workerGateScript(s)], workerGateEnv(s)),
        environment: { API_KEY: args.apiKey },
        // A new or restarted container is gated again.
        spec: this.container.id,
        check: scriptWithEnv("container-started", { CONTAINER_NAME: s.containerName }),
        onDrift: "update",
        timeoutSeconds: s.readyTimeoutMinutes * 60 + 600,
      },
      { parent: this },
    );
    // The URN resolves when the gate's create returned (and is known in a preview), so the router's
    // worker list waits for the gate without turning unknown whenever the gate re-runs.
    this.url = gate.urn.apply(() => s.url);
    this.dpSize = s.dp;
    // The gate already drops the fields and masks the key (sglang-worker.sh); cleaning here as well covers a
    // gate's stdout that an older release left in the state. Masking by the key's value needs the secret
    // key, which would make the result a secret: it is unsecreted because the key is gone from it.
    this.serverInfo = pulumi.unsecret(
      pulumi.all([gate.stdout, pulumi.output(args.apiKey)]).apply(([out, key]) => recordedServerInfo(out.trim().split("\n").pop() ?? "", [key])),
    );
    this.imageDigest = this.image.repoDigest;
    this.registerOutputs({ url: this.url, serverInfo: this.serverInfo, imageDigest: this.imageDigest, image: this.image, container: this.container, preflight: this.preflight?.facts });
  }
}
