// The examples/ programs — Pulumi projects of their own that use reprobench as a package — previewed,
// brought up, re-run and destroyed with the REAL engine against a sim instance of their own.
// examples/own-program is TypeScript importing the built package (dist/components) by path;
// examples/python-program is Python on the component package in plugin/ (`pulumi package add`).
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { LocalWorkspace, type Stack } from "@pulumi/pulumi/automation";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { lastLines, run } from "../../sim/exec";
import type { ClusterPlan, SimInstance } from "../../sim/layout";
import { simDown, simUp } from "../../sim/cluster";
import { checkoutPulumi, repoRoot, toolchainEnv } from "../helpers/project";

// Slot 11: every other slot is an integration suite's; bench/rehearsal.ts shares it (benches never run beside the suite).
const instance: SimInstance = { name: "examples", slot: 11 };
let plan: ClusterPlan;
const scratch: string[] = [];
/** Files of the checkout this suite made (none are tracked; removed in afterAll): what plugin/'s `npm install` built. */
const created: string[] = [];
/** Every stack made, destroyed in afterAll. */
const stacks: Stack[] = [];

/** What a copy of an example leaves out: what `npm install`, `pulumi package add`, a venv or a file backend made there. */
const GENERATED = new Set(["node_modules", "venv", "sdks", "__pycache__", ".state"]);

/**
 * A copy of an example project in a temporary directory, without what was generated in the checkout's.
 * With `nodeModules`, its node_modules link the checkout's and the package itself (a TypeScript program).
 */
function exampleCopy(example: string, options: { nodeModules?: boolean } = { nodeModules: true }): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `reprobench-${example}-`));
  scratch.push(dir);
  const from = path.join(repoRoot, "examples", example);
  fs.cpSync(from, dir, { recursive: true, filter: (src) => !path.relative(from, src).split(path.sep).some((part) => GENERATED.has(part)) });
  if (!options.nodeModules) return dir;
  // What `npm install` there makes of "reprobench": "file:../..": a link to the package, beside its dependencies.
  const modules = path.join(dir, "node_modules");
  fs.mkdirSync(modules);
  for (const entry of fs.readdirSync(path.join(repoRoot, "node_modules"))) {
    if (!entry.startsWith(".")) fs.symlinkSync(path.join(repoRoot, "node_modules", entry), path.join(modules, entry));
  }
  fs.symlinkSync(repoRoot, path.join(modules, "reprobench"));
  return dir;
}

/** An example's Pulumi project name: the namespace of its config keys. */
function projectName(example: string): string {
  return (YAML.parse(fs.readFileSync(path.join(repoRoot, "examples", example, "Pulumi.yaml"), "utf8")) as { name: string }).name;
}

/** An example's Pulumi.sim.yaml config pointed at this suite's sim instance (addresses, ports, key and state files). */
function simConfig(example: string): Record<string, unknown> {
  const doc = YAML.parse(fs.readFileSync(path.join(repoRoot, "examples", example, "Pulumi.sim.yaml"), "utf8")) as { config: Record<string, unknown> };
  const state = (file: string) => path.join(repoRoot, plan.stateDir, file);
  const text = JSON.stringify(doc.config)
    .replaceAll("../../.sim/proxy-url", state("proxy-url"))
    .replaceAll("../../.sim/registry-password", state("registry-password"));
  const config = JSON.parse(text) as Record<string, unknown>;
  const hostsKey = Object.keys(config).find((k) => k.endsWith(":hosts"));
  if (!hostsKey) throw new Error(`examples/${example}/Pulumi.sim.yaml has no hosts`);
  config[hostsKey] = (config[hostsKey] as { name: string; ssh: Record<string, unknown> }[]).map((h) => {
    const p = plan.hosts.find((x) => x.name === h.name);
    if (!p) throw new Error(`sim instance has no host ${h.name}`);
    return { ...h, privateIp: p.ip, ssh: { ...h.ssh, host: p.sshHost, port: p.sshPort, hostKeyFile: path.join(repoRoot, p.hostKeyFile), privateKeyFile: path.join(repoRoot, plan.privateKeyFile) } };
  });
  return config;
}

/** The environment a copy's stack runs in: the toolchain, a file backend in the copy, a passphrase. */
async function stackEnv(dir: string): Promise<Record<string, string>> {
  return { ...(await toolchainEnv()), PULUMI_BACKEND_URL: `file://${path.join(dir, ".state")}`, PULUMI_CONFIG_PASSPHRASE: "reprobench-test" };
}

