// A run stack that brings its own dataset (reprobench:dataset): the real program (infra/index.ts) under
// Pulumi mocks as stack `rehearsal` on the `local` cluster, the owner's outputs served by a mocked
// StackReference. With the key, the stack checks its dataset out into a directory of its own and
// pre-pulls its images (TaskDataset + TaskImages, with the owner's runner proxy, registries and mirrors),
// and the job runs it; without it, only the job is registered, on the owner's dataset, as before. Its job's
// manifest records the owner's workers' preflight facts, or `{}` from an owner without them.
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { runOnCluster } from "../../../components/cluster-run";
import { SECRET_PLACEHOLDER, parseConfig, parseRunStackConfig, readStackFile } from "../../../components/config";
import { publicConfig } from "../../../components/config/job";
import { programMocks, withoutSecretWrappers } from "../../helpers/program-mocks";

const REPO = path.resolve(__dirname, "../../..");
const COMMIT = "0123456789abcdef0123456789abcdef01234567";
const DATASET = { repo: "http://git.sim/terminal-bench-rehearsal.git", commit: COMMIT, expectedTaskCount: 2 };
const RUN = { enabled: true, agent: "terminus-2", modelName: "openai/Qwen/Qwen3.8-27B", nConcurrentTrials: 3, nConcurrentAgents: 3, jobNamePrefix: "sim-rehearsal" };
const PEM = "-----BEGIN OPENSSH PRIVATE KEY-----\nmock\n-----END OPENSSH PRIVATE KEY-----\n";
const PULL_ENV = { proxy: { HTTP_PROXY: "http://127.0.0.1:27890", NO_PROXY: "localhost" }, registry: { REGISTRY_AUTH_FILE_JSON: "mock-registry-auth" } };
/** A worker's preflight facts as the owner exports them (workerPreflightByHost; components/preflight/plan.ts PreflightFacts). */
const facts = (host: string, driver: string) => ({
  host, hostname: host, containerUser: "1000:1000",
  gpus: { count: 8, names: ["NVIDIA A100-SXM4-40GB"], driver, cuda: "13.0", memoryTotalMiB: [40960], freeMiB: [40956], migEnabled: [], foreignProcesses: [], fabricManager: "active", visibleInImage: 8 },
  weights: { path: "/var/lib/reprobench/models/Qwen3.8-27B", kind: "placeholder", shards: 0, totalSize: null, bytesOnDisk: 0, geometry: null },
  fit: null,
});
const PREFLIGHT = { "worker-a": facts("worker-a", "580.95.05"), "worker-b": facts("worker-b", "580.82.07") };

interface Registered {
  type: string;
  name: string;
  urn: string;
  dependencies: string[];
  inputs: Record<string, unknown>;
}

/** The local stack's outputs as a run stack reads them (clusterConfig from Pulumi.local.yaml). */
function ownerOutputs(): Record<string, unknown> {
  const raw = readStackFile(path.join(REPO, "Pulumi.local.yaml"));
  const parsed = parseConfig({ ...raw, sshPrivateKeys: { default: SECRET_PLACEHOLDER } }, { requireSecrets: false });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  const config = parsed.config;
  return {
    clusterOwner: { project: "reprobench", stack: "local", token: "0123456789abcdef01234567" },
    clusterConfig: publicConfig(config),
    hostConnections: config.hosts.map((h) => ({ name: h.name, host: h.ssh.host, port: h.ssh.port, user: h.ssh.user, privateKey: PEM, hostKey: "ssh-ed25519 AAAA" })),
    sglangApiKey: "mock-api-key",
    harborInstall: { version: "0.21.0", wheelSha256: "c77d", python: "3.13.5", venv: "/v", freeze: "/f" },
    dataset: { identity: "e01346e", count: 3, tasksDir: "/var/lib/reprobench/sim-dataset" },
    taskImagesReport: { ready: 3, total: 3, images: { "registry.sim:5000/owner/task:1": "sha256:owner" } },
    workerServerInfoByHost: { "worker-a": "{}", "worker-b": "{}" },
    workerPreflightByHost: PREFLIGHT,
    serverImages: {},
    runnerPullEnv: PULL_ENV,
  };
}

