// The examples/ programs — Pulumi projects of their own that use reprobench as a package — type-checked,
// given their SDK and previewed with the REAL engine against a sim instance of their own.
// examples/own-program is TypeScript importing the built package (dist/components) by path;
// examples/python-program is Python on the component package in plugin/ (`pulumi package add`).
// Their full up / second up / destroy (a real job each) is bench/examples-bench.ts: minutes of cluster
// convergence per example that CI's 45 minutes cannot hold beside the suites that converge clusters already.
import * as fs from "node:fs";
import * as path from "node:path";
import type { Stack } from "@pulumi/pulumi/automation";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { run } from "../../sim/exec";
import { simDown, simUp } from "../../sim/cluster";
import { buildPackage, EXAMPLES_INSTANCE, ExamplesSession, expectedPreviewParts, preparePythonExample, projectName, SIM_PROXY_UPSTREAM } from "../helpers/examples";
import { repoRoot } from "../helpers/project";

const session = new ExamplesSession();

beforeAll(async () => {
  await buildPackage();
  try {
    ({ plan: session.plan } = await simUp({ root: repoRoot, instance: EXAMPLES_INSTANCE }));
  } catch (err) {
    await simDown({ root: repoRoot, instance: EXAMPLES_INSTANCE, discardResults: true }).catch(() => undefined);
    throw err;
  }
}, 1_200_000);

afterAll(async () => {
  await session.cleanup();
  await simDown({ root: repoRoot, instance: EXAMPLES_INSTANCE, discardResults: true });
}, 1_200_000);

/** Previews `stack` and checks it plans every part of the example, more than 20 creates, and no server on worker-b. */
async function previewPlansTheExample(stack: Stack, example: "own-program" | "python-program"): Promise<void> {
  let output = "";
  const preview = await stack.preview({ onOutput: (o) => (output += o), signal: AbortSignal.timeout(900_000) });
  console.log(output.split("\n").slice(-40).join("\n"));
  for (const [type, name] of expectedPreviewParts(example)) expect(output, `${type} ${name}`).toMatch(new RegExp(`${type}\\s+${name}\\s+create`));
  // One worker: worker-b runs the router and Harbor, no model server.
  expect(output).not.toMatch(/worker-b-sglang\s/);
  expect(preview.changeSummary.create ?? 0).toBeGreaterThan(20);
}

describe("examples/own-program: a TypeScript program of its own on the package", () => {
  let dir: string;

  it("type-checks against the package's declarations (dist/components/index.d.ts)", async () => {
    dir = session.exampleCopy("own-program");
    const tsc = await run([path.join(repoRoot, "node_modules/.bin/tsc"), "-p", path.join(dir, "tsconfig.json")], { timeoutMs: 300_000 });
    expect(tsc.stdout + tsc.stderr).toBe("");
    expect(tsc.code).toBe(0);
  });

  it("previews one worker, the router, Harbor and a run of its own, contacting no host", async () => {
    const stack = await session.exampleStack(dir, session.simConfig("own-program"), { [`${projectName("own-program")}:proxyUpstream`]: SIM_PROXY_UPSTREAM });
    await previewPlansTheExample(stack, "own-program");
  }, 900_000);
});

