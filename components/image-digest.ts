import * as pulumi from "@pulumi/pulumi";
import { CheckedCommand } from "./checked-command";
import { scriptWithEnv } from "./host-script";
import { mergedEnvironment } from "./registry-access";
import type { HostConnectionInput } from "./transport";

/**
 * The reference to pull: the repository at the digest the tag resolved to (repo@sha256:…), so every host
 * runs the same build and a moved tag means a new reference; the tag itself when the registry could not
 * say ("digest=unresolved") or the reference is pinned already.
 */
export function pinnedImageRef(ref: string, digestLine: string): string {
  if (ref.includes("@sha256:")) return ref;
  const digest = /^digest=(sha256:[0-9a-f]{64})$/.exec(digestLine.trim())?.[1];
  if (!digest) return ref;
  const slash = ref.lastIndexOf("/");
  const colon = ref.lastIndexOf(":");
  const repo = colon > slash ? ref.slice(0, colon) : ref;
  return `${repo}@${digest}`;
}

/** The lookup's create and check scripts: create also pulls the image at that digest, with retries. */
export function imageDigestScripts(image: string, attempts = 8, followTags = false, what?: string): { create: string; check: string } {
  // Only when set: a stack that does not follow tags keeps the scripts it had.
  const follow: Record<string, string> = followTags ? { FOLLOW_TAGS: "1" } : {};
  return {
    create: scriptWithEnv(["retry", "registry", "image-digest"], { IMAGE: image, PULL: "1", ATTEMPTS: String(attempts), BACKOFF_SECONDS: "2", ...follow }),
    check: scriptWithEnv(["registry", "image-digest"], { IMAGE: image, ...follow, ...(what ? { WHAT: what } : {}) }),
  };
}

/**
 * What an image reference resolves to in its registry, asked from the host that pulls it (through its
 * network and proxy): "digest=sha256:…". The create step also pulls that build into the host's dockerd
 * with retries (through dockerd's proxies), so the Docker provider's RemoteImage, which pulls without
 * retrying, finds it present. The digest is resolved once and kept: a tag that moves upstream is no drift
 * (every refresh asks the registry, and the check's warning names the tag and both digests); pinning the new
 * digest in the config (or `followTags`) is what makes the next `up` pull it and replace the container,
 * behind its restart guard. A build that disappeared from the host is drift, pulled again in place.
 */
export function registryDigest(
  name: string,
  args: {
    connection: pulumi.Input<HostConnectionInput>;
    image: string;
    /** HTTP(S)_PROXY/NO_PROXY for the registry HEAD (hosts[].proxy); secret. */
    proxyEnv?: pulumi.Input<Record<string, string>>;
    /** Registry credentials and mirrors (components/registry-access.ts registryScriptEnv); secret. */
    registryEnv?: pulumi.Input<Record<string, string>>;
    /** Follow the tag: a build it names later is drift, pulled by the next `up` (default false). */
    followTags?: boolean;
    /** Who keeps the build, for the warning ("worker-a's model server"). */
    what?: string;
  },
  opts: pulumi.CustomResourceOptions,
): pulumi.Output<string> {
  const scripts = imageDigestScripts(args.image, 8, args.followTags === true, args.what);
  const environment = mergedEnvironment(args.proxyEnv, args.registryEnv);
  const lookup = new CheckedCommand(
    name,
    {
      connection: args.connection,
      ...scripts,
      // Only when set: a host without a proxy or registry settings keeps the inputs it had.
      ...(environment !== undefined ? { environment } : {}),
      onDrift: "update",
      // A model server image is tens of GB; the check only asks the registry.
      timeoutSeconds: 3 * 3600,
    },
    opts,
  );
  return lookup.stdout.apply((out) => out.trim().split("\n").pop() ?? "");
}
