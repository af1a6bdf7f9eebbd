import * as pulumi from "@pulumi/pulumi";
import type { ClusterHost } from "./host";
import { CheckedCommand } from "./checked-command";
import { lastJsonLine, scriptWithEnv } from "./host-script";
import { type PullLimit, type RegistryMirror, mergedEnvironment, pullQuotaWarnings, registryMirrorEnv } from "./registry-access";

/** How task images are pulled (harbor.imagePull* of the stack). */
export interface ImagePullSettings {
  /** Pulls at a time. */
  imagePullConcurrency: number;
  /** Attempts per image before the step fails. */
  imagePullAttempts: number;
  /** Registries pulled from over plain HTTP. */
  insecureRegistries: string[];
}

/** Inputs of task-images.sh for an image list (deduplicated and sorted, so the order never causes a diff). */
export function taskImagesScriptEnv(harbor: ImagePullSettings, images: string[], daemonConfigPath: string, timeBudgetSeconds = TASK_IMAGES_TIME_BUDGET_SECONDS): Record<string, string> {
  if (images.length === 0) throw new Error("TaskImages: the dataset lists no [environment].docker_image to pre-pull");
  return {
    IMAGES: [...new Set(images)].sort().join("\n"),
    CONCURRENCY: String(harbor.imagePullConcurrency),
    ATTEMPTS: String(harbor.imagePullAttempts),
    INSECURE_REGISTRIES: harbor.insecureRegistries.join(","),
    DAEMON_JSON: daemonConfigPath,
    TIME_BUDGET_SECONDS: String(timeBudgetSeconds),
  };
}

/** How long the pre-pull step may run. */
export const TASK_IMAGES_TIMEOUT_SECONDS = 4 * 3600;
/** How long of that it may wait for a registry's pull window (the rest is for the pulls themselves). */
export const TASK_IMAGES_TIME_BUDGET_SECONDS = TASK_IMAGES_TIMEOUT_SECONDS - 30 * 60;

/** What the stack knows of its registries' pull limits, for the warning before a pre-pull. */
export interface PullQuotaSettings {
  /** Registry → counted pulls per window for the login the stack pulls as. */
  limits: Record<string, PullLimit | undefined>;
  /** Registries pulled through a mirror (their quota is the mirror's). */
  mirrored: string[];
  /** Registries the stack has credentials for. */
  credentialed: string[];
}

/** What task-images.sh prints last. */
export interface TaskImagesReport {
  ready: number;
  total: number;
  /** Image reference → the registry digest it resolved to (repo@sha256:…; the local id for an image from no registry), recorded in the run manifest. */
  images: Record<string, string>;
}

export interface TaskImagesArgs {
  /** The runner host (its connection, and the proxy its pulls go through). */
  readonly host: ClusterHost;
  readonly settings: ImagePullSettings;
  /** The runner's daemon.json (its insecure-registries are honoured). */
  readonly daemonConfigPath: string;
  /** The image manifest (HarborRunner.images). */
  readonly images: pulumi.Input<string[]>;
  /** Registry credentials (registries[]; components/registry-access.ts registryAuthEnv); secret. Omitted: anonymous. */
  readonly registryEnv?: pulumi.Input<Record<string, string>>;
  /** Pull-through mirrors skopeo pulls through (registries[].mirror). Omitted: none. */
  readonly mirrors?: readonly RegistryMirror[];
  /** Known pull limits: a warning (preview, up) when the images need more pull windows than the step may wait. */
  readonly pullQuota?: PullQuotaSettings;
}

/**
 * Every task image pre-pulled into the runner's Docker before the job starts (seed 000 "拉取 89 个 task
 * images"), so no trial spends its environment-build timeout on a pull. A refresh notices pruned images.
 */
export class TaskImages extends pulumi.ComponentResource {
  /** ready/total and the image ids. */
  public readonly report: pulumi.Output<TaskImagesReport>;

  constructor(name: string, args: TaskImagesArgs, opts?: pulumi.ComponentResourceOptions) {
    super("reprobench:runner:TaskImages", name, {}, opts);
    const mirrorEnv = registryMirrorEnv(args.mirrors ?? []);
    const env = pulumi.output(args.images).apply((images) => ({ ...taskImagesScriptEnv(args.settings, images, args.daemonConfigPath), ...mirrorEnv }));
    const quota = args.pullQuota;
    if (quota !== undefined) {
      // Known in a preview once the dataset exists (its image list is in state); said again by the step.
      pulumi.output(args.images).apply((images) => {
        for (const warning of pullQuotaWarnings(images, quota.limits, quota.mirrored, TASK_IMAGES_TIME_BUDGET_SECONDS, quota.credentialed)) void pulumi.log.warn(warning, this);
      });
    }
    const environment = mergedEnvironment(args.host.proxyEnv, args.registryEnv);
    const pull = new CheckedCommand(
      `${name}-pull`,
      {
        connection: args.host.connection,
        create: env.apply((e) => scriptWithEnv(["retry", "registry", "task-images"], e)),
        check: env.apply((e) => scriptWithEnv("task-images-check", { IMAGES: e.IMAGES })),
        summary: env.apply((e) => e.IMAGES.split("\n")),
        // Only when set: a runner without a proxy or registry settings keeps the inputs it had.
        ...(environment !== undefined ? { environment } : {}),
        timeoutSeconds: TASK_IMAGES_TIMEOUT_SECONDS,
      },
      // The component's dependsOn does not reach its children by itself: passed on, so no pull overlaps
      // the daemon.json merge (which may restart dockerd) of the cluster's DockerDaemon.
      { parent: this, dependsOn: opts?.dependsOn },
    );
    this.report = pull.stdout.apply((s) => lastJsonLine<TaskImagesReport>(s, "task-images.sh"));
    this.registerOutputs({ report: this.report });
  }
}
