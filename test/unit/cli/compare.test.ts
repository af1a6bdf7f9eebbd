// `bin/reprobench compare` as a subprocess on Node alone (no Pulumi toolchain): --json on two generated
// jobs with --html, a refusal and a missing dir; the other usage errors and a multi-pass side in-process.
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { compare } from "../../../cli/commands/compare";
import { at, tempDir, writeJob } from "../../fixtures/results/build";
import { writeCompareJobs, writeCompareSide } from "../results/compare-fixture";

const REPO = resolve(__dirname, "../../..");
const BIN = join(REPO, "bin/reprobench");
let root: string;
let cache: string;
let a: string;
let b: string;

const reprobench = (args: string[]) =>
  spawnSync("bash", [BIN, ...args], { cwd: root, env: { HOME: process.env.HOME ?? "/root", PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, REPROBENCH_CACHE: cache }, encoding: "utf8", timeout: 120_000 });

beforeAll(() => {
  root = tempDir("reprobench-compare-cli-");
  cache = join(root, "empty-cache");
  mkdirSync(cache);
  ({ a, b } = writeCompareJobs(join(root, "jobs")));
}, 120_000);
// Two 89 × 5 job trees: removed without blocking the worker, with room for a loaded disk.
afterAll(() => rm(root, { recursive: true, force: true }), 300_000);
afterEach(() => vi.restoreAllMocks());

/** Runs the command in-process; returns its exit code and what it printed. */
async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  vi.spyOn(console, "log").mockImplementation((...x: unknown[]) => void out.push(x.join(" ")));
  vi.spyOn(console, "error").mockImplementation((...x: unknown[]) => void err.push(x.join(" ")));
  const code = await compare.run(args);
  return { code, out: out.join("\n"), err: err.join("\n") };
}

describe("bin/reprobench compare", () => {
  it("--json: tasks, flips, mcnemar and bootstrap; --html writes the page; the toolchain is never started", () => {
    const r = reprobench(["compare", a, b, "--json", "--html", join(root, "out", "compare.html")]);
    expect(r.stderr).not.toContain("[toolchain");
    expect(r.status, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.tasks).toHaveLength(89);
    expect(doc.tasks[0]).toMatchObject({ task: "task-000", a: { outcome: "passed", reward: 1, exception: null }, b: { outcome: "passed", reward: 1, exception: null } });
    expect(doc.flips.passToFail).toHaveLength(4);
    expect(doc.flips.failToPass).toHaveLength(13);
    expect(doc.mcnemar).toMatchObject({ b: 4, c: 13, p: 0.049041748046875 });
    expect(doc.bootstrap).toMatchObject({ level: 0.95, resamples: 10000, seed: 0 });
    expect(doc.bootstrap.diff).toBeCloseTo(4.4 / 89, 12);
    expect(r.stderr).toContain(`wrote ${join(root, "out", "compare.html")}`);
    const html = readFileSync(join(root, "out", "compare.html"), "utf8");
    expect(html).toContain('<canvas id="chart-durations">');
    expect(html.length).toBeGreaterThan(150_000); // Chart.js inlined
    expect(readdirSync(cache)).toEqual([]);
  });

  it("a missing dir: exit 2, naming it", () => {
    const missing = reprobench(["compare", a, join(root, "no-such-job")]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain(`reprobench compare: B: ${join(root, "no-such-job")}: no such directory`);
  });

  it("different task sets: refused (exit 1) naming --allow-different-tasks", () => {
    const fewer = writeCompareSide(join(root, "jobs"), "b", { name: "tb21-6x-without-003", skip: ["task-003"] });
    const refused = reprobench(["compare", a, fewer, "--json"]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain("refused: the runs cover different task sets: 1 task(s) only in A (task-003)");
    expect(refused.stderr).toContain("pass --allow-different-tasks to compare the 88 task(s) both have");
    expect(refused.stdout).toBe("");
  });
});

describe("compare (in-process)", () => {
  it("usage errors exit 2 naming the problem; a dir that is no job exits 1", async () => {
    expect(await run(["compare-only-one-side"])).toMatchObject({ code: 2, err: expect.stringContaining("give two sides, A and B (got 1 argument(s))") });
    expect(await run([a, b, "--pass-threshold", "1.5"])).toMatchObject({ code: 2, err: expect.stringContaining("--pass-threshold: got '1.5'; expected a number in (0, 1]") });
    expect(await run([a, b, "--seed", "1.5"])).toMatchObject({ code: 2, err: expect.stringContaining("--seed: got '1.5'; expected an integer") });
    await expect(run([a, b, "--no-such-option"])).rejects.toThrow(/Unknown option '--no-such-option'/);
    expect(await run([`${a},${a}`, b])).toMatchObject({ code: 2, err: expect.stringContaining(`A: ${a} is given twice`) });
    await expect(run([a, root])).rejects.toThrow(/not a Harbor job dir/);
  });

  it("--allow-different-tasks compares the intersection", async () => {
    const r = await run([a, join(root, "jobs", "tb21-6x-without-003"), "--json", "--allow-different-tasks", "--resamples", "500"]);
    expect(r.code, r.err).toBe(0);
    const doc = JSON.parse(r.out);
    expect(doc.tasks).toHaveLength(88);
    expect(doc.leftOut).toEqual({ onlyA: ["task-003"], onlyB: [] });
  });

  it("a side of several passes (comma-separated): a mop-up pass turns A's infra errors into results", async () => {
    // The mop-up reruns the two infra → pass tasks; their SandboxError slots take the newer passes.
    const mopup = writeJob(join(root, "jobs"), {
      name: "tb21-3x-mopup",
      config: { n_attempts: 5, agent_timeout_multiplier: 3.0 },
      trials: ["task-081", "task-082"].flatMap((task) => [0, 1, 2, 3].map((attempt) => ({ task, attempt, reward: 1, start: at(30 + attempt / 10) }))),
    });
    const r = await run([`${a},${mopup}`, b, "--json", "--resamples", "500"]);
    expect(r.code, r.err).toBe(0);
    const doc = JSON.parse(r.out);
    expect(doc.a.jobs).toEqual(["tb21-3x", "tb21-3x-mopup"]);
    expect(doc.flips.byCause["infra → pass"]).toEqual([]);
    expect(doc.tasks.find((t: { task: string }) => t.task === "task-081").a).toMatchObject({ outcome: "passed", reward: 1 });
    // b = 4, c = 11: p = 2 · (C(15,0) + … + C(15,4)) / 2^15 = 2 · 1941 / 32768.
    expect(doc.mcnemar).toMatchObject({ b: 4, c: 11 });
    expect(doc.mcnemar.p).toBeCloseTo((2 * (1 + 15 + 105 + 455 + 1365)) / 2 ** 15, 12);
    const md = await run([`${a},${mopup}`, b, "--resamples", "500", "--seed", "3"]);
    expect(md.out).toContain("# Run comparison");
    expect(md.out).toContain("500 resamples, seed 3");
  });
});
