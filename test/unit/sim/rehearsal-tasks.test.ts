// sim/rehearsal/tasks.ts: the rehearsal dataset's mix, determinism, timeouts, ground truth and verdicts.
import { describe, expect, it } from "vitest";
import { parseOverrides } from "../../../results/overrides";
import {
  apportion,
  behaviourCounts,
  groundTruth,
  MAX_REHEARSAL_TASKS,
  REHEARSAL_BEHAVIOURS,
  rehearsalMarker,
  rehearsalTaskName,
  rehearsalTasks,
  SEED000_MIX,
  SEED000_MULTIPLIERS,
  TIMEOUT_SCALE,
  verdictsYaml,
} from "../../../sim/rehearsal/tasks";

const countOf = (tasks: ReturnType<typeof rehearsalTasks>) => Object.fromEntries(REHEARSAL_BEHAVIOURS.map((b) => [b, tasks.filter((t) => t.behaviour === b).length]));

describe("rehearsalTasks", () => {
  it("has seed 000's mix for 89 tasks", () => {
    const tasks = rehearsalTasks({});
    expect(tasks).toHaveLength(89);
    expect(countOf(tasks)).toEqual({ solves: 55, fails: 14, "agent-timeout": 8, "agent-timeout-solved": 4, "verifier-timeout": 2, "kills-tmux": 1, overthinks: 2, downloads: 3 });
    expect(Object.values(SEED000_MIX).reduce((a, b) => a + b, 0)).toBe(89);
  });

  it("keeps every behaviour from 8 tasks up, proportional otherwise", () => {
    expect(Object.values(countOf(rehearsalTasks({ count: 12 }))).every((n) => n >= 1)).toBe(true);
    expect(behaviourCounts(12)).toEqual({ solves: 4, fails: 2, "agent-timeout": 1, "agent-timeout-solved": 1, "verifier-timeout": 1, "kills-tmux": 1, overthinks: 1, downloads: 1 });
    for (let n = 1; n <= 200; n++) {
      const counts = behaviourCounts(n);
      expect(Object.values(counts).reduce((a, b) => a + b, 0), `count ${n}`).toBe(n);
      if (n >= 8) expect(Object.values(counts).every((c) => c >= 1), `count ${n}`).toBe(true);
    }
    expect(behaviourCounts(3)).toEqual({ solves: 2, fails: 1, "agent-timeout": 0, "agent-timeout-solved": 0, "verifier-timeout": 0, "kills-tmux": 0, overthinks: 0, downloads: 0 });
    expect(apportion(10, [["a", 1], ["b", 1], ["c", 1]])).toEqual(new Map([["a", 4], ["b", 3], ["c", 3]]));
  });

  it("is deterministic by seed, and the seed shuffles behaviours over the sorted names", () => {
    const a = rehearsalTasks({ count: 89, seed: 7 });
    expect(rehearsalTasks({ count: 89, seed: 7 })).toEqual(a);
    const b = rehearsalTasks({ count: 89, seed: 8 });
    expect(b.map((t) => t.name)).toEqual(a.map((t) => t.name));
    expect(b.map((t) => t.behaviour)).not.toEqual(a.map((t) => t.behaviour));
    expect(a.map((t) => t.name)).toEqual([...a.map((t) => t.name)].sort());
    // Spread: the 34 tasks that are not `solves` are not bunched in one part of the alphabet.
    const others = a.flatMap((t, i) => (t.behaviour === "solves" ? [] : [i]));
    expect(Math.min(...others)).toBeLessThan(20);
    expect(Math.max(...others)).toBeGreaterThan(69);
  });

  it("names tasks like Terminal-Bench directories: unique lowercase words joined by '-'", () => {
    const names = Array.from({ length: MAX_REHEARSAL_TASKS }, (_, i) => rehearsalTaskName(i));
    expect(new Set(names).size).toBe(MAX_REHEARSAL_TASKS);
    for (const n of names) expect(n).toMatch(/^[a-z]+(-[a-z]+)+$/);
    expect(["hello-file", "sum-numbers", "sha-preimage"].some((n) => names.includes(n))).toBe(false);
    expect(() => rehearsalTaskName(MAX_REHEARSAL_TASKS)).toThrow(/out of range/);
  });

  it("gives every task its own input, a non-zero first number and the marker of its behaviour", () => {
    const tasks = rehearsalTasks({ count: 89, seed: 3 });
    expect(new Set(tasks.map((t) => t.input.join(","))).size).toBe(89);
    for (const t of tasks) {
      expect(t.input.every((n) => n !== 0)).toBe(true);
      expect(t.answer).toBe(t.input.reduce((a, b) => a + b, 0));
      expect(t.instruction.trimEnd().endsWith(rehearsalMarker(t.behaviour))).toBe(true);
      expect(t).toMatchObject({ cpus: 1, memory_mb: 512 });
    }
    // "agent-timeout." must not be found inside "agent-timeout-solved.".
    expect(rehearsalMarker("agent-timeout-solved").includes(rehearsalMarker("agent-timeout"))).toBe(false);
  });

  it("scales Terminal-Bench 2.1's timeout histogram: agent tiers, verifier = agent but four exceptions, timeouts on 900 s", () => {
    const tasks = rehearsalTasks({ count: 89, seed: 0 });
    const histogram = (values: number[]) => Object.fromEntries([...new Set(values)].sort((a, b) => a - b).map((v) => [v, values.filter((x) => x === v).length]));
    // The real histogram (issue 33), in task.toml seconds.
    expect(histogram(tasks.map((t) => t.unscaled.agentTimeoutSec))).toEqual({ 600: 1, 750: 1, 900: 48, 1200: 5, 1800: 17, 2400: 2, 3600: 13, 7200: 1, 12000: 1 });
    for (const t of tasks) {
      expect(t.agentTimeoutSec).toBeCloseTo(t.unscaled.agentTimeoutSec * TIMEOUT_SCALE, 6);
      expect(t.verifierTimeoutSec).toBeCloseTo(t.unscaled.verifierTimeoutSec * TIMEOUT_SCALE, 6);
    }
    expect(Math.min(...tasks.map((t) => t.agentTimeoutSec))).toBe(10);
    // Verifier timeouts equal the agent's but in exactly the four exceptions' pairs.
    const differing = tasks.filter((t) => t.unscaled.verifierTimeoutSec !== t.unscaled.agentTimeoutSec).map((t) => [t.unscaled.agentTimeoutSec, t.unscaled.verifierTimeoutSec]);
    expect(differing.sort((a, b) => a[0] - b[0] || a[1] - b[1])).toEqual([
      [750, 360],
      [900, 1800],
      [1800, 900],
      [3600, 1200],
    ]);
    const timingOut = tasks.filter((t) => t.behaviour.startsWith("agent-timeout")).map((t) => t.agentTimeoutSec).sort((x, y) => x - y);
    // All on 900 s (15 s scaled) but one at twice it (seed 000's dna-assembly).
    expect(timingOut).toEqual([...Array<number>(11).fill(15), 30]);
    // A verifier that times out does so on a 900 s budget, the agent's.
    expect(tasks.filter((t) => t.behaviour === "verifier-timeout").map((t) => [t.agentTimeoutSec, t.verifierTimeoutSec])).toEqual([
      [15, 15],
      [15, 15],
    ]);
    // The overthinking tasks on 1800 s (30 s scaled), whose ×3 ends before their answer and ×6 holds them
    // (the 3× vs 6× study's flip), also in a small dataset.
    expect(tasks.filter((t) => t.behaviour === "overthinks").map((t) => t.agentTimeoutSec)).toEqual([30, 30]);
    for (const count of [8, 12, 20]) expect(rehearsalTasks({ count, seed: 0 }).filter((t) => t.behaviour === "overthinks").map((t) => t.agentTimeoutSec), `${count} tasks`).toEqual([30]);
    // The longest budget a timing-out trial waits out under seed 000's 6x.
    expect(Math.max(...timingOut) * SEED000_MULTIPLIERS.agentTimeout).toBe(180);
  });

  it("keeps the timeout behaviours on short tiers in a small dataset", () => {
    for (const count of [8, 12, 20]) {
      const tasks = rehearsalTasks({ count, seed: 0 });
      for (const t of tasks.filter((x) => x.behaviour.startsWith("agent-timeout") || x.behaviour === "verifier-timeout")) expect(t.unscaled.agentTimeoutSec, `${count}: ${t.name}`).toBeLessThanOrEqual(1800);
      for (const t of tasks) expect([t.unscaled.agentTimeoutSec, 360, 900, 1200, 1800]).toContain(t.unscaled.verifierTimeoutSec);
    }
  });

  it("records the expected outcome and seed 000's verdicts", () => {
    const tasks = rehearsalTasks({ count: 89, seed: 0 });
    const of = (b: string) => tasks.filter((t) => t.behaviour === b);
    expect(of("agent-timeout")[0].expected).toEqual({ reward: 0, exception: "AgentTimeoutError" });
    expect(of("agent-timeout-solved")[0].expected).toEqual({ reward: 1, exception: "AgentTimeoutError" });
    expect(of("kills-tmux")[0]).toMatchObject({ expected: { reward: null, exception: "RuntimeError" }, verdict: { verdict: "failed" } });
    expect(of("verifier-timeout").map((t) => [t.expected.exception, t.verdict?.verdict])).toEqual([
      ["VerifierTimeoutError", "passed"],
      ["VerifierTimeoutError", "failed"],
    ]);
    for (const t of of("downloads")) {
      expect(t.expected).toEqual({ reward: 1, exception: null });
      expect(t.verdict).toBeUndefined();
      expect(t.infraVerdict?.verdict).toBe("passed");
      expect(t.downloadUrl).toBe(`http://pypi.sim/rehearsal/${t.name}.txt`);
    }
    expect(tasks.filter((t) => t.verdict).length).toBe(3);
  });

  it("rejects bad counts and seeds", () => {
    expect(() => rehearsalTasks({ count: 0 })).toThrow(/count: got 0; expected an integer from 1 to 400/);
    expect(() => rehearsalTasks({ count: 2.5 })).toThrow(/count/);
    expect(() => rehearsalTasks({ seed: -1 })).toThrow(/seed: got -1/);
  });
});

