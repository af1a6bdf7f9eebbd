// How status/logs/pull find a stack's hosts and job from its outputs (injected here, no Pulumi): own
// stacks, run stacks through their owner, destroyed stacks through their stack file's key files, and the
// errors that name what is missing.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { logTarget } from "../../../cli/commands/logs";
import { clusterView, stackAccess } from "../../../cli/stack-access";
import { hostArgv as sshArgvFor } from "../../../components/transport";
import { checkStackFile } from "../../../components/config/stack-file";
import type { ReprobenchConfig } from "../../../components/config/schema";

const repoRoot = path.resolve(__dirname, "../../..");
const KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n";
const HOST_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBn5qxOhT5XvHhXS0mUKTKGpcoQ7Mx5xyZMBu2J9XyZl";

let root: string;
let localConfig: ReprobenchConfig;
const connections = (names: string[]) => names.map((name, i) => ({ name, host: "127.0.0.1", port: 2201 + i, user: "root", privateKey: KEY, hostKey: HOST_KEY }));

beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "reprobench-access-"));
  fs.copyFileSync(path.join(repoRoot, "Pulumi.yaml"), path.join(root, "Pulumi.yaml"));
  // The local stack's file, with its key files pointed at files of this test.
  const doc = YAML.parse(fs.readFileSync(path.join(repoRoot, "Pulumi.local.yaml"), "utf8"));
  fs.writeFileSync(path.join(root, "id"), KEY, { mode: 0o600 });
  fs.writeFileSync(path.join(root, "host.pub"), `${HOST_KEY}\n`);
  doc.config["reprobench:hosts"] = doc.config["reprobench:hosts"].map((h: { ssh: Record<string, unknown> }) => ({ ...h, ssh: { ...h.ssh, privateKeyFile: "id", hostKeyFile: "host.pub" } }));
  delete doc.encryptionsalt;
  fs.writeFileSync(path.join(root, "Pulumi.local.yaml"), YAML.stringify(doc));
  fs.writeFileSync(path.join(root, "Pulumi.runs.yaml"), YAML.stringify({ config: { "reprobench:cluster": "local", "reprobench:run": { enabled: true } } }));
  const check = checkStackFile(path.join(root, "Pulumi.local.yaml"));
  if (!check.config) throw new Error(JSON.stringify(check.problems));
  localConfig = check.config;
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const ownerOutputs = () => ({
  clusterConfig: localConfig,
  hostConnections: connections(["worker-a", "worker-b"]),
  sglangApiKey: "sk-test-key",
  jobName: "sim-terminus2-20260101-000000",
  jobsDir: "/var/lib/reprobench/jobs",
  jobLog: "/var/lib/reprobench/logs/sim-terminus2-20260101-000000.log",
  harborUnit: "reprobench-harbor-sim-terminus2-20260101-000000.service",
  harborPid: 321,
  jobState: "running",
});

