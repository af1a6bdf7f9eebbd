// harbor-resolve-dataset.sh (run by harbor-preflight.sh): Harbor's own loader, asked before launch how many
// tasks the job's dataset and task filter resolve to. Run here against temp copies of sim/dataset, with the
// stub Harbor always and with the real harbor==0.21.0 venv when this machine has one (harbor-venv.ts).
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { preflightScriptEnv } from "../../../components/benchmark-run";
import { runPaths } from "../../../components/run-config";
import { apiBase } from "../../../components/config/derive";
import { jobConfigObject, runSettings } from "../../../components/config/job";
import { realHarborVenv, stubHarborVenv } from "./harbor-venv";
import { REPO, seedConfig } from "./helpers";

const SCRIPTS = path.join(REPO, "components/scripts");
const HARBOR_VERSION = seedConfig().harbor.version;
const REAL = realHarborVenv(HARBOR_VERSION);

let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});
function tempDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), "reprobench-resolve-"));
  dirs.push(d);
  return d;
}
/** A copy of sim/dataset (hello-file, sha-preimage, sum-numbers, README.md) under dir. */
function dataset(dir: string, name = "ds"): string {
  const ds = path.join(dir, name);
  execFileSync("cp", ["-a", path.join(REPO, "sim/dataset"), ds]);
  return ds;
}

const venvs: [string, (dir: string) => string][] = [["stub Harbor", stubHarborVenv]];
if (REAL) venvs.push([`real harbor ${HARBOR_VERSION} (${REAL})`, () => REAL]);

describe.each(venvs)("harbor-resolve-dataset.sh with %s", (_name, makeVenv) => {
  function resolve(dir: string, datasets: Record<string, unknown>[], expected = 3, extra: Record<string, unknown> = {}) {
    const config = path.join(dir, "resolved-config.json");
    writeFileSync(config, JSON.stringify({ ...extra, datasets }));
    const env = { VENV: makeVenv(dir), RESOLVED_CONFIG: config, EXPECTED_COUNT: String(expected), LOG_NAME: "harbor-preflight" };
    return spawnSync("bash", [path.join(SCRIPTS, "harbor-resolve-dataset.sh")], { env: { ...process.env, ...env }, encoding: "utf8", timeout: 60_000 });
  }

  it("a good dataset: prints how many tasks Harbor resolves, and the JSON of them", () => {
    const dir = tempDir();
    const ds = dataset(dir);
    const r = resolve(dir, [{ path: ds }]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr.trim()).toBe(`harbor-preflight: Harbor resolves 3 tasks in ${ds} (no task filter)`);
    // README.md is a file, not a task directory: nothing was skipped.
    expect(JSON.parse(r.stdout.trim())).toEqual({ datasets: [{ path: ds, tasks: 3, selected: ["hello-file", "sha-preimage", "sum-numbers"], skipped: {} }] });
  });

  it("a task filter: names and globs, counted before and after", () => {
    const dir = tempDir();
    const ds = dataset(dir);
    const r = resolve(dir, [{ path: ds, task_names: ["hello-file", "s*"], exclude_task_names: ["sha-*"] }]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr.trim()).toBe(`harbor-preflight: Harbor resolves 3 tasks in ${ds} (filter: include 2, exclude 1 → 2)`);
    expect(JSON.parse(r.stdout.trim()).datasets[0].selected).toEqual(["hello-file", "sum-numbers"]);
  });

  it("a missing path: one message naming it (harbor run --print-config passes it)", () => {
    const dir = tempDir();
    const missing = path.join(dir, "no-such-dataset");
    const r = resolve(dir, [{ path: missing }]);
    expect(r.status).toBe(1);
    expect(r.stderr.trim()).toBe(
      `harbor-preflight: the dataset path ${missing} does not exist on this host (datasets[0].path of the job config; harbor.datasetDir + harbor.datasetTasksSubdir): harbor run would fail at start`,
    );
    expect(r.stdout).toBe("");
  });

  it("malformed task directories: fewer tasks than expected, every skipped directory named with what it lacks", () => {
    const dir = tempDir();
    const ds = dataset(dir);
    rmSync(path.join(ds, "hello-file/instruction.md"));
    rmSync(path.join(ds, "sum-numbers/tests/test.sh"));
    rmSync(path.join(ds, "sha-preimage/environment"), { recursive: true });
    const r = resolve(dir, [{ path: ds }]);
    expect(r.status).toBe(1);
    expect(r.stderr.trim()).toBe(
      [
        `harbor-preflight: Harbor resolves 0 tasks in ${ds}, expected 3 (harbor.expectedTaskCount); it skips 3 task directories:`,
        "  hello-file: instruction.md is missing",
        "  sha-preimage: environment/ is missing",
        "  sum-numbers: tests/test.sh is missing",
      ].join("\n"),
    );
  });

  it("one bad directory among good ones: task.toml missing, or not a task config", () => {
    const dir = tempDir();
    const ds = dataset(dir);
    execFileSync("cp", ["-a", path.join(ds, "hello-file"), path.join(ds, "bad-toml")]);
    writeFileSync(path.join(ds, "bad-toml/task.toml"), "[environment]\nos = \"plan9\"\n");
    mkdirSync(path.join(ds, "notes"));
    const r = resolve(dir, [{ path: ds }], 5);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`harbor-preflight: Harbor resolves 3 tasks in ${ds}, expected 5 (harbor.expectedTaskCount); it skips 2 task directories:`);
    // pydantic's ValidationError (real Harbor) or the stub's ValueError, with the same first line.
    expect(r.stderr).toMatch(/\n {2}bad-toml: task\.toml is not a valid Harbor task config \((ValidationError|ValueError): 1 validation error for TaskConfig\)\n/);
    expect(r.stderr).toContain("\n  notes: task.toml is missing; environment/ is missing; instruction.md is missing; tests/test.sh is missing");
  });

  it("an include name that matches no task: named, with what it may have meant", () => {
    const dir = tempDir();
    const ds = dataset(dir);
    const r = resolve(dir, [{ path: ds, task_names: ["hello-file", "hello-files", "reprobench-sim/sha-preimage", "zz-*"] }]);
    expect(r.status).toBe(1);
    const lines = r.stderr.trim().split("\n");
    expect(lines).toEqual([
      `harbor-preflight: run.taskFilter.include "hello-files" matches no task Harbor resolves in ${ds} (names are task directory names or fnmatch globs; 3 tasks: hello-file, sha-preimage, sum-numbers); did you mean "hello-file"?`,
      `harbor-preflight: run.taskFilter.include "reprobench-sim/sha-preimage" matches no task Harbor resolves in ${ds}; it is the [task].name of sha-preimage, but Harbor matches local tasks by directory name: use "sha-preimage"`,
      `harbor-preflight: run.taskFilter.include "zz-*" matches no task Harbor resolves in ${ds} (names are task directory names or fnmatch globs; 3 tasks: hello-file, sha-preimage, sum-numbers)`,
    ]);
  });

  it("an include name of a directory Harbor skips: says why it is skipped; Harbor's own refusal is not repeated", () => {
    const dir = tempDir();
    const ds = dataset(dir);
    rmSync(path.join(ds, "hello-file/tests/test.sh"));
    const r = resolve(dir, [{ path: ds, task_names: ["hello-*"] }], 2);
    expect(r.status).toBe(1);
    expect(r.stderr.trim()).toBe(`harbor-preflight: run.taskFilter.include "hello-*" matches no task Harbor resolves in ${ds}; it matches hello-file, which Harbor skips (tests/test.sh is missing)`);
  });

  it("a filter that leaves no task", () => {
    const dir = tempDir();
    const ds = dataset(dir);
    const r = resolve(dir, [{ path: ds, exclude_task_names: ["*"] }]);
    expect(r.status).toBe(1);
    expect(r.stderr.trim()).toBe(`harbor-preflight: the task filter of datasets[0].path leaves no task of the 3 in ${ds} (run.taskFilter)`);
  });

  it("verifier.disable: tests/test.sh is not needed, as Harbor runs no verifier", () => {
    const dir = tempDir();
    const ds = dataset(dir);
    rmSync(path.join(ds, "sum-numbers/tests"), { recursive: true });
    const r = resolve(dir, [{ path: ds }], 3, { verifier: { disable: true } });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain("Harbor resolves 3 tasks");
  });
});

