// reprobench's components as a library: the root component (BenchCluster) with the host handles it makes,
// each part on its own for a program that wires its own cluster, and the settings' schema and rules.
// Compiled to dist/components by the package's build (`npm run build`, run by `prepare`).
export { BenchCluster, type BenchClusterArgs, type BenchClusterSecrets, type BenchClusterSettings, type ClusterHandle, clusterConfigOf, runInputs, toolkitVersion } from "./bench-cluster";
export { BenchmarkRun, type BenchmarkRunArgs, type RunSettings } from "./benchmark-run";
export { CheckedCommand, type CheckedCommandArgs } from "./checked-command";
export { type RunPlacement, runOnCluster } from "./cluster-run";
export { ClusterGuard, type ClusterGuardArgs } from "./cluster-guard";
export { DockerDaemonConfig, type DockerDaemonConfigArgs, type DaemonSettings, type AddressPool } from "./docker-daemon";
export { HarborRunner, type HarborRunnerArgs, type HarborSettings, type HarborInstallReport } from "./harbor-runner";
export { type ClusterHost, onHost } from "./host";
export { HostAccess, type HostAccessArgs, HostRights, type HostRightsArgs, type ClusterOwner, type HostFacts } from "./host-access";
export { ModelBridge, type ModelBridgeArgs, type ModelBridgeSettings } from "./model-bridge";
export { ModelServer, type ModelServerArgs } from "./model-server";
export { type WorkerSettings } from "./model-server-spec";
export { WorkerPreflight, type WorkerPreflightArgs, type HostPlan, type HostVerdict, type PreflightFacts, hostPlan, judgeHost, preflightEnv, runPreflight } from "./preflight";
export { resourceProvider, withCustomResources } from "./provider";
export { HOST_SCRIPT_TYPE, JOB_NAME_TYPE, LEGACY_DYNAMIC_TYPE } from "./resource-types";
export { ProxyBridge, type ProxyBridgeArgs, type BridgeSettings } from "./proxy-bridge";
export { type RestartGuardSettings } from "./restart-guard";
export { SglangRouter, type SglangRouterArgs, type RouterSettings } from "./sglang-router";
export { type HostConnection, type HostConnectionInput, type HostLogin } from "./transport";
export { TaskDataset, type TaskDatasetArgs, type DatasetReport } from "./task-dataset";
export { TaskImages, type TaskImagesArgs, type TaskImagesReport } from "./task-images";
export { ToolBundle, type ToolBundleArgs } from "./tool-bundle";
export { WeightsDownload, type WeightsDownloadArgs, type WeightsDownloadReport, type WeightsDownloadSettings, weightsDownloadSettings } from "./weights-download";
export * as settings from "./config";
