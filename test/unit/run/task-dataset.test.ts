// TaskDataset in a cluster-owning stack: the real program (infra/index.ts) under Pulumi mocks, as stack
// `local`. The dataset's steps were the HarborRunner's children before TaskDataset existed; each is
// aliased to the URN it had there (the URNs release 0.1.0 wrote, test/fixtures/upgrade), so a stack brought
// up before keeps its dataset: nothing is replaced or re-run.
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { stackConfigFromYaml } from "../../../components/config/stack-file";
import { CLUSTER_SECRETS, clusterMockState, engineUrn, programMocks, type Registration, urnsAnsweredBy } from "../../helpers/program-mocks";

const REPO = path.resolve(__dirname, "../../..");

const mocks = programMocks({
  stack: "local",
  mockState: clusterMockState(1),
  secrets: CLUSTER_SECRETS,
  // The mock monitor's root directory is no directory of this project: the upload's dataset resolves from the repository.
  rootDirectory: REPO,
});
/** Runs infra/index.ts for a cluster-owning stack config and returns every registration. */
const program = (config: Record<string, unknown>) => mocks.run(config);

/** Pulumi.a100.yaml (seed 000's cluster) running Pulumi.dev.yaml's job, with harbor.* overridden. */
function clusterConfig(harbor: Record<string, unknown> = {}): Record<string, unknown> {
  const cluster = stackConfigFromYaml(readFileSync(path.join(REPO, "Pulumi.a100.yaml"), "utf8"), "Pulumi.a100.yaml");
  const dev = stackConfigFromYaml(readFileSync(path.join(REPO, "Pulumi.dev.yaml"), "utf8"), "Pulumi.dev.yaml");
  return { ...cluster, run: dev.run, harbor: { ...(cluster.harbor as Record<string, unknown> | undefined), ...harbor } };
}

/** The URN release 0.1.0 recorded for a resource of the local stack. */
function releasedUrn(name: string): string {
  const fixture = JSON.parse(readFileSync(path.join(REPO, "test/fixtures/upgrade/0.1.0.json"), "utf8")) as { resources: { name: string; urn: string }[] };
  const found = fixture.resources.find((r) => r.name === name);
  if (!found) throw new Error(`no ${name} in the fixture`);
  return found.urn;
}

/** The cluster's part `name` (registered as `cluster-<name>`: parts are named after their cluster). */
const byName = (rs: Registration[], name: string): Registration => {
  const found = rs.find((r) => r.name === `cluster-${name}` && r.type !== "reprobench:runner:TaskDataset" && r.type !== "reprobench:runner:HarborRunner");
  if (!found) throw new Error(`cluster-${name} is not registered`);
  return found;
};
/** The URN the HarborRunner had before parts were named after their cluster (`harbor` under it). */
const FORMER_HARBOR = "urn:pulumi:local::reprobench::reprobench:cluster:BenchCluster$reprobench:runner:HarborRunner::harbor";

