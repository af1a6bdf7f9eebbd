// reprobench's provider plugin: the custom resources of every reprobench program (components/provider.ts)
// and the components for Pulumi programs in other languages, as a source-based component package
// (PulumiPlugin.yaml). `pulumi package add <checkout>/plugin` generates the program's SDK from this file's
// types (the Python one is `pulumi_reprobench`), and the engine runs index.js (compiled from it by build.sh)
// as the package's provider, which builds the components in this process, for the program.
//
// The components' own classes are not made for that schema (settings of any shape, host handles, parts
// that are components), so the package serves facades: each takes plain settings and secret strings,
// builds the real component (the checkout's compiled package, ../dist/components: one copy of the
// components and of @pulumi/pulumi) as its only child, and gives back plain values.
//
// Every field of a facade class is an output of the schema (private ones too), typed only with what the
// schema can say: string, number, boolean, arrays, maps, interfaces of those, optional with `?`.
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import * as pulumiProvider from "@pulumi/pulumi/provider";
import { ComponentProvider } from "@pulumi/pulumi/provider/experimental";
import * as reprobench from "../dist/components";

// One Pulumi SDK in this process: the components' must be this provider's, or their resources would
// register with a runtime that was never connected to the engine.
const sdk = require.resolve("@pulumi/pulumi");
const componentsSdk = require.resolve("@pulumi/pulumi", { paths: [path.join(__dirname, "..", "dist", "components")] });
if (sdk !== componentsSdk) {
  throw new Error(`reprobench plugin: two copies of @pulumi/pulumi (${sdk} here, ${componentsSdk} for ../dist/components): remove ${path.join(__dirname, "node_modules")}`);
}

/** The arguments of a BenchCluster: its settings, and its secrets beside them. */
export interface BenchClusterArgs {
  /**
   * The cluster's settings, as a reprobench stack file's `reprobench:*` keys hold them without the
   * namespace (hosts, modelServer, router, docker, proxy, toolBundle, harbor, run, registries, …), as plain
   * data. Validated as `reprobench config validate` validates a stack file: one error lists every problem.
   * With `run.enabled` the cluster runs its own Harbor job (jobName, jobState, jobSummary).
   */
  settings: { [key: string]: any }; // eslint-disable-line @typescript-eslint/no-explicit-any -- the schema's Json "any"
  /** Host name (or "default") → OpenSSH private key (PEM), each a secret. */
  sshPrivateKeys?: { [host: string]: pulumi.Input<string> };
  /** The runner's upstream proxy URL for the proxy bridge (may carry credentials; a secret). */
  proxyUpstream?: pulumi.Input<string>;
  /** Hugging Face token (hf-sandbox runs; a secret). */
  hfToken?: pulumi.Input<string>;
  /** Host name (or "default") → the host's proxy URL (hosts[].proxy without url or urlFile), each a secret. */
  proxyUrls?: { [host: string]: pulumi.Input<string> };
  /** Registry host → password or access token of its registries[] account, each a secret. */
  registryPasswords?: { [registry: string]: pulumi.Input<string> };
  /** Where relative key, host key and dataset paths in the settings resolve from (default: the program's directory; relative: from there). */
  projectDir?: string;
}

/** What the cluster's own job came to (its result.json), once finished. */
export interface JobSummary {
  /** Trials run. */
  trials: number;
  /** Trials whose reward was 1. */
  passed: number;
  /** Trials that ended in an error. */
  errors: number;
  /** The mean reward (absent while there is none). */
  mean?: number;
  /** Whether the job has finished. */
  finished: boolean;
}

/** A map's values, as the schema gives them: each value resolved, then the map plain. */
function plainMap(values: Record<string, pulumi.Input<string>>): pulumi.Output<{ [key: string]: string }> {
  return pulumi.output(values) as pulumi.Output<{ [key: string]: string }>;
}

