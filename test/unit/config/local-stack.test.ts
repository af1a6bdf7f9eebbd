// The local stack pins the sim dataset's commit: it must be the commit sim/outside.ts builds from
// sim/dataset (the one with the three tasks), so an edit of sim/dataset without a new pin fails here
// instead of failing `reprobench up` with a missing commit.
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { DATASET_GIT_URL, datasetCommits, INDEX_URL } from "../../../sim/outside";

const root = path.resolve(__dirname, "../../..");
const config = YAML.parse(readFileSync(path.join(root, "Pulumi.local.yaml"), "utf8")).config;

describe("Pulumi.local.yaml and the simulated outside", () => {
  it("pins the commit of sim/dataset that has the three tasks (not the repository's HEAD)", async () => {
    const commits = await datasetCommits(root);
    expect(config["reprobench:harbor"].datasetRepo).toBe(DATASET_GIT_URL);
    expect(config["reprobench:harbor"].datasetCommit).toBe(commits.pinned);
    expect(commits.head).not.toBe(commits.pinned);
  });

  it("installs Harbor from the sim's index and reaches it through a proxy on every host", () => {
    expect(config["reprobench:harbor"].indexUrl).toBe(INDEX_URL);
    expect(config["reprobench:harbor"].pipFindLinks).toBeUndefined();
    for (const host of config["reprobench:hosts"]) expect(host.proxy, host.name).toBeDefined();
  });
});
