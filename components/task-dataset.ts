import { createHash } from "node:crypto";
import { readFileSync, readdirSync, statSync } from "node:fs";
import * as path from "node:path";
import * as command from "@pulumi/command";
import * as pulumi from "@pulumi/pulumi";
import { CheckedCommand } from "./checked-command";
import { lastJsonLine, scriptWithEnv } from "./host-script";
import { type RunnerPaths, imageManifest, isGitUrl, tasksDir } from "./run-config";
import type { ClusterHost } from "./host";
import { commandConnection } from "./transport";

/** The task dataset on the runner: the cluster's harbor.dataset*, or a run stack's own reprobench:dataset. */
export interface DatasetSettings extends Pick<RunnerPaths, "datasetDir" | "datasetTasksSubdir" | "workDir"> {
  /** A git URL pinned by datasetCommit, or a directory of this project uploaded as is. */
  datasetRepo: string;
  datasetCommit: string | null;
  /** How many tasks the dataset must hold (seed: 89). */
  expectedTaskCount: number;
}

/** The config keys a dataset's settings come from, named in the errors about them. */
export interface DatasetConfigKeys {
  repo: string;
  commit: string;
}

/** The cluster's dataset (harbor.datasetRepo, harbor.datasetCommit). */
export const HARBOR_DATASET_KEYS: DatasetConfigKeys = { repo: "harbor.datasetRepo", commit: "harbor.datasetCommit" };
/** A run stack's own dataset (reprobench:dataset). */
export const RUN_DATASET_KEYS: DatasetConfigKeys = { repo: "dataset.repo", commit: "dataset.commit" };

/**
 * sha256 over a local directory tree (sorted relative paths and contents; symlinks followed as the upload
 * does): names an uploaded dataset the way a commit names a git one.
 */
export function directoryDigest(root: string): string {
  const hash = createHash("sha256");
  const walk = (dir: string, rel: string) => {
    for (const name of readdirSync(dir).sort()) {
      const full = path.join(dir, name);
      const relPath = rel ? `${rel}/${name}` : name;
      const st = statSync(full);
      if (st.isDirectory()) walk(full, relPath);
      else if (st.isFile()) hash.update(`${relPath}\0${st.size}\0`).update(readFileSync(full)).update("\0");
    }
  };
  walk(root, "");
  return hash.digest("hex");
}

/** How the dataset reaches the runner: a pinned git checkout, or a project directory uploaded under a content-addressed path. */
export type DatasetSource =
  | { kind: "git"; url: string; commit: string }
  | { kind: "upload"; localDir: string; digest: string; uploadDir: string };

/** Decides the dataset source; throws naming the repo key (harbor.datasetRepo by default) when a local directory is missing. */
export function datasetSource(h: DatasetSettings, projectDir: string, keys: DatasetConfigKeys = HARBOR_DATASET_KEYS): DatasetSource {
  if (isGitUrl(h.datasetRepo)) {
    if (h.datasetCommit === null) throw new Error(`${keys.commit}: required for the git dataset ${h.datasetRepo}`);
    return { kind: "git", url: h.datasetRepo, commit: h.datasetCommit };
  }
  const localDir = path.resolve(projectDir, h.datasetRepo);
  let isDir = false;
  try {
    isDir = statSync(localDir).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir) throw new Error(`${keys.repo}: ${JSON.stringify(h.datasetRepo)} is neither a git URL nor a directory of this project (${localDir})`);
  const digest = directoryDigest(localDir);
  // A fresh path per content: CopyToRemote copies *into* an existing directory, so never reuse one. It
  // writes as the SSH login, so into uploadsDir, which harbor-install.sh makes the login's own.
  return { kind: "upload", localDir, digest, uploadDir: `${uploadsDir(h)}/dataset-${digest.slice(0, 16)}` };
}

/** Where CopyToRemote may write on the runner: a directory of the SSH login's own (0700) under workDir. */
export function uploadsDir(h: Pick<RunnerPaths, "workDir">): string {
  return `${h.workDir}/uploads`;
}

/** Inputs of harbor-dataset.sh. */
export function datasetScriptEnv(h: DatasetSettings, source: DatasetSource): Record<string, string> {
  return {
    DATASET_REPO: source.kind === "git" ? source.url : "",
    DATASET_COMMIT: source.kind === "git" ? source.commit : "",
    UPLOAD_DIR: source.kind === "upload" ? source.uploadDir : "",
    DATASET_DIR: h.datasetDir,
    TASKS_DIR: tasksDir(h),
    EXPECTED_COUNT: String(h.expectedTaskCount),
  };
}

/** What harbor-dataset.sh prints last. */
export interface DatasetReport {
  /** Git commit, or "dir:<sha256>" for an uploaded directory. */
  identity: string;
  count: number;
  tasksDir: string;
  /** "<task>/task.toml" → text. */
  taskTomls: Record<string, string>;
}

