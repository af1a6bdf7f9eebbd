import * as pulumi from "@pulumi/pulumi";
import type { ClusterHost } from "./host";
import { CheckedCommand } from "./checked-command";
import { scriptWithEnv } from "./host-script";
import { mergedEnvironment } from "./registry-access";
import { guardHooks } from "./restart-guard";

/** The tool bundle's settings (toolBundle.* of the stack). */
export interface ToolBundleSettings {
  /** Bundle directory on the runner host. */
  hostDir: string;
  /** Where task containers see it (seed: /opt/harbor-tools). */
  mountPath: string;
  /** The asciinema wheel and its sha256. */
  asciinemaWheelUrl: string;
  asciinemaSha256: string;
  /** A task image without tmux/asciinema, used to prove the bundle from inside a container. */
  canaryImage: string;
}

/** Inputs of tool-bundle.sh. */
export function bundleScriptEnv(t: ToolBundleSettings): Record<string, string> {
  return {
    TOOLS_DIR: t.hostDir,
    MOUNT_PATH: t.mountPath,
    WHEEL_URL: t.asciinemaWheelUrl,
    WHEEL_SHA256: t.asciinemaSha256,
    CANARY_IMAGE: t.canaryImage,
  };
}

export interface ToolBundleArgs {
  /** The runner host (its connection, proxy and restart guard). */
  readonly host: ClusterHost;
  readonly settings: ToolBundleSettings;
  /** Registry credentials for the canary pull (registries[]; components/registry-access.ts); secret. Omitted: anonymous. */
  readonly registryEnv?: pulumi.Input<Record<string, string>>;
}

/**
 * The read-only tmux/asciinema bundle task containers mount (Terminus-2 drives tmux and records with
 * asciinema). hostDir is a symlink to the current version in `<hostDir>.bundles/`; a rebuild never touches
 * a version a running container has mounted (tool-bundle.sh). A refresh reads the bundle's file digest
 * back: a deleted or altered bundle is rebuilt.
 */
export class ToolBundle extends pulumi.ComponentResource {
  /** Versions seen inside the canary image; resolves once the bundle is in place. */
  public readonly report: pulumi.Output<string>;

  constructor(name: string, args: ToolBundleArgs, opts?: pulumi.ComponentResourceOptions) {
    super("reprobench:runner:ToolBundle", name, {}, opts);
    const t = args.settings;
    const environment = mergedEnvironment(args.host.proxyEnv, args.registryEnv);
    const build = new CheckedCommand(
      `${name}-build`,
      {
        connection: args.host.connection,
        create: scriptWithEnv(["retry", "registry", "owned-dir", "tool-bundle"], bundleScriptEnv(t)),
        check: scriptWithEnv("tool-bundle-check", { TOOLS_DIR: t.hostDir }),
        // The path travels as an input (never spliced into shell text); only what is ours is removed.
        delete: scriptWithEnv(["owned-dir", "tool-bundle-remove"], { TOOLS_DIR: t.hostDir }),
        // The asciinema wheel is downloaded through the proxy; the canary pulled with the registry
        // credentials (each only when set).
        ...(environment !== undefined ? { environment } : {}),
        // The build swaps the new bundle in atomically (a symlink renamed over the old one; running trials
        // keep the version they mounted): re-running it repairs drift.
        onDrift: "update",
        timeoutSeconds: 1200,
      },
      // Children do not inherit the component's dependsOn: pass it on. A rebuild swaps what new trials
      // mount (running ones keep theirs): it asks the restart guard first.
      { parent: this, dependsOn: opts?.dependsOn, hooks: guardHooks(`${name}-build`, args.host.restartGuard, "the tool bundle") },
    );
    this.report = build.stdout.apply((s) => s.trim().split("\n").pop() ?? "");
    this.registerOutputs({ report: this.report });
  }
}