function mockState(type: string, name: string, inputs: Record<string, unknown>): Record<string, unknown> {
  if (type === "pulumi:pulumi:StackReference") return { name: inputs.name, outputs: owner, secretOutputNames: ["hostConnections", "sglangApiKey", "runnerPullEnv"] };
  if (type === "reprobench:index:JobName" && name.endsWith("-job-name")) return { ...inputs, name: `${String(inputs.prefix)}-${String(inputs.spec)}` };
  const tomls = { "one/task.toml": '[environment]\ndocker_image = "registry.sim:5000/rehearsal/one:latest"\n', "two/task.toml": '[environment]\ndocker_image = "registry.sim:5000/rehearsal/two:latest"\n' };
  const stdout: Record<string, string> = {
    "-dataset": JSON.stringify({ identity: COMMIT, count: 2, tasksDir: "/var/lib/reprobench/datasets/reprobench.rehearsal", taskTomls: tomls }),
    "-pull": JSON.stringify({ ready: 2, total: 2, images: { "registry.sim:5000/rehearsal/one:latest": "sha256:one", "registry.sim:5000/rehearsal/two:latest": "sha256:two" } }),
    "-harbor": JSON.stringify({ jobName: "j", jobDir: "/d", log: "/l", unit: "u", pid: 1, state: "running", result: null }),
  };
  const suffix = Object.keys(stdout).find((s) => name.endsWith(s));
  return { ...inputs, stdout: suffix ? stdout[suffix] : "", observed: "ok" };
}

let owner: Record<string, unknown> = {};
const mocks = programMocks({
  stack: "rehearsal",
  mockState,
  // The mock monitor's root directory is no directory of this project: Pulumi.local.yaml is the repository's.
  rootDirectory: REPO,
  record: (r): Registered => ({ type: r.type, name: r.name, urn: r.urn, dependencies: r.dependencies, inputs: plain(r.inputs) as Record<string, unknown> }),
});

/** Runs infra/index.ts for the run stack's own keys, against `ownerState` as the local stack's outputs. */
async function program(config: Record<string, unknown>, ownerState: Record<string, unknown>, secrets: Record<string, unknown> = {}): Promise<Registered[]> {
  owner = ownerState;
  return mocks.run(config, secrets);
}

const plain = withoutSecretWrappers;

const named = (rs: Registered[], name: string): Registered => {
  const found = rs.find((r) => r.name === name && (r.type.startsWith("reprobench:index:") || r.type.startsWith("command:")));
  if (!found) throw new Error(`${name} is not registered (${rs.map((r) => r.name).join(", ")})`);
  return found;
};
const components = (rs: Registered[]) => rs.filter((r) => r.type.startsWith("reprobench:") && !r.type.startsWith("reprobench:index:")).map((r) => `${r.type}::${r.name}`).sort();

