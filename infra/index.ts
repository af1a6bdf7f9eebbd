// The reprobench program: converge the benchmark cluster described by the stack config, in the order
// seed 000 does it by hand — Docker address pools on every host, the proxy bridge and the tool bundle
// on the runner, SGLang workers (each gated on /health and /server_info), then the router over all of
// them. Destroy runs in reverse: router (drained) → workers → bridge → daemon.json restored.
import * as pulumi from "@pulumi/pulumi";
import * as random from "@pulumi/random";
import { DockerDaemonConfig } from "../components/docker-daemon";
import { ProxyBridge } from "../components/proxy-bridge";
import { SglangRouter } from "../components/sglang-router";
import { SglangWorker } from "../components/sglang-worker";
import { ToolBundle } from "../components/tool-bundle";
import { BenchmarkRun } from "../components/benchmark-run";
import { HarborRunner } from "../components/harbor-runner";
import { ModelBridge } from "../components/model-bridge";
import { TaskImages, type TaskImagesReport } from "../components/task-images";
import { renderJobConfig } from "../components/run-config";
import { apiBase, hostsWithRole, loadConfig, soleHostWithRole, sshConnection, usesModelBridge, workerSettings } from "./config";

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

const daemons: Record<string, DockerDaemonConfig> = {};
for (const host of config.hosts) {
  daemons[host.name] = new DockerDaemonConfig(`${host.name}-docker`, {
    connection: sshConnection(loaded, host.name),
    docker: config.docker,
  });
}

const runner = soleHostWithRole(config, "runner");
const runnerConnection = sshConnection(loaded, runner.name);

const bridge =
  config.proxy.enabled && loaded.secrets.proxyUpstream
    ? new ProxyBridge("proxy-bridge", { connection: runnerConnection, config, upstream: loaded.secrets.proxyUpstream }, { dependsOn: [daemons[runner.name]] })
    : undefined;

const toolBundle = config.toolBundle.enabled
  ? new ToolBundle("tool-bundle", { connection: runnerConnection, toolBundle: config.toolBundle }, { dependsOn: [daemons[runner.name]] })
  : undefined;

// Workers start after their host's daemon.json is settled (a docker restart would kill them) and after
// the bridge, so that destroy removes the bridge only once the model servers are gone.
const workers = hostsWithRole(config, "worker").map(
  (host) =>
    new SglangWorker(
      `${host.name}-sglang`,
      { connection: sshConnection(loaded, host.name), settings: workerSettings(config, host.name), apiKey: apiKey.result },
      { dependsOn: [daemons[host.name], ...(bridge ? [bridge] : [])] },
    ),
);

// With router.enabled false (seeds 002/003: one server, no router) Harbor talks to the worker itself.
const routerHost = config.router.enabled ? soleHostWithRole(config, "router") : undefined;
const router = routerHost
  ? new SglangRouter(
      "router",
      { connection: sshConnection(loaded, routerHost.name), config, apiKey: apiKey.result },
      { dependsOn: [...workers, daemons[routerHost.name]] },
    )
  : undefined;
/** What stands in front of the model for Harbor: the router, or the single worker. */
const modelFront = router ? [router] : workers;

export const workerUrls = workers.map((w) => w.url);
export const workerServerInfo = workers.map((w) => w.serverInfo);
export const routerUrl = router ? router.url : "router.enabled is false";
export const routerStatus = router ? router.status : "router.enabled is false";
export const modelApiBase = apiBase(config);
export const proxyBridge = bridge ? bridge.listen : "not configured";
export const toolBundleReport = toolBundle ? toolBundle.report : "disabled";
export const sglangApiKey = pulumi.secret(apiKey.result);

// The run (components/harbor-runner.ts, task-images.ts, benchmark-run.ts), when run.enabled: Harbor and
// the dataset on the runner, the task images pre-pulled, then the job. Nothing above reads run.*, so
// changing run-level settings (multipliers, concurrency, filter, sampling, prefix) touches only the job.
const harborRunner = config.run.enabled
  ? new HarborRunner(
      "harbor",
      { connection: runnerConnection, harbor: config.harbor, projectDir: pulumi.runtime.getRootDirectory() || process.cwd() },
      { dependsOn: [daemons[runner.name]] },
    )
  : undefined;
// hf-sandbox runs pull task images on HF Jobs, not on the runner.
const taskImages = harborRunner && config.run.environment === "docker"
  ? new TaskImages(
      "task-images",
      { connection: runnerConnection, harbor: config.harbor, daemonConfigPath: config.docker.daemonConfigPath, images: harborRunner.images },
      { dependsOn: [daemons[runner.name]] },
    )
  : undefined;
// Agents inside the task container (mini-swe-agent) reach the model through the docker gateway.
const modelBridge = usesModelBridge(config)
  ? new ModelBridge("model-bridge", { connection: runnerConnection, config }, { dependsOn: [...modelFront, daemons[runner.name]] })
  : undefined;
const noImages: TaskImagesReport = { ready: 0, total: 0, images: {} };
const benchmark =
  harborRunner
    ? new BenchmarkRun(
        "benchmark",
        {
          config,
          connection: runnerConnection,
          hosts: config.hosts.map((h) => ({ name: h.name, connection: sshConnection(loaded, h.name) })),
          apiBase: apiBase(config),
          apiKey: apiKey.result,
          hfToken: config.run.environment === "hf-sandbox" ? loaded.secrets.hfToken : undefined,
          install: harborRunner.install,
          dataset: harborRunner.dataset,
          images: taskImages ? taskImages.report : noImages,
          workerServerInfo: Object.fromEntries(hostsWithRole(config, "worker").map((h, i) => [h.name, workers[i].serverInfo])),
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
export const harborJobConfig = config.run.enabled ? renderJobConfig(config, apiBase(config)) : "run.enabled is false";
export const harborInstall = harborRunner ? harborRunner.install : "run.enabled is false";
export const dataset = harborRunner ? harborRunner.dataset : "run.enabled is false";
export const taskImagesReady = taskImages
  ? taskImages.report.apply((r) => `${r.ready}/${r.total} images ready`)
  : config.run.enabled ? "pulled by the sandboxes (run.environment hf-sandbox)" : "run.enabled is false";
export const modelBridgeListen = modelBridge ? modelBridge.listen : "not used";
export const jobName = benchmark ? benchmark.jobName : "run.enabled is false";
export const jobsDir = config.harbor.jobsDir;
export const jobLog = benchmark ? benchmark.logPath : "";
export const harborUnit = benchmark ? benchmark.unit : "";
export const harborPid = benchmark ? benchmark.pid : 0;
export const jobState = benchmark ? benchmark.state : "not started";
export const jobSummary = benchmark ? benchmark.summary : {};
