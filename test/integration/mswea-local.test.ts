// Harbor's mini-swe-agent agent end to end on this machine's dockerd (sim/mswea-local.sh): the REAL Harbor
// 0.21 installs mini-swe-agent 2.4.6 offline inside each sim task container (uv + the agent wheelhouse,
// bind-mounted; task-base carries the tools Harbor checks for), and the agent solves sim/dataset by tool
// calls against the SGLang double. Rewards must equal each task's expected_reward.
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildImages, imageSpecs, resolveImages } from "../../sim/images";
import { run } from "../../sim/exec";
import { repoRoot } from "../helpers/project";

const workDir = mkdtempSync(path.join(tmpdir(), "mswea-local-"));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

beforeAll(async () => {
  // The script builds task images FROM the debootstrap base and borrows `docker compose` v2 from the sim
  // host image when this machine has none: make sure both exist (a cache hit when `sim up` ran before).
  const wanted = new Set(["debian-base", "sim-host"]);
  const images = resolveImages(imageSpecs(repoRoot, []).filter((spec) => wanted.has(spec.name)), repoRoot);
  await buildImages(images, repoRoot, (m) => console.log(m));
});

describe("mini-swe-agent on sim/dataset (real Harbor, local dockerd, offline install)", () => {
  let output = "";
  let status: number | null = null;
  beforeAll(async () => {
    // Asynchronously: a synchronous child would block the test worker, whose RPC to vitest then times out.
    const result = await run(["bash", path.join(repoRoot, "sim/mswea-local.sh")], {
      env: { ...process.env, WORK_DIR: workDir },
      timeoutMs: 15 * 60_000,
    });
    output = `${result.stdout}${result.stderr}`;
    status = result.code;
    console.log(output.split("\n").filter((l) => l.startsWith("mswea-local:") || l.includes("reward")).join("\n"));
  });

  it("scores reward 1 on hello-file and sum-numbers and 0 on sha-preimage", () => {
    expect(output).toMatch(/^hello-file: reward 1\.0 \(expected 1\.0\) OK$/m);
    expect(output).toMatch(/^sum-numbers: reward 1\.0 \(expected 1\.0\) OK$/m);
    expect(output).toMatch(/^sha-preimage: reward 0\.0 \(expected 0\.0\) OK$/m);
    expect(status, output.slice(-3000)).toBe(0);
  });

  it("each trial ran mini-swe-agent 2.4.6 by tool calls and ended by submitting", () => {
    const job = path.join(workDir, "jobs", "mswea-local");
    const trials = readdirSync(job, { withFileTypes: true }).filter((d) => d.isDirectory());
    expect(trials.map((t) => t.name.replace(/__.*$/, "")).sort()).toEqual(["hello-file", "sha-preimage", "sum-numbers"]);
    for (const trial of trials) {
      const file = path.join(job, trial.name, "agent", "mini-swe-agent.trajectory.json");
      expect(existsSync(file), file).toBe(true);
      const trajectory = JSON.parse(readFileSync(file, "utf-8")) as {
        info: { mini_version: string; exit_status: string; model_stats: { api_calls: number } };
        messages: Array<{ role?: string; tool_calls?: Array<{ function: { name: string } }> | null }>;
      };
      expect(trajectory.info.mini_version).toBe("2.4.6");
      expect(trajectory.info.exit_status).toBe("Submitted");
      expect(trajectory.info.model_stats.api_calls).toBe(2);
      const calls = trajectory.messages.filter((m) => m.role === "assistant").flatMap((m) => m.tool_calls ?? []);
      expect(calls.map((c) => c.function.name)).toEqual(["bash", "bash"]);
    }
  });
});
