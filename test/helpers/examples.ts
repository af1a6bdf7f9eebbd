// The examples/ programs — Pulumi projects of their own that use reprobench as a package — in throw-away
// copies, each stack on a file backend of its own, pointed at a sim instance's hosts. Shared by the
// examples suite (type-check, SDK generation, previews: test/integration/examples.test.ts) and the
// examples bench (the full up / second up / destroy of both: bench/examples-bench.ts).
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { LocalWorkspace, type Stack } from "@pulumi/pulumi/automation";
import YAML from "yaml";
import { lastLines, run } from "../../sim/exec";
import type { ClusterPlan, SimInstance } from "../../sim/layout";
import { checkoutPulumi, repoRoot, toolchainEnv } from "./project";

/** Slot 11: every other slot is an integration suite's; bench/rehearsal.ts and bench/examples-bench.ts share it (benches never run beside the suite). */
export const EXAMPLES_INSTANCE: SimInstance = { name: "examples", slot: 11 };

/** What a copy of an example leaves out: what `npm install`, `pulumi package add`, a venv or a file backend made there. */
const GENERATED = new Set(["node_modules", "venv", "sdks", "__pycache__", ".state"]);

/** Everything the examples made (copies, stacks, files in the checkout), for one cleanup. */
export class ExamplesSession {
  plan: ClusterPlan | undefined;
  readonly scratch: string[] = [];
  /** Files of the checkout made here (none are tracked): what plugin/'s `npm install` built. */
  readonly created: string[] = [];
  /** Every stack made, destroyed by destroyStacks. */
  readonly stacks: Stack[] = [];

  /**
   * A copy of an example project in a temporary directory, without what was generated in the checkout's.
   * With `nodeModules`, its node_modules link the checkout's and the package itself (a TypeScript program).
   */
  exampleCopy(example: string, options: { nodeModules?: boolean } = { nodeModules: true }): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `reprobench-${example}-`));
    this.scratch.push(dir);
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

  /** An example's Pulumi.sim.yaml config pointed at the session's sim instance (addresses, ports, key and state files). */
  simConfig(example: string): Record<string, unknown> {
    const plan = this.plan;
    if (!plan) throw new Error("the examples' sim instance is not up");
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

  /** A stack of the example copy at `dir`, on a file backend of its own, with `config` set (and `secrets` as secrets). */
  async exampleStack(dir: string, config: Record<string, unknown>, secrets: Record<string, string>, stackName = "sim"): Promise<Stack> {
    fs.mkdirSync(path.join(dir, ".state"), { recursive: true });
    const env = await stackEnv(dir);
    const stack = await LocalWorkspace.createOrSelectStack({ stackName, workDir: dir }, { envVars: env, pulumiCommand: await checkoutPulumi() });
    this.stacks.push(stack);
    const values = Object.fromEntries(Object.entries(config).map(([k, v]) => [k, { value: typeof v === "string" ? v : JSON.stringify(v) }]));
    await stack.setAllConfig({ ...values, ...Object.fromEntries(Object.entries(secrets).map(([k, v]) => [k, { value: v, secret: true }])) });
    return stack;
  }

  /**
   * Destroys every stack made so far (a no-op for one already destroyed): with the program, as its delete
   * hooks need, and without should the program no longer run. A host belongs to one stack, so an example
   * gets the sim's hosts only once the one before it let go of them, even when its test failed midway.
   */
  async destroyStacks(): Promise<void> {
    const quiet = () => undefined;
    for (const stack of this.stacks) {
      const destroy = (runProgram: boolean) => stack.destroy({ onOutput: quiet, runProgram, signal: AbortSignal.timeout(900_000) });
      await destroy(true)
        .catch(() => destroy(false))
        .catch((err: unknown) => console.log(`cleanup: destroying stack ${stack.name} of ${stack.workspace.workDir} failed: ${lastLines(String(err), 12)}`));
    }
  }

  /** Destroys the stacks and removes the copies and the checkout files made (not the sim instance). */
  async cleanup(): Promise<void> {
    await this.destroyStacks();
    for (const dir of this.scratch) fs.rmSync(dir, { recursive: true, force: true });
    for (const file of this.created) fs.rmSync(file, { recursive: true, force: true });
  }
}

