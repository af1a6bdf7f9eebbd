import * as command from "@pulumi/command";
import * as pulumi from "@pulumi/pulumi";
import type { ReprobenchConfig } from "../infra/config-schema";
import { CheckedCommand, type SshConnectionInput } from "./checked-command";
import { type HarborInstallReport, lastJsonLine } from "./harbor-runner";
import { bashCommand, hostScript, scriptWithEnv, specHash } from "./host-script";
import {
  type JobSummary,
  type RunPaths,
  jobConfigObject,
  preflightChecks,
  renderComposeOverride,
  renderJobConfig,
  runManifest,
  runPaths,
  summarizeJobResult,
} from "./run-config";
import type { TaskImagesReport } from "./task-images";

// ---------------------------------------------------------------------------------------------------------
// Job name: fixed when the job is created and kept in state, so a second `up` finds the same job.

interface JobNameState {
  prefix: string;
  spec: string;
  name: string;
}

// Serialized into the dynamic-provider process: self-contained (no module-level references).
const jobNameProvider: pulumi.dynamic.ResourceProvider = {
  async create(inputs: JobNameState) {
    const at = new Date();
    const p = (n: number) => String(n).padStart(2, "0");
    const stamp = `${at.getUTCFullYear()}${p(at.getUTCMonth() + 1)}${p(at.getUTCDate())}-${p(at.getUTCHours())}${p(at.getUTCMinutes())}${p(at.getUTCSeconds())}`;
    const name = `${inputs.prefix}-${stamp}`;
    return { id: name, outs: { ...inputs, name } };
  },
  async diff(_id: string, olds: JobNameState, news: JobNameState) {
    // A different job (other settings, other prefix) gets a new name; anything else keeps the job.
    const replaces = (["prefix", "spec"] as const).filter((k) => olds[k] !== news[k]);
    return { changes: replaces.length > 0, replaces, deleteBeforeReplace: false };
  },
};

