// The program of a run stack (reprobench:cluster: <owner>): one Harbor job on a cluster another stack of
// this project owns. Everything about the cluster — hosts and their keys, the API key, the model endpoint,
// Harbor's install, the dataset, the task images — comes from the owner's outputs through a
// StackReference; this stack registers only its job's resources (and, with reprobench:dataset, its own
// dataset and task images on the runner), so a preview lists no cluster resource and no `up` or `destroy`
// of it can change the cluster. Destroy stops only this stack's job (results kept); its own dataset
// checkout and images stay on the runner, as the owner's do.
import { existsSync } from "node:fs";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { type ClusterHandle, runInputs, toolkitVersion } from "./bench-cluster";
import { BenchmarkRun } from "./benchmark-run";
import type { HarborInstallReport } from "./harbor-runner";
import type { ClusterHost } from "./host";
import type { PreflightFacts } from "./preflight/plan";
import type { HostConnection, HostLogin } from "./transport";
import { type DatasetReport, RUN_DATASET_KEYS, TaskDataset } from "./task-dataset";
import { TaskImages, type TaskImagesReport } from "./task-images";
import { apiBase, combineWithCluster, formatProblems, hostsWithRole, loginKeyFor, missingLoginKeyMessage, pullQuotaSettings, readLocalFiles, readStackFile, registryMirrors, soleHostWithRole } from "./config";
import type { ReprobenchConfig, RunStackConfig } from "./config/schema";
import { renderJobConfig, runSettings } from "./config/job";

/** What a run stack needs from its cluster's owner; each is an output of the owning stack. */
export const CLUSTER_OUTPUTS = ["clusterOwner", "clusterConfig", "hostConnections", "sglangApiKey", "harborInstall", "dataset"] as const;

/** The owner's `runnerPullEnv` output: the runner's proxy variables and registry accounts' environment (secret). */
export interface RunnerPullEnv {
  proxy: Record<string, string>;
  registry: Record<string, string>;
}

/** "<project>.<stack>" of this stack: names its job's files and the default directory of its own dataset. */
function thisStackId(): string {
  return `${pulumi.getProject()}.${pulumi.getStack()}`;
}

/**
 * Where a run's resources go: a run stack's program registers them at the top level under their own
 * names; a component (the plugin's BenchmarkRun, for programs in other languages) puts them under itself,
 * named after it, with its keys and token given as Outputs.
 */
export interface RunPlacement {
  /** The component the resources are children of (omitted: the top level). */
  readonly parent?: pulumi.Resource;
  /** A resource's name from its role (omitted: the role itself). */
  readonly name?: (role: string) => string;
  /** Where this project's files are (the owner's stack file, key files, a local dataset); default: the program's directory. */
  readonly projectDir?: string;
  /** Host (or "default") → private key, in place of the run stack's sshPrivateKeys. */
  readonly sshPrivateKeys?: pulumi.Input<Record<string, pulumi.Input<string>>>;
  /** The Hugging Face token, in place of the run stack's hfToken. */
  readonly hfToken?: pulumi.Input<string>;
}

/** A placement with every default filled in. */
interface Placed {
  parent?: pulumi.Resource;
  name: (role: string) => string;
  projectDir: string;
  sshPrivateKeys: pulumi.Output<Record<string, string>>;
  hfToken?: pulumi.Input<string>;
}

function placed(runStack: RunStackConfig, p: RunPlacement): Placed {
  return {
    parent: p.parent,
    name: p.name ?? ((role) => role),
    projectDir: p.projectDir ?? (pulumi.runtime.getRootDirectory() || process.cwd()),
    sshPrivateKeys: pulumi.output(p.sshPrivateKeys ?? runStack.sshPrivateKeys) as pulumi.Output<Record<string, string>>,
    hfToken: p.hfToken ?? runStack.hfToken,
  };
}

/**
 * A run on a cluster another stack owns: the run stack's program (`runRaw` is its raw config; the run
 * section keeps its own defaults), or a component's (`placement`).
 */