/** A map of secrets from the program: plain keys (hosts, registries), each value a string or a secret. */
function secretMap(component: string, what: string, given: unknown): Record<string, pulumi.Input<string>> | undefined {
  if (given === undefined || given === null) return undefined;
  if (pulumi.Output.isInstance(given) || typeof given !== "object" || Array.isArray(given)) {
    throw new Error(`${component}: ${what} must be a map of name → secret string (one secret per entry), not one value for the whole map`);
  }
  return given as Record<string, pulumi.Input<string>>;
}

/**
 * A whole benchmark cluster, reprobench's root component: every host claimed for this stack over SSH,
 * Docker's address pools, the proxy bridge and the tool bundle on the runner, the model servers (each
 * gated on /health and /server_info), the router over them, Harbor with the dataset and the task images,
 * and, with `run.enabled`, its own Harbor job (followed to its end with `run.waitForCompletion`).
 */
export class BenchCluster extends pulumi.ComponentResource {
  /** The model endpoint Harbor's agents use: the router's, or the single worker's. */
  public readonly modelApiBase: pulumi.Output<string>;
  /** The router's URL (absent with router.enabled false). */
  public readonly routerUrl?: pulumi.Output<string>;
  /** Worker host → its model server's URL (resolved once the server passed its gate). */
  public readonly workerUrls: pulumi.Output<{ [host: string]: string }>;
  /** Worker host → the server's /server_info (vLLM: /v1/models) as read by its gate. */
  public readonly workerServerInfo: pulumi.Output<{ [host: string]: string }>;
  /** Server and router images as pulled (name@sha256:…), keyed by role and host ("worker/<host>", "router/<host>"). */
  public readonly serverImages: pulumi.Output<{ [key: string]: string }>;
  /** The API key every model server and the router share (a secret). */
  public readonly apiKey: pulumi.Output<string>;
  /** The runner host's name (Harbor, the proxy bridge, the tool bundle). */
  public readonly runner: pulumi.Output<string>;
  /** The cluster's own Harbor job's name (run.enabled). */
  public readonly jobName?: pulumi.Output<string>;
  /** "running" or "finished" when `up` returned (run.enabled). */
  public readonly jobState?: pulumi.Output<string>;
  /** Trials, passed, errors, mean reward of the job (run.enabled; meaningful once finished). */
  public readonly jobSummary?: pulumi.Output<JobSummary>;
  /** The directory on the runner that holds the job's directory (run.enabled). */
  public readonly jobsDir?: pulumi.Output<string>;
  /** The job's log file on the runner (run.enabled). */
  public readonly jobLogPath?: pulumi.Output<string>;
  /** Harbor's job config (YAML) as rendered for the job (run.enabled). */
  public readonly jobConfig?: pulumi.Output<string>;

