// TaskDataset in a cluster-owning stack: the real program (infra/index.ts) under Pulumi mocks, as stack
// `local`. The dataset's steps were the HarborRunner's children before TaskDataset existed; each is
// aliased to the URN it had there (the URNs release 0.1.0 wrote, test/fixtures/upgrade), so a stack brought
// up before keeps its dataset: nothing is replaced or re-run.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { MockMonitor } from "@pulumi/pulumi/runtime/mocks";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { stackConfigFromYaml } from "../../../infra/config-stackfile";

const REPO = path.resolve(__dirname, "../../..");

interface Registered {
  type: string;
  name: string;
  urn: string;
  parent: string;
  dependencies: string[];
  /** Alias specs: the parent URN a resource had (same name and type). */
  aliasParents: string[];
  inputs: Record<string, unknown>;
}

/** The URN of a child `name` of type `type` under `parentUrn`, as the engine forms it. */
function childUrn(parentUrn: string, type: string, name: string): string {
  const m = /^(urn:pulumi:[^:]+::[^:]+::)(.+)::[^:]+$/.exec(parentUrn);
  if (!m) throw new Error(`not a URN: ${parentUrn}`);
  return `${m[1]}${m[2]}$${type}::${name}`;
}

function mockState(type: string, name: string, inputs: Record<string, unknown>): Record<string, unknown> {
  if (type === "random:index/randomPassword:RandomPassword") return { ...inputs, result: "mock-api-key" };
  if (type === "random:index/randomId:RandomId") return { ...inputs, hex: "0123456789abcdef01234567" };
  if (type === "docker:index/remoteImage:RemoteImage") return { ...inputs, imageId: `sha256:${name}`, repoDigest: `${String(inputs.name)}@sha256:${name}` };
  if (type === "pulumi-nodejs:dynamic:Resource" && name.endsWith("-job-name")) return { ...inputs, name: `${String(inputs.prefix)}-${String(inputs.spec)}` };
  const stdout: Record<string, string> = {
    "-install": JSON.stringify({ version: "0.21.0", wheelSha256: "c77d", python: "3.13.5", venv: "/v", freeze: "/f" }),
    "-dataset": JSON.stringify({ identity: "7131e43", count: 1, tasksDir: "/t", taskTomls: { "a/task.toml": '[environment]\ndocker_image = "x/a:1"\n' } }),
    "-pull": JSON.stringify({ ready: 1, total: 1, images: { "x/a:1": "sha256:1" } }),
    "-harbor": JSON.stringify({ jobName: "j", jobDir: "/d", log: "/l", unit: "u", pid: 1, state: "running", result: null }),
    "-facts": JSON.stringify({ user: "root", uid: 0, gid: 0, hostname: name, dockerEngine: "27.5.1", owner: null }),
    "-sglang-ready": '{"served_model_name":"Qwen/Qwen3.8-27B"}',
  };
  const suffix = Object.keys(stdout).find((s) => name.endsWith(s));
  return { ...inputs, stdout: suffix ? stdout[suffix] : "", observed: "ok" };
}

type RegisterRequest = {
  getType(): string;
  getName(): string;
  getParent(): string;
  getDependenciesList(): string[];
  getAliasesList(): { getSpec(): { getParenturn(): string } | undefined }[];
};
const monitor = MockMonitor.prototype as unknown as { registerResource: (req: RegisterRequest, cb: (err: unknown, res?: { getUrn(): string }) => void) => unknown };
const originalRegister = monitor.registerResource;
let registered: Registered[] = [];
const inputsOf = new Map<string, Record<string, unknown>>();
const sshDir = mkdtempSync(path.join(tmpdir(), "rb-task-dataset-ssh-"));
const savedSshDir = process.env.REPROBENCH_SSH_DIR;
const runtime = pulumi.runtime as unknown as { getRootDirectory: () => string };
const savedRoot = runtime.getRootDirectory;
beforeAll(() => {
  process.env.REPROBENCH_SSH_DIR = sshDir;
  // The mock monitor's root directory is no directory of this project: the upload's dataset resolves from the repository.
  runtime.getRootDirectory = () => REPO;
  monitor.registerResource = function (req, cb) {
    return originalRegister.call(this, req, (err, res) => {
      if (!err && res) {
        registered.push({
          type: req.getType(), name: req.getName(), urn: res.getUrn(), parent: req.getParent(), dependencies: [...req.getDependenciesList()],
          aliasParents: req.getAliasesList().map((a) => a.getSpec()?.getParenturn() ?? ""), inputs: inputsOf.get(`${req.getType()}::${req.getName()}`) ?? {},
        });
      }
      cb(err, res);
    });
  };
  pulumi.runtime.setMocks(
    {
      newResource: (a) => {
        inputsOf.set(`${a.type}::${a.name}`, a.inputs as Record<string, unknown>);
        return { id: `${a.name}-id`, state: mockState(a.type, a.name, a.inputs as Record<string, unknown>) };
      },
      call: (a) => a.inputs,
    },
    "reprobench",
    "local",
    true,
  );
});
afterAll(() => {
  monitor.registerResource = originalRegister;
  runtime.getRootDirectory = savedRoot;
  pulumi.runtime.setAllConfig({});
  if (savedSshDir === undefined) delete process.env.REPROBENCH_SSH_DIR;
  else process.env.REPROBENCH_SSH_DIR = savedSshDir;
  rmSync(sshDir, { recursive: true, force: true });
});

