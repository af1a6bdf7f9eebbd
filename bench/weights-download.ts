// Scenario (not a test): `up` of the local stack with modelServer.download on a sim instance of its own —
// each worker downloads reprobench/small-qwen3 from hub.sim through the sim's authenticating proxy with the
// pinned huggingface_hub from pypi.sim, one transfer cut by the hub (a fault) and resumed, every file
// verified, then the preflight and the servers on those weights; a second `up` changes nothing. Prints the
// download's lines from the up, the hub's requests for the cut shard, the weights outputs and the timings.
//   node --import tsx bench/weights-download.ts
import { readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { HUB_REPO, HUB_REVISION } from "../sim/hub-repo";
import { repoRoot } from "../test/helpers/project";
import { simStack } from "../test/helpers/sim-stack";

const instance = { name: "weights", slot: 11 };
const MODEL_PATH = "/var/lib/reprobench/models/hub-small";

async function main(): Promise<void> {
  const t0 = Date.now();
  const sim = await simStack(instance, {
    baseline: (c) => {
      c["reprobench:run"] = { enabled: false };
      c["reprobench:modelServer"] = {
        ...c["reprobench:modelServer"],
        modelPath: MODEL_PATH,
        download: { repo: HUB_REPO, revision: HUB_REVISION, endpoint: "http://hub.sim", indexUrl: "http://pypi.sim/simple/" },
      };
    },
  });
  try {
    console.log(`sim instance and stack ready in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    // The hub drops the first transfer of the first shard after 11 MB (once, for whichever worker asks first).
    writeFileSync(path.join(repoRoot, sim.plan.hub.faultsFile), JSON.stringify({ faults: [{ kind: "drop", path: "model-00001-*", afterBytes: 11_000_000, times: 1 }] }));
    const since = new Date().toISOString();
    let output = "";
    const t1 = Date.now();
    const up = await sim.stack.up({ onOutput: (o) => (output += o) });
    console.log(`up: ${up.summary.result} in ${((Date.now() - t1) / 1000).toFixed(0)} s; changes ${JSON.stringify(up.summary.resourceChanges)}`);
    // Each progress line once (the engine repeats a row's last line with each update), with its resource.
    const seen = new Set<string>();
    for (const line of output.split("\n").filter((l) => /weights-download: |preflight of /.test(l))) {
      const m = /(\S+-weights-fetch|\S+-preflight)\b.*?(weights-download: .*|preflight of .*)$/.exec(line.trim());
      const text = m ? `${m[1]}: ${m[2]}` : line.trim();
      if (!seen.has(text)) console.log(`  ${text.slice(0, 260)}`);
      seen.add(text);
    }
    const requests = readFileSync(path.join(repoRoot, sim.plan.hub.requestLog), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((r) => String(r.t ?? "") >= since && String(r.file ?? "").includes("model-00001"));
    console.log("hub requests for model-00001-of-00002.safetensors:");
    for (const r of requests) console.log(`  ${JSON.stringify(r)}`);
    for (const host of sim.plan.hosts) {
      const marker = await sim.ssh(host.name, `cat ${MODEL_PATH}/.reprobench-weights.json | jq -c '{repo, commit, files: (.files | length)}'`);
      console.log(`${host.name}: ${marker.trim()}`);
    }
    const t2 = Date.now();
    const again = await sim.stack.up({ onOutput: () => undefined });
    console.log(`second up: ${again.summary.result} in ${((Date.now() - t2) / 1000).toFixed(0)} s; changes ${JSON.stringify(again.summary.resourceChanges)}`);
  } finally {
    await sim.cleanup();
    console.log(`cleaned up; total ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack ?? err.message : String(err));
  process.exit(1);
});
