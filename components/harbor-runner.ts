import * as pulumi from "@pulumi/pulumi";
import type { ClusterHost } from "./host";
import { CheckedCommand } from "./checked-command";
import { lastJsonLine, scriptWithEnv } from "./host-script";
import { guardHooks } from "./restart-guard";
import type { RunnerPaths } from "./run-config";
import { uploadsDir } from "./task-dataset";

/** Harbor on the runner (harbor.* of the stack; the dataset is TaskDataset's, components/task-dataset.ts). */
export interface HarborSettings extends Pick<RunnerPaths, "workDir" | "jobsDir"> {
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

/** What harbor-install.sh prints last. */
export interface HarborInstallReport {
  version: string;
  wheelSha256: string;
  python: string;
  venv: string;
  freeze: string;
}

export interface HarborRunnerArgs {
  /** The runner host (its connection, proxy and restart guard). */
  readonly host: ClusterHost;
  readonly settings: HarborSettings;
}

/**
 * Harbor on the runner host (seed 000 "安装 Harbor"): the pinned wheel in its own venv (sha256-checked,
 * `pip freeze` kept beside the logs), and the login's uploads dir a TaskDataset upload writes into. A
 * refresh notices a broken venv. The dataset is TaskDataset's (components/task-dataset.ts).
 */
export class HarborRunner extends pulumi.ComponentResource {
  /** What harbor-install.sh reported: version, wheel sha256, Python, venv, freeze file. */
  public readonly install: pulumi.Output<HarborInstallReport>;

  constructor(name: string, args: HarborRunnerArgs, opts?: pulumi.ComponentResourceOptions) {
    super("reprobench:runner:HarborRunner", name, {}, opts);
    const h = args.settings;
    const installEnv = installScriptEnv(h);
    const proxy = args.host.proxyEnv !== undefined ? { environment: args.host.proxyEnv } : {};
    const install = new CheckedCommand(
      `${name}-install`,
      {
        connection: args.host.connection,
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
      // A running job runs from this venv: a reinstall or removal asks the restart guard first. The
      // component's dependsOn does not reach its children by itself: passed on.
      { parent: this, dependsOn: opts?.dependsOn, hooks: guardHooks(`${name}-install`, args.host.restartGuard, "the Harbor install") },
    );
    this.install = install.stdout.apply((s) => lastJsonLine<HarborInstallReport>(s, "harbor-install.sh"));
    this.registerOutputs({ install: this.install });
  }
}