describe("groundTruth", () => {
  it("totals the run in the audit's words", () => {
    const tasks = rehearsalTasks({});
    const truth = groundTruth(tasks, { dataset: "terminal-bench-rehearsal", commit: "c0ffee", seed: 0 });
    expect(truth).toMatchObject({ dataset: "terminal-bench-rehearsal", commit: "c0ffee", taskCount: 89, timeouts: { scale: 1 / 60, multipliers: { agentTimeout: 6, agentSetupTimeout: 5, verifierTimeout: 1 } } });
    expect(truth.totals.errors).toEqual({ AgentTimeoutError: 12, VerifierTimeoutError: 2, RuntimeError: 1 });
    // 55 + 4 + 2 + 3 reward 1; 14 + 8 reward 0; 3 without a reward.
    expect(truth.totals.raw).toMatchObject({ nTasks: 89, passed: 64, failed: 22, errored: 3, sumReward: 64 });
    // Corrected: the first verifier timeout passes, the second and kills-tmux fail.
    expect(truth.totals.corrected).toMatchObject({ passed: 65, failed: 24, errored: 0 });
    expect(truth.totals.taxonomy).toEqual(
      expect.arrayContaining([
        { category: "task_failed", count: 14 },
        { category: "agent_timeout_with_reward", count: 12 },
        { category: "verifier_timeout", count: 2 },
        { category: "unknown", count: 1 },
      ]),
    );
    const kill = truth.tasks.find((t) => t.behaviour === "kills-tmux")!;
    expect(kill).toMatchObject({ outcome: "errored", category: "unknown", scored: true, verdict: { verdict: "failed" } });
    const dl = truth.tasks.find((t) => t.behaviour === "downloads")!;
    expect(dl).toMatchObject({ outcome: "passed", underProxyFault: { reward: 0, outcome: "failed", category: "task_failed", verdict: { verdict: "passed" } } });
    const timeout = truth.tasks.find((t) => t.behaviour === "agent-timeout")!;
    expect(timeout.agentBudgetSec).toBe(timeout.agentTimeoutSec * 6);
    expect(JSON.parse(JSON.stringify(truth))).toEqual(truth);
  });
});

