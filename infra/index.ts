// The reprobench program: converge the benchmark cluster described by the stack config, in the order
// seed 000 does it by hand — Docker address pools on every host, the proxy bridge and the tool bundle
// on the runner, SGLang workers (each gated on /health and /server_info), then the router over all of
// them. Destroy runs in reverse: router (drained) → workers → bridge → daemon.json restored.
import * as pulumi from "@pulumi/pulumi";
import * as random from "@pulumi/random";
import { BenchmarkRun } from "../components/benchmark-run";
import { DockerDaemonConfig } from "../components/docker-daemon";
import { HarborRunner } from "../components/harbor-runner";
import { HostAccess } from "../components/host-access";
import { ModelBridge } from "../components/model-bridge";
import { ProxyBridge } from "../components/proxy-bridge";
import { SglangRouter } from "../components/sglang-router";
import { SglangWorker } from "../components/sglang-worker";
import { TaskImages, type TaskImagesReport } from "../components/task-images";
import { ToolBundle } from "../components/tool-bundle";
import {
  apiBase, hostsWithRole, loadConfig, modelEndpoint, routerSettings, soleHostWithRole, sshConnection, usesModelBridge, workerSettings,
} from "./config";
import { renderJobConfig, runSettings } from "./run-config";

// Validates everything first: a bad value fails here, before any resource is registered.
const loaded = loadConfig();
const { config } = loaded;

// Seed 002: at 8 concurrent sandboxes ~70% of trials failed with SandboxError/InternalServerError/ReadTimeout;
// 3 brought the error rate down. Not an error (quota differs per account), but said before the run starts.
if (config.run.enabled && config.run.environment === "hf-sandbox" && config.run.nConcurrentTrials > 3) {
  void pulumi.log.warn(`run.nConcurrentTrials is ${config.run.nConcurrentTrials} on hf-sandbox: seed 002 saw ~70% infra errors at 8 and recommends 3`);
}

// One key for every worker's --api-key; the router presents it to the workers and Harbor to the router.
const apiKey = new random.RandomPassword("sglang-api-key", { length: 40, special: false });

// Each host: its facts and Docker engine (over SSH), then daemon.json's address pools.
const access: Record<string, HostAccess> = {};
const daemons: Record<string, DockerDaemonConfig> = {};
for (const host of config.hosts) {
  const connection = sshConnection(loaded, host.name);
  access[host.name] = new HostAccess(host.name, { connection });
  daemons[host.name] = new DockerDaemonConfig(`${host.name}-docker`, { connection, settings: config.docker }, { dependsOn: [access[host.name]] });
}

const runner = soleHostWithRole(config, "runner");
const runnerConnection = sshConnection(loaded, runner.name);

const bridge =
  config.proxy.enabled && loaded.secrets.proxyUpstream
    ? new ProxyBridge(
        "proxy-bridge",
        {
          connection: runnerConnection,
          settings: { bridgePort: config.proxy.bridgePort, containerHost: config.proxy.containerHost, checkImage: config.toolBundle.canaryImage, checkUrl: config.proxy.checkUrl },
          upstream: loaded.secrets.proxyUpstream,
        },
        { dependsOn: [daemons[runner.name]] },
      )
    : undefined;

const toolBundle = config.toolBundle.enabled
  ? new ToolBundle("tool-bundle", { connection: runnerConnection, settings: config.toolBundle }, { dependsOn: [daemons[runner.name]] })
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
      },
      { dependsOn: [daemons[routerHost.name]] },
    )
  : undefined;
/** What stands in front of the model for Harbor: the router, or the single worker. */
const modelFront = router ? [router] : workers;

export const workerUrls = workers.map((w) => w.url);
export const workerServerInfo = workers.map((w) => w.serverInfo);
export const routerUrl = router ? router.url : undefined;
export const routerStatus = router ? router.status : undefined;
export const modelApiBase = apiBase(config);
export const proxyBridge = bridge ? bridge.listen : undefined;
export const toolBundleReport = toolBundle ? toolBundle.report : undefined;
export const sglangApiKey = pulumi.secret(apiKey.result);
export const serverImages = pulumi.all({
  ...Object.fromEntries(workers.map((w, i) => [`worker/${workerHosts[i].name}`, w.imageDigest])),
  ...(router && routerHost ? { [`router/${routerHost.name}`]: router.imageDigest } : {}),
});

