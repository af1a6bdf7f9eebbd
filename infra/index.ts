// The reprobench program. A stack either owns a cluster (infra/cluster-program.ts: its config as
// BenchCluster's args) or, with reprobench:cluster set, runs a job on a cluster another stack owns
// (components/cluster-run.ts). The config is validated first: a bad value fails here, before any resource is
// registered.
import * as pulumi from "@pulumi/pulumi";
import { isRunStack } from "../components/config";
import { ownCluster } from "./cluster-program";
import { clusterStackConfig, loadRunStackConfig, rawFromPulumiConfig } from "./config";
import { runOnCluster } from "../components/cluster-run";

export = async (): Promise<Record<string, unknown>> => {
  if (!isRunStack(rawFromPulumiConfig(pulumi.runtime.allConfig()))) return ownCluster(clusterStackConfig());
  const { config, raw } = loadRunStackConfig();
  return runOnCluster(config, raw);
};
