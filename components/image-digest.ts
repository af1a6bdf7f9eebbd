import * as pulumi from "@pulumi/pulumi";
import { CheckedCommand } from "./checked-command";
import { scriptWithEnv } from "./host-script";
import type { HostConnectionInput } from "./ssh";

/**
 * What an image reference resolves to in its registry, asked from the host that pulls it (through its
 * network and proxy): "digest=sha256:…". Read again on every refresh, so a tag moved to another build is
 * drift that `preview` shows; feed it to the image's `pullTriggers` so the next `up` pulls that build (and
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
