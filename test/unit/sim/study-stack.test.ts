// The 3× vs 6× study's stack files (test/helpers/study.ts): the tracked dev and prod run settings on the
// sim's cluster and the rehearsal dataset, differing in the agent-timeout multiplier only.
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { studyStackConfig } from "../../helpers/study";
import { repoRoot } from "../../helpers/project";

const dataset = { repoUrl: "http://git.sim/terminal-bench-rehearsal.git", commit: "a".repeat(40), taskCount: 12 };
const side = (file: string) => studyStackConfig(fs.readFileSync(path.join(repoRoot, file), "utf8"), dataset, { trials: 4, agents: 3, jobNamePrefix: `study-${file}` });
const runOf = (doc: ReturnType<typeof side>) => doc.config["reprobench:run"] as Record<string, unknown>;

describe("study stack files", () => {
  it("dev runs at agent timeout ×3 and prod at ×6, every task of the published dataset, on local, waiting for the end", () => {
    const dev = side("Pulumi.dev.yaml");
    const prod = side("Pulumi.prod.yaml");
    expect(runOf(dev).agentTimeoutMultiplier).toBe(3);
    expect(runOf(prod).agentTimeoutMultiplier).toBe(6);
    for (const doc of [dev, prod]) {
      expect(doc.config["reprobench:cluster"]).toBe("local");
      expect(doc.config["reprobench:dataset"]).toEqual({ repo: dataset.repoUrl, commit: dataset.commit, tasksSubdir: "", expectedTaskCount: 12 });
      expect(runOf(doc).taskFilter).toBeUndefined();
      expect(runOf(doc)).toMatchObject({ enabled: true, waitForCompletion: true, nConcurrentTrials: 4, nConcurrentAgents: 3 });
    }
  });

  it("the two sides differ in the agent-timeout multiplier and the job name only", () => {
    const { agentTimeoutMultiplier: a, jobNamePrefix: ja, ...dev } = runOf(side("Pulumi.dev.yaml"));
    const { agentTimeoutMultiplier: b, jobNamePrefix: jb, ...prod } = runOf(side("Pulumi.prod.yaml"));
    expect(a).not.toBe(b);
    expect(ja).not.toBe(jb);
    expect(dev).toEqual(prod);
  });

  it("refuses a stack file without a multiplier", () => {
    expect(() => studyStackConfig("config:\n  reprobench:run:\n    enabled: true\n", dataset, { trials: 1, agents: 1, jobNamePrefix: "x" })).toThrow(/no reprobench:run.agentTimeoutMultiplier/);
  });
});