describe("harbor-preflight.sh resolves the dataset with Harbor after --print-config", () => {
  /** bin/harbor prints the job config as --print-config would (it checks no dataset); bin/python is Harbor's. */
  function setup(taskFilter: Record<string, unknown>, expectedTaskCount = 3) {
    const dir = tempDir();
    const ds = dataset(dir, "tasks");
    const venv = path.join(dir, "venv");
    mkdirSync(path.join(venv, "bin"), { recursive: true });
    const python = path.join(REAL ?? stubHarborVenv(dir), "bin/python");
    writeFileSync(path.join(venv, "bin/python"), `#!/usr/bin/env bash\nexec ${python} "$@"\n`);
    writeFileSync(path.join(venv, "bin/harbor"), `#!/usr/bin/env bash\nprintf '%s' "$PRINTED"\n`);
    for (const f of ["python", "harbor"]) chmodSync(path.join(venv, "bin", f), 0o755);
    const c = seedConfig({
      harbor: { venv, workDir: dir, datasetDir: dir, datasetTasksSubdir: "tasks", expectedTaskCount },
      toolBundle: { enabled: false },
      run: { taskFilter },
    });
    const run = runSettings(c, apiBase(c), "reprobench.test");
    const paths = runPaths(c.harbor, "job-1");
    const job = jobConfigObject(c, apiBase(c));
    const printed = { ...job, environment: { ...(job.environment as object), extra_docker_compose: [paths.composeOverride] } };
    const env = { ...preflightScriptEnv(run, paths), PRINTED: JSON.stringify(printed) };
    return { ds, r: spawnSync("bash", [path.join(SCRIPTS, "harbor-preflight.sh")], { env: { ...process.env, ...env }, encoding: "utf8", timeout: 60_000 }) };
  }

  it("passes, printing the resolved count as its verification and the counts in its JSON line", () => {
    const { ds, r } = setup({ include: ["hello-file", "sum-*"] });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain(`harbor-preflight: Harbor resolves 3 tasks in ${ds} (filter: include 2 → 2)`);
    const out = JSON.parse(r.stdout.trim().split("\n").pop()!);
    expect(out.tasks).toEqual([{ path: ds, tasks: 3, selected: 2 }]);
  });

  it("fails before launch on an unknown include name and on a task count Harbor does not reach", () => {
    const unknown = setup({ include: ["hello-fil"] });
    expect(unknown.r.status).toBe(1);
    expect(unknown.r.stderr).toContain(`harbor-preflight: run.taskFilter.include "hello-fil" matches no task Harbor resolves in ${unknown.ds}`);
    const count = setup({}, 89);
    expect(count.r.status).toBe(1);
    expect(count.r.stderr).toContain(`harbor-preflight: Harbor resolves 3 tasks in ${count.ds}, expected 89 (harbor.expectedTaskCount); it skips no directory`);
  });
});
