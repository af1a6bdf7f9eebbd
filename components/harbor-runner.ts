import { createHash } from "node:crypto";
import { readFileSync, readdirSync, statSync } from "node:fs";
import * as path from "node:path";
import * as command from "@pulumi/command";
import * as pulumi from "@pulumi/pulumi";
import { CheckedCommand } from "./checked-command";
import { lastJsonLine, scriptWithEnv } from "./host-script";
import { type RestartGuardSettings, guardHooks } from "./restart-guard";
import { type RunnerPaths, imageManifest, isGitUrl, tasksDir } from "./run-config";
import { type HostConnectionInput, commandConnection } from "./ssh";

/** Harbor and the dataset on the runner (harbor.* of the stack). */
export interface HarborSettings extends RunnerPaths {
  /** Harbor's version and its wheel's sha256 (seed: 0.21.0). */
  version: string;
  wheelSha256: string;
  /** The venv Harbor is installed into, and its Python. */
  venv: string;
  pythonVersion: string;
  /** A directory or URL of wheels to install from instead of the package index; null = the index. */
  pipFindLinks: string | null;
  /** The simple index of the online install (pipFindLinks null), and the uv fetched from it when the host has none. */
  indexUrl: string;
  uvVersion: string;
  /** Extras installed with Harbor, e.g. ["hf-sandbox"]. */
  extras: string[];
  /** A git URL pinned by datasetCommit, or a directory of this project uploaded as is. */
  datasetRepo: string;
  datasetCommit: string | null;
  /** How many tasks the dataset must hold (seed: 89). */
  expectedTaskCount: number;
}

type HarborConfig = HarborSettings;

/** Inputs of harbor-install.sh. */
export function installScriptEnv(h: HarborConfig): Record<string, string> {
  return {
    HARBOR_VERSION: h.version,
    WHEEL_SHA256: h.wheelSha256,
    VENV: h.venv,
    PYTHON_VERSION: h.pythonVersion,
    FIND_LINKS: h.pipFindLinks ?? "",
    INDEX_URL: h.indexUrl,
    UV_VERSION: h.uvVersion,
    EXTRAS: h.extras.join(","),
    WORK_DIR: h.workDir,
    JOBS_DIR: h.jobsDir,
    UPLOADS_DIR: uploadsDir(h),
  };
}

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

/** Decides the dataset source; throws naming harbor.datasetRepo when a local directory is missing. */
export function datasetSource(h: HarborConfig, projectDir: string): DatasetSource {
  if (isGitUrl(h.datasetRepo)) {
    if (h.datasetCommit === null) throw new Error(`harbor.datasetCommit: required for the git dataset ${h.datasetRepo}`);
    return { kind: "git", url: h.datasetRepo, commit: h.datasetCommit };
  }
  const localDir = path.resolve(projectDir, h.datasetRepo);
  let isDir = false;
  try {
    isDir = statSync(localDir).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir) throw new Error(`harbor.datasetRepo: ${JSON.stringify(h.datasetRepo)} is neither a git URL nor a directory of this project (${localDir})`);
  const digest = directoryDigest(localDir);
  // A fresh path per content: CopyToRemote copies *into* an existing directory, so never reuse one. It
  // writes as the SSH login, so into uploadsDir, which harbor-install.sh makes the login's own.
  return { kind: "upload", localDir, digest, uploadDir: `${uploadsDir(h)}/dataset-${digest.slice(0, 16)}` };
}

/** Where CopyToRemote may write on the runner: a directory of the SSH login's own (0700) under workDir. */
export function uploadsDir(h: Pick<HarborConfig, "workDir">): string {
  return `${h.workDir}/uploads`;
}

/** Inputs of harbor-dataset.sh. */
export function datasetScriptEnv(h: HarborConfig, source: DatasetSource): Record<string, string> {
  return {
    DATASET_REPO: source.kind === "git" ? source.url : "",
    DATASET_COMMIT: source.kind === "git" ? source.commit : "",
    UPLOAD_DIR: source.kind === "upload" ? source.uploadDir : "",
    DATASET_DIR: h.datasetDir,
    TASKS_DIR: tasksDir(h),
    EXPECTED_COUNT: String(h.expectedTaskCount),
  };
}

