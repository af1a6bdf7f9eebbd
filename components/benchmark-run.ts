import * as command from "@pulumi/command";
import * as pulumi from "@pulumi/pulumi";
import { CheckedCommand, withLegacyType } from "./checked-command";
import type { HarborInstallReport } from "./harbor-runner";
import type { ClusterHost } from "./host";
import { bashCommand, hostScript, lastJsonLine, rootCommand, scriptWithEnv, shellQuote } from "./host-script";
import type { PreflightFacts } from "./preflight/plan";
import { JOB_NAME_TYPE, type ResourceImplementation } from "./resource-types";
import { type ConfigCheck, type JobSummary, type RunPaths, runManifest, runPaths, summarizeJobResult } from "./run-config";
import { commandConnection, loginSudo } from "./transport";
import type { TaskImagesReport } from "./task-images";

// ---------------------------------------------------------------------------------------------------------
// Job name: fixed when the job is created and kept in state, so a second `up` finds the same job.

interface JobNameState {
  prefix: string;
  spec: string;
  name: string;
}

/** JobName's implementation, served by the provider plugin (components/provider.ts). */
export const jobNameProvider: ResourceImplementation = {
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
export class JobName extends pulumi.CustomResource {
  declare public readonly name: pulumi.Output<string>;
  constructor(name: string, args: { prefix: pulumi.Input<string>; spec: pulumi.Input<string> }, opts?: pulumi.CustomResourceOptions) {
    // Aliased to its dynamic-resource type: state written before the plugin keeps its job (and name).
    super(JOB_NAME_TYPE, name, { ...args, name: undefined }, { ...opts, aliases: withLegacyType(opts?.aliases) });
  }
}

// ---------------------------------------------------------------------------------------------------------
// Pure pieces

/** What the run needs to know, rendered from the stack by the program (components/config/job.ts). */
export interface RunSettings {
  /** The stack running the job, "project.stack": its jobs replace only its own previous job. */
  stackId: string;
  /** Job names are "<prefix>-<UTC YYYYmmdd-HHMMSS>". */
  jobNamePrefix: string;
  /** A hash of everything that makes a different job: when it changes, a new job (and name) starts. */
  spec: string;
  /** Harbor's venv, work directory and jobs directory on the runner. */
  venv: string;
  workDir: string;
  jobsDir: string;
  /** The Harbor job config (YAML) and the docker compose override (null: a sandbox environment, no compose). */
  jobConfigYaml: string;
  composeOverrideYaml: string | null;
  /** What `harbor run --print-config` must show, and what only the rendered file shows (Harbor defaults). */
  preflight: { printed: ConfigCheck[]; rendered: ConfigCheck[] };
  /** How many tasks Harbor must resolve the dataset to before the task filter (harbor.expectedTaskCount). */
  expectedTaskCount: number;
  /** The tool bundle directory to check before launch; null when task containers get none. */
  toolsDir: string | null;
  /** SIGTERM grace for Harbor on stop/destroy, and whether/how long `up` follows the job. */
  stopTimeoutSecs: number;
  waitForCompletion: boolean;
  waitTimeoutMinutes: number;
  /** Every host's daemon.json (hashed into the manifest). */
  daemonConfigPath: string;
  /** The stack config with secrets replaced by placeholders, recorded in the manifest. */
  publicConfig: Record<string, unknown>;
}

/** Inputs of harbor-preflight.sh. */
export function preflightScriptEnv(run: RunSettings, paths: RunPaths): Record<string, string> {
  return {
    VENV: run.venv,
    RUN_DIR: paths.runDir,
    JOB_CONFIG: paths.jobConfig,
    JOB_CONFIG_YAML: run.jobConfigYaml,
    COMPOSE_OVERRIDE: paths.composeOverride,
    COMPOSE_OVERRIDE_YAML: run.composeOverrideYaml ?? "",
    RESOLVED_CONFIG: paths.resolvedConfig,
    PRINTED_CHECKS: JSON.stringify(run.preflight.printed),
    RENDERED_CHECKS: JSON.stringify(run.preflight.rendered),
    TOOLS_DIR: run.toolsDir ?? "",
    USE_OVERRIDE: run.composeOverrideYaml !== null ? "1" : "0",
    // Harbor's own dataset loader, asked before launch (harbor-resolve-dataset.sh; run by the preflight).
    EXPECTED_COUNT: String(run.expectedTaskCount),
    RESOLVE_SCRIPT: hostScript("harbor-resolve-dataset"),
  };
}

/** Inputs of harbor-launch.sh except the API key and the manifest (which come from other resources). */
export function launchScriptEnv(run: RunSettings, jobName: string, paths: RunPaths): Record<string, string> {
  return {
    VENV: run.venv,
    JOB_NAME: jobName,
    JOBS_DIR: run.jobsDir,
    JOB_DIR: paths.jobDir,
    JOB_CONFIG: paths.jobConfig,
    COMPOSE_OVERRIDE: paths.composeOverride,
    LOG_FILE: paths.log,
    ENV_FILE: paths.envFile,
    MANIFEST_FILE: paths.manifest,
    UNIT: paths.unit,
    CURRENT_FILE: paths.currentFile,
    WORK_DIR: run.workDir,
    STOP_TIMEOUT_SECS: String(run.stopTimeoutSecs),
    WAIT: run.waitForCompletion ? "1" : "0",
    WAIT_TIMEOUT_SECS: String(run.waitTimeoutMinutes * 60),
    STOP_SCRIPT: hostScript("harbor-stop"),
    // The compose override is Docker's; a sandbox environment has no compose file to extend.
    USE_OVERRIDE: run.composeOverrideYaml !== null ? "1" : "0",
  };
}

/** Inputs of harbor-stop.sh (destroy). */
export function stopScriptEnv(run: RunSettings, paths: RunPaths): Record<string, string> {
  return { UNIT: paths.unit, JOB_DIR: paths.jobDir, STOP_TIMEOUT_SECS: String(run.stopTimeoutSecs), ENV_FILE: paths.envFile };
}

/** The argv the unit runs (shown in previews). */
export function harborArgv(run: RunSettings, jobName: string, paths: RunPaths): string[] {
  return [
    `${run.venv}/bin/harbor`, "run", "--config", paths.jobConfig,
    ...(run.composeOverrideYaml !== null ? ["--extra-docker-compose", paths.composeOverride] : []),
    "--job-name", jobName, "--jobs-dir", run.jobsDir, "--yes",
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
  /** The run as the program rendered it. */
  readonly settings: RunSettings;
  /** The runner host, where Harbor runs the job. */
  readonly runner: ClusterHost;
  /** Every host of the cluster: daemon.json hashes for the manifest. */
  readonly hosts: readonly ClusterHost[];
  /** The router's API key; reaches harbor as OPENAI_API_KEY. Secret. */
  readonly apiKey: pulumi.Input<string>;
  /** reprobench:hfToken for hf-sandbox runs; reaches harbor as HF_TOKEN. Secret. */
  readonly hfToken?: pulumi.Input<string>;
  /** HarborRunner.install. */
  readonly install: pulumi.Input<HarborInstallReport>;
  /** TaskDataset.dataset: identity, task count, tasks dir. */
  readonly dataset: pulumi.Input<Record<string, unknown>>;
  /** TaskImages report. */
  readonly images: pulumi.Input<TaskImagesReport>;
  /** Worker host → /server_info text (ModelServer.serverInfo). */
  readonly workerServerInfo: pulumi.Input<Record<string, pulumi.Input<string>>>;
  /**
   * Worker host → its preflight's facts (ModelServer.preflight.facts), for the manifest only. Omitted, or a
   * worker without a preflight: no entry (the manifest's `preflight` is then `{}`).
   */
  readonly workerPreflight?: pulumi.Input<Record<string, pulumi.Input<PreflightFacts>>>;
  /** Server and router images as pulled (name@sha256:…), keyed by role and host. */
  readonly serverImages: pulumi.Input<Record<string, pulumi.Input<string>>>;
  /** package.json version of this toolkit. */
  readonly toolkitVersion: string;
}

/**
 * The benchmark job (seed 000 "执行 full-run preflight" → "启动 89-task 6× full run" → "正确停止实验"):
 * a job name fixed in state, the rendered config preflighted with the real `harbor run --print-config`
 * and its dataset resolved by Harbor's own loader (the task count and every task-filter name checked),
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
    const run = args.settings;
    // Every other child depends on the job name, so this makes them wait for (and be deleted before) what
    // the run depends on — the router, the tool bundle, the bridge: destroy stops Harbor first.
    const job = new JobName(`${name}-job-name`, { prefix: run.jobNamePrefix, spec: run.spec }, { parent: this, dependsOn: opts?.dependsOn });
    const paths = job.name.apply((n) => runPaths(run, n, run.stackId));

    const daemonHashes: Record<string, pulumi.Output<string>> = {};
    for (const host of args.hosts) {
      // As root (through sudo for a sudo login): daemon.json may be readable by root only.
      const hashCommand = loginSudo(host.connection).apply((sudo) =>
        rootCommand(`f=${shellQuote(run.daemonConfigPath)}; if [ -f "$f" ]; then sha256sum "$f" | cut -d' ' -f1; else echo absent; fi`, sudo));
      const hash = new command.remote.Command(
        `${name}-daemon-json-${host.name}`,
        {
          connection: commandConnection(host.connection),
          create: hashCommand.create,
          // Undefined for a root login: no stdin, as before sudo existed.
          stdin: hashCommand.stdin as pulumi.Output<string>,
          // Recorded once per job.
          triggers: [job.name],
          addPreviousOutputInEnv: false,
        },
        // A one-shot read with no delete. A new key or login re-reads it in place, with the login that works
        // now (ignoring the connection kept the old one, which failed the next job's read after a rotation);
        // under a running job daemon.json cannot change (the restart guard), so the hash reads the same.
        { parent: this },
      );
      daemonHashes[host.name] = hash.stdout.apply((s) => s.trim());
    }

    const preflightCommand = pulumi.all([paths, loginSudo(args.runner.connection)]).apply(([p, sudo]) => rootCommand(bashCommand("harbor-preflight", preflightScriptEnv(run, p)), sudo));
    const preflight = new command.remote.Command(
      `${name}-preflight`,
      {
        connection: commandConnection(args.runner.connection),
        create: preflightCommand.create,
        stdin: preflightCommand.stdin as pulumi.Output<string>,
        addPreviousOutputInEnv: false,
      },
      // A one-shot check with no delete. A new key or login runs it again in place (it only reads and
      // rewrites the same resolved config); the connection must be the current one, or the next change of
      // the preflight (a new script, a new filter) dials with a key or host key that no longer works.
      { parent: this },
    );

    // The workers' /server_info and preflight facts as one element: pulumi.all types tuples of up to eight.
    const workerRecords = pulumi.all([pulumi.output(args.workerServerInfo), pulumi.output(args.workerPreflight ?? {})]);
    const manifest = pulumi
      .all([job.name, paths, args.install, args.dataset, args.images, workerRecords, pulumi.all(daemonHashes), pulumi.output(args.serverImages)])
      .apply(([jobName, p, install, dataset, images, [serverInfo, preflightFacts], daemonJsonSha256, serverImages]) =>
        JSON.stringify(
          runManifest({
            toolkitVersion: args.toolkitVersion,
            jobName,
            paths: p,
            publicConfig: run.publicConfig,
            jobConfig: run.jobConfigYaml,
            composeOverride: run.composeOverrideYaml ?? "",
            serverImages: serverImages as Record<string, string>,
            harbor: install as unknown as Record<string, unknown>,
            dataset: dataset as Record<string, unknown>,
            images: (images as TaskImagesReport).images,
            serverInfo: serverInfo as Record<string, string>,
            preflight: preflightFacts as Record<string, PreflightFacts>,
            daemonJsonSha256: daemonJsonSha256 as Record<string, string>,
          }),
        ),
      );

    const harbor = new CheckedCommand(
      `${name}-harbor`,
      {
        connection: args.runner.connection,
        create: pulumi.all([job.name, paths]).apply(([n, p]) => scriptWithEnv("harbor-launch", launchScriptEnv(run, n, p))),
        // The key rides in the (secret) environment, out of `create`, which previews show.
        environment: { API_KEY: args.apiKey, ...(args.hfToken !== undefined ? { HF_TOKEN: args.hfToken } : {}) },
        // Written once per job: a server re-gated later (new /server_info, a new preflight) does not re-run the
        // launch, and a running job's manifest gaining a field (`preflight`) changes nothing either.
        recorded: { MANIFEST_JSON: manifest },
        check: pulumi.all([job.name, paths]).apply(([n, p]) => scriptWithEnv("harbor-run-check", { UNIT: p.unit, JOB_NAME: n, JOB_DIR: p.jobDir })),
        delete: paths.apply((p) => scriptWithEnv("harbor-stop", stopScriptEnv(run, p))),
        summary: pulumi.all([job.name, paths]).apply(([n, p]) => harborArgv(run, n, p)),
        timeoutSeconds: (run.waitForCompletion ? run.waitTimeoutMinutes * 60 : 0) + run.stopTimeoutSecs + 600,
      },
      { parent: this, dependsOn: [preflight] },
    );

    const report = harbor.stdout.apply((s) => lastJsonLine<LaunchReport>(s, "harbor-launch.sh"));
    this.jobName = job.name;
    this.jobsDir = pulumi.output(run.jobsDir);
    this.logPath = paths.apply((p) => p.log);
    this.unit = paths.apply((p) => p.unit);
    this.pid = report.apply((r) => r.pid);
    this.state = report.apply((r) => r.state);
    this.summary = report.apply((r) => summarizeJobResult(r.result));
    this.registerOutputs({ jobName: this.jobName, jobsDir: this.jobsDir, logPath: this.logPath, unit: this.unit, pid: this.pid, state: this.state, summary: this.summary });
  }
}

