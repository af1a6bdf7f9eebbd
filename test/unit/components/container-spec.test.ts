// components/container-spec.ts: what the worker and router containers share. The API key never sits in
// the argv (which previews show flag by flag): the entrypoint appends it from the environment, as the
// container's shell would; ulimits are soft/hard pairs; labels mark what reprobench created.
import { describe, expect, it } from "vitest";
import { API_KEY_ENV, MANAGED_LABEL, ROLE_LABEL, apiKeyEntrypoint, containerLabels, ulimitList } from "../../../components/container-spec";
import { pinnedImageRef } from "../../../components/image-digest";
import { execArgv } from "../../helpers/entrypoint";

describe("apiKeyEntrypoint", () => {
  it("runs the command with --api-key and the key from $REPROBENCH_API_KEY appended, argv intact", () => {
    const command = ["sglang", "serve", "--model-path", "/models/a b", "--default-chat-template-kwargs", '{"enable_thinking": false}', "--x", "$HOME", "`id`"];
    const key = "k'ey \"with\" $pecial; chars";
    expect(API_KEY_ENV).toBe("REPROBENCH_API_KEY");
    expect(execArgv(apiKeyEntrypoint(), command, { [API_KEY_ENV]: key })).toEqual([...command, "--api-key", key]);
  });

  it("holds no key itself: the key is read when the container starts", () => {
    const entrypoint = apiKeyEntrypoint();
    expect(entrypoint.join(" ")).not.toMatch(/--api-key [^"]/);
    expect(entrypoint.join(" ")).toContain(`"$${API_KEY_ENV}"`);
    expect(execArgv(entrypoint, ["server"], { [API_KEY_ENV]: "one" })).toEqual(["server", "--api-key", "one"]);
    expect(execArgv(entrypoint, ["server"], { [API_KEY_ENV]: "two" })).toEqual(["server", "--api-key", "two"]);
  });

  it("execs the server (it becomes the container's main process and gets docker stop's SIGTERM)", () => {
    expect(apiKeyEntrypoint()[2]).toMatch(/^exec /);
  });
});

describe("ulimitList", () => {
  it("a number is soft = hard (-1 unlimited); a pair keeps both, in the map's order", () => {
    expect(ulimitList({ memlock: -1, stack: 67108864, nofile: { soft: 1024, hard: 4096 } })).toEqual([
      { name: "memlock", soft: -1, hard: -1 },
      { name: "stack", soft: 67108864, hard: 67108864 },
      { name: "nofile", soft: 1024, hard: 4096 },
    ]);
    expect(ulimitList({})).toEqual([]);
  });
});

describe("containerLabels", () => {
  it("marks the container as reprobench's, with its role", () => {
    expect(containerLabels("worker")).toEqual([
      { label: MANAGED_LABEL, value: "1" },
      { label: ROLE_LABEL, value: "worker" },
    ]);
    expect(containerLabels("router").find((l) => l.label === ROLE_LABEL)?.value).toBe("router");
    expect(MANAGED_LABEL).toBe("io.reprobench.managed");
  });
});

describe("pinnedImageRef", () => {
  const d = `sha256:${"ab".repeat(32)}`;
  it("pulls the repository at the digest its tag resolved to", () => {
    expect(pinnedImageRef("lmsysorg/sglang:latest-runtime", `digest=${d}`)).toBe(`lmsysorg/sglang@${d}`);
    expect(pinnedImageRef("registry.sim:5000/reprobench/sglang-double:latest", `digest=${d}\n`)).toBe(`registry.sim:5000/reprobench/sglang-double@${d}`);
    // No tag: the registry's port is not a tag.
    expect(pinnedImageRef("registry.sim:5000/reprobench/sglang-double", `digest=${d}`)).toBe(`registry.sim:5000/reprobench/sglang-double@${d}`);
  });
  it("keeps the reference when the registry could not say, or when it is pinned already", () => {
    expect(pinnedImageRef("lmsysorg/sglang:latest-runtime", "digest=unresolved")).toBe("lmsysorg/sglang:latest-runtime");
    expect(pinnedImageRef(`lmsysorg/sglang@${d}`, `digest=sha256:${"cd".repeat(32)}`)).toBe(`lmsysorg/sglang@${d}`);
  });
});