/** What harbor-install.sh prints last. */
export interface HarborInstallReport {
  version: string;
  wheelSha256: string;
  python: string;
  venv: string;
  freeze: string;
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

export interface HarborRunnerArgs {
  /** SSH connection to the runner host. */
  readonly connection: pulumi.Input<HostConnectionInput>;
  readonly settings: HarborSettings;
  /** Where a project-relative harbor.datasetRepo resolves from (the Pulumi project directory). */
  readonly projectDir: string;
  /** HTTP(S)_PROXY/NO_PROXY of the runner's proxy (hosts[].proxy), merged into the scripts' secret environment; omitted: none. */
  readonly proxyEnv?: pulumi.Input<Record<string, string>>;
  /** Refuse a reinstall or removal of the venv while a Harbor job runs (omitted: no guard). */
  readonly restartGuard?: RestartGuardSettings;
}

/**
 * Harbor on the runner host (seed 000 "安装 Harbor" and "下载并固定 Terminal-Bench 2.1"): the pinned
 * wheel in its own venv (sha256-checked, `pip freeze` kept beside the logs) and the task dataset at its
 * pinned commit with the task count asserted. A refresh notices a broken venv or a moved dataset.
 */
export class HarborRunner extends pulumi.ComponentResource {
  /** What harbor-install.sh reported: version, wheel sha256, Python, venv, freeze file. */
  public readonly install: pulumi.Output<HarborInstallReport>;
  /** Dataset identity (commit or dir digest), task count, tasks dir. */
  public readonly dataset: pulumi.Output<Omit<DatasetReport, "taskTomls">>;
  /** Deduplicated task images of the dataset (from every task.toml's [environment].docker_image). */
  public readonly images: pulumi.Output<string[]>;

  constructor(name: string, args: HarborRunnerArgs, opts?: pulumi.ComponentResourceOptions) {
    super("reprobench:runner:HarborRunner", name, {}, opts);
    const h = args.settings;
    const installEnv = installScriptEnv(h);
    const proxy = args.proxyEnv !== undefined ? { environment: args.proxyEnv } : {};
    const install = new CheckedCommand(
      `${name}-install`,
      {
        connection: args.connection,
        create: scriptWithEnv(["retry", "owned-dir", "harbor-install"], installEnv),
        check: scriptWithEnv("harbor-install-check", { VENV: h.venv, WORK_DIR: h.workDir, HARBOR_VERSION: h.version }),
        // The venv is ours (removed only when it is a venv or carries our stamp); the jobs dir and logs are never removed.
        delete: scriptWithEnv(["owned-dir", "harbor-install-remove"], { VENV: h.venv }),
        // uv/pip reach the package index through it (only when set: no change for a runner without a proxy).
        ...proxy,
        summary: [h.extras.length > 0 ? `harbor[${h.extras.join(",")}]` : "harbor", h.version, h.pipFindLinks === null ? `uv+${h.indexUrl}` : `--find-links ${h.pipFindLinks}`, h.venv],
        // The uploads dir belongs to the login (SUDO_UID): another login user re-runs the install in place
        // (the venv is kept) so that its dataset upload can write there.
        rerunOnLogin: ["user"],
        timeoutSeconds: 1800,
      },
      // A running job runs from this venv: a reinstall or removal asks the restart guard first.
      { parent: this, hooks: guardHooks(`${name}-install`, args.restartGuard, "the Harbor install") },
    );
    this.install = install.stdout.apply((s) => lastJsonLine<HarborInstallReport>(s, "harbor-install.sh"));

    const source = datasetSource(h, args.projectDir);
    const uploaded =
      source.kind === "upload"
        ? new command.remote.CopyToRemote(
            `${name}-dataset-upload`,
            {
              connection: commandConnection(args.connection),
              // The trailing slash copies the directory's contents into remotePath (without it, remotePath/<name>).
              source: new pulumi.asset.FileArchive(`${source.localDir}/`),
              remotePath: source.uploadDir,
              triggers: [source.digest],
            },
            // The install step creates uploadsDir, owned by the login. A new key or login copies the same files
            // again, in place, with the login that works now.
            { parent: this, dependsOn: [install] },
          )
        : undefined;
    const datasetEnv = datasetScriptEnv(h, source);
    const dataset = new CheckedCommand(
      `${name}-dataset`,
      {
        connection: args.connection,
        create: scriptWithEnv(["retry", "owned-dir", "harbor-dataset"], datasetEnv),
        check: scriptWithEnv("harbor-dataset-check", { DATASET_DIR: h.datasetDir, TASKS_DIR: datasetEnv.TASKS_DIR, GIT: source.kind === "git" ? "1" : "0" }),
        // The dataset checkout stays on destroy: it may be shared by jobs that are kept.
        spec: source.kind === "git" ? source.commit : `dir:${source.digest}`,
        // git clones through it.
        ...proxy,
        summary: source.kind === "git" ? ["git", source.url, source.commit] : ["upload", h.datasetRepo, source.digest.slice(0, 16)],
        timeoutSeconds: 1800,
      },
      { parent: this, dependsOn: uploaded ? [install, uploaded] : [install] },
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
    this.registerOutputs({ install: this.install, dataset: this.dataset, images: this.images });
  }
}