export interface TaskDatasetArgs {
  /** The runner host (its connection, and the proxy git clones through). */
  readonly host: ClusterHost;
  readonly settings: DatasetSettings;
  /** Where a project-relative datasetRepo resolves from (the Pulumi project directory). */
  readonly projectDir: string;
  /** The keys the settings come from, for errors (default harbor.datasetRepo / harbor.datasetCommit). */
  readonly configKeys?: DatasetConfigKeys;
  /**
   * Where the steps were before TaskDataset existed (the cluster's HarborRunner, as a resource or a URN):
   * each step is aliased to its URN under each, so a stack brought up before keeps its dataset untouched.
   * Omitted: no alias.
   */
  readonly formerParents?: readonly (pulumi.Resource | pulumi.Input<string>)[];
  /** The name this dataset had there (its steps were `<formerName>-dataset…`); omitted: the same as now. */
  readonly formerName?: string;
}

/**
 * The task dataset on the runner host (seed 000 "下载并固定 Terminal-Bench 2.1"): a git checkout at its
 * pinned commit, or a project directory uploaded as is, with the task count asserted; the image manifest
 * comes from its task.toml files. A refresh notices a moved or edited dataset. Destroy leaves it in place
 * (jobs that are kept may point at it).
 */
export class TaskDataset extends pulumi.ComponentResource {
  /** Dataset identity (commit or dir digest), task count, tasks dir. */
  public readonly dataset: pulumi.Output<Omit<DatasetReport, "taskTomls">>;
  /** Deduplicated task images of the dataset (from every task.toml's [environment].docker_image). */
  public readonly images: pulumi.Output<string[]>;

  constructor(name: string, args: TaskDatasetArgs, opts?: pulumi.ComponentResourceOptions) {
    super("reprobench:runner:TaskDataset", name, {}, opts);
    const h = args.settings;
    const proxy = args.host.proxyEnv !== undefined ? { environment: args.host.proxyEnv } : {};
    const formerly = (step: string): pulumi.Alias[] =>
      (args.formerParents ?? []).map((parent) => ({ parent, ...(args.formerName === undefined ? {} : { name: `${args.formerName}${step}` }) }));
    // What must be done first (the Harbor install, which makes the uploads dir an upload writes into).
    const given = opts?.dependsOn;
    const after: pulumi.Input<pulumi.Resource>[] = given === undefined ? [] : Array.isArray(given) ? given : [given as pulumi.Input<pulumi.Resource>];
    const source = datasetSource(h, args.projectDir, args.configKeys);
    const uploaded =
      source.kind === "upload"
        ? new command.remote.CopyToRemote(
            `${name}-dataset-upload`,
            {
              connection: commandConnection(args.host.connection),
              // The trailing slash copies the directory's contents into remotePath (without it, remotePath/<name>).
              source: new pulumi.asset.FileArchive(`${source.localDir}/`),
              remotePath: source.uploadDir,
              triggers: [source.digest],
            },
            // The Harbor install creates uploadsDir, owned by the login. A new key or login copies the same
            // files again, in place, with the login that works now.
            { parent: this, dependsOn: after, aliases: formerly("-dataset-upload") },
          )
        : undefined;
    const datasetEnv = datasetScriptEnv(h, source);
    const dataset = new CheckedCommand(
      `${name}-dataset`,
      {
        connection: args.host.connection,
        create: scriptWithEnv(["retry", "owned-dir", "harbor-dataset"], datasetEnv),
        check: scriptWithEnv("harbor-dataset-check", { DATASET_DIR: h.datasetDir, TASKS_DIR: datasetEnv.TASKS_DIR, GIT: source.kind === "git" ? "1" : "0" }),
        // No delete: the dataset checkout stays on destroy; it may be shared by jobs that are kept.
        spec: source.kind === "git" ? source.commit : `dir:${source.digest}`,
        // git clones through it.
        ...proxy,
        summary: source.kind === "git" ? ["git", source.url, source.commit] : ["upload", h.datasetRepo, source.digest.slice(0, 16)],
        timeoutSeconds: 1800,
      },
      { parent: this, dependsOn: uploaded ? [...after, uploaded] : after, aliases: formerly("-dataset") },
    );
    const report = dataset.stdout.apply((s) => lastJsonLine<DatasetReport>(s, "harbor-dataset.sh"));
    this.dataset = report.apply(({ identity, count, tasksDir: dir }) => ({ identity, count, tasksDir: dir }));
    this.images = report.apply((r) => {
      const manifest = imageManifest(r.taskTomls);
      if (manifest.withoutImage.length > 0) {
        // Dockerfile-only tasks are built by Harbor on the runner; nothing to pre-pull for them.
        void pulumi.log.info(`${manifest.withoutImage.length} task(s) build their image from a Dockerfile: ${manifest.withoutImage.join(", ")}`, this);
      }
      return manifest.images;
    });
    this.registerOutputs({ dataset: this.dataset, images: this.images });
  }
}