/** An example's Pulumi project name: the namespace of its config keys. */
export function projectName(example: string): string {
  return (YAML.parse(fs.readFileSync(path.join(repoRoot, "examples", example, "Pulumi.yaml"), "utf8")) as { name: string }).name;
}

/** The environment a copy's stack runs in: the toolchain, a file backend in the copy, a passphrase. */
export async function stackEnv(dir: string): Promise<Record<string, string>> {
  return { ...(await toolchainEnv()), PULUMI_BACKEND_URL: `file://${path.join(dir, ".state")}`, PULUMI_CONFIG_PASSPHRASE: "reprobench-test" };
}

/** The package as a user's program gets it: compiled, with its type declarations (scripts/build.sh). */
export async function buildPackage(): Promise<void> {
  const build = await run(["bash", path.join(repoRoot, "scripts/build.sh")], { timeoutMs: 300_000 });
  if (build.code !== 0) throw new Error(`npm run build failed: ${build.stderr || build.stdout}`);
}

/** The proxy bridge's upstream every example stack is given as a secret (worker-b's loopback forwarder). */
export const SIM_PROXY_UPSTREAM = "http://127.0.0.1:27890";

/**
 * The resources a preview of an example must plan (type, name): the package's parts, one worker
 * (worker-a; worker-b runs the router and Harbor). The Python program adds the package's facade.
 */
export function expectedPreviewParts(example: "own-program" | "python-program"): [string, string][] {
  // The cluster `bench`'s parts are named after it.
  const common: [string, string][] = [
    ["reprobench:cluster:BenchCluster", "bench"], ["reprobench:cluster:ModelServer", "bench-worker-a-sglang"], ["reprobench:cluster:SglangRouter", "bench-router"],
    ["reprobench:runner:HarborRunner", "bench-harbor"], ["reprobench:runner:TaskDataset", "bench-harbor"],
  ];
  return example === "own-program"
    ? [...common, ["reprobench:run:BenchmarkRun", "smoke"]]
    : [["reprobench:index:BenchCluster", "bench"], ...common, ["reprobench:run:BenchmarkRun", "bench-benchmark"]];
}

