// Benchmark (not a test), on a simulated cluster of its own:
//  1. pre-pulling the 20 prepull images with components/scripts/task-images.sh one at a time (seed 000's
//     loop) and CONCURRENCY at a time (default harbor.imagePullConcurrency), the images removed before each
//     pass, through the runner's proxy: once on the bare sim link and once with the sim proxy adding
//     internet-like latency and a per-connection bandwidth cap (seed 000 pulled across the internet through a
//     proxy); both times and the ratio for each;
//  2. the first `up` of the whole local stack (cluster + Harbor + images + a real job) against its
//     critical path, computed from the engine's per-resource timings and the state's dependency graph.
//   node --import tsx bench/run-bench.ts [concurrency]
import { readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import type { EngineEvent } from "@pulumi/pulumi/automation";
import YAML from "yaml";
import { scriptWithEnv } from "../components/host-script";
import { harborSchema } from "../components/config/schema";
import type { NetworkConditions } from "../sim/outside";
import { setNetworkConditions } from "../sim/settings";
import { simDown, simUp } from "../sim/cluster";
import { sshRun } from "../sim/ssh";
import { pointAtSimInstance, repoRoot, testProject } from "../test/helpers/project";

const instance = { name: "runbench", slot: 5 };
const concurrency = Number(process.argv[2] ?? harborSchema.parse({}).imagePullConcurrency);
/** The runner's proxy in the local stack (worker-b's loopback forwarder to proxy.sim, seed 000's 127.0.0.1:27890). */
const RUNNER_PROXY = "http://127.0.0.1:27890";
/** A far registry behind a proxy: every connection waits this long, and no connection moves faster than this. */
const INTERNET: Partial<NetworkConditions> = { latencyMs: 150, bandwidthKBps: 4096, failFraction: 0 };
const BARE: Partial<NetworkConditions> = { latencyMs: 0, bandwidthKBps: 0, failFraction: 0 };
const PREPULL = Array.from({ length: 20 }, (_, i) => `registry.sim:5000/reprobench/prepull-${String(i + 1).padStart(2, "0")}:latest`);

/** Longest dependency chain, weighting each resource by its own duration (seconds). */
export function criticalPath(durations: Map<string, number>, deps: Map<string, string[]>): number {
  const memo = new Map<string, number>();
  const longest = (urn: string, seen: Set<string>): number => {
    if (memo.has(urn)) return memo.get(urn)!;
    if (seen.has(urn)) return 0;
    seen.add(urn);
    const before = Math.max(0, ...(deps.get(urn) ?? []).map((d) => longest(d, seen)));
    const total = before + (durations.get(urn) ?? 0);
    memo.set(urn, total);
    return total;
  };
  return Math.max(0, ...[...durations.keys()].map((u) => longest(u, new Set())));
}

async function main(): Promise<void> {
  const { plan } = await simUp({ root: repoRoot, instance, log: () => undefined });
  const runner = plan.hosts.find((h) => h.name === "worker-b")!;
  const ssh = async (script: string, timeoutMs = 1_800_000) => {
    const r = await sshRun(plan, runner, "bash -s", { input: script, timeoutMs });
    if (r.code !== 0) throw new Error(`runner script failed (${r.code}): ${r.stderr.slice(-800)}`);
    return r.stdout;
  };
  const removeAll = `docker rmi -f ${PREPULL.join(" ")} >/dev/null 2>&1 || true`;
  const proxyEnv = { HTTP_PROXY: RUNNER_PROXY, HTTPS_PROXY: RUNNER_PROXY, http_proxy: RUNNER_PROXY, https_proxy: RUNNER_PROXY, NO_PROXY: "127.0.0.1,localhost", no_proxy: "127.0.0.1,localhost" };
  const pull = async (n: number): Promise<number> => {
    await ssh(removeAll);
    const start = Date.now();
    await ssh(scriptWithEnv(["retry", "task-images"], { ...proxyEnv, IMAGES: PREPULL.join("\n"), CONCURRENCY: String(n), ATTEMPTS: "3" }));
    return (Date.now() - start) / 1000;
  };
  try {
    for (const [label, conditions] of [["bare sim link", BARE], ["internet-like link", INTERNET]] as const) {
      const applied = setNetworkConditions({ root: repoRoot, instance }, conditions);
      const serial = await pull(1);
      const parallel = await pull(concurrency);
      const link = applied.latencyMs || applied.bandwidthKBps ? `${applied.latencyMs} ms per connection, ${applied.bandwidthKBps} KB/s per connection` : "no added latency, no cap";
      console.log(`${label} (${link}): pre-pull of ${PREPULL.length} images (16 MiB each) through the proxy`);
      console.log(`  one at a time: ${serial.toFixed(1)} s`);
      console.log(`  ${concurrency} at a time:  ${parallel.toFixed(1)} s (speed-up ${(serial / parallel).toFixed(2)}×)`);
    }
    setNetworkConditions({ root: repoRoot, instance }, BARE);
    await ssh(removeAll);

    const project = await testProject({ ".sim": path.join(repoRoot, ".sim"), "sim/dataset": path.join(repoRoot, "sim/dataset") });
    try {
      const stack = await project.stack("local", "Pulumi.local.yaml");
      const file = path.join(project.dir, "Pulumi.local.yaml");
      const doc = YAML.parse(readFileSync(file, "utf8"));
      pointAtSimInstance(doc, plan);
      writeFileSync(file, YAML.stringify(doc));
      const started = new Map<string, number>();
      const durations = new Map<string, number>();
      const onEvent = (e: EngineEvent) => {
        const urn = e.resourcePreEvent?.metadata.urn ?? e.resOutputsEvent?.metadata.urn;
        // Real work happens in custom resources; components and the stack only span their children.
        const type = urn?.split("::")[2]?.split("$").pop() ?? "";
        if (!urn || type.startsWith("reprobench:") || type.startsWith("pulumi:")) return;
        if (e.resourcePreEvent) started.set(urn, Date.now());
        else if (started.has(urn)) durations.set(urn, (Date.now() - started.get(urn)!) / 1000);
      };
      const t0 = Date.now();
      const up = await stack.up({ onEvent, onOutput: () => undefined });
      const wall = (Date.now() - t0) / 1000;
      const state = (await stack.exportStack()).deployment as { resources: { urn: string; dependencies?: string[]; parent?: string }[] };
      const deps = new Map(state.resources.map((r) => [r.urn, [...(r.dependencies ?? [])]]));
      const critical = criticalPath(durations, deps);
      console.log(`first up (cluster + run): ${wall.toFixed(1)} s, ${up.summary.resourceChanges?.create ?? 0} resources; job ${up.outputs.jobName?.value}: ${JSON.stringify(up.outputs.jobSummary?.value)}`);
      console.log(`critical path from per-resource timings: ${critical.toFixed(1)} s (wall / critical path = ${(wall / critical).toFixed(2)})`);
      await stack.destroy({ runProgram: true, onOutput: () => undefined });
    } finally {
      project.cleanup();
    }
  } finally {
    await simDown({ root: repoRoot, instance, discardResults: true, log: () => undefined });
  }
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
