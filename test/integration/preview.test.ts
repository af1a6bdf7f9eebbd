// `pulumi preview` of the real-cluster stacks through the real engine and language host, from a
// machine that cannot reach those hosts: nothing may contact a host during preview.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestProject, testProject } from "../helpers/project";

let project: TestProject;
beforeAll(async () => {
  project = await testProject();
});
afterAll(() => project?.cleanup());

describe.each(["prod", "dev"])("pulumi preview --stack %s", (name) => {
  it("plans the whole cluster without contacting any host", async () => {
    const stack = await project.stack(name, `Pulumi.${name}.yaml`);
    const events: string[] = [];
    const result = await stack.preview({ diff: true, onOutput: (o) => events.push(o) });
    const output = events.join("");
    // Two hosts × daemon config, two workers, router, tool bundle, API key, stack — all creates.
    expect(result.changeSummary.create).toBeGreaterThanOrEqual(14);
    expect(result.changeSummary.update ?? 0).toBe(0);
    for (const type of ["DockerDaemonConfig", "SglangWorker", "SglangRouter", "ToolBundle"]) {
      expect(output).toContain(`reprobench:`);
      expect(output).toContain(type);
    }
    // The seed's worker flags appear in the planned worker inputs.
    expect(output).toContain("--max-running-requests");
    expect(output).not.toMatch(/error:/);
  });
});