/** What a finished `up` of an example must show, as failures (empty when it is right). */
export function upProblems(outputs: Record<string, { value: unknown }>, o: { workers?: string[]; digests?: boolean } = {}): string[] {
  const problems: string[] = [];
  if (outputs.jobState?.value !== "finished") problems.push(`jobState ${JSON.stringify(outputs.jobState?.value)}, expected "finished"`);
  const summary = (outputs.jobSummary?.value ?? {}) as { trials?: number; errors?: number; finished?: boolean };
  if (summary.trials !== 3) problems.push(`jobSummary.trials ${summary.trials}, expected 3`);
  if (summary.errors !== 0) problems.push(`jobSummary.errors ${summary.errors}, expected 0`);
  if (!/^http:\/\//.test(String(outputs.routerUrl?.value))) problems.push(`routerUrl ${JSON.stringify(outputs.routerUrl?.value)}, expected http://…`);
  if (o.workers) {
    const workers = Object.keys((outputs.workerUrls?.value ?? {}) as Record<string, string>);
    if (JSON.stringify(workers) !== JSON.stringify(o.workers)) problems.push(`workerUrls for ${JSON.stringify(workers)}, expected ${JSON.stringify(o.workers)}`);
  }
  if (o.digests) {
    for (const image of Object.values((outputs.serverImages?.value ?? {}) as Record<string, string>)) {
      if (!/@sha256:[0-9a-f]{64}$/.test(image)) problems.push(`server image ${image} is not pinned by digest`);
    }
  }
  return problems;
}

/** Files under plugin/ and the Python example that git would list as new (neither tracked nor ignored). */
export async function untrackedPluginFiles(): Promise<string[]> {
  const ls = await run(["git", "-C", repoRoot, "ls-files", "--others", "--exclude-standard", "--", "plugin", "examples/python-program"], { timeoutMs: 60_000 });
  if (ls.code !== 0) throw new Error(`git ls-files failed: ${ls.stderr}`);
  return ls.stdout.split("\n").filter(Boolean).sort();
}

/** What preparing the Python example did: each step's result and the files it touched, for the caller to judge. */
export interface PythonExamplePrep {
  dir: string;
  committedYaml: { packages?: Record<string, string> };
  committedRequirements: string;
  host: { code: number; stderr: string };
  venv: { code: number; stderr: string };
  add: { code: number; stdout: string; stderr: string };
  venvAgain: { code: number; stderr: string };
  untrackedBefore: string[];
  untrackedAfter: string[];
  /** Seconds per step. */
  took: Record<string, number>;
}

/**
 * The Python example as a user starts it: the Python language host beside the toolchain's pulumi, a copy
 * of the project as it was before `pulumi package add` (no packages entry, no requirement of its SDK), its
 * venv with the pinned SDK, `pulumi package add` of the checkout's plugin/ (which builds plugin/ in the
 * checkout: what was not there before is recorded in the session for cleanup), then the venv again.
 */
export async function preparePythonExample(session: ExamplesSession): Promise<PythonExamplePrep> {
  const took: Record<string, number> = {};
  const timed = async <T>(step: string, f: () => Promise<T>): Promise<T> => {
    const t0 = Date.now();
    try {
      return await f();
    } finally {
      took[step] = Math.round((Date.now() - t0) / 100) / 10;
    }
  };
  const plugin = path.join(repoRoot, "plugin");
  const host = await timed("python host", () => run(["bash", path.join(repoRoot, "scripts/toolchain.sh"), "--python"], { timeoutMs: 900_000 }));
  const dir = session.exampleCopy("python-program", { nodeModules: false });
  const committedYaml = YAML.parse(fs.readFileSync(path.join(dir, "Pulumi.yaml"), "utf8")) as { packages?: Record<string, string> };
  const committedRequirements = fs.readFileSync(path.join(dir, "requirements.txt"), "utf8");
  const doc = YAML.parseDocument(fs.readFileSync(path.join(dir, "Pulumi.yaml"), "utf8"));
  doc.delete("packages");
  fs.writeFileSync(path.join(dir, "Pulumi.yaml"), doc.toString());
  fs.writeFileSync(path.join(dir, "requirements.txt"), committedRequirements.split("\n").filter((l) => !l.startsWith("sdks/")).join("\n"));
  const venv = await timed("venv", () => run(["bash", path.join(repoRoot, "scripts/python-venv.sh"), dir], { timeoutMs: 600_000 }));
  for (const f of ["index.js", "node_modules", "package-lock.json"]) if (!fs.existsSync(path.join(plugin, f))) session.created.push(path.join(plugin, f));
  const untrackedBefore = await untrackedPluginFiles();
  const pulumiBin = fs.existsSync(path.join(repoRoot, ".toolchain/bin/pulumi")) ? path.join(repoRoot, ".toolchain/bin/pulumi") : "pulumi";
  const add = await timed("package add", async () => run([pulumiBin, "package", "add", plugin], { cwd: dir, env: { ...process.env, ...(await stackEnv(dir)) }, timeoutMs: 900_000 }));
  const untrackedAfter = await untrackedPluginFiles();
  const venvAgain = await timed("venv again", () => run(["bash", path.join(repoRoot, "scripts/python-venv.sh"), dir], { timeoutMs: 600_000 }));
  return { dir, committedYaml, committedRequirements, host, venv, add, venvAgain, untrackedBefore, untrackedAfter, took };
}