/** A stack of the example copy at `dir`, on a file backend of its own, with `config` set (and `secrets` as secrets). */
async function exampleStack(dir: string, config: Record<string, unknown>, secrets: Record<string, string>): Promise<Stack> {
  fs.mkdirSync(path.join(dir, ".state"), { recursive: true });
  const env = await stackEnv(dir);
  const stack = await LocalWorkspace.createOrSelectStack({ stackName: "sim", workDir: dir }, { envVars: env, pulumiCommand: await checkoutPulumi() });
  stacks.push(stack);
  const values = Object.fromEntries(Object.entries(config).map(([k, v]) => [k, { value: typeof v === "string" ? v : JSON.stringify(v) }]));
  await stack.setAllConfig({ ...values, ...Object.fromEntries(Object.entries(secrets).map(([k, v]) => [k, { value: v, secret: true }])) });
  return stack;
}

beforeAll(async () => {
  // The package as a user's program gets it: compiled, with its type declarations.
  const build = await run(["bash", path.join(repoRoot, "scripts/build.sh")], { timeoutMs: 300_000 });
  if (build.code !== 0) throw new Error(`npm run build failed: ${build.stderr || build.stdout}`);
  try {
    ({ plan } = await simUp({ root: repoRoot, instance }));
  } catch (err) {
    await simDown({ root: repoRoot, instance, discardResults: true }).catch(() => undefined);
    throw err;
  }
}, 1_200_000);

/**
 * Destroys every stack made so far (a no-op for one already destroyed): with the program, as its delete
 * hooks need, and without should the program no longer run. A host belongs to one stack, so an example
 * gets the sim's hosts only once the one before it let go of them, even when its test failed midway.
 */
async function destroyStacks(): Promise<void> {
  const quiet = () => undefined;
  for (const stack of stacks) {
    const destroy = (runProgram: boolean) => stack.destroy({ onOutput: quiet, runProgram, signal: AbortSignal.timeout(900_000) });
    await destroy(true)
      .catch(() => destroy(false))
      .catch((err: unknown) => console.log(`cleanup: destroying stack ${stack.name} of ${stack.workspace.workDir} failed: ${lastLines(String(err), 12)}`));
  }
}

afterAll(async () => {
  await destroyStacks();
  for (const dir of scratch) fs.rmSync(dir, { recursive: true, force: true });
  for (const file of created) fs.rmSync(file, { recursive: true, force: true });
  await simDown({ root: repoRoot, instance, discardResults: true });
}, 1_200_000);