export async function runOnCluster(runStack: RunStackConfig, runRaw: Record<string, unknown>, placement: RunPlacement = {}): Promise<Record<string, unknown>> {
  const at = placed(runStack, placement);
  const owner = new pulumi.StackReference(at.name("cluster"), { name: runStack.cluster }, { parent: at.parent });
  const read = async (name: string): Promise<unknown> => {
    let details: pulumi.StackReferenceOutputDetails;
    try {
      details = await owner.getOutputDetails(name);
    } catch (err) {
      throw new pulumi.RunError(`reprobench:cluster: cannot read stack '${runStack.cluster}' (${(err as Error).message}); bring the owning stack up first (reprobench up --stack ${runStack.cluster})`);
    }
    return details.value ?? details.secretValue;
  };
  const missing: string[] = [];
  try {
    for (const name of CLUSTER_OUTPUTS) if ((await read(name)) === undefined) missing.push(name);
  } catch (err) {
    if (!pulumi.runtime.isDryRun()) throw err;
    missing.push(...CLUSTER_OUTPUTS);
  }
  if (missing.length === CLUSTER_OUTPUTS.length && pulumi.runtime.isDryRun()) return previewBeforeCluster(runStack, runRaw, at);
  if (missing.length > 0) {
    const hint = missing.includes("harborInstall") || missing.includes("dataset") ? ": set harbor.enabled (or run.enabled) on that stack so it installs Harbor and the dataset" : "";
    throw new pulumi.RunError(`reprobench:cluster: stack '${runStack.cluster}' has no output ${missing.map((m) => `'${m}'`).join(", ")}, so it owns no cluster this stack can run on (bring it up first)${hint}`);
  }
  const config = combined(runStack, runRaw, (await read("clusterConfig")) as Record<string, unknown>, `stack '${runStack.cluster}'`);
  const pullEnv = runStack.dataset !== undefined ? ((await read("runnerPullEnv")) as RunnerPullEnv | undefined) : undefined;
  if (runStack.dataset !== undefined && pullEnv === undefined) {
    throw new pulumi.RunError(
      `reprobench:dataset: stack '${runStack.cluster}' has no output 'runnerPullEnv' (the runner's proxy and registry settings this stack's own dataset and task images need); an older reprobench brought it up: run \`reprobench up --stack ${runStack.cluster}\` once more (none of its resources change)`,
    );
  }

  // The owner exports each host's login without its key (one brought up by an older release, with it):
  // this stack logs in with its own key, or the key file the owner's stack file names, read from here.
  const logins = owner.getOutput("hostConnections") as pulumi.Output<(HostLogin | HostConnection)[]>;
  const keyFiles = readLocalFiles(config, at.projectDir).privateKeyFiles;
  const connectionOf = (name: string) =>
    pulumi.secret(
      pulumi.all([logins, at.sshPrivateKeys]).apply(([list, ownKeys]): HostConnection => {
        const found = list.find((c) => c.name === name);
        if (!found) throw new Error(`stack '${runStack.cluster}' exports no connection for host ${name}`);
        const privateKey = loginKeyFor(name, { ownKeys, keyFiles, exported: found.privateKey });
        if (privateKey === undefined) throw new pulumi.RunError(`reprobench:sshPrivateKeys: ${missingLoginKeyMessage(name, runStack.cluster)}`);
        return { ...found, privateKey };
      }),
    );
  const hosts = hostHandles(config, connectionOf, pullEnv?.proxy);
  const serverInfo = owner.getOutput("workerServerInfoByHost") as pulumi.Output<Record<string, string>>;
  // An owner brought up by an older release has no such output: its facts are not known, not an error.
  const preflight = (owner.getOutput("workerPreflightByHost") as pulumi.Output<Record<string, PreflightFacts> | undefined>).apply((m) => m ?? {});
  const images = (await read("taskImagesReport")) as TaskImagesReport | undefined;
  const runner = soleHostWithRole(config, "runner").name;
  const own = runStack.dataset !== undefined ? ownDataset(config, hosts[runner], at, pullEnv?.registry) : undefined;
  return job(config, runStack, at, {
    hosts,
    runner,
    apiKey: owner.getOutput("sglangApiKey") as pulumi.Output<string>,
    install: owner.getOutput("harborInstall") as pulumi.Output<HarborInstallReport>,
    dataset: own?.dataset ?? owner.getOutput("dataset"),
    images: own?.images ?? images ?? { ready: 0, total: 0, images: {} },
    workerServerInfo: Object.fromEntries(hostsWithRole(config, "worker").map((h) => [h.name, serverInfo.apply((m) => m[h.name] ?? "")])),
    workerPreflight: preflight,
    serverImages: owner.getOutput("serverImages") as pulumi.Output<Record<string, string>>,
  }, own?.resources ?? []);
}

/** The run stack's config checked together with the cluster's (the owner's outputs or stack file). */
function combined(runStack: RunStackConfig, runRaw: Record<string, unknown>, ownerConfig: Record<string, unknown>, source: string): ReprobenchConfig {
  const result = combineWithCluster(ownerConfig, runStack, runRaw, thisStackId());
  if (!result.ok) throw new pulumi.RunError(`invalid run on the cluster of ${source} (${result.problems.length} problem(s)):\n${formatProblems(result.problems)}`);
  if (!result.config.run.enabled) throw new pulumi.RunError("reprobench:run.enabled: got false; a run stack exists to run a job (set it true, or remove the stack)");
  return result.config;
}

/**
 * A preview of a run stack whose cluster is not up yet: the job is rendered against the owner's stack file
 * (Pulumi.<owner>.yaml in this project), with no host contacted. `up` still needs the owner up.
 */