describe("verdictsYaml", () => {
  const tasks = rehearsalTasks({ count: 89, seed: 0 });
  const downloads = tasks.filter((t) => t.behaviour === "downloads").map((t) => t.name);

  it("is an overrides file parseOverrides accepts: the static verdicts, and only the downloads a fault hit", () => {
    const none = parseOverrides(verdictsYaml(tasks, []), "verdicts.yaml");
    expect(none.map((o) => o.verdict).sort()).toEqual(["failed", "failed", "passed"]);
    const hit = parseOverrides(verdictsYaml(tasks, downloads.slice(0, 2)), "verdicts.yaml");
    expect(hit).toHaveLength(5);
    expect(hit.filter((o) => downloads.includes(o.task)).map((o) => [o.task, o.verdict])).toEqual(downloads.slice(0, 2).map((d) => [d, "passed"]));
    for (const o of hit) {
      expect(o.reason.length).toBeGreaterThan(10);
      expect(o.evidence.length).toBe(1);
    }
  });

  it("refuses names that are no task or have no verdict for a fault", () => {
    expect(() => verdictsYaml(tasks, ["no-such-task"])).toThrow(/'no-such-task' is not a task/);
    const solves = tasks.find((t) => t.behaviour === "solves")!.name;
    expect(() => verdictsYaml(tasks, [solves])).toThrow(/behaviour solves\) has no verdict for a proxy fault/);
  });
});
