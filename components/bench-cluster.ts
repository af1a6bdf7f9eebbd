import { existsSync, readFileSync } from "node:fs";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import * as random from "@pulumi/random";
import { BenchmarkRun } from "./benchmark-run";
import { ClusterGuard } from "./cluster-guard";
import {
  type LoadedConfig, type ReprobenchConfig, type ReprobenchConfigInput, SECRET_KEYS, SECRET_PLACEHOLDER, apiBase, bridgeSettings, hostDaemonProxies, hostProxyEnv, hostRegistryEnv, hostsWithRole, modelBridgeSettings, mutableImageRefs,
  pullQuotaSettings, registryMirrors, renderJobConfig, resolveClusterConfig, routerSettings, runSettings, soleHostWithRole, sshConnection, usesModelBridge, workerSettings,
} from "./config";
import { DockerDaemonConfig } from "./docker-daemon";
import { HarborRunner, type HarborInstallReport } from "./harbor-runner";
import type { ClusterHost } from "./host";
import { type ClusterOwner, HostAccess, HostRights } from "./host-access";
import { ModelBridge } from "./model-bridge";
import { ProxyBridge } from "./proxy-bridge";
import { daemonRegistryMirrors } from "./registry-access";
import { type RestartGuardSettings, restartGuardHook } from "./restart-guard";
import { SglangRouter } from "./sglang-router";
import { ModelServer } from "./model-server";
import { type PreflightFacts, hostPlan } from "./preflight/plan";
import type { HostConnectionInput, HostLogin } from "./transport";
import { type DatasetReport, TaskDataset } from "./task-dataset";
import { TaskImages, type TaskImagesReport } from "./task-images";
import { ToolBundle } from "./tool-bundle";
import { WeightsDownload, weightsDownloadSettings } from "./weights-download";

/** The cluster's secrets, by the settings key each replaces; secret Outputs or plain strings (made secret here). */
export interface BenchClusterSecrets {
  /** Host name (or "default") → OpenSSH private key (PEM). */
  readonly sshPrivateKeys?: Record<string, pulumi.Input<string>>;
  /** The runner's upstream proxy URL (may carry credentials). */
  readonly proxyUpstream?: pulumi.Input<string>;
  /** Hugging Face token (hf-sandbox runs). */
  readonly hfToken?: pulumi.Input<string>;
  /** Host name (or "default") → the host's proxy URL (hosts[].proxy). */
  readonly proxyUrls?: Record<string, pulumi.Input<string>>;
  /** Registry host → password or access token of its registries[] account. */
  readonly registryPasswords?: Record<string, pulumi.Input<string>>;
}

/**
 * A cluster's settings: what a stack file's `reprobench:*` keys hold, without the namespace and without the
 * secrets (each an argument of its own), everything with a default optional (docs/config.md).
 */
export type BenchClusterSettings = Omit<ReprobenchConfigInput, (typeof SECRET_KEYS)[number]>;

export interface BenchClusterArgs {
  /**
   * The cluster's settings, as a stack file's `reprobench:*` keys hold them without the namespace (hosts,
   * modelServer, router, docker, proxy, toolBundle, harbor, run, registries, …), plain data. Validated as
   * `reprobench config validate` validates a stack file: one error listing every problem (also what a
   * type cannot say: ranges, patterns, which roles a cluster needs).
   */
  readonly settings: BenchClusterSettings;
  /** The secrets (never put them in `settings`). */
  readonly secrets?: BenchClusterSecrets;
  /** Where relative key, host key and dataset paths in the settings resolve from (default: the Pulumi project directory). */
  readonly projectDir?: string;
  /** "<project>.<stack>" that owns the cluster (default: this program's project and stack). */
  readonly stackId?: string;
  /** The toolkit version recorded in the run manifest (default: this package's). */
  readonly toolkitVersion?: string;
}

