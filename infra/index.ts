// The reprobench program. A stack either owns a cluster (infra/cluster-program.ts: converge the benchmark
// cluster in the order seed 000 does it by hand, then optionally its own job) or, with reprobench:cluster
// set, runs a job on a cluster another stack owns (infra/run-program.ts). The config is validated first:
// a bad value fails here, before any resource is registered.
import * as pulumi from "@pulumi/pulumi";
import { ownCluster } from "./cluster-program";
import { isRunStack } from "../components/config";
import { loadConfig, loadRunStackConfig, rawFromPulumiConfig } from "./config";
import { runOnCluster } from "./run-program";

export = async (): Promise<Record<string, unknown>> => {
  if (!isRunStack(rawFromPulumiConfig(pulumi.runtime.allConfig()))) return ownCluster(loadConfig());
  const { config, raw } = loadRunStackConfig();
  return runOnCluster(config, raw);
};
