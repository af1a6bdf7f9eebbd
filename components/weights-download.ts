// Weights from a hub (modelServer.download): one WeightsDownload per worker, run before that worker's
// preflight (components/bench-cluster.ts). The host script (components/scripts/weights-download.sh) does the
// work; this module holds what it is given, pure, and the thin component around one CheckedCommand.
import { existsSync, readFileSync } from "node:fs";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { CheckedCommand } from "./checked-command";
import { type ReprobenchConfig, workerSettings } from "./config";
import type { ClusterHost } from "./host";
import { lastJsonLine, scriptWithEnv } from "./host-script";
import { guardHooks } from "./restart-guard";

/** What one worker downloads, and where. */
export interface WeightsDownloadSettings {
  /** The worker host's name (messages name it). */
  hostName: string;
  repo: string;
  revision: string;
  endpoint: string;
  indexUrl: string;
  venv: string;
  attempts: number;
  timeoutMinutes: number;
  /** This worker's modelServer.modelPath (an override's when it has one). */
  modelPath: string;
}

/** What weights-download.sh prints last. */
export interface WeightsDownloadReport {
  repo: string;
  revision: string;
  /** The commit the revision named when it was downloaded. */
  commit: string;
  modelPath: string;
  files: number;
  bytes: number;
  /** false: the marker already named this repo and revision with every file there (nothing downloaded). */
  changed: boolean;
}

/** One worker's download settings; undefined without modelServer.download (nothing is downloaded). */
export function weightsDownloadSettings(config: ReprobenchConfig, hostName: string): WeightsDownloadSettings | undefined {
  const d = config.modelServer.download;
  if (d === undefined) return undefined;
  return {
    hostName, repo: d.repo, revision: d.revision, endpoint: d.endpoint.replace(/\/+$/, ""), indexUrl: d.indexUrl, venv: d.venv, attempts: d.attempts, timeoutMinutes: d.timeoutMinutes,
    modelPath: workerSettings(config, hostName).modelPath,
  };
}

/**
 * The pinned huggingface_hub requirements (components/weights/requirements.txt): beside this module in the
 * source tree, or in the package's components/ when this runs from dist/components (the build copies only
 * the scripts; the package ships components/ as well).
 */
export function weightsRequirements(dir: string = __dirname): string {
  for (const candidate of [path.join(dir, "weights", "requirements.txt"), path.join(dir, "..", "..", "components", "weights", "requirements.txt")]) {
    if (existsSync(candidate)) return readFileSync(candidate, "utf8");
  }
  throw new Error(`reprobench: components/weights/requirements.txt not found near ${dir} (the pins of modelServer.download's client)`);
}

/** Inputs of weights-download.sh, none secret (the token and the proxy go in downloadEnvironment). */
export function downloadScriptEnv(s: WeightsDownloadSettings, requirements: string): Record<string, string> {
  return {
    REPO: s.repo,
    REVISION: s.revision,
    MODEL_PATH: s.modelPath,
    ENDPOINT: s.endpoint,
    VENV: s.venv,
    REQUIREMENTS: requirements,
    INDEX_URL: s.indexUrl,
    ATTEMPTS: String(s.attempts),
  };
}

/** The secret inputs: the host's proxy variables and, when the stack has one, HF_TOKEN. */
export function downloadEnvironment(proxy: Record<string, string> | undefined, token: string | undefined): Record<string, string> {
  return { ...(proxy ?? {}), ...(token ? { HF_TOKEN: token } : {}) };
}

/** What a preview shows: the download as the client runs it (no secret in it). */
export function downloadSummary(s: WeightsDownloadSettings): string[] {
  return ["hf", "download", s.repo, "--revision", s.revision, "--local-dir", s.modelPath, `HF_ENDPOINT=${s.endpoint}`, `--index-url ${s.indexUrl}`];
}

export interface WeightsDownloadArgs {
  /** The worker host (its connection, proxy and restart guard). */
  readonly host: ClusterHost;
  readonly settings: WeightsDownloadSettings;
  /** The hub token (reprobench:hfToken), secret; absent: anonymous (a public repo). */
  readonly hfToken?: pulumi.Input<string>;
}

/**
 * A worker's weights downloaded from a hub into its modelServer.modelPath (issue 30, item 4): the pinned
 * huggingface_hub in its own venv, the download through the host's proxy with the stack's token, retried
 * and resumed, every file verified against the hub's listing, and a marker that makes a converged `up`
 * do nothing. A refresh notices a file gone or cut short and the next `up` downloads it again. The weights
 * stay on destroy. Another revision rewrites weights a running server uses: that update asks the restart
 * guard first.
 */
export class WeightsDownload extends pulumi.ComponentResource {
  /** What weights-download.sh reported: repo, revision, commit, files, bytes. */
  public readonly report: pulumi.Output<WeightsDownloadReport>;

  constructor(name: string, args: WeightsDownloadArgs, opts?: pulumi.ComponentResourceOptions) {
    super("reprobench:cluster:WeightsDownload", name, {}, opts);
    const s = args.settings;
    const environment = pulumi
      .all([pulumi.output(args.host.proxyEnv ?? {}), pulumi.output(args.hfToken ?? "")])
      .apply(([proxy, token]) => downloadEnvironment(proxy, token || undefined));
    const fetch = new CheckedCommand(
      `${name}-fetch`,
      {
        connection: args.host.connection,
        create: scriptWithEnv(["retry", "owned-dir", "weights-download"], downloadScriptEnv(s, weightsRequirements())),
        check: scriptWithEnv("weights-download-check", { MODEL_PATH: s.modelPath }),
        environment: pulumi.secret(environment),
        summary: downloadSummary(s),
        onDrift: "update",
        timeoutSeconds: s.timeoutMinutes * 60,
      },
      { parent: this, dependsOn: opts?.dependsOn, hooks: guardHooks(`${name}-fetch`, args.host.restartGuard, `the weights of ${s.hostName}'s model server (${s.modelPath})`) },
    );
    this.report = fetch.stdout.apply((out) => lastJsonLine<WeightsDownloadReport>(out, "weights-download.sh"));
    this.registerOutputs({ report: this.report });
  }
}