describe("examples/own-program: a TypeScript program of its own on the package", () => {
  let stack: Stack;
  let dir: string;

  it("type-checks against the package's declarations (dist/components/index.d.ts)", async () => {
    dir = exampleCopy("own-program");
    const tsc = await run([path.join(repoRoot, "node_modules/.bin/tsc"), "-p", path.join(dir, "tsconfig.json")], { timeoutMs: 300_000 });
    expect(tsc.stdout + tsc.stderr).toBe("");
    expect(tsc.code).toBe(0);
  });

  it("previews one worker, the router, Harbor and a run of its own, contacting no host", async () => {
    stack = await exampleStack(dir, simConfig("own-program"), { [`${projectName("own-program")}:proxyUpstream`]: "http://127.0.0.1:27890" });
    let output = "";
    const preview = await stack.preview({ onOutput: (o) => (output += o) });
    console.log(output.split("\n").slice(-40).join("\n"));
    const creates = preview.changeSummary.create ?? 0;
    const parts: [string, string][] = [
      ["reprobench:cluster:BenchCluster", "bench"], ["reprobench:cluster:ModelServer", "worker-a-sglang"], ["reprobench:cluster:SglangRouter", "router"],
      ["reprobench:runner:HarborRunner", "harbor"], ["reprobench:runner:TaskDataset", "harbor"], ["reprobench:run:BenchmarkRun", "smoke"],
    ];
    for (const [type, name] of parts) expect(output, `${type} ${name}`).toMatch(new RegExp(`${type}\\s+${name}\\s+create`));
    // One worker: worker-b runs the router and Harbor, no model server.
    expect(output).not.toMatch(/worker-b-sglang\s/);
    expect(creates).toBeGreaterThan(20);
  }, 600_000);

  it("up runs the smoke job through the router to the one worker; a second up changes nothing; destroy leaves nothing of the stack", async () => {
    const up = await stack.up({ onOutput: (o) => process.stdout.write(o) });
    expect(up.summary.result).toBe("succeeded");
    expect(up.outputs.jobState.value).toBe("finished");
    const summary = up.outputs.jobSummary.value as { trials: number; errors: number };
    expect(summary.trials).toBe(3);
    expect(summary.errors).toBe(0);
    expect(String(up.outputs.routerUrl.value)).toMatch(/^http:\/\//);
    const again = await stack.up({ onOutput: () => undefined });
    expect(Object.keys(again.summary.resourceChanges ?? {}).filter((k) => k !== "same")).toEqual([]);
    // With the program: the restart guard's delete hooks are registered by it.
    const down = await stack.destroy({ onOutput: () => undefined, runProgram: true });
    expect(down.summary.result).toBe("succeeded");
    const left = await stack.exportStack();
    expect((left.deployment as { resources?: unknown[] }).resources ?? []).toHaveLength(0);
  }, 2_400_000);
});

describe("examples/python-program: a Python program on the component package (plugin/)", () => {
  const project = projectName("python-program");
  const plugin = path.join(repoRoot, "plugin");
  const quiet = () => undefined;
  /** Seconds each step took: what the Python example adds to the suite. */
  const took: Record<string, number> = {};
  async function timed<T>(step: string, f: () => Promise<T>): Promise<T> {
    const t0 = Date.now();
    try {
      return await f();
    } finally {
      took[step] = Math.round((Date.now() - t0) / 100) / 10;
    }
  }
  /** Files under plugin/ and the example that git would list as new (neither tracked nor ignored). */
  async function untracked(): Promise<string[]> {
    const ls = await run(["git", "-C", repoRoot, "ls-files", "--others", "--exclude-standard", "--", "plugin", "examples/python-program"], { timeoutMs: 60_000 });
    expect(ls.code, ls.stderr).toBe(0);
    return ls.stdout.split("\n").filter(Boolean).sort();
  }
  let dir: string;
  let stack: Stack;

  // The hosts free of the examples before this one.
  beforeAll(destroyStacks, 1_800_000);
  afterAll(() => console.log(`examples/python-program: seconds per step ${JSON.stringify(took)}`));

  it("gets its SDK from `pulumi package add` of the checkout's plugin/, in a venv with the pinned Python SDK", async () => {
    // The Python language host beside the toolchain's pulumi (built once from its source archive, then cached).
    const host = await timed("python host", () => run(["bash", path.join(repoRoot, "scripts/toolchain.sh"), "--python"], { timeoutMs: 900_000 }));
    expect(host.code, host.stderr).toBe(0);
    dir = exampleCopy("python-program", { nodeModules: false });
    // The project as it was before `pulumi package add`: no packages entry, no requirement of its SDK.
    const committedYaml = YAML.parse(fs.readFileSync(path.join(dir, "Pulumi.yaml"), "utf8")) as { packages?: Record<string, string> };
    const committedRequirements = fs.readFileSync(path.join(dir, "requirements.txt"), "utf8");
    const doc = YAML.parseDocument(fs.readFileSync(path.join(dir, "Pulumi.yaml"), "utf8"));
    doc.delete("packages");
    fs.writeFileSync(path.join(dir, "Pulumi.yaml"), doc.toString());
    fs.writeFileSync(path.join(dir, "requirements.txt"), committedRequirements.split("\n").filter((l) => !l.startsWith("sdks/")).join("\n"));

    const venv = await timed("venv", () => run(["bash", path.join(repoRoot, "scripts/python-venv.sh"), dir], { timeoutMs: 600_000 }));
    expect(venv.code, venv.stderr).toBe(0);

    // package add builds plugin/ in the checkout (its npm install → prepare): index.js, git-ignored, and
    // nothing installed there (no second @pulumi/pulumi). What was not there before goes in afterAll.
    for (const f of ["index.js", "node_modules", "package-lock.json"]) if (!fs.existsSync(path.join(plugin, f))) created.push(path.join(plugin, f));
    const before = await untracked();
    const pulumiBin = fs.existsSync(path.join(repoRoot, ".toolchain/bin/pulumi")) ? path.join(repoRoot, ".toolchain/bin/pulumi") : "pulumi";
    const add = await timed("package add", async () => run([pulumiBin, "package", "add", plugin], { cwd: dir, env: { ...process.env, ...(await stackEnv(dir)) }, timeoutMs: 900_000 }));
    expect(add.code, `${add.stdout}\n${add.stderr}`).toBe(0);
    expect(fs.existsSync(path.join(dir, "sdks/reprobench/pulumi_reprobench/bench_cluster.py"))).toBe(true);
    // It wrote what the example commits: the package from this checkout's plugin/, the SDK's requirement.
    expect((YAML.parse(fs.readFileSync(path.join(dir, "Pulumi.yaml"), "utf8")) as { packages?: unknown }).packages).toEqual({ reprobench: plugin });
    expect(Object.keys(committedYaml.packages ?? {})).toEqual(["reprobench"]);
    expect(path.resolve(repoRoot, "examples/python-program", committedYaml.packages?.reprobench ?? "")).toBe(plugin);
    expect(fs.readFileSync(path.join(dir, "requirements.txt"), "utf8").trim()).toBe(committedRequirements.trim());
    expect(fs.existsSync(path.join(plugin, "index.js"))).toBe(true);
    expect(fs.existsSync(path.join(plugin, "node_modules"))).toBe(false);
    expect(fs.existsSync(path.join(plugin, "package-lock.json"))).toBe(false);
    expect(await untracked()).toEqual(before);

    // The venv again: package add's pip install kept the pinned SDK, and a second run changes nothing.
    const again = await timed("venv again", () => run(["bash", path.join(repoRoot, "scripts/python-venv.sh"), dir], { timeoutMs: 600_000 }));
    expect(again.code, again.stderr).toBe(0);
  }, 2_400_000);

  it("previews the cluster — one worker, the router, Harbor and its own run — contacting no host", async () => {
    stack = await exampleStack(dir, simConfig("python-program"), { [`${project}:proxyUpstream`]: "http://127.0.0.1:27890" });
    let output = "";
    const preview = await timed("preview", () => stack.preview({ onOutput: (o) => (output += o), signal: AbortSignal.timeout(900_000) }));
    console.log(output.split("\n").slice(-40).join("\n"));
    const parts: [string, string][] = [
      // The package's facade, and the real component it builds as its child.
      ["reprobench:index:BenchCluster", "bench"], ["reprobench:cluster:BenchCluster", "bench"],
      ["reprobench:cluster:ModelServer", "worker-a-sglang"], ["reprobench:cluster:SglangRouter", "router"],
      ["reprobench:runner:HarborRunner", "harbor"], ["reprobench:runner:TaskDataset", "harbor"], ["reprobench:run:BenchmarkRun", "benchmark"],
    ];
    for (const [type, name] of parts) expect(output, `${type} ${name}`).toMatch(new RegExp(`${type}\\s+${name}\\s+create`));
    expect(output).not.toMatch(/worker-b-sglang\s/);
    expect(preview.changeSummary.create ?? 0).toBeGreaterThan(20);
  }, 900_000);

  it("up runs the cluster's own job through the router; a second up changes nothing; destroy with the program leaves nothing", async () => {
    const up = await timed("up", () => stack.up({ onOutput: (o) => process.stdout.write(o), signal: AbortSignal.timeout(1_800_000) }));
    expect(up.summary.result).toBe("succeeded");
    expect(up.outputs.jobState.value).toBe("finished");
    const summary = up.outputs.jobSummary.value as { trials: number; errors: number; finished: boolean };
    expect(summary.trials).toBe(3);
    expect(summary.errors).toBe(0);
    expect(summary.finished).toBe(true);
    expect(String(up.outputs.routerUrl.value)).toMatch(/^http:\/\//);
    expect(Object.keys(up.outputs.workerUrls.value as Record<string, string>)).toEqual(["worker-a"]);
    for (const image of Object.values(up.outputs.serverImages.value as Record<string, string>)) expect(image).toMatch(/@sha256:[0-9a-f]{64}$/);
    const again = await timed("second up", () => stack.up({ onOutput: quiet, signal: AbortSignal.timeout(900_000) }));
    expect(Object.keys(again.summary.resourceChanges ?? {}).filter((k) => k !== "same")).toEqual([]);
    // With the program: the restart guard's delete hooks are registered by it.
    const down = await timed("destroy", () => stack.destroy({ onOutput: quiet, runProgram: true, signal: AbortSignal.timeout(900_000) }));
    expect(down.summary.result).toBe("succeeded");
    const left = await stack.exportStack();
    expect((left.deployment as { resources?: unknown[] }).resources ?? []).toHaveLength(0);
  }, 2_400_000);
});
