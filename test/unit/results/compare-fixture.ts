// Two Harbor 0.21 jobs of the same 89 tasks × 5 attempts (test/fixtures/results/build.ts writeJob), a
// 3× run (A) and a 6× run (B), with known flips of every cause and infra errors on both sides. The plan
// below is the ground truth the compare tests hold the output against.
import * as fs from "node:fs";
import * as path from "node:path";
import { at, writeJob, type TrialSpec } from "../../fixtures/results/build";

/** One attempt: a reward (null = none) and an exception. */
type Attempt = { reward: number | null; exception?: string };
const P: Attempt = { reward: 1 };
const F: Attempt = { reward: 0 };
const T: Attempt = { reward: 0, exception: "AgentTimeoutError" };
const I: Attempt = { reward: null, exception: "SandboxError" }; // infra: left out of the pass rate

interface TaskPlan {
  group: string;
  a: Attempt[];
  b: Attempt[];
}

const times = <X>(n: number, x: X): X[] => Array<X>(n).fill(x);

/** What each task's five attempts end with in A and in B, and which flip group that is. */
export function comparePlan(): Map<string, TaskPlan> {
  const groups: [string, number, Attempt[], Attempt[]][] = [
    ["same: pass", 50, times(5, P), times(5, P)],
    ["same: fail", 20, times(5, F), times(5, F)],
    // 3× ran out of time where 6× finished: mean 0.2 → 0.8.
    ["timeout → pass", 8, [T, T, T, T, P], [P, P, P, P, T]],
    ["fail → pass", 3, [F, F, F, P, P], [P, P, P, F, F]],
    ["infra → pass", 2, [I, I, I, I, P], times(5, P)],
    ["pass → fail", 2, times(5, P), [P, F, F, F, F]],
    ["pass → timeout", 1, [P, P, P, P, F], times(5, T)],
    ["pass → infra", 1, times(5, P), [I, I, I, P, P]],
    // Moves without a flip: 0.6 → 0.8, one infra error in B.
    ["same: pass (moved)", 2, [P, P, P, F, I], [P, P, P, P, I]],
  ];
  const plan = new Map<string, TaskPlan>();
  let i = 0;
  for (const [group, n, a, b] of groups) for (let k = 0; k < n; k++) plan.set(`task-${String(i++).padStart(3, "0")}`, { group, a, b });
  if (plan.size !== 89) throw new Error(`plan has ${plan.size} tasks`);
  return plan;
}

function trials(plan: Map<string, TaskPlan>, side: "a" | "b", multiplier: number, skip: ReadonlySet<string>): TrialSpec[] {
  const out: TrialSpec[] = [];
  let n = 0;
  for (const [task, p] of plan) {
    if (skip.has(task)) continue;
    p[side].forEach((x, attempt) => {
      // Timeouts run their whole budget (900 s × multiplier); the rest take 8–20 minutes.
      const durationSec = x.exception === "AgentTimeoutError" ? 900 * multiplier + 120 : 480 + ((n * 37) % 720);
      out.push({
        task,
        attempt,
        reward: x.reward,
        exception: x.exception,
        start: at((n++ * 45) / 3600),
        durationSec,
        tokens: { input: 50_000 + attempt * 1000, cache: 10_000, output: 2_000 + (x.reward === 1 ? 500 : 0) },
      });
    });
  }
  return out;
}

const manifest = (gpus: number) => ({
  schema: "reprobench-manifest/v1",
  harbor: { version: "0.21.0" },
  dataset: { identity: "5f1c0ffee5f1c0ffee5f1c0ffee5f1c0ffee5f1c", count: 89 },
  serverImages: { "worker-a": "lmsysorg/sglang@sha256:aaaa", "worker-b": "lmsysorg/sglang@sha256:aaaa" },
  images: { "tb/task-000:latest": "tb/task-000@sha256:0000" },
  config: {
    hosts: [
      { name: "worker-a", roles: ["worker"], gpus },
      { name: "worker-b", roles: ["worker", "router", "runner"], gpus },
    ],
  },
});

/** Writes one side: A (3×, "tb21-3x") or B (6×, "tb21-6x"), with a run manifest beside it; `skip` drops tasks. */
export function writeCompareSide(jobsDir: string, side: "a" | "b", o: { name?: string; skip?: string[] } = {}): string {
  const multiplier = side === "a" ? 3 : 6;
  const dir = writeJob(jobsDir, {
    name: o.name ?? `tb21-${multiplier}x`,
    config: { n_attempts: 5, agent_timeout_multiplier: multiplier },
    trials: trials(comparePlan(), side, multiplier, new Set(o.skip ?? [])),
  });
  fs.writeFileSync(`${dir}.reprobench-manifest.json`, JSON.stringify(manifest(8)));
  return path.resolve(dir);
}

/** Writes A (3×) and B (6×) under `jobsDir`. */
export function writeCompareJobs(jobsDir: string): { a: string; b: string } {
  return { a: writeCompareSide(jobsDir, "a"), b: writeCompareSide(jobsDir, "b") };
}