/** Inputs a job on this cluster needs, read from it: what a BenchmarkRun of another stack is given. */
export interface ClusterHandle {
  /** The hosts, by name. */
  readonly hosts: Record<string, ClusterHost>;
  /** The runner's name. */
  readonly runner: string;
  /** The workers' and router's shared API key (secret). */
  readonly apiKey: pulumi.Input<string>;
  readonly install: pulumi.Input<HarborInstallReport>;
  readonly dataset: pulumi.Input<Record<string, unknown>>;
  readonly images: pulumi.Input<TaskImagesReport>;
  /** Worker host → /server_info text. */
  readonly workerServerInfo: pulumi.Input<Record<string, pulumi.Input<string>>>;
  /** Worker host → its preflight's facts, for the run manifest (absent: none recorded, `preflight: {}`). */
  readonly workerPreflight?: pulumi.Input<Record<string, pulumi.Input<PreflightFacts>>>;
  /** Server and router images as pulled (name@sha256:…), keyed by role and host. */
  readonly serverImages: pulumi.Input<Record<string, pulumi.Input<string>>>;
}

/** The settings with each secret given replaced: a plain string by itself (validated), an Output by the placeholder. */
export function settingsWithSecrets(settings: Record<string, unknown>, secrets: BenchClusterSecrets = {}): Record<string, unknown> {
  const raw: Record<string, unknown> = { ...settings };
  // Anything but a value to come (an Output, a promise) is validated as given: a wrong shape is named.
  const plainOrPlaceholder = (v: unknown) => (isDeferred(v) ? SECRET_PLACEHOLDER : v);
  for (const key of ["sshPrivateKeys", "proxyUrls", "registryPasswords"] as const) {
    const given: unknown = secrets[key];
    if (given === undefined) continue;
    const isMap = typeof given === "object" && given !== null && !Array.isArray(given) && !isDeferred(given);
    raw[key] = isMap ? Object.fromEntries(Object.entries(given).map(([k, v]) => [k, plainOrPlaceholder(v)])) : plainOrPlaceholder(given);
  }
  for (const key of ["proxyUpstream", "hfToken"] as const) {
    const given = secrets[key];
    if (given !== undefined) raw[key] = plainOrPlaceholder(given);
  }
  return raw;
}

/** A secret whose value comes later (a Python program's secret Output, a promise): validated behind the placeholder. */
function isDeferred(v: unknown): boolean {
  return pulumi.Output.isInstance(v) || v instanceof Promise;
}

/**
 * The resolved config of BenchCluster's args: validated, the files they name read, and every secret a
 * secret Output — those given as Outputs (a Python program's) taking the place of their placeholders.
 */
export function clusterConfigOf(args: BenchClusterArgs, options: { projectDir: string; requireSecrets: boolean; warn: (m: string) => void }): LoadedConfig {
  // Plain secrets are in the raw settings themselves; only the Outputs are looked up behind their placeholders.
  return resolveClusterConfig(settingsWithSecrets(args.settings, args.secrets), options, args.secrets);
}

/**
 * A whole benchmark cluster (seed 000's order): every host claimed for this stack, daemon.json's pools,
 * the proxy bridge and the tool bundle on the runner, the model servers (each gated on /health and
 * /server_info), the router over all of them, Harbor with the dataset and the task images, and its own
 * job when run.enabled. Each host gets one handle (`hosts`), made once, that every part placed on it takes.
 *
 * The parts keep the names they had when the reprobench program registered them at the top level (and
 * are aliased there), so a stack brought up before this component existed replaces nothing. So a
 * program holds one BenchCluster (a second one's parts would have the first one's URNs; the restart guard
 * is the program's too).
 */
export class BenchCluster extends pulumi.ComponentResource {
  /** The host handles, by host name. */
  public readonly hosts: Record<string, ClusterHost>;
  /** The validated settings (secrets as placeholders). */
  public readonly config: ReprobenchConfig;
  /** The model servers, by worker host name. */
  public readonly workers: Record<string, ModelServer>;
  /** Worker host → what its preflight found (GPUs, driver, weights, fit): the stack output and the run manifest. */
  public readonly workerPreflight: Record<string, pulumi.Output<PreflightFacts>>;
  /** The weights downloads (modelServer.download), by worker host name; empty without it. */
  public readonly weights: Record<string, WeightsDownload>;
  public readonly router?: SglangRouter;
  public readonly proxyBridge?: ProxyBridge;
  public readonly toolBundle?: ToolBundle;
  public readonly harbor?: HarborRunner;
  public readonly taskDataset?: TaskDataset;
  public readonly taskImages?: TaskImages;
  public readonly modelBridge?: ModelBridge;
  /** This cluster's own job (run.enabled). */
  public readonly benchmark?: BenchmarkRun;
  /** The owning stack, recorded on every host. */
  public readonly owner: pulumi.Output<ClusterOwner>;
  /** The API key every worker and the router share (secret). */
  public readonly apiKey: pulumi.Output<string>;
  /** The model endpoint Harbor's agents use (the router's, or the single worker's). */
  public readonly modelApiBase: string;
  /** Server and router images as pulled (name@sha256:…), keyed by role and host. */
  public readonly serverImages: pulumi.Output<Record<string, string>>;
  /**
   * Every host's SSH login without its key: where run stacks on this cluster (and the CLI) reach the hosts;
   * each brings its own key (its sshPrivateKeys, or the key file the stack file names).
   */
  public readonly hostConnections: pulumi.Output<HostLogin[]>;
  /** The runner's proxy variables and registry accounts (secret), for a run stack's own dataset and pre-pull. */
  public readonly runnerPullEnv?: pulumi.Output<{ proxy: Record<string, string>; registry: Record<string, string> }>;
  /** What a job of this cluster is given (BenchmarkRun), from this cluster's parts; absent without Harbor. */
  public readonly handle?: ClusterHandle;
  /** Harbor's job config as rendered for this cluster's own run (run.enabled). */
  public readonly jobConfig?: string;

