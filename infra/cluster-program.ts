// The program of a stack that owns its cluster (see ownCluster).
import * as pulumi from "@pulumi/pulumi";
import * as random from "@pulumi/random";
import { BenchmarkRun } from "../components/benchmark-run";
import { ClusterGuard } from "../components/cluster-guard";
import { DockerDaemonConfig } from "../components/docker-daemon";
import { HarborRunner } from "../components/harbor-runner";
import { type ClusterOwner, HostAccess, HostRights } from "../components/host-access";
import { ModelBridge } from "../components/model-bridge";
import { ProxyBridge } from "../components/proxy-bridge";
import { daemonRegistryMirrors } from "../components/registry-access";
import { restartGuardHook } from "../components/restart-guard";
import { SglangRouter } from "../components/sglang-router";
import { SglangWorker } from "../components/sglang-worker";
import { TaskDataset } from "../components/task-dataset";
import { TaskImages, type TaskImagesReport } from "../components/task-images";
import { ToolBundle } from "../components/tool-bundle";
import {
  type LoadedConfig, apiBase, bridgeSettings, hostDaemonProxies, hostProxyEnv, hostRegistryEnv, hostsWithRole, modelBridgeSettings, mutableImageRefs, pullQuotaSettings, registryMirrors, routerSettings, soleHostWithRole, sshConnection,
  usesModelBridge, workerSettings,
} from "../components/config";
import { publicConfig, renderJobConfig, runSettings } from "../components/config/job";

/**
 * The program of a stack that owns its cluster: every host claimed for this stack, daemon.json's pools,
 * the proxy bridge and the tool bundle on the runner, the model servers (each gated on /health and
 * /server_info), the router over all of them, Harbor with the dataset and the task images, and this
 * stack's own job when run.enabled. Returns the stack outputs, including what run stacks that reference
 * this cluster read (components/…; infra/run-program.ts).
 */