describe("TaskDataset in a cluster-owning stack", () => {
  it("holds the dataset step, aliased to the URN it had under HarborRunner (release 0.1.0's)", async () => {
    const rs = await program(clusterConfig());
    const component = rs.find((r) => r.type === "reprobench:runner:TaskDataset");
    const harbor = rs.find((r) => r.type === "reprobench:runner:HarborRunner");
    // Both are parts of the cluster (BenchCluster), aliased to the top level where the program had them.
    expect(component?.urn).toBe("urn:pulumi:local::reprobench::reprobench:cluster:BenchCluster$reprobench:runner:TaskDataset::cluster-harbor");
    expect(harbor?.urn).toBe("urn:pulumi:local::reprobench::reprobench:cluster:BenchCluster$reprobench:runner:HarborRunner::cluster-harbor");
    const dataset = byName(rs, "harbor-dataset");
    expect(dataset.parent).toBe(component?.urn);
    expect(engineUrn(rs, dataset)).toBe("urn:pulumi:local::reprobench::reprobench:cluster:BenchCluster$reprobench:runner:TaskDataset$reprobench:index:HostScript::cluster-harbor-dataset");
    expect(dataset.aliasParents).toContain(FORMER_HARBOR);
    expect(urnsAnsweredBy(rs, dataset)).toContain(releasedUrn("harbor-dataset"));
    // Still after the Harbor install, and still without a delete: destroy leaves the checkout.
    expect(dataset.dependencies).toEqual([byName(rs, "harbor-install").urn]);
    expect(dataset.inputs.delete).toBeUndefined();
    // HarborRunner keeps only the install, which keeps its URN (no alias needed).
    expect(rs.filter((r) => r.parent === harbor?.urn).map((r) => r.name)).toEqual(["cluster-harbor-install"]);
    expect(urnsAnsweredBy(rs, byName(rs, "harbor-install"))).toContain(releasedUrn("harbor-install"));
    // No alias of another parent: only its own type as a dynamic resource (the provider plugin's), under its parent.
    expect(byName(rs, "harbor-install").aliases.map((a) => [a.type, a.parentUrn])).toEqual([["pulumi-nodejs:dynamic:Resource", harbor?.urn]]);
    // The pre-pull reads the dataset's images, as before, and (like the install) waits for the runner's
    // daemon.json merge, which may restart dockerd: the components' dependsOn passed on to their steps.
    const runnerDaemon = byName(rs, "worker-b-docker-daemon-json").urn;
    expect(byName(rs, "task-images-pull").dependencies.sort()).toEqual([runnerDaemon, dataset.urn].sort());
    expect(byName(rs, "harbor-install").dependencies).toEqual([runnerDaemon]);
    expect(String(byName(rs, "task-images-pull").inputs.create)).toContain("x/a:1");
  });

  it("aliases an uploaded dataset's copy too, which still waits for the install (it makes the uploads dir)", async () => {
    const rs = await program(clusterConfig({ datasetRepo: "sim/dataset", datasetCommit: null, datasetDir: "/var/lib/reprobench/sim-dataset", datasetTasksSubdir: "", expectedTaskCount: 3 }));
    const upload = byName(rs, "harbor-dataset-upload");
    expect(upload.type).toBe("command:remote:CopyToRemote");
    expect(upload.aliasParents).toContain(FORMER_HARBOR);
    expect(urnsAnsweredBy(rs, upload)).toContain("urn:pulumi:local::reprobench::reprobench:runner:HarborRunner$command:remote:CopyToRemote::harbor-dataset-upload");
    expect(upload.dependencies).toEqual([byName(rs, "harbor-install").urn]);
    expect(byName(rs, "harbor-dataset").dependencies.sort()).toEqual([byName(rs, "harbor-install").urn, upload.urn].sort());
  });

  it("answers every URN release 0.1.0 wrote, each by one registration: a stack brought up before BenchCluster replaces nothing", async () => {
    const rs = await program(clusterConfig());
    const fixture = JSON.parse(readFileSync(path.join(REPO, "test/fixtures/upgrade/0.1.0.json"), "utf8")) as { resources: { urn: string }[] };
    for (const { urn } of fixture.resources) {
      expect(rs.filter((r) => urnsAnsweredBy(rs, r).includes(urn)).map((r) => r.urn), urn).toHaveLength(1);
    }
  });

  it("answers, for every part of the cluster, the URN it had at the top level of the program (the model server under its former type)", async () => {
    const rs = await program(clusterConfig());
    const parts = rs.filter((r) => r.type !== "reprobench:cluster:BenchCluster");
    expect(parts.length).toBeGreaterThan(40);
    for (const r of parts) {
      const before = engineUrn(rs, r)
        .replace("reprobench:cluster:BenchCluster$", "")
        .replace("reprobench:cluster:ModelServer", "reprobench:cluster:SglangWorker")
        .replace(/::cluster-([^:]+)$/, "::$1");
      expect(before, r.urn).not.toContain("BenchCluster");
      expect(urnsAnsweredBy(rs, r), r.urn).toContain(before);
    }
  });
});