  constructor(name: string, args: BenchClusterArgs, opts?: pulumi.ComponentResourceOptions) {
    // Validated before anything is registered: a bad setting leaves nothing behind in the state.
    const loaded = clusterConfigOf(args, {
      projectDir: args.projectDir ?? programDirectory(),
      requireSecrets: !pulumi.runtime.isDryRun(),
      warn: (m) => void pulumi.log.warn(m),
    });
    super("reprobench:cluster:BenchCluster", name, {}, opts);
    const project = pulumi.getProject();
    const stack = pulumi.getStack();
    const stackId = args.stackId ?? `${project}.${stack}`;
    const { config } = loaded;
    this.config = config;
    // Each part is named after the cluster (`<cluster>-<role>`), so that one program can hold several. Before,
    // a part was `<role>` under the cluster, and earlier `<role>` at the top level of the program: aliased to
    // both, so a stack brought up before keeps every part (the parts' own children follow their parent's
    // alias, by the engine's rule for a renamed parent whose children's names start with its name).
    const part = (role: string) => `${name}-${role}`;
    const child = (role: string, more: pulumi.CustomResourceOptions = {}): pulumi.CustomResourceOptions => ({
      parent: this,
      aliases: [{ name: role }, { name: role, parent: undefined }],
      ...more,
    });

    // Seed 002: at 8 concurrent sandboxes ~70% of trials failed with SandboxError/InternalServerError/ReadTimeout;
    // 3 brought the error rate down. Not an error (quota differs per account), but said before the run starts.
    if (config.run.enabled && config.run.environment === "hf-sandbox" && config.run.nConcurrentTrials > 3) {
      void pulumi.log.warn(`run.nConcurrentTrials is ${config.run.nConcurrentTrials} on hf-sandbox: seed 002 saw ~70% infra errors at 8 and recommends 3`, this);
    }
    // A tag can move: two hosts (or two days) may resolve it to different builds. The digests each host pulled
    // are recorded (serverImages, the run manifest), but only a digest in the config pins the image.
    for (const { key, ref } of mutableImageRefs(config)) {
      void pulumi.log.warn(`${key}: ${ref} is a tag, not a digest; hosts may resolve it to different builds (the pulled digests are recorded in serverImages and the run manifest). Pin it as ${ref.replace(/:[^:/@]+$/, "")}@sha256:…`, this);
    }

    // One key for every worker's --api-key; the router presents it to the workers and Harbor to the router.
    const apiKey = new random.RandomPassword(part("sglang-api-key"), { length: 40, special: false }, child("sglang-api-key"));
    // A token of this stack's own: a second stack of the same name (another checkout, another backend) is
    // still another owner.
    const ownerToken = new random.RandomId(part("cluster-owner-token"), { byteLength: 12 }, child("cluster-owner-token"));
    const owner: pulumi.Output<ClusterOwner> = pulumi.output({ project, stack, token: ownerToken.hex });
    const runnerName = soleHostWithRole(config, "runner").name;
    // Every change that restarts or swaps what running trials use (servers, router, dockerd, bridges, tool
    // bundle, Harbor install) is first checked against the jobs running on the runner (any stack's), as a
    // hook of that very change.
    const restartGuard: RestartGuardSettings = {
      cluster: name,
      runnerConnection: sshConnection(loaded, runnerName),
      currentDir: `${config.harbor.workDir}/runs/current.d`,
      allowDuringJobs: config.allowRestartsDuringJobs,
    };
    // Registered whatever this run of the program contains: a resource it no longer has is deleted with it.
    restartGuardHook(restartGuard);
    // The logins' rights on every host first: a login without them anywhere stops `up` before any host changes.
    const rights = config.hosts.map((host) => new HostRights(part(`${host.name}-rights`), { connection: sshConnection(loaded, host.name) }, child(`${host.name}-rights`)));
    const registryEnv = hostRegistryEnv(loaded);
    const registryLogins = config.registries.some((r) => r.username !== null) ? loaded.secrets.registryLogins : undefined;
    const daemonSettings = { ...config.docker, registryMirrors: daemonRegistryMirrors(registryMirrors(config)) };

    // Each host: claimed, its facts and Docker engine (over SSH), its handle, then daemon.json's address pools.
    const hosts: Record<string, ClusterHost> = {};
    const daemons: Record<string, DockerDaemonConfig> = {};
    const accesses: Record<string, HostAccess> = {};
    for (const host of config.hosts) {
      const connection = sshConnection(loaded, host.name);
      const access = new HostAccess(part(host.name), { connection, owner, registryLogins }, child(host.name, { dependsOn: rights }));
      accesses[host.name] = access;
      hosts[host.name] = {
        name: host.name, connection, dockerProvider: access.dockerProvider, loginUser: access.loginUser, proxyEnv: hostProxyEnv(loaded, host.name), restartGuard,
      };
      // dockerd pulls through the host's proxy (hosts[].proxy), when it has one, and Docker Hub through its mirror.
      daemons[host.name] = new DockerDaemonConfig(
        part(`${host.name}-docker`),
        { host: hosts[host.name], settings: daemonSettings, proxies: hostDaemonProxies(loaded, host.name) },
        child(`${host.name}-docker`, { dependsOn: [access] }),
      );
    }
    this.hosts = hosts;
    const runner = hosts[runnerName];

    this.proxyBridge = config.proxy.enabled && loaded.secrets.proxyUpstream
      ? new ProxyBridge(part("proxy-bridge"), { host: runner, settings: bridgeSettings(config), upstream: loaded.secrets.proxyUpstream }, child("proxy-bridge", { dependsOn: [daemons[runnerName]] }))
      : undefined;
    const bridge = this.proxyBridge;
    this.toolBundle = config.toolBundle.enabled
      ? new ToolBundle(part("tool-bundle"), { host: runner, settings: config.toolBundle, registryEnv }, child("tool-bundle", { dependsOn: [daemons[runnerName]] }))
      : undefined;

    // Workers start after their host's daemon.json is settled (a docker restart would kill them) and after
    // the bridge, so that destroy removes the bridge only once the model servers are gone.
    const workerHosts = hostsWithRole(config, "worker");
    // modelServer.download: each worker's weights from the hub once its host is claimed, before its
    // preflight (the ModelServer, hence its preflight, waits for it). Without the key: none, and no change.
    this.weights = Object.fromEntries(
      workerHosts.flatMap((host) => {
        const settings = weightsDownloadSettings(config, host.name);
        if (!settings) return [];
        return [[host.name, new WeightsDownload(part(`${host.name}-weights`), { host: hosts[host.name], settings, hfToken: loaded.secrets.hfToken }, child(`${host.name}-weights`, { dependsOn: [accesses[host.name]] }))]];
      }),
    );
    const weights = this.weights;
    const workers = workerHosts.map(
      (host) =>
        new ModelServer(
          part(`${host.name}-sglang`),
          {
            host: hosts[host.name], settings: workerSettings(config, host.name), apiKey: apiKey.result, registryEnv, followImageTags: config.followImageTags,
            // Every worker passes its host's preflight before its server is created or replaced.
            preflight: hostPlan(config, host.name),
            // Downloaded weights: a new commit restarts the server on them.
            weightsCommit: weights[host.name]?.report.commit,
          },
          child(`${host.name}-sglang`, { dependsOn: [daemons[host.name], ...(bridge ? [bridge] : []), ...(weights[host.name] ? [weights[host.name]] : [])] }),
        ),
    );
    this.workers = Object.fromEntries(workerHosts.map((h, i) => [h.name, workers[i]]));
    this.workerPreflight = Object.fromEntries(workerHosts.flatMap((h, i) => {
      const facts = workers[i].preflight?.facts;
      return facts ? [[h.name, facts]] : [];
    }));

    // With router.enabled false (seeds 002/003: one server, no router) Harbor talks to the worker itself. The
    // router consumes the workers' URLs, each resolving once that worker passed its gate.
    const routerHost = config.router.enabled ? soleHostWithRole(config, "router") : undefined;
    this.router = routerHost
      ? new SglangRouter(
          part("router"),
          {
            host: hosts[routerHost.name], settings: routerSettings(config), workers: workers.map((w) => ({ url: w.url, dpSize: w.dpSize })), apiKey: apiKey.result, registryEnv,
            followImageTags: config.followImageTags,
          },
          child("router", { dependsOn: [daemons[routerHost.name]] }),
        )
      : undefined;
    const router = this.router;
    /** What stands in front of the model for Harbor: the router, or the single worker. */
    const modelFront = router ? [router] : workers;
    this.serverImages = pulumi.all({
      ...Object.fromEntries(workers.map((w, i) => [`worker/${workerHosts[i].name}`, w.imageDigest])),
      ...(router && routerHost ? { [`router/${routerHost.name}`]: router.imageDigest } : {}),
    });

    // The run (harbor-runner.ts, task-dataset.ts, task-images.ts, benchmark-run.ts), when run.enabled: Harbor
    // and the dataset on the runner, the task images pre-pulled, then the job. Nothing above reads run.*, so
    // changing run-level settings (multipliers, concurrency, filter, sampling, prefix) touches only the job.
    this.harbor = config.run.enabled || config.harbor.enabled
      ? new HarborRunner(part("harbor"), { host: runner, settings: config.harbor }, child("harbor", { dependsOn: [daemons[runnerName]] }))
      : undefined;
    const harbor = this.harbor;
    // The dataset after the install (which makes the uploads dir an upload writes into). Its steps were the
    // HarborRunner's children before TaskDataset existed: aliased there (under this cluster, and at the top
    // level where the program had it), so no stack replaces its dataset.
    this.taskDataset = harbor
      ? new TaskDataset(
          part("harbor"),
          {
            host: runner, settings: config.harbor, projectDir: args.projectDir ?? programDirectory(),
            // The HarborRunner was `harbor`, under this cluster and before that at the top level.
            formerParents: [pulumi.createUrn("harbor", "reprobench:runner:HarborRunner", this), pulumi.createUrn("harbor", "reprobench:runner:HarborRunner")],
            formerName: "harbor",
          },
          child("harbor", { dependsOn: [harbor] }),
        )
      : undefined;
    const taskDataset = this.taskDataset;
    // hf-sandbox runs pull task images on HF Jobs, not on the runner.
    this.taskImages = taskDataset && config.run.environment === "docker"
      ? new TaskImages(
          part("task-images"),
          {
            host: runner, settings: config.harbor, daemonConfigPath: config.docker.daemonConfigPath, images: taskDataset.images, registryEnv,
            mirrors: registryMirrors(config), pullQuota: pullQuotaSettings(config),
          },
          child("task-images", { dependsOn: [daemons[runnerName]] }),
        )
      : undefined;
    const taskImages = this.taskImages;
    // Agents inside the task container (mini-swe-agent) reach the model through the docker gateway.
    this.modelBridge = usesModelBridge(config)
      ? new ModelBridge(part("model-bridge"), { host: runner, settings: modelBridgeSettings(config) }, child("model-bridge", { dependsOn: [...modelFront, daemons[runnerName]] }))
      : undefined;
    const modelBridge = this.modelBridge;

    this.owner = owner;
    this.apiKey = pulumi.secret(apiKey.result);
    this.modelApiBase = apiBase(config);
    // No private key leaves the owner: a key in an output would reach every stack that can read it.
    this.hostConnections = pulumi.output(config.hosts.map((h) => loginOf(sshConnection(loaded, h.name)))) as pulumi.Output<HostLogin[]>;
    this.runnerPullEnv = harbor
      ? pulumi.secret(pulumi.all([pulumi.output(runner.proxyEnv ?? {}), pulumi.output(registryEnv ?? {})]).apply(([proxy, registry]) => ({ proxy, registry })))
      : undefined;
    const workerServerInfo = Object.fromEntries(workerHosts.map((h, i) => [h.name, workers[i].serverInfo]));
    this.handle = harbor && taskDataset
      ? {
          hosts, runner: runnerName, apiKey: apiKey.result, install: harbor.install, dataset: taskDataset.dataset,
          images: taskImages ? taskImages.report : { ready: 0, total: 0, images: {} }, workerServerInfo, workerPreflight: this.workerPreflight,
          serverImages: this.serverImages,
        }
      : undefined;

    this.benchmark = this.handle && config.run.enabled
      ? new BenchmarkRun(
          part("benchmark"),
          {
            ...runInputs(this.handle),
            settings: runSettings(config, apiBase(config), stackId),
            hfToken: config.run.environment === "hf-sandbox" ? loaded.secrets.hfToken : undefined,
            toolkitVersion: args.toolkitVersion ?? toolkitVersion(),
          },
          child("benchmark", {
            dependsOn: [
              ...modelFront, ...(harbor ? [harbor] : []), ...(taskDataset ? [taskDataset] : []), ...(taskImages ? [taskImages] : []), ...(this.toolBundle ? [this.toolBundle] : []),
              ...(bridge ? [bridge] : []), ...(modelBridge ? [modelBridge] : []),
            ],
          }),
        )
      : undefined;

    // Destroyed before anything of the cluster: refuses while another stack still runs a job here.
    new ClusterGuard(
      part("cluster-guard"),
      { host: runner, currentDir: `${config.harbor.workDir}/runs/current.d`, ownStackId: stackId },
      child("cluster-guard", {
        dependsOn: [
          ...Object.values(daemons), ...workers, ...(router ? [router] : []), ...(bridge ? [bridge] : []), ...(this.toolBundle ? [this.toolBundle] : []),
          ...(harbor ? [harbor] : []), ...(taskDataset ? [taskDataset] : []), ...(taskImages ? [taskImages] : []), ...(modelBridge ? [modelBridge] : []),
        ],
      }),
    );

    this.jobConfig = config.run.enabled ? renderJobConfig(config, apiBase(config)) : undefined;
    this.registerOutputs({
      owner: this.owner, apiKey: this.apiKey, modelApiBase: this.modelApiBase, serverImages: this.serverImages, hostConnections: this.hostConnections, runnerPullEnv: this.runnerPullEnv,
      jobConfig: this.jobConfig,
    });
  }
}

