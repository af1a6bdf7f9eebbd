import * as pulumi from "@pulumi/pulumi";
import { CheckedCommand } from "./checked-command";
import { lastJsonLine, scriptWithEnv } from "./host-script";
import type { HostConnectionInput } from "./ssh";

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
export function taskImagesScriptEnv(harbor: ImagePullSettings, images: string[], daemonConfigPath: string): Record<string, string> {
  if (images.length === 0) throw new Error("TaskImages: the dataset lists no [environment].docker_image to pre-pull");
  return {
    IMAGES: [...new Set(images)].sort().join("\n"),
    CONCURRENCY: String(harbor.imagePullConcurrency),
    ATTEMPTS: String(harbor.imagePullAttempts),
    INSECURE_REGISTRIES: harbor.insecureRegistries.join(","),
    DAEMON_JSON: daemonConfigPath,
  };
}

/** What task-images.sh prints last. */
export interface TaskImagesReport {
  ready: number;
  total: number;
  /** Image reference → the registry digest it resolved to (repo@sha256:…; the local id for an image from no registry), recorded in the run manifest. */
  images: Record<string, string>;
}

export interface TaskImagesArgs {
  /** SSH connection to the runner host. */
  readonly connection: pulumi.Input<HostConnectionInput>;
  readonly settings: ImagePullSettings;
  /** The runner's daemon.json (its insecure-registries are honoured). */
  readonly daemonConfigPath: string;
  /** The image manifest (HarborRunner.images). */
  readonly images: pulumi.Input<string[]>;
  /** HTTP(S)_PROXY/NO_PROXY of the runner's proxy (hosts[].proxy), merged into the scripts' secret environment; omitted: none. */
  readonly proxyEnv?: pulumi.Input<Record<string, string>>;
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
    const env = pulumi.output(args.images).apply((images) => taskImagesScriptEnv(args.settings, images, args.daemonConfigPath));
    const pull = new CheckedCommand(
      `${name}-pull`,
      {
        connection: args.connection,
        create: env.apply((e) => scriptWithEnv(["retry", "task-images"], e)),
        check: env.apply((e) => scriptWithEnv("task-images-check", { IMAGES: e.IMAGES })),
        summary: env.apply((e) => e.IMAGES.split("\n")),
        // Only when set: a runner without a proxy keeps the inputs it had.
        ...(args.proxyEnv !== undefined ? { environment: args.proxyEnv } : {}),
        timeoutSeconds: 4 * 3600,
      },
      { parent: this },
    );
    this.report = pull.stdout.apply((s) => lastJsonLine<TaskImagesReport>(s, "task-images.sh"));
    this.registerOutputs({ report: this.report });
  }
}
