// A run stack's own dataset (reprobench:dataset): its keys, the same source rules as harbor.datasetRepo /
// datasetCommit, a directory of its own on the owner's runner (never the owner's datasetDir), and the
// combined config the job is rendered from.
import { copyFileSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RUN_STACK_KEYS, apiBase, checkStackFile, combineWithCluster, defaultRunDatasetDir, parseRunStackConfig, readStackFile, stackIdOfFile, type RunStackConfig } from "../../../components/config";
import { jobConfigObject, runSettings, runSpec } from "../../../components/config/job";
import { REPO } from "./helpers";

const COMMIT = "0123456789abcdef0123456789abcdef01234567";
const GIT = { repo: "http://git.sim/terminal-bench-rehearsal.git", commit: COMMIT, expectedTaskCount: 89 };

/** The run stack's own keys, as Pulumi.rehearsal.yaml would set them. */
function runStack(dataset: unknown): Record<string, unknown> {
  return { cluster: "local", run: { enabled: true, jobNamePrefix: "sim-rehearsal" }, dataset };
}

function problemsOf(raw: Record<string, unknown>): Record<string, string> {
  const result = parseRunStackConfig(raw);
  return result.ok ? {} : Object.fromEntries(result.problems.map((p) => [p.key, p.message]));
}

function parsed(raw: Record<string, unknown>): RunStackConfig {
  const result = parseRunStackConfig(raw);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.config;
}

/** The run stack combined with Pulumi.local.yaml (the owner's stack file), as stack reprobench.rehearsal. */
function combine(raw: Record<string, unknown>, owner: Record<string, unknown> = readStackFile(join(REPO, "Pulumi.local.yaml"))) {
  return combineWithCluster(owner, parsed(raw), raw, "reprobench.rehearsal");
}

describe("reprobench:dataset of a run stack", () => {
  it("is a run stack's key, with tasksSubdir \"\" and no dir by default", () => {
    expect(RUN_STACK_KEYS).toContain("dataset");
    expect(parsed(runStack(GIT)).dataset).toEqual({ ...GIT, tasksSubdir: "" });
    expect(parsed(runStack({ ...GIT, tasksSubdir: "tasks", dir: "/var/lib/reprobench/datasets/tb21" })).dataset).toMatchObject({ tasksSubdir: "tasks", dir: "/var/lib/reprobench/datasets/tb21" });
    // Without it the run stack is what it was.
    expect(parsed({ cluster: "local", run: { enabled: true } }).dataset).toBeUndefined();
  });

  it("refuses a git dataset without its commit, with the rule harbor.datasetCommit has", () => {
    const { commit: _none, ...noCommit } = GIT;
    expect(problemsOf(runStack(noCommit))).toEqual({ "reprobench:dataset.commit": "missing; expected the 40-character commit to pin the git dataset to" });
  });

  it("refuses a commit that is not a full commit id", () => {
    expect(problemsOf(runStack({ ...GIT, commit: "7131e43" }))).toEqual({ "reprobench:dataset.commit": 'got "7131e43"; expected a full 40-character lower-case git commit id' });
    expect(problemsOf(runStack({ ...GIT, commit: COMMIT.toUpperCase() }))["reprobench:dataset.commit"]).toMatch(/expected a full 40-character lower-case git commit id/);
  });

  it("needs the task count, a positive integer", () => {
    const { expectedTaskCount: _none, ...noCount } = GIT;
    expect(problemsOf(runStack(noCount))).toEqual({ "reprobench:dataset.expectedTaskCount": "missing; expected a number" });
    expect(Object.keys(problemsOf(runStack({ ...GIT, expectedTaskCount: 0 })))).toEqual(["reprobench:dataset.expectedTaskCount"]);
    expect(Object.keys(problemsOf(runStack({ ...GIT, expectedTaskCount: 8.5 })))).toEqual(["reprobench:dataset.expectedTaskCount"]);
  });

  it("takes a project directory as harbor.datasetRepo does: relative, without a commit", () => {
    expect(problemsOf(runStack({ repo: "sim/dataset", expectedTaskCount: 3 }))).toEqual({});
    expect(problemsOf(runStack({ repo: "sim/dataset", commit: COMMIT, expectedTaskCount: 3 }))).toEqual({
      "reprobench:dataset.commit": `got "${COMMIT}"; expected null: dataset.repo "sim/dataset" is a project directory, not a git URL`,
    });
    expect(problemsOf(runStack({ repo: "../elsewhere", expectedTaskCount: 3 }))).toEqual({
      "reprobench:dataset.repo": `got "../elsewhere"; expected a git URL or a directory inside this project (relative, no '..')`,
    });
  });

  it("names an unknown key with the keys it allows, and a dir that is no directory of its own", () => {
    expect(problemsOf(runStack({ ...GIT, comit: COMMIT }))["reprobench:dataset.comit"]).toBe(
      "unknown key (did you mean 'commit'?); expected one of: repo, commit, tasksSubdir, expectedTaskCount, dir",
    );
    expect(problemsOf(runStack({ ...GIT, dir: "/datasets" }))["reprobench:dataset.dir"]).toMatch(/at least two levels deep/);
    expect(Object.keys(problemsOf(runStack({ ...GIT, dir: "relative/dir" })))).toEqual(["reprobench:dataset.dir"]);
  });
});

