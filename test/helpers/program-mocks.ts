// The real program (infra/index.ts) under Pulumi mocks, for unit tests that check what it registers: one
// mock monitor for the whole file, whose registrations are recorded in the order the monitor answers them,
// the stack config given as `reprobench:*` keys (some of them secret), and the program run afresh each time
// (vi.resetModules, so no module keeps state from the previous config). Call programMocks() at the top
// level of a test file: it installs the mocks in beforeAll and restores what it changed in afterAll.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { MockMonitor } from "@pulumi/pulumi/runtime/mocks";
import { afterAll, beforeAll, vi } from "vitest";

/** One resource registration as the mock monitor answered it. */
export interface Registration {
  type: string;
  name: string;
  urn: string;
  /** The parent's URN ("" for none). */
  parent: string;
  dependencies: string[];
  /** Alias specs: the parent URN a resource had (same name and type). */
  aliasParents: string[];
  /** Alias specs in full ("" where the spec keeps the current value; noParent: it had none). */
  aliases: AliasSpec[];
  /** The inputs newResource was given (secrets still wrapped). */
  inputs: Record<string, unknown>;
}

/** What newResource answers as a resource's state (its outputs), from its type, name and inputs. */
export type MockState = (type: string, name: string, inputs: Record<string, unknown>) => Record<string, unknown>;

export interface ProgramMocksOptions<R> {
  /** The stack the program runs as (the project is `reprobench`); it names the URNs. */
  stack: string;
  mockState: MockState;
  /** What a test keeps of each registration; default all of it. */
  record?: (r: Registration) => R;
  /** Answered by pulumi.runtime.getRootDirectory() (the directory the program reads project files from). */
  rootDirectory?: string;
  /** Config set for every run and marked secret (keys without the `reprobench:` prefix); default none. */
  secrets?: Record<string, unknown>;
}

export interface ProgramMocks<R> {
  /** Runs infra/index.ts with `config` (keys without the prefix; `secrets` besides the file's, marked secret) and returns what it registered. */
  run(config: Record<string, unknown>, secrets?: Record<string, unknown>): Promise<R[]>;
  /** Runs a program of the test's own (its outputs returned) and returns what it registered. */
  runProgram(program: () => Record<string, unknown>): Promise<R[]>;
  /** The stack outputs the latest run's program returned, as it returned them (Outputs unresolved). */
  outputs(): Record<string, unknown>;
}

/** The secrets a cluster-owning stack's config needs (an SSH key for every host, the upstream proxy). */
/** Pulumi's marker of a secret value in resource inputs as the mocks receive them. */
const SECRET_SIG = "4dabf18193072939515e22adb298388d";

/** A resource input as the program gave it: every secret ({SECRET_SIG, value}) replaced by its value. */
export function withoutSecretWrappers(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSecretWrappers);
  if (value !== null && typeof value === "object") {
    const o = value as Record<string, unknown>;
    if (o[SECRET_SIG] !== undefined && "value" in o) return withoutSecretWrappers(o.value);
    return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, withoutSecretWrappers(v)]));
  }
  return value;
}

export const CLUSTER_SECRETS: Record<string, unknown> = {
  sshPrivateKeys: { default: "-----BEGIN OPENSSH PRIVATE KEY-----\nmock\n-----END OPENSSH PRIVATE KEY-----\n" },
  proxyUpstream: "http://127.0.0.1:27890",
};

/**
 * Plausible host-script output for the resources of a cluster-owning stack whose stdout later resources
 * parse (one task, image x/a:1, in a dataset of `datasetCount` tasks), and outputs for the random and
 * docker resources and the job name.
 */