export function ownCluster(loaded: LoadedConfig): Record<string, unknown> {
  const { config } = loaded;
  const stackId = `${pulumi.getProject()}.${pulumi.getStack()}`;

  // Seed 002: at 8 concurrent sandboxes ~70% of trials failed with SandboxError/InternalServerError/ReadTimeout;
  // 3 brought the error rate down. Not an error (quota differs per account), but said before the run starts.
  if (config.run.enabled && config.run.environment === "hf-sandbox" && config.run.nConcurrentTrials > 3) {
    void pulumi.log.warn(`run.nConcurrentTrials is ${config.run.nConcurrentTrials} on hf-sandbox: seed 002 saw ~70% infra errors at 8 and recommends 3`);
  }

  // A tag can move: two hosts (or two days) may resolve it to different builds. The digests each host pulled
  // are recorded (serverImages, the run manifest), but only a digest in the config pins the image.
  for (const { key, ref } of mutableImageRefs(config)) {
    void pulumi.log.warn(`${key}: ${ref} is a tag, not a digest; hosts may resolve it to different builds (the pulled digests are recorded in serverImages and the run manifest). Pin it as ${ref.replace(/:[^:/@]+$/, "")}@sha256:…`);
  }

  // One key for every worker's --api-key; the router presents it to the workers and Harbor to the router.
  const apiKey = new random.RandomPassword("sglang-api-key", { length: 40, special: false });

  // A token of this stack's own: a second stack of the same name (another checkout, another backend) is
  // still another owner.
  const ownerToken = new random.RandomId("cluster-owner-token", { byteLength: 12 });
  const owner: pulumi.Output<ClusterOwner> = pulumi.output({ project: pulumi.getProject(), stack: pulumi.getStack(), token: ownerToken.hex });
  const runner = soleHostWithRole(config, "runner");
  const runnerConnection = sshConnection(loaded, runner.name);
  // Every change that restarts or swaps what running trials use (servers, router, dockerd, bridges, tool
  // bundle, Harbor install) is first checked against the jobs running on the runner (any stack's), as a
  // hook of that very change.
  const restartGuard = { runnerConnection, currentDir: `${config.harbor.workDir}/runs/current.d`, allowDuringJobs: config.allowRestartsDuringJobs };
  // Registered whatever this run of the program contains: a resource it no longer has is deleted with it.
  restartGuardHook(restartGuard);
  // The logins' rights on every host first: a login without them anywhere stops `up` before any host changes.
  const rights = config.hosts.map((host) => new HostRights(`${host.name}-rights`, { connection: sshConnection(loaded, host.name) }));
  // Registry credentials and mirrors (registries[]) for every step that pulls an image; undefined: none.
  const registryEnv = hostRegistryEnv(loaded);
  const registryLogins = config.registries.some((r) => r.username !== null) ? loaded.secrets.registryLogins : undefined;
  const daemonSettings = { ...config.docker, registryMirrors: daemonRegistryMirrors(registryMirrors(config)) };
  // Each host: claimed, its facts and Docker engine (over SSH), then daemon.json's address pools.
  const access: Record<string, HostAccess> = {};
  const daemons: Record<string, DockerDaemonConfig> = {};
  for (const host of config.hosts) {
    const connection = sshConnection(loaded, host.name);
    access[host.name] = new HostAccess(host.name, { connection, owner, after: rights, registryLogins });
    daemons[host.name] = new DockerDaemonConfig(
      `${host.name}-docker`,
      // dockerd pulls through the host's proxy (hosts[].proxy), when it has one, and Docker Hub through its mirror.
      { connection, settings: daemonSettings, hostName: host.name, restartGuard, proxies: hostDaemonProxies(loaded, host.name) },
      { dependsOn: [access[host.name]] },
    );
  }

  const bridge =
    config.proxy.enabled && loaded.secrets.proxyUpstream
      ? new ProxyBridge(
          "proxy-bridge",
          {
            connection: runnerConnection,
            settings: bridgeSettings(config),
            upstream: loaded.secrets.proxyUpstream,
            restartGuard,
          },
          { dependsOn: [daemons[runner.name]] },
        )
      : undefined;

  const toolBundle = config.toolBundle.enabled
    ? new ToolBundle("tool-bundle", { connection: runnerConnection, settings: config.toolBundle, proxyEnv: hostProxyEnv(loaded, runner.name), registryEnv, restartGuard }, { dependsOn: [daemons[runner.name]] })
    : undefined;

  // Workers start after their host's daemon.json is settled (a docker restart would kill them) and after
  // the bridge, so that destroy removes the bridge only once the model servers are gone.
  const workerHosts = hostsWithRole(config, "worker");
  const workers = workerHosts.map(
    (host) =>
      new SglangWorker(
        `${host.name}-sglang`,
        {
          connection: sshConnection(loaded, host.name),
          dockerProvider: access[host.name].dockerProvider,
          loginUser: access[host.name].loginUser,
          settings: workerSettings(config, host.name),
          apiKey: apiKey.result,
          proxyEnv: hostProxyEnv(loaded, host.name),
          registryEnv,
          restartGuard,
          followImageTags: config.followImageTags,
        },
        { dependsOn: [daemons[host.name], ...(bridge ? [bridge] : [])] },
      ),
  );

  // With router.enabled false (seeds 002/003: one server, no router) Harbor talks to the worker itself. The
  // router consumes the workers' URLs, each resolving once that worker passed its gate.
  const routerHost = config.router.enabled ? soleHostWithRole(config, "router") : undefined;
  const router = routerHost
    ? new SglangRouter(
        "router",
        {
          connection: sshConnection(loaded, routerHost.name),
          dockerProvider: access[routerHost.name].dockerProvider,
          loginUser: access[routerHost.name].loginUser,
          settings: routerSettings(config),
          workers: workers.map((w) => ({ url: w.url, dpSize: w.dpSize })),
          apiKey: apiKey.result,
          proxyEnv: hostProxyEnv(loaded, routerHost.name),
          registryEnv,
          restartGuard,
          followImageTags: config.followImageTags,
        },
        { dependsOn: [daemons[routerHost.name]] },
      )
    : undefined;
  /** What stands in front of the model for Harbor: the router, or the single worker. */
  const modelFront = router ? [router] : workers;

  const serverImages = pulumi.all({
    ...Object.fromEntries(workers.map((w, i) => [`worker/${workerHosts[i].name}`, w.imageDigest])),
    ...(router && routerHost ? { [`router/${routerHost.name}`]: router.imageDigest } : {}),
  });

  // The run (components/harbor-runner.ts, task-dataset.ts, task-images.ts, benchmark-run.ts), when
  // run.enabled: Harbor and the dataset on the runner, the task images pre-pulled, then the job. Nothing
  // above reads run.*, so changing run-level settings (multipliers, concurrency, filter, sampling, prefix)
  // touches only the job.
  const harborRunner = config.run.enabled || config.harbor.enabled
    ? new HarborRunner(
        "harbor",
        { connection: runnerConnection, settings: config.harbor, proxyEnv: hostProxyEnv(loaded, runner.name), restartGuard },
        { dependsOn: [daemons[runner.name]] },
      )
    : undefined;
  // The dataset after the install (which makes the uploads dir an upload writes into). Its steps were the
  // HarborRunner's children before TaskDataset existed: aliased there, so no stack replaces its dataset.
  const taskDataset = harborRunner
    ? new TaskDataset("harbor", {
        connection: runnerConnection, settings: config.harbor, projectDir: pulumi.runtime.getRootDirectory() || process.cwd(), proxyEnv: hostProxyEnv(loaded, runner.name),
        after: [harborRunner], formerParent: harborRunner,
      })
    : undefined;
  // hf-sandbox runs pull task images on HF Jobs, not on the runner.
  const taskImages = taskDataset && config.run.environment === "docker"
    ? new TaskImages(
        "task-images",
        {
          connection: runnerConnection, settings: config.harbor, daemonConfigPath: config.docker.daemonConfigPath, images: taskDataset.images, proxyEnv: hostProxyEnv(loaded, runner.name), registryEnv,
          mirrors: registryMirrors(config), pullQuota: pullQuotaSettings(config),
        },
        { dependsOn: [daemons[runner.name]] },
      )
    : undefined;
  // Agents inside the task container (mini-swe-agent) reach the model through the docker gateway.
  const modelBridge = usesModelBridge(config)
    ? new ModelBridge(
        "model-bridge",
        {
          connection: runnerConnection,
          settings: modelBridgeSettings(config),
          restartGuard,
        },
        { dependsOn: [...modelFront, daemons[runner.name]] },
      )
    : undefined;
  const noImages: TaskImagesReport = { ready: 0, total: 0, images: {} };
  const benchmark =
    harborRunner && taskDataset && config.run.enabled
      ? new BenchmarkRun(
          "benchmark",
          {
            settings: runSettings(config, apiBase(config), stackId),
            connection: runnerConnection,
            hosts: config.hosts.map((h) => ({ name: h.name, connection: sshConnection(loaded, h.name) })),
            apiKey: apiKey.result,
            hfToken: config.run.environment === "hf-sandbox" ? loaded.secrets.hfToken : undefined,
            install: harborRunner.install,
            dataset: taskDataset.dataset,
            images: taskImages ? taskImages.report : noImages,
            workerServerInfo: Object.fromEntries(workerHosts.map((h, i) => [h.name, workers[i].serverInfo])),
            serverImages,
            // eslint-disable-next-line @typescript-eslint/no-require-imports -- the toolkit version recorded in the run manifest
            toolkitVersion: (require("../package.json") as { version: string }).version,
          },
          {
            dependsOn: [
              ...modelFront, harborRunner, taskDataset, ...(taskImages ? [taskImages] : []), ...(toolBundle ? [toolBundle] : []),
              ...(bridge ? [bridge] : []), ...(modelBridge ? [modelBridge] : []),
            ],
          },
        )
      : undefined;

  // Destroyed before anything of the cluster: refuses while another stack still runs a job here.
  new ClusterGuard(
    "cluster-guard",
    { connection: runnerConnection, currentDir: `${config.harbor.workDir}/runs/current.d`, ownStackId: stackId },
    {
      dependsOn: [
        ...Object.values(daemons), ...workers, ...(router ? [router] : []), ...(bridge ? [bridge] : []), ...(toolBundle ? [toolBundle] : []),
        ...(harborRunner ? [harborRunner] : []), ...(taskDataset ? [taskDataset] : []), ...(taskImages ? [taskImages] : []), ...(modelBridge ? [modelBridge] : []),
      ],
    },
  );

  // What will run, readable in `pulumi preview` before anything exists (the job name is fixed at create).
  // Absent things are no output at all, not sentinel strings.
  return definedOnly({
    workerUrls: workers.map((w) => w.url),
    workerServerInfo: workers.map((w) => w.serverInfo),
    routerUrl: router?.url,
    routerStatus: router?.status,
    modelApiBase: apiBase(config),
    proxyBridge: bridge?.listen,
    toolBundleReport: toolBundle?.report,
    sglangApiKey: pulumi.secret(apiKey.result),
    serverImages,
    harborJobConfig: config.run.enabled ? renderJobConfig(config, apiBase(config)) : undefined,
    harborInstall: harborRunner?.install,
    dataset: taskDataset?.dataset,
    taskImagesReady: taskImages?.report.apply((r) => `${r.ready}/${r.total} images ready`),
    modelBridgeListen: modelBridge?.listen,
    jobName: benchmark?.jobName,
    jobsDir: config.harbor.jobsDir,
    jobLog: benchmark?.logPath,
    harborUnit: benchmark?.unit,
    harborPid: benchmark?.pid,
    jobState: benchmark?.state,
    jobSummary: benchmark?.summary,
    // What run stacks on this cluster read (reprobench:cluster: <this stack>; infra/run-program.ts).
    clusterOwner: owner,
    clusterConfig: publicConfig(config),
    hostConnections: pulumi.secret(config.hosts.map((h) => sshConnection(loaded, h.name))),
    taskImagesReport: taskImages?.report,
    // The runner's proxy variables and registry accounts, as this stack's dataset and pre-pull get them: for a
    // run stack that brings its own dataset (reprobench:dataset) and pre-pulls its images.
    runnerPullEnv: harborRunner ? pulumi.secret(pulumi.all({ proxy: hostProxyEnv(loaded, runner.name) ?? {}, registry: registryEnv ?? {} })) : undefined,
    workerServerInfoByHost: pulumi.all(Object.fromEntries(workerHosts.map((h, i) => [h.name, workers[i].serverInfo]))),
  });
}

/** The outputs without the absent ones (Pulumi would warn about each undefined one). */
function definedOnly(outputs: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(outputs).filter(([, v]) => v !== undefined));
}