describe("examples/python-program: a Python program on the component package (plugin/)", () => {
  const project = projectName("python-program");
  const plugin = path.join(repoRoot, "plugin");
  let dir: string;

  it("gets its SDK from `pulumi package add` of the checkout's plugin/, in a venv with the pinned Python SDK", async () => {
    const prep = await preparePythonExample(session);
    console.log(`examples/python-program: seconds per step ${JSON.stringify(prep.took)}`);
    dir = prep.dir;
    expect(prep.host.code, prep.host.stderr).toBe(0);
    expect(prep.venv.code, prep.venv.stderr).toBe(0);
    expect(prep.add.code, `${prep.add.stdout}\n${prep.add.stderr}`).toBe(0);
    expect(fs.existsSync(path.join(dir, "sdks/reprobench/pulumi_reprobench/bench_cluster.py"))).toBe(true);
    // It wrote what the example commits: the package from this checkout's plugin/, the SDK's requirement.
    expect((YAML.parse(fs.readFileSync(path.join(dir, "Pulumi.yaml"), "utf8")) as { packages?: unknown }).packages).toEqual({ reprobench: plugin });
    expect(Object.keys(prep.committedYaml.packages ?? {})).toEqual(["reprobench"]);
    expect(path.resolve(repoRoot, "examples/python-program", prep.committedYaml.packages?.reprobench ?? "")).toBe(plugin);
    expect(fs.readFileSync(path.join(dir, "requirements.txt"), "utf8").trim()).toBe(prep.committedRequirements.trim());
    // package add built plugin/ in the checkout (its npm install → prepare): index.js, git-ignored, and
    // nothing installed there (no second @pulumi/pulumi).
    expect(fs.existsSync(path.join(plugin, "index.js"))).toBe(true);
    expect(fs.existsSync(path.join(plugin, "node_modules"))).toBe(false);
    expect(fs.existsSync(path.join(plugin, "package-lock.json"))).toBe(false);
    expect(prep.untrackedAfter).toEqual(prep.untrackedBefore);
    // The venv again: package add's pip install kept the pinned SDK, and a second run changes nothing.
    expect(prep.venvAgain.code, prep.venvAgain.stderr).toBe(0);
  }, 2_400_000);

  it("previews the cluster — one worker, the router, Harbor and its own run — contacting no host", async () => {
    const stack = await session.exampleStack(dir, session.simConfig("python-program"), { [`${project}:proxyUpstream`]: SIM_PROXY_UPSTREAM });
    await previewPlansTheExample(stack, "python-program");
  }, 900_000);

  it("runs a job on another stack's cluster with BenchmarkRun: its preview against a cluster not up renders the job from the owner's stack file", async () => {
    // The same project and SDK, another program: a BenchmarkRun on the cluster of stack `local`, which
    // exists in this project's backend but was never up (no outputs), so the job is previewed against the
    // owner's stack file, Pulumi.local.yaml of the checkout (project_dir), contacting no host.
    await session.exampleStack(dir, {}, {}, "local");
    const main = path.join(dir, "__main__.py");
    const example = fs.readFileSync(main, "utf8");
    fs.writeFileSync(main, [
      "import pulumi",
      "import pulumi_reprobench as reprobench",
      "",
      `run = reprobench.BenchmarkRun("smoke", cluster="local", project_dir=${JSON.stringify(repoRoot)}, run={`,
      '    "agent": "terminus-2", "modelName": "openai/Qwen/Qwen3.8-27B", "nConcurrentTrials": 2, "nConcurrentAgents": 2, "jobNamePrefix": "py-facade",',
      "})",
      'pulumi.export("jobName", run.job_name)',
      "",
    ].join("\n"));
    try {
      const stack = await session.exampleStack(dir, {}, {});
      let output = "";
      const preview = await stack.preview({ onOutput: (o) => (output += o), signal: AbortSignal.timeout(900_000) });
      console.log(output.split("\n").slice(-30).join("\n"));
      expect(output).toMatch(/reprobench:index:BenchmarkRun\s+smoke\s+create/);
      expect(output).toMatch(/reprobench:run:BenchmarkRun\s+smoke-benchmark\s+create/);
      expect(output).toMatch(/reprobench:index:HostScript\s+smoke-benchmark-harbor\s+create/);
      expect(output).toContain("stack 'local' is not up: previewing this run against Pulumi.local.yaml");
      // Nothing of the cluster: a run registers only its job.
      expect(output).not.toMatch(/reprobench:cluster:/);
      expect(preview.changeSummary.create ?? 0).toBeGreaterThan(2);
    } finally {
      fs.writeFileSync(main, example);
    }
  }, 900_000);
});
