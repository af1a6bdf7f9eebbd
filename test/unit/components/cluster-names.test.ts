// A cluster's parts are named after it (`<cluster>-<role>`), so a program can hold two BenchClusters, and
// each part answers the URN it had before (`<role>` under the cluster), so a stack brought up by the
// release before keeps every resource: the URNs main wrote at a319374 (test/fixtures/upgrade, read off a
// converged `local` stack on the simulated cluster) are each answered by exactly one registration, as the
// engine matches aliases. Under Pulumi mocks; no host is contacted.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { afterAll, describe, expect, it } from "vitest";
import { BenchCluster } from "../../../components/bench-cluster";
import { stackConfigFromYaml } from "../../../components/config/stack-file";
import { SECRET_KEYS } from "../../../components/config/schema";
import { type RestartGuardSettings, guardsFor } from "../../../components/restart-guard";
import { FAKE_PEM, HOST_KEY_A, HOST_KEY_B } from "../config/helpers";
import { CLUSTER_SECRETS, clusterMockState, engineUrn, programMocks, type Registration, urnsAnsweredBy } from "../../helpers/program-mocks";

const REPO = path.resolve(__dirname, "../../..");

/** A project directory with the .sim/ files Pulumi.local.yaml names, as `sim up` writes them. */
function simProjectDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "rb-cluster-names-"));
  for (const [name, key] of [["worker-a", HOST_KEY_A], ["worker-b", HOST_KEY_B]]) {
    mkdirSync(path.join(dir, ".sim/hosts", name), { recursive: true });
    writeFileSync(path.join(dir, ".sim/hosts", name, "ssh_host_ed25519_key.pub"), `${key} root@${name}\n`);
  }
  writeFileSync(path.join(dir, ".sim/id_ed25519"), FAKE_PEM, { mode: 0o600 });
  writeFileSync(path.join(dir, ".sim/proxy-url"), "http://reprobench:0123456789abcdef01234567@proxy.sim:3128\n", { mode: 0o600 });
  writeFileSync(path.join(dir, ".sim/registry-password"), "fedcba9876543210registry\n", { mode: 0o600 });
  return dir;
}
const projectDir = simProjectDir();
afterAll(() => rmSync(projectDir, { recursive: true, force: true }));
const mocks = programMocks({ stack: "local", mockState: clusterMockState(1), secrets: CLUSTER_SECRETS, rootDirectory: projectDir });
const localConfig = () => stackConfigFromYaml(readFileSync(path.join(REPO, "Pulumi.local.yaml"), "utf8"), "Pulumi.local.yaml");

describe("a cluster's parts, named after it", () => {
  it("answer every URN the release before wrote (main at a319374, the local stack), each by one registration", async () => {
    const rs = await mocks.run(localConfig());
    const fixture = JSON.parse(readFileSync(path.join(REPO, "test/fixtures/upgrade/a319374-urns.json"), "utf8")) as { urns: string[] };
    expect(fixture.urns.length).toBeGreaterThan(50);
    for (const urn of fixture.urns) {
      expect(rs.filter((r) => urnsAnsweredBy(rs, r).includes(urn)).map((r) => r.urn), urn).toHaveLength(1);
    }
    // Named after the cluster now: every part and its parts.
    for (const r of rs.filter((x) => x.type !== "reprobench:cluster:BenchCluster")) expect(r.name, r.urn).toMatch(/^cluster-/);
  });

  it("let two clusters live in one program: no two registrations share a URN, and each has its own parts", async () => {
    const settingsOf = (raw: Record<string, unknown>) => Object.fromEntries(Object.entries(raw).filter(([k]) => !(SECRET_KEYS as readonly string[]).includes(k)));
    const raw = localConfig();
    const secrets = { sshPrivateKeys: { default: pulumi.secret(String((CLUSTER_SECRETS.sshPrivateKeys as Record<string, string>).default)) }, proxyUpstream: pulumi.secret(String(CLUSTER_SECRETS.proxyUpstream)) };
    const rs: Registration[] = await mocks.runProgram(() => {
      const a = new BenchCluster("bench-a", { settings: settingsOf(raw) as never, secrets, projectDir });
      const b = new BenchCluster("bench-b", { settings: settingsOf(raw) as never, secrets, projectDir });
      // What resolves last (the job's summary, after every part it waits for), so that all is registered.
      return { a: pulumi.all([a.serverImages, a.benchmark?.summary]), b: pulumi.all([b.serverImages, b.benchmark?.summary]) };
    });
    const urns = rs.map((r) => engineUrn(rs, r));
    expect(urns.length).toBeGreaterThan(100);
    expect(new Set(urns).size).toBe(urns.length);
    const partsOf = (cluster: string) => rs.filter((r) => r.name.startsWith(`${cluster}-`)).map((r) => r.name.slice(cluster.length + 1)).sort();
    expect(partsOf("bench-a")).toEqual(partsOf("bench-b"));
    expect(partsOf("bench-a")).toEqual(expect.arrayContaining(["sglang-api-key", "worker-a-sglang-container", "harbor-install", "cluster-guard-check"]));
  });
});

describe("the restart guard, per cluster", () => {
  const guard = (cluster: string): RestartGuardSettings => ({ cluster, runnerConnection: { name: "r", host: cluster, port: 22, user: "root", privateKey: "k", hostKey: "h" }, currentDir: "/d", allowDuringJobs: false });
  const clusters = new Map([["bench", guard("bench")], ["bench-b", guard("bench-b")]]);

  it("asks the resource's own cluster", () => {
    expect(guardsFor("bench-worker-a-sglang-container", clusters, new Map([["bench-worker-a-sglang-container", { cluster: "bench" }]])).map((g) => g.cluster)).toEqual(["bench"]);
  });

  it("for a resource the program no longer has, the cluster its name starts with (the longest such name)", () => {
    expect(guardsFor("bench-b-model-bridge-unit", clusters, new Map()).map((g) => g.cluster)).toEqual(["bench-b"]);
    expect(guardsFor("bench-model-bridge-unit", clusters, new Map()).map((g) => g.cluster)).toEqual(["bench"]);
  });

  it("for a name from before parts were named after their cluster, every cluster's, so none is skipped", () => {
    expect(guardsFor("model-bridge-unit", clusters, new Map()).map((g) => g.cluster).sort()).toEqual(["bench", "bench-b"]);
  });
});