describe("stackAccess", () => {
  it("an owner stack: hosts, job and cluster from its own outputs", async () => {
    const a = await stackAccess("local", { root, readOutputs: async () => ownerOutputs() });
    expect(a.owner).toBeNull();
    expect(a.stackId).toBe("reprobench.local");
    expect(a.job).toEqual({
      name: "sim-terminus2-20260101-000000",
      dir: "/var/lib/reprobench/jobs/sim-terminus2-20260101-000000",
      log: "/var/lib/reprobench/logs/sim-terminus2-20260101-000000.log",
      unit: "reprobench-harbor-sim-terminus2-20260101-000000.service",
      pid: 321,
      state: "running",
    });
    expect(a.cluster.runner).toBe("worker-b");
    expect(a.cluster.workers.map((w) => [w.host, w.url, w.containerName])).toEqual([
      ["worker-a", "http://172.31.250.11:30001", "qwen38-worker-a"],
      ["worker-b", "http://172.31.250.12:30001", "qwen38-worker-b"],
    ]);
    expect(a.cluster.router).toEqual({ host: "worker-b", containerName: "qwen38-global-router", metricsUrl: "http://127.0.0.1:29000/metrics" });
    expect([...a.connections.keys()]).toEqual(["worker-a", "worker-b"]);
    expect(a.apiKey).toBe("sk-test-key");
  });

  it("a run stack: its job from its outputs, the cluster from its owner's", async () => {
    const read = async (s: string) =>
      s === "runs" ? { cluster: "local", jobName: "mine-20260102-000000", jobsDir: "/var/lib/reprobench/jobs", harborUnit: "u.service" } : { ...ownerOutputs(), jobName: "owners-job" };
    const a = await stackAccess("runs", { root, readOutputs: read });
    expect(a.owner).toBe("local");
    expect(a.job!.name).toBe("mine-20260102-000000");
    expect(a.connections.get("worker-b")!.port).toBe(2202);
    expect(a.stackId).toBe("reprobench.runs");
  });

  it("a destroyed run stack: no job, the owner's hosts (status then looks on the runner)", async () => {
    const a = await stackAccess("runs", { root, readOutputs: async (s) => (s === "runs" ? {} : ownerOutputs()) });
    expect(a.owner).toBe("local");
    expect(a.job).toBeNull();
  });

  it("a destroyed owner stack: hosts through the key files its stack file names", async () => {
    const a = await stackAccess("local", { root, readOutputs: async () => ({}) });
    expect(a.job).toBeNull();
    expect(a.connections.get("worker-a")).toMatchObject({ host: "127.0.0.1", port: 2201, privateKey: KEY, hostKey: HOST_KEY });
    expect(a.notes.join()).toContain("no outputs");
  });

  it("errors name what is missing", async () => {
    await expect(stackAccess("nope", { root, readOutputs: async () => ({}) })).rejects.toThrow(/no stack file Pulumi.nope.yaml/);
    await expect(stackAccess("bad name", { root, readOutputs: async () => ({}) })).rejects.toThrow(/invalid stack name/);
    await expect(stackAccess("runs", { root, readOutputs: async () => ({}) })).rejects.toThrow(/cluster of stack 'local', which has no outputs: it is not up/);
    await expect(
      stackAccess("runs", { root, readOutputs: async (s) => { if (s === "local") throw new Error("no stack 'local' in the Pulumi backend"); return { cluster: "local" }; } }),
    ).rejects.toThrow(/cluster of stack 'local', which cannot be read: no stack 'local'/);
    // A destroyed stack whose keys are Pulumi secrets cannot be reached without its outputs.
    const doc = YAML.parse(fs.readFileSync(path.join(root, "Pulumi.local.yaml"), "utf8"));
    doc.config["reprobench:hosts"] = doc.config["reprobench:hosts"].map((h: { ssh: Record<string, unknown> }) => ({ ...h, ssh: { ...h.ssh, privateKeyFile: undefined } }));
    doc.config["reprobench:sshPrivateKeys"] = { default: { secure: "v1:abc" } };
    fs.writeFileSync(path.join(root, "Pulumi.secretkeys.yaml"), YAML.stringify(doc));
    await expect(stackAccess("secretkeys", { root, readOutputs: async () => ({}) })).rejects.toThrow(/keys are Pulumi secrets/);
  });
});

describe("logs: sources by name", () => {
  it("maps harbor, job, router, worker hosts and trials to a host and a command", async () => {
    const a = await stackAccess("local", { root, readOutputs: async () => ownerOutputs() });
    expect(logTarget(a, "harbor", { follow: true, lines: 50 })).toEqual({ host: "worker-b", command: "tail -n 50 -F /var/lib/reprobench/logs/sim-terminus2-20260101-000000.log", what: "harbor's log /var/lib/reprobench/logs/sim-terminus2-20260101-000000.log" });
    expect(logTarget(a, "job", { follow: false, lines: 5 }).command).toBe("tail -n 5 /var/lib/reprobench/jobs/sim-terminus2-20260101-000000/job.log");
    expect(logTarget(a, "router", { follow: true, lines: 10 })).toMatchObject({ host: "worker-b", command: "docker logs --tail 10 -f qwen38-global-router 2>&1" });
    expect(logTarget(a, "worker-a", { follow: false, lines: 10 })).toMatchObject({ host: "worker-a", command: "docker logs --tail 10 qwen38-worker-a 2>&1" });
    expect(logTarget(a, "hello-file__fsArgg6", { follow: false, lines: 10 }).command).toBe("tail -n 10 /var/lib/reprobench/jobs/sim-terminus2-20260101-000000/hello-file__fsArgg6/trial.log");
    expect(() => logTarget(a, "worker-z", { follow: false, lines: 1 })).toThrow(/unknown log source 'worker-z'; expected one of: harbor, job, router, worker-a, worker-b/);
    const none = await stackAccess("local", { root, readOutputs: async () => ({ ...ownerOutputs(), jobName: undefined }) });
    expect(() => logTarget(none, "harbor", { follow: false, lines: 1 })).toThrow(/has no job in its outputs/);
  });
});

