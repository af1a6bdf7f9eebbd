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

/**
 * What an image reference resolves to in its registry, asked from the host that pulls it (through its
 * network and proxy): "digest=sha256:…". Read again on every refresh, so a tag moved to another build is
 * drift that `preview` shows; pull `pinnedImageRef(ref, digest)` so the next `up` pulls that build (and
 * replaces the container, behind its restart guard).
 */
export function registryDigest(
  name: string,
  args: { connection: pulumi.Input<HostConnectionInput>; image: string },
  opts: pulumi.CustomResourceOptions,
): pulumi.Output<string> {
  const script = scriptWithEnv("image-digest", { IMAGE: args.image });
  const lookup = new CheckedCommand(name, { connection: args.connection, create: script, check: script, onDrift: "update", timeoutSeconds: 300 }, opts);
  return lookup.stdout.apply((out) => out.trim().split("\n").pop() ?? "");
}