  constructor(name: string, args: BenchClusterArgs, opts?: pulumi.ComponentResourceOptions) {
    super("reprobench:index:BenchCluster", name, {}, opts);
    const settings: unknown = args.settings;
    if (settings === undefined || settings === null || pulumi.Output.isInstance(settings) || typeof settings !== "object" || Array.isArray(settings)) {
      throw new Error("BenchCluster: settings must be a plain map of reprobench's settings (hosts, modelServer, harbor, run, …); secrets go in their own arguments");
    }
    // The real component, under this one by the same name: its parts' URNs read …BenchCluster$…BenchCluster::<name>.
    const cluster = new reprobench.BenchCluster(
      name,
      {
        settings: settings as reprobench.BenchClusterSettings, // validated there, every problem named
        secrets: {
          sshPrivateKeys: secretMap("BenchCluster", "sshPrivateKeys", args.sshPrivateKeys),
          proxyUpstream: args.proxyUpstream ?? undefined,
          hfToken: args.hfToken ?? undefined,
          proxyUrls: secretMap("BenchCluster", "proxyUrls", args.proxyUrls),
          registryPasswords: secretMap("BenchCluster", "registryPasswords", args.registryPasswords),
        },
        // The program's directory, which the engine starts this provider in: here the SDK's
        // getRootDirectory(), the component's default, is a placeholder ("rootDirectory").
        projectDir: path.resolve(process.cwd(), args.projectDir ?? "."),
      },
      { parent: this },
    );
    this.modelApiBase = pulumi.output(cluster.modelApiBase);
    this.routerUrl = cluster.router?.url;
    this.workerUrls = plainMap(Object.fromEntries(Object.entries(cluster.workers).map(([host, w]) => [host, w.url])));
    this.workerServerInfo = plainMap(Object.fromEntries(Object.entries(cluster.workers).map(([host, w]) => [host, w.serverInfo])));
    this.serverImages = cluster.serverImages;
    this.apiKey = cluster.apiKey;
    this.runner = pulumi.output(reprobench.settings.soleHostWithRole(cluster.config, "runner").name);
    const job = cluster.benchmark;
    this.jobName = job?.jobName;
    this.jobState = job?.state;
    this.jobSummary = job?.summary.apply((s) => ({ trials: s.trials, passed: s.passed, errors: s.errors, finished: s.finished, ...(s.mean === null ? {} : { mean: s.mean }) }));
    this.jobsDir = job?.jobsDir;
    this.jobLogPath = job?.logPath;
    this.jobConfig = cluster.jobConfig === undefined ? undefined : pulumi.output(cluster.jobConfig);
    this.registerOutputs({
      modelApiBase: this.modelApiBase, routerUrl: this.routerUrl, workerUrls: this.workerUrls, workerServerInfo: this.workerServerInfo, serverImages: this.serverImages,
      apiKey: this.apiKey, runner: this.runner, jobName: this.jobName, jobState: this.jobState, jobSummary: this.jobSummary, jobsDir: this.jobsDir,
      jobLogPath: this.jobLogPath, jobConfig: this.jobConfig,
    });
  }
}

/** The arguments of a BenchmarkRun: one Harbor job on a cluster another stack owns. */
export interface BenchmarkRunArgs {
  /**
   * The stack that owns the cluster (a reprobench stack with harbor.enabled or run.enabled), as a
   * StackReference names it (on a file backend: organization/reprobench/<stack>).
   */
  cluster: string;
  /**
   * The job, as a run stack's `reprobench:run` holds it (agent, modelName, multipliers, concurrency, task
   * filter, sampling, …), plain data; `enabled` is implied. Validated with the cluster's settings as
   * `reprobench config validate` validates a run stack.
   */
  run: { [key: string]: any }; // eslint-disable-line @typescript-eslint/no-explicit-any -- typed in the schema from the zod schema
  /** A dataset of this run's own instead of the owner's, as a run stack's `reprobench:dataset` (repo, commit, expectedTaskCount, …). */
  dataset?: { [key: string]: any }; // eslint-disable-line @typescript-eslint/no-explicit-any -- typed in the schema from the zod schema
  /**
   * Host name (or "default") → OpenSSH private key (PEM) this run logs into the hosts with, each a secret (the
   * owner exports none). Not needed for hosts whose owner's stack file names ssh.privateKeyFile.
   */
  sshPrivateKeys?: { [host: string]: pulumi.Input<string> };
  /** Hugging Face token (hf-sandbox runs; a secret). */
  hfToken?: pulumi.Input<string>;
  /** Where the owner's stack file, key files and a local dataset resolve from (default: the program's directory; relative: from there). */
  projectDir?: string;
}

/**
 * One Harbor job on a cluster another stack owns, as a run stack runs it: the cluster read through a
 * StackReference to the owner's outputs, nothing of the cluster registered or changed, the job (and with
 * `dataset`, that dataset and its images) under this component. Destroying it stops only this job
 * (SIGTERM, results kept).
 */