/** The Harbor job name, "<prefix>-<UTC YYYYmmdd-HHMMSS>" (run-config.ts jobName), replaced when `spec` changes. */
export class JobName extends pulumi.dynamic.Resource {
  declare public readonly name: pulumi.Output<string>;
  constructor(name: string, args: { prefix: pulumi.Input<string>; spec: pulumi.Input<string> }, opts?: pulumi.CustomResourceOptions) {
    super(jobNameProvider, name, { ...args, name: undefined }, opts);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Pure pieces

/** Everything that makes a different job: a change here means a new job name (and a new Harbor job). */
export function runSpec(config: ReprobenchConfig, apiBase: string): string {
  const h = config.harbor;
  return specHash({
    job: renderJobConfig(config, apiBase),
    override: renderComposeOverride(config),
    harbor: [h.version, h.wheelSha256, h.datasetRepo, h.datasetCommit, h.jobsDir],
    prefix: config.run.jobNamePrefix,
  });
}

/** Inputs of harbor-preflight.sh. */
export function preflightScriptEnv(config: ReprobenchConfig, apiBase: string, paths: RunPaths): Record<string, string> {
  const checks = preflightChecks(jobConfigObject(config, apiBase));
  return {
    VENV: config.harbor.venv,
    RUN_DIR: paths.runDir,
    JOB_CONFIG: paths.jobConfig,
    JOB_CONFIG_YAML: renderJobConfig(config, apiBase),
    COMPOSE_OVERRIDE: paths.composeOverride,
    COMPOSE_OVERRIDE_YAML: renderComposeOverride(config),
    RESOLVED_CONFIG: paths.resolvedConfig,
    PRINTED_CHECKS: JSON.stringify(checks.printed),
    RENDERED_CHECKS: JSON.stringify(checks.rendered),
    TOOLS_DIR: config.toolBundle.enabled && config.run.environment === "docker" ? config.toolBundle.hostDir : "",
    USE_OVERRIDE: config.run.environment === "docker" ? "1" : "0",
  };
}

/** Inputs of harbor-launch.sh except the API key and the manifest (which come from other resources). */
export function launchScriptEnv(config: ReprobenchConfig, jobName: string, paths: RunPaths): Record<string, string> {
  return {
    VENV: config.harbor.venv,
    JOB_NAME: jobName,
    JOBS_DIR: config.harbor.jobsDir,
    JOB_DIR: paths.jobDir,
    JOB_CONFIG: paths.jobConfig,
    COMPOSE_OVERRIDE: paths.composeOverride,
    LOG_FILE: paths.log,
    ENV_FILE: paths.envFile,
    MANIFEST_FILE: paths.manifest,
    UNIT: paths.unit,
    CURRENT_FILE: paths.currentFile,
    WORK_DIR: config.harbor.workDir,
    STOP_TIMEOUT_SECS: String(config.run.stopTimeoutSecs),
    WAIT: config.run.waitForCompletion ? "1" : "0",
    WAIT_TIMEOUT_SECS: String(config.run.waitTimeoutMinutes * 60),
    STOP_SCRIPT: hostScript("harbor-stop"),
    // The compose override is Docker's; a sandbox environment has no compose file to extend.
    USE_OVERRIDE: config.run.environment === "docker" ? "1" : "0",
  };
}

/** Inputs of harbor-stop.sh (destroy). */
export function stopScriptEnv(config: ReprobenchConfig, paths: RunPaths): Record<string, string> {
  return { UNIT: paths.unit, JOB_DIR: paths.jobDir, STOP_TIMEOUT_SECS: String(config.run.stopTimeoutSecs), ENV_FILE: paths.envFile };
}

/** The argv the unit runs (shown in previews). */
export function harborArgv(config: ReprobenchConfig, jobName: string, paths: RunPaths): string[] {
  return [
    `${config.harbor.venv}/bin/harbor`, "run", "--config", paths.jobConfig,
    ...(config.run.environment === "docker" ? ["--extra-docker-compose", paths.composeOverride] : []),
    "--job-name", jobName, "--jobs-dir", config.harbor.jobsDir, "--yes",
  ];
}

/** What harbor-launch.sh prints last. */
export interface LaunchReport {
  jobName: string;
  jobDir: string;
  log: string;
  unit: string;
  pid: number;
  state: "running" | "finished";
  result: unknown;
}

export interface BenchmarkRunArgs {
  readonly config: ReprobenchConfig;
  /** SSH connection to the runner host. */
  readonly connection: pulumi.Input<SshConnectionInput>;
  /** Every host (name, connection): daemon.json hashes for the manifest. */
  readonly hosts: { name: string; connection: pulumi.Input<SshConnectionInput> }[];
  /** The router URL Harbor's agent uses (infra/config-derive apiBase). */
  readonly apiBase: string;
  /** The router's API key; reaches harbor as OPENAI_API_KEY. Secret. */
  readonly apiKey: pulumi.Input<string>;
  /** reprobench:hfToken for hf-sandbox runs; reaches harbor as HF_TOKEN. Secret. */
  readonly hfToken?: pulumi.Input<string>;
  /** HarborRunner outputs. */
  readonly install: pulumi.Input<HarborInstallReport>;
  readonly dataset: pulumi.Input<Record<string, unknown>>;
  /** TaskImages report. */
  readonly images: pulumi.Input<TaskImagesReport>;
  /** Worker host → /server_info text (SglangWorker.serverInfo). */
  readonly workerServerInfo: Record<string, pulumi.Input<string>>;
  /** package.json version of this toolkit. */
  readonly toolkitVersion: string;
}

/**
 * The benchmark job (seed 000 "执行 full-run preflight" → "启动 89-task 6× full run" → "正确停止实验"):
 * a job name fixed in state, the rendered config preflighted with the real `harbor run --print-config`,
 * a run manifest, `harbor run` under a transient systemd unit with its output in a log file, optionally
 * followed to completion. Destroy stops Harbor with SIGTERM and waits; job directories are never removed.
 */
export class BenchmarkRun extends pulumi.ComponentResource {
  public readonly jobName: pulumi.Output<string>;
  public readonly jobsDir: pulumi.Output<string>;
  public readonly logPath: pulumi.Output<string>;
  public readonly unit: pulumi.Output<string>;
  public readonly pid: pulumi.Output<number>;
  /** "running" or "finished" when `up` returned. */
  public readonly state: pulumi.Output<string>;
  /** Trials, passed, errors, mean (from the job's result.json; meaningful once finished). */
  public readonly summary: pulumi.Output<JobSummary>;

  constructor(name: string, args: BenchmarkRunArgs, opts?: pulumi.ComponentResourceOptions) {
    super("reprobench:run:BenchmarkRun", name, {}, opts);
    const { config } = args;
    // Every other child depends on the job name, so this makes them wait for (and be deleted before) what
    // the run depends on — the router, the tool bundle, the bridge: destroy stops Harbor first.
    const job = new JobName(`${name}-job-name`, { prefix: config.run.jobNamePrefix, spec: runSpec(config, args.apiBase) }, { parent: this, dependsOn: opts?.dependsOn });
    const paths = job.name.apply((n) => runPaths(config.harbor, n));

    const daemonHashes: Record<string, pulumi.Output<string>> = {};
    for (const host of args.hosts) {
      const hash = new command.remote.Command(
        `${name}-daemon-json-${host.name}`,
        {
          connection: host.connection as pulumi.Input<command.types.input.remote.ConnectionArgs>,
          create: `f=${JSON.stringify(config.docker.daemonConfigPath)}; if [ -f "$f" ]; then sha256sum "$f" | cut -d' ' -f1; else echo absent; fi`,
          // Recorded once per job.
          triggers: [job.name],
          addPreviousOutputInEnv: false,
        },
        { parent: this },
      );
      daemonHashes[host.name] = hash.stdout.apply((s) => s.trim());
    }

    const preflight = new command.remote.Command(
      `${name}-preflight`,
      {
        connection: args.connection as pulumi.Input<command.types.input.remote.ConnectionArgs>,
        create: paths.apply((p) => bashCommand("harbor-preflight", preflightScriptEnv(config, args.apiBase, p))),
        addPreviousOutputInEnv: false,
      },
      { parent: this },
    );

    const manifest = pulumi
      .all([job.name, paths, args.install, args.dataset, args.images, pulumi.output(args.workerServerInfo), pulumi.all(daemonHashes)])
      .apply(([jobName, p, install, dataset, images, serverInfo, daemonJsonSha256]) =>
        JSON.stringify(
          runManifest({
            toolkitVersion: args.toolkitVersion,
            jobName,
            paths: p,
            config,
            jobConfig: renderJobConfig(config, args.apiBase),
            composeOverride: renderComposeOverride(config),
            harbor: install as unknown as Record<string, unknown>,
            dataset: dataset as Record<string, unknown>,
            images: (images as TaskImagesReport).images,
            serverInfo: serverInfo as Record<string, string>,
            daemonJsonSha256: daemonJsonSha256 as Record<string, string>,
          }),
        ),
      );

    const harbor = new CheckedCommand(
      `${name}-harbor`,
      {
        connection: args.connection,
        create: pulumi.all([job.name, paths]).apply(([n, p]) => scriptWithEnv("harbor-launch", launchScriptEnv(config, n, p))),
        // The key and the manifest ride in the (secret) environment; the manifest holds no secret but
        // depends on other resources' outputs, and keeping it out of `create` keeps previews readable.
        environment: { API_KEY: args.apiKey, MANIFEST_JSON: manifest, ...(args.hfToken !== undefined ? { HF_TOKEN: args.hfToken } : {}) },
        check: pulumi.all([job.name, paths]).apply(([n, p]) => scriptWithEnv("harbor-run-check", { UNIT: p.unit, JOB_NAME: n, JOB_DIR: p.jobDir })),
        delete: paths.apply((p) => scriptWithEnv("harbor-stop", stopScriptEnv(config, p))),
        summary: pulumi.all([job.name, paths]).apply(([n, p]) => harborArgv(config, n, p)),
        timeoutSeconds: (config.run.waitForCompletion ? config.run.waitTimeoutMinutes * 60 : 0) + config.run.stopTimeoutSecs + 600,
      },
      { parent: this, dependsOn: [preflight] },
    );

    const report = harbor.stdout.apply((s) => lastJsonLine<LaunchReport>(s, "harbor-launch.sh"));
    this.jobName = job.name;
    this.jobsDir = pulumi.output(config.harbor.jobsDir);
    this.logPath = paths.apply((p) => p.log);
    this.unit = paths.apply((p) => p.unit);
    this.pid = report.apply((r) => r.pid);
    this.state = report.apply((r) => r.state);
    this.summary = report.apply((r) => summarizeJobResult(r.result));
    this.registerOutputs({ jobName: this.jobName, jobsDir: this.jobsDir, logPath: this.logPath, unit: this.unit, pid: this.pid, state: this.state, summary: this.summary });
  }
}
