// Pulumi.rehearsal.yaml pins the commit `reprobench sim rehearsal` makes, and is a valid run stack.
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { rehearsalCommit } from "../../../sim/rehearsal/prepare";
import { SEED000_TASK_COUNT } from "../../../sim/rehearsal/tasks";

const file = path.join(__dirname, "../../../Pulumi.rehearsal.yaml");

describe("Pulumi.rehearsal.yaml", () => {
  it("pins the dataset commit of 89 tasks at seed 0, with seed 000's concurrency and multipliers", async () => {
    const config = (YAML.parse(readFileSync(file, "utf8")) as { config: Record<string, Record<string, unknown>> }).config;
    expect(config["reprobench:dataset"]).toMatchObject({ commit: await rehearsalCommit(SEED000_TASK_COUNT, 0), expectedTaskCount: SEED000_TASK_COUNT });
    expect(config["reprobench:run"]).toMatchObject({ nConcurrentTrials: 25, nConcurrentAgents: 20, agentTimeoutMultiplier: 6, agentSetupTimeoutMultiplier: 5 });
  });
});
