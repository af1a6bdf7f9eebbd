// The program of a run stack (reprobench:cluster: <owner>): one Harbor job on a cluster another stack of
// this project owns. Everything about the cluster — hosts and their keys, the API key, the model endpoint,
// Harbor's install, the dataset, the task images — comes from the owner's outputs through a
// StackReference; this stack registers only its job's resources, so a preview lists no cluster resource
// and no `up` or `destroy` of it can change the cluster. Destroy stops only this stack's job (results kept).
import * as pulumi from "@pulumi/pulumi";
import { BenchmarkRun } from "../components/benchmark-run";
import type { HostConnection } from "../components/ssh";
import type { TaskImagesReport } from "../components/task-images";
import { apiBase, combineWithCluster, formatProblems, hostsWithRole, soleHostWithRole } from "./config";
import type { RunStackConfig } from "./config-schema";
import { renderJobConfig, runSettings } from "./run-config";

/** What a run stack needs from its cluster's owner; each is an output of the owning stack. */
export const CLUSTER_OUTPUTS = ["clusterOwner", "clusterConfig", "hostConnections", "sglangApiKey", "harborInstall", "dataset"] as const;

/** The run stack's program; `runRaw` is its raw config (for the run section's own defaults). */
export async function runOnCluster(runStack: RunStackConfig, runRaw: Record<string, unknown>): Promise<Record<string, unknown>> {
  const owner = new pulumi.StackReference("cluster", { name: runStack.cluster });
  const read = async (name: string): Promise<unknown> => {
    let details: pulumi.StackReferenceOutputDetails;
    try {
      details = await owner.getOutputDetails(name);
    } catch (err) {
      throw new pulumi.RunError(`reprobench:cluster: cannot read stack '${runStack.cluster}' (${(err as Error).message}); bring the owning stack up first (reprobench up --stack ${runStack.cluster})`);
    }
    return details.value ?? details.secretValue;
  };
  for (const name of CLUSTER_OUTPUTS) {
    if ((await read(name)) === undefined) {
      const hint = name === "harborInstall" || name === "dataset" ? ": set harbor.enabled (or run.enabled) on that stack so it installs Harbor and the dataset" : "";
      throw new pulumi.RunError(`reprobench:cluster: stack '${runStack.cluster}' has no output '${name}', so it owns no cluster this stack can run on${hint}`);
    }
  }
  const combined = combineWithCluster((await read("clusterConfig")) as Record<string, unknown>, runStack, runRaw);
  if (!combined.ok) throw new pulumi.RunError(`invalid run on cluster '${runStack.cluster}' (${combined.problems.length} problem(s)):\n${formatProblems(combined.problems)}`);
  const config = combined.config;
  if (!config.run.enabled) throw new pulumi.RunError("reprobench:run.enabled: got false; a run stack exists to run a job (set it true, or remove the stack)");

  const runner = soleHostWithRole(config, "runner");
  const connections = owner.getOutput("hostConnections") as pulumi.Output<HostConnection[]>;
  const connectionOf = (name: string) => connections.apply((list) => {
    const found = list.find((c) => c.name === name);
    if (!found) throw new Error(`stack '${runStack.cluster}' exports no connection for host ${name}`);
    return found;
  });
  const stackId = `${pulumi.getProject()}.${pulumi.getStack()}`;
  const images = (await read("taskImagesReport")) as TaskImagesReport | undefined;
  const benchmark = new BenchmarkRun("benchmark", {
    settings: runSettings(config, apiBase(config), stackId),
    connection: connectionOf(runner.name),
    hosts: config.hosts.map((h) => ({ name: h.name, connection: connectionOf(h.name) })),
    apiKey: owner.getOutput("sglangApiKey") as pulumi.Output<string>,
    hfToken: config.run.environment === "hf-sandbox" && runStack.hfToken !== undefined ? pulumi.secret(runStack.hfToken) : undefined,
    install: owner.getOutput("harborInstall"),
    dataset: owner.getOutput("dataset"),
    images: images ?? { ready: 0, total: 0, images: {} },
    workerServerInfo: Object.fromEntries(hostsWithRole(config, "worker").map((h) => [h.name, owner.getOutput("workerServerInfoByHost").apply((m) => (m as Record<string, string>)[h.name] ?? "")])),
    serverImages: owner.getOutput("serverImages") as pulumi.Output<Record<string, string>>,
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the toolkit version recorded in the run manifest
    toolkitVersion: (require("../package.json") as { version: string }).version,
  });
  return {
    cluster: runStack.cluster,
    modelApiBase: apiBase(config),
    harborJobConfig: renderJobConfig(config, apiBase(config)),
    jobName: benchmark.jobName,
    jobsDir: config.harbor.jobsDir,
    jobLog: benchmark.logPath,
    harborUnit: benchmark.unit,
    harborPid: benchmark.pid,
    jobState: benchmark.state,
    jobSummary: benchmark.summary,
  };
}
