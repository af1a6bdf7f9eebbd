import { mkdtempSync, mkdirSync, writeFileSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  datasetTaskDirs,
  dockerBuildArgs,
  imageSpecs,
  prepullNames,
  pullRef,
  pushRef,
  registryUpToDate,
  resolveImages,
} from "../../../sim/images";

/** A throwaway project tree with the files the image specs point at. */
function fakeRoot(): string {
  const root = mkdtempSync(join(tmpdir(), "sim-images-"));
  const put = (rel: string, text: string) => {
    mkdirSync(join(root, rel, ".."), { recursive: true });
    writeFileSync(join(root, rel), text);
  };
  put("sim/images/debian-base/build.sh", "#!/usr/bin/env bash\n");
  for (const d of ["sim-host", "registry", "probe", "task-base", "prepull"]) put(`sim/images/${d}/Dockerfile`, `FROM x # ${d}\n`);
  put("sim/proxy/Dockerfile", "FROM reprobench/debian-base:trixie\n");
  put("sim/hub/hub.py", "# the fake hub\n");
  put("sim/sglang-double/Dockerfile", "FROM reprobench/debian-base:trixie\n");
  put("sim/scenarios/sim-default.json", "{}\n");
  put("sim/dataset/hello-file/environment/Dockerfile", "FROM registry.sim:5000/reprobench/task-base:latest\n");
  put("sim/dataset/sum-numbers/environment/Dockerfile", "FROM registry.sim:5000/reprobench/task-base:latest\n");
  put("sim/dataset/README.md", "not a task\n");
  mkdirSync(join(root, "sim/dataset/no-env"), { recursive: true });
  return root;
}

describe("image specs", () => {
  it("finds only dataset dirs with an environment/Dockerfile", () => {
    expect(datasetTaskDirs(fakeRoot())).toEqual(["hello-file", "sum-numbers"]);
  });

  it("plans every image, parents first, with the registry names the stack and tasks use", () => {
    const root = fakeRoot();
    const images = resolveImages(imageSpecs(root, datasetTaskDirs(root)), root);
    const names = images.map((i) => i.name);
    expect(names.slice(0, 7)).toEqual(["debian-base", "sim-host", "sim-registry", "sim-outside", "sim-probe", "task-base", "sglang-double"]);
    expect(names).toContain("task-hello-file");
    const pushed = images.filter((i) => i.push).map((i) => pullRef(i.push!));
    expect(pushed).toEqual(
      expect.arrayContaining([
        "registry.sim:5000/reprobench/sglang-double:latest",
        "registry.sim:5000/reprobench/task-base:latest",
        "registry.sim:5000/reprobench/task-hello-file:latest",
        "registry.sim:5000/reprobench/task-sum-numbers:latest",
        "registry.sim:5000/reprobench/prepull-01:latest",
        "registry.sim:5000/reprobench/prepull-20:latest",
      ]),
    );
    expect(images.filter((i) => i.name.startsWith("prepull-"))).toHaveLength(20);
    // Stable names other Dockerfiles build FROM.
    expect(images.find((i) => i.name === "debian-base")!.extraTags).toEqual(["reprobench/debian-base:trixie"]);
    expect(images.find((i) => i.name === "task-base")!.extraTags).toEqual(["registry.sim:5000/reprobench/task-base:latest"]);
    // The hosts and the registry are never pushed: only what hosts pull is.
    expect(images.find((i) => i.name === "sim-host")!.push).toBeUndefined();
  });

  it("names the 20 prepull images with two digits", () => {
    expect(prepullNames()).toHaveLength(20);
    expect(prepullNames()[0]).toBe("prepull-01");
    expect(prepullNames()[19]).toBe("prepull-20");
  });

  it("fails clearly when a parent is missing", () => {
    const root = fakeRoot();
    const specs = imageSpecs(root, []).filter((s) => s.name !== "debian-base");
    expect(() => resolveImages(specs, root)).toThrow(/sim-host: parent image debian-base is not defined/);
  });
});

describe("input hashes", () => {
  it("are stable, distinct per image, and change with an input file or the parent", () => {
    const root = fakeRoot();
    const first = resolveImages(imageSpecs(root, ["hello-file"]), root);
    const again = resolveImages(imageSpecs(root, ["hello-file"]), root);
    expect(again.map((i) => i.tag)).toEqual(first.map((i) => i.tag));
    expect(new Set(first.map((i) => i.hash)).size).toBe(first.length);
    expect(first.find((i) => i.name === "sim-host")!.tag).toMatch(/^reprobench\/sim-host:[0-9a-f]{16}$/);

    // A change in the base changes the base and every descendant, but not the FROM-scratch probe.
    writeFileSync(join(root, "sim/images/debian-base/build.sh"), "#!/usr/bin/env bash\n# changed\n");
    const changed = resolveImages(imageSpecs(root, ["hello-file"]), root);
    const hashOf = (list: typeof first, name: string) => list.find((i) => i.name === name)!.hash;
    for (const name of ["debian-base", "sim-host", "task-base", "task-hello-file", "prepull-07"]) {
      expect(hashOf(changed, name)).not.toBe(hashOf(first, name));
    }
    expect(hashOf(changed, "sim-probe")).toBe(hashOf(first, "sim-probe"));
  });

  it("notice an executable bit", () => {
    const root = fakeRoot();
    const before = resolveImages(imageSpecs(root, []), root)[0].hash;
    chmodSync(join(root, "sim/images/debian-base/build.sh"), 0o755);
    expect(resolveImages(imageSpecs(root, []), root)[0].hash).not.toBe(before);
  });
});

describe("build and push helpers", () => {
  it("builds prepull images FROM the exact debian-base build and labels every image", () => {
    const root = fakeRoot();
    const images = resolveImages(imageSpecs(root, []), root);
    const taskBase = images.find((i) => i.name === "debian-base")!;
    const prepull = images.find((i) => i.name === "prepull-03")!;
    const args = dockerBuildArgs(prepull, taskBase.tag);
    expect(args).toEqual(expect.arrayContaining(["--build-arg", `BASE=${taskBase.tag}`, "--build-arg", "INDEX=03", "-t", prepull.tag]));
    expect(args.join(" ")).toContain(`--label io.reprobench.input-hash=${prepull.hash}`);
    expect(args.join(" ")).toContain("--label io.reprobench.sim=1");
  });

  it("skips a push only when the registry holds exactly our digest", () => {
    const repo = "reprobench/task-base";
    const mine = [`${pushRef(repo).replace(":latest", "")}@sha256:aaa`];
    expect(registryUpToDate(mine, repo, "sha256:aaa")).toBe(true);
    expect(registryUpToDate(mine, repo, "sha256:bbb")).toBe(false);
    expect(registryUpToDate(mine, repo, undefined)).toBe(false);
    expect(registryUpToDate([], repo, "sha256:aaa")).toBe(false);
  });

  it("counts our digest pushed to another sim registry (a seeded storage) as held, but not another repository's", () => {
    const repo = "reprobench/task-base";
    const pushedElsewhere = ["127.0.0.1:5011/reprobench/task-base@sha256:aaa", "127.0.0.1:5011/reprobench/other@sha256:ccc"];
    expect(registryUpToDate(pushedElsewhere, repo, "sha256:aaa")).toBe(true);
    expect(registryUpToDate(pushedElsewhere, repo, "sha256:ccc")).toBe(false);
    expect(registryUpToDate(pushedElsewhere, "reprobench/base", "sha256:aaa")).toBe(false);
  });
});
