// Which images a stack names by a movable tag (warned about at preview) and which it pins by digest.
import { describe, expect, it } from "vitest";
import { mutableImageRefs, parseConfig, readStackFile, type ReprobenchConfig } from "../../../components/config";
import { REPO } from "./helpers";

function config(path: string, edit?: (raw: Record<string, unknown>) => void): ReprobenchConfig {
  const raw = readStackFile(`${REPO}/${path}`);
  edit?.(raw);
  const r = parseConfig(raw, { requireSecrets: false });
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.config;
}

describe("mutableImageRefs", () => {
  it("names seed 000's latest-runtime tag once (the router runs the same image)", () => {
    expect(mutableImageRefs(config("Pulumi.a100.yaml"))).toEqual([{ key: "reprobench:modelServer.image", ref: "lmsysorg/sglang:latest-runtime" }]);
  });

  it("a digest pins the image: nothing to warn about", () => {
    const pinned = `lmsysorg/sglang@sha256:${"a".repeat(64)}`;
    expect(mutableImageRefs(config("Pulumi.a100.yaml", (raw) => ((raw.modelServer as Record<string, unknown>).image = pinned)))).toEqual([]);
  });

  it("a router image of its own and a per-host override are named under their own keys", () => {
    const c = config("Pulumi.a100.yaml", (raw) => {
      raw.router = { image: "lmsysorg/sglang-router:v0.3.2" };
      (raw.modelServer as Record<string, unknown>).overrides = { "worker-b": { image: "lmsysorg/sglang:v0.5.23" } };
    });
    expect(mutableImageRefs(c).map((r) => r.key)).toEqual([
      "reprobench:modelServer.image",
      "reprobench:modelServer.overrides.worker-b.image",
      "reprobench:router.image",
    ]);
  });
});