function previewBeforeCluster(runStack: RunStackConfig, runRaw: Record<string, unknown>, at: Placed): Record<string, unknown> {
  const file = path.join(at.projectDir, `Pulumi.${runStack.cluster}.yaml`);
  if (!existsSync(file)) {
    throw new pulumi.RunError(`reprobench:cluster: stack '${runStack.cluster}' is not up and this project has no ${path.basename(file)} to preview against; bring it up first (reprobench up --stack ${runStack.cluster})`);
  }
  const config = combined(runStack, runRaw, readStackFile(file), path.basename(file));
  void pulumi.log.warn(`stack '${runStack.cluster}' is not up: previewing this run against ${path.basename(file)}; \`up\` needs '${runStack.cluster}' up first`);
  // Placeholders where the owner's outputs will be: a preview dials no host.
  const placeholder = (name: string): HostConnection => {
    const host = config.hosts.find((h) => h.name === name);
    if (!host) throw new Error(`unknown host ${name}`);
    return { name, host: host.ssh.host, port: host.ssh.port, user: host.ssh.user, privateKey: "", hostKey: host.ssh.hostKey ?? "", ...(host.ssh.sudo ? { sudo: true } : {}) };
  };
  // This stack's own dataset and images are previewed too (with no proxy or registry settings: nothing runs).
  const hosts = hostHandles(config, placeholder, undefined);
  const runner = soleHostWithRole(config, "runner").name;
  const own = runStack.dataset !== undefined ? ownDataset(config, hosts[runner], at) : undefined;
  return job(config, runStack, at, {
    hosts,
    runner,
    apiKey: pulumi.secret(""),
    install: { version: config.harbor.version, wheelSha256: config.harbor.wheelSha256, python: config.harbor.pythonVersion, venv: config.harbor.venv, freeze: "" },
    dataset: own?.dataset ?? {},
    images: own?.images ?? { ready: 0, total: 0, images: {} },
    workerServerInfo: {},
    workerPreflight: {},
    serverImages: {},
  }, own?.resources ?? []);
}

/** This stack's own dataset (reprobench:dataset) as the job gets it, and the resources it waits for. */
interface OwnDataset {
  dataset: pulumi.Output<Omit<DatasetReport, "taskTomls">>;
  images?: pulumi.Output<TaskImagesReport>;
  resources: pulumi.Resource[];
}

/**
 * The cluster's hosts as this stack reaches them: each by the owner's connection, with no claim or Docker
 * engine of this stack's (it places no container); the runner's proxy is the owner's (`runnerProxy`, for
 * this stack's own dataset; undefined: none).
 */
function hostHandles(config: ReprobenchConfig, connectionOf: (host: string) => pulumi.Input<HostConnection>, runnerProxy: Record<string, string> | undefined): Record<string, ClusterHost> {
  const runner = soleHostWithRole(config, "runner").name;
  const proxyEnv = runnerProxy !== undefined && Object.keys(runnerProxy).length > 0 ? pulumi.secret(runnerProxy) : undefined;
  return Object.fromEntries(config.hosts.map((h) => [h.name, { name: h.name, connection: connectionOf(h.name), ...(h.name === runner && proxyEnv ? { proxyEnv } : {}) }]));
}

/**
 * This stack's own dataset on the runner and its task images pre-pulled there, as the owner does its own
 * (components/bench-cluster.ts): `config` is the combined config, whose harbor.dataset* are this stack's
 * dataset (combineWithCluster) and whose pull settings, registries and mirrors are the owner's; the
 * runner's handle carries the owner's proxy, `registryEnv` its registry accounts (undefined: none, in a
 * preview before the owner is up). Neither component deletes anything on destroy: the checkout and the
 * images stay, as the owner's do.
 */
function ownDataset(config: ReprobenchConfig, runner: ClusterHost, at: Placed, registryEnv?: Record<string, string>): OwnDataset {
  const dataset = new TaskDataset(at.name("run"), {
    host: runner, settings: config.harbor, projectDir: at.projectDir, configKeys: RUN_DATASET_KEYS,
  }, { parent: at.parent });
  // hf-sandbox runs pull task images on HF Jobs, not on the runner.
  const images = config.run.environment === "docker"
    ? new TaskImages(at.name("run-task-images"), {
        host: runner, settings: config.harbor, daemonConfigPath: config.docker.daemonConfigPath, images: dataset.images,
        registryEnv: registryEnv !== undefined && Object.keys(registryEnv).length > 0 ? pulumi.secret(registryEnv) : undefined,
        mirrors: registryMirrors(config), pullQuota: pullQuotaSettings(config),
      }, { parent: at.parent })
    : undefined;
  return { dataset: dataset.dataset, images: images?.report, resources: images ? [dataset, images] : [dataset] };
}

/**
 * This stack's job on the cluster, and the stack outputs; `after` is what the job waits for besides its
 * inputs (this stack's own dataset and images).
 */
function job(config: ReprobenchConfig, runStack: RunStackConfig, at: Placed, cluster: ClusterHandle, after: pulumi.Resource[]): Record<string, unknown> {
  const benchmark = new BenchmarkRun(
    at.name("benchmark"),
    {
      ...runInputs(cluster),
      settings: runSettings(config, apiBase(config), thisStackId()),
      hfToken: config.run.environment === "hf-sandbox" && at.hfToken !== undefined ? pulumi.secret(at.hfToken) : undefined,
      toolkitVersion: toolkitVersion(),
    },
    // Only when there is something to wait for: a run stack without its own dataset registers its job as before.
    after.length > 0 ? { dependsOn: after, parent: at.parent } : at.parent ? { parent: at.parent } : undefined,
  );
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