/** A connection's login without its key (the key is the only secret of a connection). */
export function loginOf(c: HostConnectionInput): Omit<HostConnectionInput, "privateKey"> {
  const { privateKey: _key, ...login } = c;
  return login;
}

/** A BenchmarkRun's cluster inputs from a cluster handle: the runner, every host, what Harbor runs with. */
export function runInputs(cluster: ClusterHandle) {
  const runner = cluster.hosts[cluster.runner];
  if (!runner) throw new Error(`cluster handle: no host named '${cluster.runner}' (the runner)`);
  return {
    runner,
    hosts: Object.values(cluster.hosts),
    apiKey: cluster.apiKey,
    install: cluster.install,
    dataset: cluster.dataset,
    images: cluster.images,
    workerServerInfo: cluster.workerServerInfo,
    workerPreflight: cluster.workerPreflight,
    serverImages: cluster.serverImages,
  };
}

/**
 * The program's directory: Pulumi's root directory, or, where that is no directory (a component served to
 * another language's program, whose provider process gets a placeholder), the directory it runs in.
 */
export function programDirectory(): string {
  const root = pulumi.runtime.getRootDirectory();
  return root && existsSync(root) ? root : process.cwd();
}

/** This package's version (recorded in run manifests), from its package.json: above components/, or above dist/components/ once built. */
export function toolkitVersion(): string {
  for (const up of ["..", "../.."]) {
    const file = path.join(__dirname, up, "package.json");
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, "utf8")) as { name?: string; version?: string };
    if (pkg.name === "reprobench" && pkg.version) return pkg.version;
  }
  throw new Error(`reprobench: no package.json of reprobench above ${__dirname}`);
}

/** The dataset report a job reads (TaskDataset.dataset without the task files). */
export type JobDataset = Omit<DatasetReport, "taskTomls">;
