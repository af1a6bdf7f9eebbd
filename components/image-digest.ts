import * as pulumi from "@pulumi/pulumi";
import { CheckedCommand } from "./checked-command";
import { scriptWithEnv } from "./host-script";
import type { HostConnectionInput } from "./ssh";

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
export function imageDigestScripts(image: string, attempts = 8): { create: string; check: string } {
  return {
    create: scriptWithEnv(["retry", "image-digest"], { IMAGE: image, PULL: "1", ATTEMPTS: String(attempts), BACKOFF_SECONDS: "2" }),
    check: scriptWithEnv("image-digest", { IMAGE: image }),
  };
}

/**
 * What an image reference resolves to in its registry, asked from the host that pulls it (through its
 * network and proxy): "digest=sha256:…". The create step also pulls that build into the host's dockerd
 * with retries (through dockerd's proxies), so the Docker provider's RemoteImage, which pulls without
 * retrying, finds it present. Read again on every refresh, so a tag moved to another build is drift that
 * `preview` shows; pull `pinnedImageRef(ref, digest)` so the next `up` pulls that build (and replaces the
 * container, behind its restart guard).
 */
export function registryDigest(
  name: string,
  args: {
    connection: pulumi.Input<HostConnectionInput>;
    image: string;
    /** HTTP(S)_PROXY/NO_PROXY for skopeo (hosts[].proxy); secret. */
    proxyEnv?: pulumi.Input<Record<string, string>>;
  },
  opts: pulumi.CustomResourceOptions,
): pulumi.Output<string> {
  const scripts = imageDigestScripts(args.image);
  const lookup = new CheckedCommand(
    name,
    {
      connection: args.connection,
      ...scripts,
      // Only when set: a host without a proxy keeps the inputs it had.
      ...(args.proxyEnv !== undefined ? { environment: args.proxyEnv } : {}),
      onDrift: "update",
      // A model server image is tens of GB; the check only asks the registry.
      timeoutSeconds: 3 * 3600,
    },
    opts,
  );
  return lookup.stdout.apply((out) => out.trim().split("\n").pop() ?? "");
}