// The run (components/harbor-runner.ts, task-images.ts, benchmark-run.ts), when run.enabled: Harbor and
// the dataset on the runner, the task images pre-pulled, then the job. Nothing above reads run.*, so
// changing run-level settings (multipliers, concurrency, filter, sampling, prefix) touches only the job.
const harborRunner = config.run.enabled
  ? new HarborRunner(
      "harbor",
      { connection: runnerConnection, settings: config.harbor, projectDir: pulumi.runtime.getRootDirectory() || process.cwd() },
      { dependsOn: [daemons[runner.name]] },
    )
  : undefined;
// hf-sandbox runs pull task images on HF Jobs, not on the runner.
const taskImages = harborRunner && config.run.environment === "docker"
  ? new TaskImages(
      "task-images",
      { connection: runnerConnection, settings: config.harbor, daemonConfigPath: config.docker.daemonConfigPath, images: harborRunner.images },
      { dependsOn: [daemons[runner.name]] },
    )
  : undefined;
// Agents inside the task container (mini-swe-agent) reach the model through the docker gateway.
const modelBridge = usesModelBridge(config)
  ? new ModelBridge(
      "model-bridge",
      {
        connection: runnerConnection,
        settings: { bridgePort: config.run.modelBridgePort, containerHost: config.proxy.containerHost, checkImage: config.toolBundle.canaryImage, upstream: modelEndpoint(config) },
      },
      { dependsOn: [...modelFront, daemons[runner.name]] },
    )
  : undefined;
const noImages: TaskImagesReport = { ready: 0, total: 0, images: {} };
const benchmark =
  harborRunner
    ? new BenchmarkRun(
        "benchmark",
        {
          settings: runSettings(config, apiBase(config)),
          connection: runnerConnection,
          hosts: config.hosts.map((h) => ({ name: h.name, connection: sshConnection(loaded, h.name) })),
          apiKey: apiKey.result,
          hfToken: config.run.environment === "hf-sandbox" ? loaded.secrets.hfToken : undefined,
          install: harborRunner.install,
          dataset: harborRunner.dataset,
          images: taskImages ? taskImages.report : noImages,
          workerServerInfo: Object.fromEntries(workerHosts.map((h, i) => [h.name, workers[i].serverInfo])),
          serverImages,
          // eslint-disable-next-line @typescript-eslint/no-require-imports -- the toolkit version recorded in the run manifest
          toolkitVersion: (require("../package.json") as { version: string }).version,
        },
        {
          dependsOn: [
            ...modelFront, harborRunner, ...(taskImages ? [taskImages] : []), ...(toolBundle ? [toolBundle] : []),
            ...(bridge ? [bridge] : []), ...(modelBridge ? [modelBridge] : []),
          ],
        },
      )
    : undefined;

// What will run, readable in `pulumi preview` before anything exists (the job name is fixed at create).
// Absent things are undefined (no output), not sentinel strings.
export const harborJobConfig = config.run.enabled ? renderJobConfig(config, apiBase(config)) : undefined;
export const harborInstall = harborRunner ? harborRunner.install : undefined;
export const dataset = harborRunner ? harborRunner.dataset : undefined;
export const taskImagesReady = taskImages ? taskImages.report.apply((r) => `${r.ready}/${r.total} images ready`) : undefined;
export const modelBridgeListen = modelBridge ? modelBridge.listen : undefined;
export const jobName = benchmark ? benchmark.jobName : undefined;
export const jobsDir = config.harbor.jobsDir;
export const jobLog = benchmark ? benchmark.logPath : undefined;
export const harborUnit = benchmark ? benchmark.unit : undefined;
export const harborPid = benchmark ? benchmark.pid : undefined;
export const jobState = benchmark ? benchmark.state : undefined;
export const jobSummary = benchmark ? benchmark.summary : undefined;