describe("ssh argv", () => {
  it("pins the host key and the stack's key; a sudo login runs the command through sudo -n", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "reprobench-sshdir-"));
    const prev = process.env.REPROBENCH_SSH_DIR;
    process.env.REPROBENCH_SSH_DIR = dir;
    try {
      const c = connections(["worker-a"])[0];
      const argv = sshArgvFor(c, "tail -n 5 /x");
      expect(argv).toContain("StrictHostKeyChecking=yes");
      expect(argv.slice(-4)).toEqual(["-l", "root", "127.0.0.1", "tail -n 5 /x"]);
      expect(argv.at(-1)).toBe("tail -n 5 /x");
      const known = argv.find((x) => x.startsWith("UserKnownHostsFile="))!.split("=")[1];
      expect(fs.readFileSync(known, "utf8")).toBe(`[127.0.0.1]:2201 ${HOST_KEY}\n`);
      expect(argv.join(" ")).not.toContain("BEGIN OPENSSH");
      const sudo = sshArgvFor({ ...c, user: "ops", sudo: true }, "tail -n 5 '/x y'");
      expect(sudo.at(-1)).toBe(`sudo -n -- bash -c 'tail -n 5 '\\''/x y'\\'''`);
    } finally {
      if (prev === undefined) delete process.env.REPROBENCH_SSH_DIR;
      else process.env.REPROBENCH_SSH_DIR = prev;
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("clusterView: no router when router.enabled is false", async () => {
    const v = await clusterView({ ...localConfig, router: { ...localConfig.router, enabled: false } });
    expect(v.router).toBeNull();
  });
});

describe("stackAccess when the owner exports logins without keys", () => {
  const logins = (names: string[]) => connections(names).map(({ privateKey: _key, ...login }) => login);
  const withoutKeyFiles = (): ReprobenchConfig => ({ ...localConfig, hosts: localConfig.hosts.map((h) => ({ ...h, ssh: { ...h.ssh, privateKeyFile: undefined } })) });
  const KEY_B = KEY.replace("AAAA", "BBBB");

  it("takes each host's key from the key file the cluster's config names, asking no stack's config", async () => {
    const asked: string[] = [];
    const a = await stackAccess("local", {
      root, readOutputs: async () => ({ ...ownerOutputs(), hostConnections: logins(["worker-a", "worker-b"]) }),
      readSshKeys: async (s) => (asked.push(s), {}),
    });
    expect([...a.connections.values()].map((c) => [c.name, c.privateKey])).toEqual([["worker-a", KEY], ["worker-b", KEY]]);
    expect(asked).toEqual([]);
  });

  it("else from the run stack's own sshPrivateKeys (the host's, else default), else the owner's", async () => {
    const read = async (s: string) => (s === "runs" ? { cluster: "local" } : { ...ownerOutputs(), clusterConfig: withoutKeyFiles(), hostConnections: logins(["worker-a", "worker-b"]) });
    const keys: Record<string, Record<string, string>> = { runs: { "worker-b": KEY_B }, local: { default: KEY } };
    const a = await stackAccess("runs", { root, readOutputs: read, readSshKeys: async (s) => keys[s] ?? {} });
    expect(a.connections.get("worker-a")?.privateKey).toBe(KEY);
    expect(a.connections.get("worker-b")?.privateKey).toBe(KEY_B);
  });

  it("leaves out a host no key is found for, with a note saying how to give it one", async () => {
    const read = async () => ({ ...ownerOutputs(), clusterConfig: withoutKeyFiles(), hostConnections: logins(["worker-a", "worker-b"]) });
    const a = await stackAccess("local", { root, readOutputs: read, readSshKeys: async () => ({ "worker-a": KEY }) });
    expect([...a.connections.keys()]).toEqual(["worker-a"]);
    expect(a.notes.join("\n")).toContain("host worker-b: no SSH private key for this stack (stack 'local', which owns the cluster, exports none): pulumi config set --stack local --secret --path 'reprobench:sshPrivateKeys.worker-b' < KEYFILE");
  });
});