describe("a run stack with reprobench:dataset", () => {
  it("checks its own dataset out and pre-pulls its images on the runner, and the job runs it", async () => {
    const rs = await program({ cluster: "local", run: RUN, dataset: DATASET }, ownerOutputs());
    expect(components(rs)).toEqual(["reprobench:run:BenchmarkRun::benchmark", "reprobench:runner:TaskDataset::run", "reprobench:runner:TaskImages::run-task-images"]);
    const dataset = named(rs, "run-dataset");
    const pull = named(rs, "run-task-images-pull");
    expect(dataset.urn).toBe("urn:pulumi:rehearsal::reprobench::reprobench:runner:TaskDataset$reprobench:index:HostScript::run-dataset");
    expect(pull.urn).toBe("urn:pulumi:rehearsal::reprobench::reprobench:runner:TaskImages$reprobench:index:HostScript::run-task-images-pull");
    // Its own directory and commit; git clones through the owner's runner proxy.
    expect(String(dataset.inputs.create)).toContain("/var/lib/reprobench/datasets/reprobench.rehearsal");
    expect(String(dataset.inputs.create)).toContain(COMMIT);
    expect(String(dataset.inputs.create)).not.toContain("/var/lib/reprobench/sim-dataset");
    expect(dataset.inputs.environment).toEqual(PULL_ENV.proxy);
    expect(dataset.inputs.connection).toMatchObject({ name: "worker-b", port: 2202 });
    // Neither step deletes anything: destroying the run stack leaves the checkout and the images.
    expect(dataset.inputs.delete).toBeUndefined();
    expect(pull.inputs.delete).toBeUndefined();
    // Its own images, with the owner's proxy and registry accounts, and the owner's pull settings.
    expect(pull.inputs.summary).toEqual(["registry.sim:5000/rehearsal/one:latest", "registry.sim:5000/rehearsal/two:latest"]);
    expect(pull.inputs.environment).toEqual({ ...PULL_ENV.proxy, ...PULL_ENV.registry });
    expect(String(pull.inputs.create)).toContain("registry.sim:5000");
    expect(pull.dependencies).toContain(dataset.urn);
    // The job waits for both, resolves the run's own dataset, and records it in its manifest.
    expect(named(rs, "benchmark-job-name").dependencies).toEqual(expect.arrayContaining([dataset.urn, pull.urn]));
    expect(String(named(rs, "benchmark-preflight").inputs.stdin ?? named(rs, "benchmark-preflight").inputs.create)).toContain("/var/lib/reprobench/datasets/reprobench.rehearsal");
    const manifest = JSON.parse(String((named(rs, "benchmark-harbor").inputs.recorded as Record<string, string>).MANIFEST_JSON)) as Record<string, unknown>;
    expect(JSON.stringify(manifest)).toContain(COMMIT);
    expect(JSON.stringify(manifest)).toContain("sha256:two");
    expect(JSON.stringify(manifest)).not.toContain("sha256:owner");
    // Nothing of the owner's is registered here.
    expect(rs.map((r) => r.name)).not.toContain("harbor-dataset");
    expect(rs.map((r) => r.name)).not.toContain("task-images-pull");
  });

  it("without it registers only the job, on the owner's dataset and images", async () => {
    const rs = await program({ cluster: "local", run: RUN }, ownerOutputs());
    expect(components(rs)).toEqual(["reprobench:run:BenchmarkRun::benchmark"]);
    expect(rs.filter((r) => r.type !== "pulumi:pulumi:StackReference").every((r) => r.name.startsWith("benchmark"))).toBe(true);
    expect(named(rs, "benchmark-job-name").dependencies).toEqual([]);
    const manifest = String((named(rs, "benchmark-harbor").inputs.recorded as Record<string, string>).MANIFEST_JSON);
    expect(manifest).toContain("sha256:owner");
    expect(manifest).toContain("/var/lib/reprobench/sim-dataset");
  });

  it("is previewed before its owner is up: the dataset and its images are in the preview too", async () => {
    const rs = await program({ cluster: "local", run: RUN, dataset: DATASET }, {});
    expect(components(rs)).toEqual(["reprobench:run:BenchmarkRun::benchmark", "reprobench:runner:TaskDataset::run", "reprobench:runner:TaskImages::run-task-images"]);
    expect(String(named(rs, "run-dataset").inputs.create)).toContain("/var/lib/reprobench/datasets/reprobench.rehearsal");
    const without = await program({ cluster: "local", run: RUN }, {});
    expect(components(without)).toEqual(["reprobench:run:BenchmarkRun::benchmark"]);
  });

  it("needs the owner's runnerPullEnv, naming the owner and what to do", async () => {
    const { runnerPullEnv: _none, ...older } = ownerOutputs();
    await expect(program({ cluster: "local", run: RUN, dataset: DATASET }, older)).rejects.toThrow(
      /reprobench:dataset: stack 'local' has no output 'runnerPullEnv'.*reprobench up --stack local/,
    );
    // A stack without its own dataset does not need it.
    await expect(program({ cluster: "local", run: RUN }, older)).resolves.toBeDefined();
  });

  it("refuses the owner's datasetDir before registering anything", async () => {
    await expect(program({ cluster: "local", run: RUN, dataset: { ...DATASET, dir: "/var/lib/reprobench/sim-dataset" } }, ownerOutputs())).rejects.toThrow(
      /reprobench:dataset.dir: got "\/var\/lib\/reprobench\/sim-dataset": it is the owner's harbor.datasetDir/,
    );
  });
});

// Issue 30: the owner's workers' preflight facts go into this stack's job's manifest (its `recorded` inputs).
describe("a run stack's manifest", () => {
  it("records the owner's workers' preflight facts in its job's manifest, and only there", async () => {
    const rs = await program({ cluster: "local", run: RUN }, ownerOutputs());
    const { recorded, ...compared } = named(rs, "benchmark-harbor").inputs;
    expect((JSON.parse(String((recorded as Record<string, string>).MANIFEST_JSON)) as Record<string, unknown>).preflight).toEqual(PREFLIGHT);
    expect(JSON.stringify(compared)).not.toContain("580.82.07");
  });

  it("runs on an owner an older release brought up (no workerPreflightByHost): its manifest records `preflight: {}`, the job as before", async () => {
    const { workerPreflightByHost: _none, ...older } = ownerOutputs();
    const launch = async (outputs: Record<string, unknown>) => named(await program({ cluster: "local", run: RUN }, outputs), "benchmark-harbor").inputs;
    const withFacts = await launch(ownerOutputs());
    const without = await launch(older);
    expect((JSON.parse(String((without.recorded as Record<string, string>).MANIFEST_JSON)) as Record<string, unknown>).preflight).toEqual({});
    const { recorded: _a, ...comparedWith } = withFacts;
    const { recorded: _b, ...comparedWithout } = without;
    expect(comparedWithout).toEqual(comparedWith);
  });
});

