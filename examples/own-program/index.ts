// A Pulumi program of its own on reprobench's components, wired by hand: a cluster of one model server
// and a router beside Harbor (BenchCluster, with no job of its own), then a smoke run of Terminus-2 on
// it (BenchmarkRun, against the cluster's handle). The environment — where the hosts are, which image and
// dataset, which registry and proxies — comes from this stack's config (see README.md).
import * as pulumi from "@pulumi/pulumi";
import { BenchCluster, type BenchClusterSettings, BenchmarkRun, runInputs, settings, toolkitVersion } from "reprobench";

const config = new pulumi.Config();
type HostEntry = Omit<BenchClusterSettings["hosts"][number], "roles">;
/** The two hosts, as reprobench's hosts[] entries without roles: the worker, then the runner. */
const [workerHost, runnerHost] = config.requireObject<[HostEntry, HostEntry]>("hosts");
/** This environment's settings sections (modelServer image and model, registries, proxy, toolBundle, harbor dataset). */
const site = config.requireObject<Omit<BenchClusterSettings, "hosts">>("site");

// One worker, one DP rank; the router and Harbor on the runner.
const clusterSettings: BenchClusterSettings = {
  ...site,
  hosts: [
    { ...workerHost, roles: ["worker"] },
    { ...runnerHost, roles: ["router", "runner"] },
  ],
  modelServer: { ...site.modelServer, tp: 1, dp: 1 },
  harbor: { ...site.harbor, enabled: true },
  run: { enabled: false },
};
const cluster = new BenchCluster("bench", {
  settings: clusterSettings,
  secrets: { proxyUpstream: config.requireSecret("proxyUpstream") },
});
const handle = cluster.handle;
if (!handle) throw new Error("the cluster has no Harbor (harbor.enabled), so no run can be placed on it");

// The run: the same settings with a job, checked by the same rules `reprobench config validate` applies.
const stackId = `${pulumi.getProject()}.${pulumi.getStack()}`;
const withRun = settings.parseConfig({
  ...clusterSettings,
  run: { enabled: true, agent: "terminus-2", modelName: config.require("modelName"), nConcurrentTrials: 2, nConcurrentAgents: 2, waitForCompletion: true, jobNamePrefix: "own-program" },
}, { requireSecrets: false }); // the secrets are the cluster's; the run reads none
if (!withRun.ok) throw new Error(`invalid run settings:\n${settings.formatProblems(withRun.problems)}`);
const smoke = new BenchmarkRun(
  "smoke",
  { ...runInputs(handle), settings: settings.runSettings(withRun.config, cluster.modelApiBase, stackId), toolkitVersion: toolkitVersion() },
  // After every part of the cluster (the router passed its gate, the task images are there); destroyed first.
  { dependsOn: [cluster] },
);

export const routerUrl = cluster.router?.url;
export const workerServerInfo = cluster.workers[String(workerHost.name)]?.serverInfo;
export const jobName = smoke.jobName;
export const jobState = smoke.state;
export const jobSummary = smoke.summary;
