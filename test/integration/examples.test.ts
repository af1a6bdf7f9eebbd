// The examples/ programs — Pulumi projects of their own that use reprobench as a package — previewed,
// brought up, re-run and destroyed with the REAL engine against a sim instance of their own.
// examples/own-program is TypeScript importing the built package (dist/components) by path.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { LocalWorkspace, PulumiCommand, type Stack } from "@pulumi/pulumi/automation";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { run } from "../../sim/exec";
import type { ClusterPlan, SimInstance } from "../../sim/layout";
import { simDown, simUp } from "../../sim/cluster";
import { repoRoot, toolchainEnv } from "../helpers/project";

const instance: SimInstance = { name: "examples", slot: 11 };
let plan: ClusterPlan;
const scratch: string[] = [];
const stacks: Stack[] = [];

/** A copy of an example project in a temporary directory, its node_modules linking the checkout's and the package itself. */
function exampleCopy(example: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `reprobench-${example}-`));
  scratch.push(dir);
  fs.cpSync(path.join(repoRoot, "examples", example), dir, { recursive: true, filter: (src) => !src.includes(`${path.sep}node_modules`) });
  // What `npm install` there makes of "reprobench": "file:../..": a link to the package, beside its dependencies.
  const modules = path.join(dir, "node_modules");
  fs.mkdirSync(modules);
  for (const entry of fs.readdirSync(path.join(repoRoot, "node_modules"))) {
    if (!entry.startsWith(".")) fs.symlinkSync(path.join(repoRoot, "node_modules", entry), path.join(modules, entry));
  }
  fs.symlinkSync(repoRoot, path.join(modules, "reprobench"));
  return dir;
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

/** A stack of the example copy at `dir`, on a file backend of its own, with `config` set (and `secrets` as secrets). */
async function exampleStack(dir: string, config: Record<string, unknown>, secrets: Record<string, string>): Promise<Stack> {
  const state = path.join(dir, ".state");
  fs.mkdirSync(state);
  const env = { ...toolchainEnv(), PULUMI_BACKEND_URL: `file://${state}`, PULUMI_CONFIG_PASSPHRASE: "reprobench-test" };
  const root = path.join(repoRoot, ".toolchain");
  const pulumiCommand = fs.existsSync(path.join(root, "bin/pulumi")) ? await PulumiCommand.get({ root }) : undefined;
  const stack = await LocalWorkspace.createOrSelectStack({ stackName: "sim", workDir: dir }, { envVars: env, pulumiCommand });
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

afterAll(async () => {
  for (const stack of stacks) await stack.destroy({ onOutput: () => undefined }).catch(() => undefined);
  for (const dir of scratch) fs.rmSync(dir, { recursive: true, force: true });
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
    stack = await exampleStack(dir, simConfig("own-program"), { "reprobench-own-program:proxyUpstream": "http://127.0.0.1:27890" });
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
    const down = await stack.destroy({ onOutput: () => undefined });
    expect(down.summary.result).toBe("succeeded");
    const left = await stack.exportStack();
    expect((left.deployment as { resources?: unknown[] }).resources ?? []).toHaveLength(0);
  }, 2_400_000);
});