describe("a run stack's own dataset on the owner's cluster", () => {
  const owner = readStackFile(join(REPO, "Pulumi.local.yaml"));

  it("lives in a directory of this stack's own by default, beside the owner's datasetDir", () => {
    expect(defaultRunDatasetDir("/var/lib/reprobench/terminal-bench-2-1", "reprobench.rehearsal")).toBe("/var/lib/reprobench/datasets/reprobench.rehearsal");
    const result = combine(runStack(GIT));
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
    expect(result.config.harbor).toMatchObject({
      datasetRepo: GIT.repo, datasetCommit: COMMIT, datasetDir: "/var/lib/reprobench/datasets/reprobench.rehearsal", datasetTasksSubdir: "", expectedTaskCount: 89,
    });
  });

  it("renders the job from it; everything else of harbor.* stays the owner's", () => {
    const mine = combine(runStack({ ...GIT, tasksSubdir: "tasks", dir: "/var/lib/reprobench/datasets/rehearsal" }));
    const theirs = combineWithCluster(owner, parsed({ cluster: "local", run: { enabled: true, jobNamePrefix: "sim-rehearsal" } }), { run: { enabled: true, jobNamePrefix: "sim-rehearsal" } }, "reprobench.rehearsal");
    if (!mine.ok || !theirs.ok) throw new Error("expected both to combine");
    expect(theirs.config.harbor.datasetDir).toBe("/var/lib/reprobench/sim-dataset");
    const { datasetRepo: _r, datasetCommit: _c, datasetDir: _d, datasetTasksSubdir: _t, expectedTaskCount: _n, ...rest } = mine.config.harbor;
    expect(theirs.config.harbor).toMatchObject(rest);
    expect(jobConfigObject(mine.config, apiBase(mine.config)).datasets).toEqual([{ path: "/var/lib/reprobench/datasets/rehearsal/tasks" }]);
    const settings = runSettings(mine.config, apiBase(mine.config), "reprobench.rehearsal");
    expect(settings.expectedTaskCount).toBe(89);
    // Another dataset is another job.
    expect(runSpec(mine.config, apiBase(mine.config))).not.toBe(runSpec(theirs.config, apiBase(theirs.config)));
  });

  it("refuses the owner's datasetDir itself, naming both keys and directories", () => {
    const result = combine(runStack({ ...GIT, dir: "/var/lib/reprobench/sim-dataset" }));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toEqual([{
      key: "reprobench:dataset.dir",
      message: `got "/var/lib/reprobench/sim-dataset": it is the owner's harbor.datasetDir "/var/lib/reprobench/sim-dataset" (stack 'local'), which this stack's dataset step would replace; expected a directory of this stack's own`,
    }]);
  });

  it.each([
    ["/var/lib/reprobench/sim-dataset/mine", /it is inside the owner's harbor.datasetDir "\/var\/lib\/reprobench\/sim-dataset" \(stack 'local'\)/],
    ["/var/lib/reprobench", /it holds the owner's harbor.datasetDir "\/var\/lib\/reprobench\/sim-dataset"/],
    ["/var/lib/reprobench/sim-dataset.clone", /it is \/var\/lib\/reprobench\/sim-dataset.clone, the working copy of the owner's harbor.datasetDir/],
    ["/var/lib/reprobench/jobs/tb", /it is inside the owner's harbor.jobsDir "\/var\/lib\/reprobench\/jobs"/],
    ["/var/lib/reprobench/.venv-harbor-0.21.0", /it is the owner's harbor.venv/],
  ])("refuses %s", (dir, message) => {
    const result = combine(runStack({ ...GIT, dir }));
    expect(result.ok ? [] : result.problems.map((p) => p.key)).toEqual(["reprobench:dataset.dir"]);
    expect(result.ok ? "" : result.problems[0].message).toMatch(message);
  });

  it("refuses a default that would collide, asking for dataset.dir", () => {
    const harbor = { ...(owner.harbor as Record<string, unknown>), datasetDir: "/var/lib/reprobench/datasets" };
    const result = combine(runStack(GIT), { ...owner, harbor });
    expect(result.ok ? [] : result.problems).toEqual([{
      key: "reprobench:dataset.dir",
      message: expect.stringMatching(/^missing, and its default "\/var\/lib\/reprobench\/datasets\/reprobench.rehearsal" cannot be used: it is inside the owner's harbor.datasetDir "\/var\/lib\/reprobench\/datasets" .*\(set reprobench:dataset.dir\)$/),
    }]);
  });

  it("is checked by config validate against the owner's stack file, as stack <project>.<file's stack>", () => {
    const dir = mkdtempSync(join(tmpdir(), "reprobench-run-dataset-"));
    copyFileSync(join(REPO, "Pulumi.local.yaml"), join(dir, "Pulumi.local.yaml"));
    copyFileSync(join(REPO, "Pulumi.yaml"), join(dir, "Pulumi.yaml"));
    const file = join(dir, "Pulumi.rehearsal.yaml");
    const yaml = (extra: string) =>
      `config:\n  reprobench:cluster: local\n  reprobench:run:\n    enabled: true\n  reprobench:dataset:\n    repo: http://git.sim/terminal-bench-rehearsal.git\n    commit: "${COMMIT}"\n    expectedTaskCount: 89\n${extra}`;
    writeFileSync(file, yaml(""));
    expect(stackIdOfFile(file)).toBe("reprobench.rehearsal");
    const check = checkStackFile(file);
    expect(check.problems).toEqual([]);
    expect(check.config?.harbor.datasetDir).toBe("/var/lib/reprobench/datasets/reprobench.rehearsal");
    writeFileSync(file, yaml("    dir: /var/lib/reprobench/sim-dataset\n"));
    expect(checkStackFile(file).problems.map((p) => p.key)).toEqual(["reprobench:dataset.dir"]);
    writeFileSync(file, yaml("    commit: null\n").replace(`    commit: "${COMMIT}"\n`, ""));
    expect(checkStackFile(file).problems.map((p) => p.key)).toEqual(["reprobench:dataset.commit"]);
  });
});