describe("a run stack's logins", () => {
  const OWN_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nrun-stack-own\n-----END OPENSSH PRIVATE KEY-----\n";
  /** The owner as this release brings it up: each host's login without a key, and no key file to read here. */
  function keylessOwner(): Record<string, unknown> {
    const o = ownerOutputs();
    const config = o.clusterConfig as { hosts: { ssh: Record<string, unknown> }[] };
    return {
      ...o,
      clusterConfig: { ...config, hosts: config.hosts.map((h) => ({ ...h, ssh: { ...h.ssh, privateKeyFile: undefined } })) },
      hostConnections: (o.hostConnections as Record<string, unknown>[]).map(({ privateKey: _key, ...login }) => login),
    };
  }

  it("use the stack's own key when the owner exports none, on every host script it runs", async () => {
    const rs = await program({ cluster: "local", run: RUN }, keylessOwner(), { sshPrivateKeys: { default: OWN_KEY } });
    const scripts = rs.filter((r) => r.type === "reprobench:index:HostScript");
    expect(scripts.length).toBeGreaterThan(0);
    for (const r of scripts) expect((r.inputs.connection as { privateKey?: string }).privateKey, r.name).toBe(OWN_KEY);
  });

  it("still take the key an owner brought up by an older release exports", async () => {
    const old = ownerOutputs();
    const config = old.clusterConfig as { hosts: { ssh: Record<string, unknown> }[] };
    const rs = await program({ cluster: "local", run: RUN }, { ...old, clusterConfig: { ...config, hosts: config.hosts.map((h) => ({ ...h, ssh: { ...h.ssh, privateKeyFile: undefined } })) } });
    expect((named(rs, "benchmark-harbor").inputs.connection as { privateKey?: string }).privateKey).toBe(PEM);
  });
});

describe("a run on another stack's cluster under a component (the plugin's BenchmarkRun facade)", () => {
  it("registers everything under it, named after it, and logs in with the keys it is given as secrets", async () => {
    const OWN_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nfacade\n-----END OPENSSH PRIVATE KEY-----\n";
    const o = ownerOutputs();
    const config = o.clusterConfig as { hosts: { ssh: Record<string, unknown> }[] };
    owner = { ...o, clusterConfig: { ...config, hosts: config.hosts.map((h) => ({ ...h, ssh: { ...h.ssh, privateKeyFile: undefined } })) }, hostConnections: (o.hostConnections as Record<string, unknown>[]).map(({ privateKey: _key, ...login }) => login) };
    const raw = { cluster: "local", run: RUN, dataset: DATASET };
    const parsed = parseRunStackConfig(raw);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    const rs = await mocks.runProgram(() => {
      const facade = new pulumi.ComponentResource("reprobench:index:BenchmarkRun", "smoke");
      const outputs = runOnCluster(parsed.config, raw, { parent: facade, name: (role) => `smoke-${role}`, sshPrivateKeys: { default: pulumi.secret(OWN_KEY) } });
      return { jobName: pulumi.output(outputs).apply((x) => x.jobName) };
    });
    const facadeUrn = rs.find((r) => r.type === "reprobench:index:BenchmarkRun")!.urn;
    const parts = rs.filter((r) => r.type !== "reprobench:index:BenchmarkRun");
    expect(parts.length).toBeGreaterThan(5);
    for (const r of parts) expect(r.name, r.urn).toMatch(/^smoke-/);
    expect(components(rs)).toEqual(["reprobench:run:BenchmarkRun::smoke-benchmark", "reprobench:runner:TaskDataset::smoke-run", "reprobench:runner:TaskImages::smoke-run-task-images"]);
    for (const name of ["smoke-benchmark", "smoke-run", "smoke-run-task-images"]) expect(rs.find((r) => r.name === name)?.urn, name).toContain("reprobench:index:BenchmarkRun$");
    expect(facadeUrn).toBe("urn:pulumi:rehearsal::reprobench::reprobench:index:BenchmarkRun::smoke");
    expect((named(rs, "smoke-benchmark-harbor").inputs.connection as { privateKey?: string }).privateKey).toBe(OWN_KEY);
  });
});