export function clusterMockState(datasetCount: number): MockState {
  return (type, name, inputs) => {
    if (type === "random:index/randomPassword:RandomPassword") return { ...inputs, result: "mock-api-key" };
    if (type === "random:index/randomId:RandomId") return { ...inputs, hex: "0123456789abcdef01234567" };
    if (type === "docker:index/remoteImage:RemoteImage") return { ...inputs, imageId: `sha256:${name}`, repoDigest: `${String(inputs.name)}@sha256:${name}` };
    if (type === "reprobench:index:JobName" && name.endsWith("-job-name")) return { ...inputs, name: `${String(inputs.prefix)}-${String(inputs.spec)}` };
    const stdout: Record<string, string> = {
      "-install": JSON.stringify({ version: "0.21.0", wheelSha256: "c77d", python: "3.13.5", venv: "/v", freeze: "/f" }),
      "-dataset": JSON.stringify({ identity: "7131e43", count: datasetCount, tasksDir: "/t", taskTomls: { "a/task.toml": '[environment]\ndocker_image = "x/a:1"\n' } }),
      "-pull": JSON.stringify({ ready: 1, total: 1, images: { "x/a:1": "sha256:1" } }),
      "-harbor": JSON.stringify({ jobName: "j", jobDir: "/d", log: "/l", unit: "u", pid: 1, state: "running", result: null }),
      // Before "-facts" (the host facts'): a worker preflight's record, a host that reported nothing to judge.
      "-preflight-facts": JSON.stringify({ host: name.replace(/-sglang-preflight-facts$/, ""), hostname: name, containerUser: "0:0", tools: {}, own: { containers: [], pids: [] }, ports: { state: "ok", listeners: [] }, gpus: null, toolkit: null, cudaProbe: null, weights: null }),
      "-facts": JSON.stringify({ user: "root", uid: 0, gid: 0, hostname: name, dockerEngine: "27.5.1", owner: null }),
      "-sglang-ready": '{"served_model_name":"Qwen/Qwen3.8-27B"}',
    };
    const suffix = Object.keys(stdout).find((s) => name.endsWith(s));
    return { ...inputs, stdout: suffix ? stdout[suffix] : "", observed: "ok" };
  };
}

/** One alias spec as the monitor gets it. */
export interface AliasSpec {
  name: string;
  type: string;
  parentUrn: string;
  noParent: boolean;
}

type RegisterRequest = {
  getType(): string;
  getName(): string;
  getParent(): string;
  getDependenciesList(): string[];
  getAliasesList(): { getSpec(): { getParenturn(): string; getName(): string; getType(): string; getNoparent(): boolean } | undefined }[];
};
type RegisterCallback = (err: unknown, res?: { getUrn(): string }) => void;

/** Installs the mocks for this test file (beforeAll/afterAll) and returns the program's runner. */
export function programMocks<R = Registration>(options: ProgramMocksOptions<R>): ProgramMocks<R> {
  const record = options.record ?? ((r: Registration) => r as unknown as R);
  const secrets = options.secrets ?? {};
  // The URN, parent, dependencies and aliases are only in the monitor's request and answer, the inputs only
  // in newResource: the monitor's registerResource is wrapped to join them.
  const monitor = MockMonitor.prototype as unknown as { registerResource: (req: RegisterRequest, cb: RegisterCallback) => unknown };
  const originalRegister = monitor.registerResource;
  const runtime = pulumi.runtime as unknown as { getRootDirectory: () => string };
  const savedRoot = runtime.getRootDirectory;
  const savedSshDir = process.env.REPROBENCH_SSH_DIR;
  const inputsOf = new Map<string, Record<string, unknown>>();
  let registered: R[] = [];
  let lastOutputs: Record<string, unknown> = {};
  let sshDir: string | undefined;

  beforeAll(() => {
    // HostAccess writes the docker provider's key files: keep them out of the home directory.
    sshDir = mkdtempSync(path.join(tmpdir(), `rb-program-mocks-${options.stack}-ssh-`));
    process.env.REPROBENCH_SSH_DIR = sshDir;
    const root = options.rootDirectory;
    if (root !== undefined) runtime.getRootDirectory = () => root;
    monitor.registerResource = function (req, cb) {
      return originalRegister.call(this, req, (err, res) => {
        if (!err && res) {
          registered.push(
            record({
              type: req.getType(), name: req.getName(), urn: res.getUrn(), parent: req.getParent(), dependencies: [...req.getDependenciesList()],
              aliasParents: req.getAliasesList().map((a) => a.getSpec()?.getParenturn() ?? ""),
              aliases: req.getAliasesList().flatMap((a) => {
                const spec = a.getSpec();
                return spec ? [{ name: spec.getName(), type: spec.getType(), parentUrn: spec.getParenturn(), noParent: spec.getNoparent() }] : [];
              }),
              inputs: inputsOf.get(`${req.getType()}::${req.getName()}`) ?? {},
            }),
          );
        }
        cb(err, res);
      });
    };
    // One mock monitor for every run: a component's late registerResourceOutputs must find its URN.
    pulumi.runtime.setMocks(
      {
        newResource: (a) => {
          inputsOf.set(`${a.type}::${a.name}`, a.inputs as Record<string, unknown>);
          return { id: `${a.name}-id`, state: options.mockState(a.type, a.name, a.inputs as Record<string, unknown>) };
        },
        call: (a) => a.inputs,
      },
      "reprobench",
      options.stack,
      true,
    );
  });
  afterAll(() => {
    monitor.registerResource = originalRegister;
    runtime.getRootDirectory = savedRoot;
    pulumi.runtime.setAllConfig({});
    if (savedSshDir === undefined) delete process.env.REPROBENCH_SSH_DIR;
    else process.env.REPROBENCH_SSH_DIR = savedSshDir;
    if (sshDir !== undefined) rmSync(sshDir, { recursive: true, force: true });
  });

  /** Waits until every resource is registered: once the outputs the program returns resolve. */
  async function settle(outputs: Record<string, unknown>): Promise<void> {
    lastOutputs = outputs;
    await new Promise<void>((resolve) => pulumi.all(Object.values(outputs).filter(pulumi.Output.isInstance)).apply(() => resolve()));
  }

  return {
    async run(config, extraSecrets = {}) {
      // The monitor is the file's: start this run's list empty.
      registered = [];
      const mine = registered;
      const runSecrets = { ...secrets, ...extraSecrets };
      const all = { ...config, ...runSecrets };
      pulumi.runtime.setAllConfig(
        Object.fromEntries(Object.entries(all).map(([k, v]) => [`reprobench:${k}`, typeof v === "string" ? v : JSON.stringify(v)])),
        Object.keys(runSecrets).map((k) => `reprobench:${k}`),
      );
      vi.resetModules();
      const mod = (await import("../../infra/index")) as { default: () => Promise<Record<string, unknown>> };
      await settle(await mod.default());
      return [...mine];
    },
    async runProgram(program) {
      registered = [];
      const mine = registered;
      await settle(program());
      return [...mine];
    },
    outputs: () => lastOutputs,
  };
}