export class BenchmarkRun extends pulumi.ComponentResource {
  /** The job's name (`<run.jobNamePrefix>-<UTC time>`). */
  public readonly jobName: pulumi.Output<string>;
  /** "running" or "finished" when `up` returned. */
  public readonly jobState: pulumi.Output<string>;
  /** Trials, passed, errors, mean reward (meaningful once finished). */
  public readonly jobSummary: pulumi.Output<JobSummary>;
  /** The directory on the runner that holds the job's directory. */
  public readonly jobsDir: pulumi.Output<string>;
  /** The job's log file on the runner. */
  public readonly jobLogPath: pulumi.Output<string>;
  /** The model endpoint the job's agents use. */
  public readonly modelApiBase: pulumi.Output<string>;

  constructor(name: string, args: BenchmarkRunArgs, opts?: pulumi.ComponentResourceOptions) {
    super("reprobench:index:BenchmarkRun", name, {}, opts);
    const run: unknown = args.run;
    if (run === undefined || run === null || pulumi.Output.isInstance(run) || typeof run !== "object" || Array.isArray(run)) {
      throw new Error("BenchmarkRun: run must be a plain map of a run's settings (agent, modelName, …); secrets go in their own arguments");
    }
    const raw: Record<string, unknown> = { cluster: args.cluster, run: { enabled: true, ...(run as Record<string, unknown>) }, ...(args.dataset ? { dataset: args.dataset } : {}) };
    const parsed = reprobench.settings.parseRunStackConfig(raw);
    if (!parsed.ok) throw new Error(`BenchmarkRun: invalid run (${parsed.problems.length} problem(s)):\n${reprobench.settings.formatProblems(parsed.problems)}`);
    // Its parts are named after it, under it; the keys and the token stay Outputs (secrets).
    const outputs = pulumi.output(
      reprobench.runOnCluster(parsed.config, raw, {
        parent: this,
        name: (role) => `${name}-${role}`,
        projectDir: path.resolve(process.cwd(), args.projectDir ?? "."),
        sshPrivateKeys: secretMap("BenchmarkRun", "sshPrivateKeys", args.sshPrivateKeys) ?? {},
        hfToken: args.hfToken,
      }),
    ) as unknown as pulumi.Output<Record<string, unknown>>;
    this.jobName = outputs.apply((o) => String(o.jobName));
    this.jobState = outputs.apply((o) => String(o.jobState));
    this.jobSummary = outputs.apply((o) => {
      const s = o.jobSummary as { trials: number; passed: number; errors: number; mean: number | null; finished: boolean };
      return { trials: s.trials, passed: s.passed, errors: s.errors, finished: s.finished, ...(s.mean === null ? {} : { mean: s.mean }) };
    });
    this.jobsDir = outputs.apply((o) => String(o.jobsDir));
    this.jobLogPath = outputs.apply((o) => String(o.jobLog));
    this.modelApiBase = outputs.apply((o) => String(o.modelApiBase));
    this.registerOutputs({ jobName: this.jobName, jobState: this.jobState, jobSummary: this.jobSummary, jobsDir: this.jobsDir, jobLogPath: this.jobLogPath, modelApiBase: this.modelApiBase });
  }
}

// One plugin, `pulumi-resource-reprobench`: the components (constructed here, for programs in other
// languages) and the custom resources every reprobench program registers (HostScript, JobName), whose
// code is this checkout's, not a copy kept in each resource's state.
const components = new ComponentProvider({ components: [BenchCluster, BenchmarkRun], name: "reprobench", dirname: __dirname });
const plugin: pulumiProvider.Provider = {
  version: components.version,
  getSchema: async () => reprobench.withCustomResources(await components.getSchema()),
  construct: (name, type, inputs, options) => components.construct(name, type, inputs, options),
  ...reprobench.resourceProvider,
};
void pulumiProvider.main(plugin, process.argv.slice(2));