/** Runs infra/index.ts for a cluster-owning stack config and returns every registration. */
async function program(config: Record<string, unknown>): Promise<Registered[]> {
  registered = [];
  const mine = registered;
  const secrets = { sshPrivateKeys: { default: "-----BEGIN OPENSSH PRIVATE KEY-----\nmock\n-----END OPENSSH PRIVATE KEY-----\n" }, proxyUpstream: "http://127.0.0.1:27890" };
  const all = { ...config, ...secrets };
  pulumi.runtime.setAllConfig(
    Object.fromEntries(Object.entries(all).map(([k, v]) => [`reprobench:${k}`, typeof v === "string" ? v : JSON.stringify(v)])),
    Object.keys(secrets).map((k) => `reprobench:${k}`),
  );
  vi.resetModules();
  const mod = (await import("../../../infra/index")) as { default: () => Promise<Record<string, unknown>> };
  const outputs = await mod.default();
  await new Promise<void>((resolve) => pulumi.all(Object.values(outputs).filter(pulumi.Output.isInstance)).apply(() => resolve()));
  return [...mine];
}

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

const byName = (rs: Registered[], name: string): Registered => {
  const found = rs.find((r) => r.name === name && r.type !== "reprobench:runner:TaskDataset" && r.type !== "reprobench:runner:HarborRunner");
  if (!found) throw new Error(`${name} is not registered`);
  return found;
};

describe("TaskDataset in a cluster-owning stack", () => {
  it("holds the dataset step, aliased to the URN it had under HarborRunner (release 0.1.0's)", async () => {
    const rs = await program(clusterConfig());
    const component = rs.find((r) => r.type === "reprobench:runner:TaskDataset");
    const harbor = rs.find((r) => r.type === "reprobench:runner:HarborRunner");
    expect(component?.urn).toBe("urn:pulumi:local::reprobench::reprobench:runner:TaskDataset::harbor");
    expect(harbor?.urn).toBe("urn:pulumi:local::reprobench::reprobench:runner:HarborRunner::harbor");
    const dataset = byName(rs, "harbor-dataset");
    expect(dataset.parent).toBe(component?.urn);
    expect(dataset.urn).toBe("urn:pulumi:local::reprobench::reprobench:runner:TaskDataset$pulumi-nodejs:dynamic:Resource::harbor-dataset");
    expect(dataset.aliasParents).toEqual([harbor?.urn]);
    expect(childUrn(dataset.aliasParents[0], dataset.type, dataset.name)).toBe(releasedUrn("harbor-dataset"));
    // Still after the Harbor install, and still without a delete: destroy leaves the checkout.
    expect(dataset.dependencies).toEqual([byName(rs, "harbor-install").urn]);
    expect(dataset.inputs.delete).toBeUndefined();
    // HarborRunner keeps only the install, which keeps its URN (no alias needed).
    expect(rs.filter((r) => r.parent === harbor?.urn).map((r) => r.name)).toEqual(["harbor-install"]);
    expect(byName(rs, "harbor-install").urn).toBe(releasedUrn("harbor-install"));
    expect(byName(rs, "harbor-install").aliasParents).toEqual([]);
    // The pre-pull reads the dataset's images, as before.
    expect(byName(rs, "task-images-pull").dependencies).toEqual([dataset.urn]);
    expect(String(byName(rs, "task-images-pull").inputs.create)).toContain("x/a:1");
  });

  it("aliases an uploaded dataset's copy too, which still waits for the install (it makes the uploads dir)", async () => {
    const rs = await program(clusterConfig({ datasetRepo: "sim/dataset", datasetCommit: null, datasetDir: "/var/lib/reprobench/sim-dataset", datasetTasksSubdir: "", expectedTaskCount: 3 }));
    const harbor = rs.find((r) => r.type === "reprobench:runner:HarborRunner");
    const upload = byName(rs, "harbor-dataset-upload");
    expect(upload.type).toBe("command:remote:CopyToRemote");
    expect(upload.aliasParents).toEqual([harbor?.urn]);
    expect(childUrn(upload.aliasParents[0], upload.type, upload.name)).toBe("urn:pulumi:local::reprobench::reprobench:runner:HarborRunner$command:remote:CopyToRemote::harbor-dataset-upload");
    expect(upload.dependencies).toEqual([byName(rs, "harbor-install").urn]);
    expect(byName(rs, "harbor-dataset").dependencies.sort()).toEqual([byName(rs, "harbor-install").urn, upload.urn].sort());
  });
});