/** The "<qualified type>" and name of a URN. */
function urnParts(urn: string): { prefix: string; qualifiedType: string; name: string } {
  const m = /^(urn:pulumi:[^:]+::[^:]+::)(.+)::([^:]+)$/.exec(urn);
  if (!m) throw new Error(`not a URN: ${urn}`);
  return { prefix: m[1], qualifiedType: m[2], name: m[3] };
}

/**
 * The URN the engine gives a registration: its type qualified by every ancestor's (the mock monitor
 * qualifies it by the parent's type alone).
 */
export function engineUrn(rs: readonly Registration[], r: Registration): string {
  const { prefix } = urnParts(r.urn);
  const parent = r.parent ? rs.find((p) => p.urn === r.parent) : undefined;
  return parent ? `${prefix}${urnParts(engineUrn(rs, parent)).qualifiedType}$${r.type}::${r.name}` : `${prefix}${r.type}::${r.name}`;
}

/**
 * Every URN the engine matches a registration to in an older state, as it forms them (pkg/resource/deploy
 * step_generator.go generateAliases): its own URN, each alias spec collapsed (name, type, parent, or none),
 * and, for each URN its parent answers to, the child under it (a name that starts with the parent's name
 * taking the parent alias's name instead) — itself and with each of its own alias specs.
 */
export function urnsAnsweredBy(rs: readonly Registration[], r: Registration): string[] {
  const { prefix } = urnParts(r.urn);
  const engineOf = (urn: string) => {
    const known = rs.find((p) => p.urn === urn);
    return known ? engineUrn(rs, known) : urn;
  };
  const under = (parentUrn: string | undefined, type: string, name: string) =>
    parentUrn ? `${prefix}${urnParts(parentUrn).qualifiedType}$${type}::${name}` : `${prefix}${type}::${name}`;
  const parent = r.parent ? rs.find((p) => p.urn === r.parent) : undefined;
  const parentUrn = parent ? engineUrn(rs, parent) : undefined;
  const collapse = (a: AliasSpec) => under(a.noParent ? undefined : a.parentUrn ? engineOf(a.parentUrn) : parentUrn, a.type || r.type, a.name || r.name);
  const found = new Set<string>([engineUrn(rs, r), ...r.aliases.map(collapse)]);
  if (parent && parentUrn) {
    for (const parentAlias of urnsAnsweredBy(rs, parent).filter((u) => u !== parentUrn)) {
      const aliasName = urnParts(parentAlias).name;
      const childName = (name: string) => (name.startsWith(parent.name) ? aliasName + name.slice(parent.name.length) : name);
      found.add(under(parentAlias, r.type, childName(r.name)));
      for (const a of r.aliases) found.add(under(parentAlias, a.type || r.type, childName(a.name || r.name)));
    }
  }
  return [...found];
}
