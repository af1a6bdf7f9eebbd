// The program of a stack that owns its cluster: the stack's config as BenchCluster's args, and the
// cluster's parts as the stack outputs (what `reprobench status` and run stacks on this cluster read).
import * as pulumi from "@pulumi/pulumi";
import { BenchCluster, type BenchClusterSecrets, type BenchClusterSettings } from "../components/bench-cluster";
import { SECRET_KEYS, publicConfig } from "../components/config";

/** Raw stack config (reprobench:* without the namespace) as BenchCluster's settings and secrets. */
export function clusterArgsOf(raw: Record<string, unknown>): { settings: BenchClusterSettings; secrets: BenchClusterSecrets } {
  // Of the stack file's shape, not yet checked: the component validates it, naming every problem.
  const settings = Object.fromEntries(Object.entries(raw).filter(([k]) => !(SECRET_KEYS as readonly string[]).includes(k))) as BenchClusterSettings;
  const secrets = Object.fromEntries(Object.entries(raw).filter(([k]) => (SECRET_KEYS as readonly string[]).includes(k))) as BenchClusterSecrets;
  return { settings, secrets };
}

/** The cluster of this stack, and its outputs; `raw` is the stack's validated raw config. */
export function ownCluster(raw: Record<string, unknown>): Record<string, unknown> {
  const cluster = new BenchCluster("cluster", { ...clusterArgsOf(raw), projectDir: pulumi.runtime.getRootDirectory() || process.cwd() });
  const { config } = cluster;
  const workers = Object.values(cluster.workers);
  const job = cluster.benchmark;
  // What will run, readable in `pulumi preview` before anything exists (the job name is fixed at create).
  // Absent things are no output at all, not sentinel strings.
  return definedOnly({
    workerUrls: workers.map((w) => w.url),
    workerServerInfo: workers.map((w) => w.serverInfo),
    routerUrl: cluster.router?.url,
    routerStatus: cluster.router?.status,
    modelApiBase: cluster.modelApiBase,
    proxyBridge: cluster.proxyBridge?.listen,
    toolBundleReport: cluster.toolBundle?.report,
    sglangApiKey: cluster.apiKey,
    serverImages: cluster.serverImages,
    harborJobConfig: cluster.jobConfig,
    harborInstall: cluster.harbor?.install,
    dataset: cluster.taskDataset?.dataset,
    taskImagesReady: cluster.taskImages?.report.apply((r) => `${r.ready}/${r.total} images ready`),
    modelBridgeListen: cluster.modelBridge?.listen,
    jobName: job?.jobName,
    jobsDir: config.harbor.jobsDir,
    jobLog: job?.logPath,
    harborUnit: job?.unit,
    harborPid: job?.pid,
    jobState: job?.state,
    jobSummary: job?.summary,
    // What run stacks on this cluster read (reprobench:cluster: <this stack>; components/cluster-run.ts).
    clusterOwner: cluster.owner,
    clusterConfig: publicConfig(config),
    hostConnections: cluster.hostConnections,
    taskImagesReport: cluster.taskImages?.report,
    // The runner's proxy variables and registry accounts, as this stack's dataset and pre-pull get them: for a
    // run stack that brings its own dataset (reprobench:dataset) and pre-pulls its images.
    runnerPullEnv: cluster.runnerPullEnv,
    workerServerInfoByHost: pulumi.all(Object.fromEntries(Object.entries(cluster.workers).map(([host, w]) => [host, w.serverInfo]))),
    // Each worker's preflight facts, for the manifests of run stacks' jobs (an owner without it: theirs record `{}`).
    workerPreflightByHost: pulumi.all(cluster.workerPreflight),
  });
}

/** The outputs without the absent ones (Pulumi would warn about each undefined one). */
function definedOnly(outputs: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(outputs).filter(([, v]) => v !== undefined));
}
