import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { apiBase } from "../../../components/config/derive";
import { harborArgv, launchScriptEnv, stopScriptEnv } from "../../../components/benchmark-run";
import { installScriptEnv } from "../../../components/harbor-runner";
import { RUN_DATASET_KEYS, datasetScriptEnv, datasetSource, directoryDigest } from "../../../components/task-dataset";
import { lastJsonLine } from "../../../components/host-script";
import { runPaths } from "../../../components/run-config";
import { runSettings, runSpec } from "../../../components/config/job";
import { taskImagesScriptEnv } from "../../../components/task-images";
import { REPO, seedConfig } from "./helpers";

describe("HarborRunner inputs", () => {
  it("installs online by default and offline from harbor.pipFindLinks", () => {
    expect(installScriptEnv(seedConfig().harbor)).toEqual({
      HARBOR_VERSION: "0.21.0",
      WHEEL_SHA256: "c77d779a03f1a9e8ecb3c449e17f39a9728b82238832f1fd28632eb9426c0a21",
      VENV: "/var/lib/reprobench/.venv-harbor-0.21.0",
      PYTHON_VERSION: "3.13",
      FIND_LINKS: "",
      INDEX_URL: "https://pypi.org/simple/",
      UV_VERSION: "0.13.9",
      EXTRAS: "",
      WORK_DIR: "/var/lib/reprobench",
      JOBS_DIR: "/var/lib/reprobench/jobs",
      UPLOADS_DIR: "/var/lib/reprobench/uploads",
    });
    expect(installScriptEnv(seedConfig({ harbor: { pipFindLinks: "/var/cache/reprobench/wheels" } }).harbor).FIND_LINKS).toBe("/var/cache/reprobench/wheels");
    expect(installScriptEnv(seedConfig({ harbor: { extras: ["hf-sandbox"] } }).harbor).EXTRAS).toBe("hf-sandbox");
    expect(installScriptEnv(seedConfig({ harbor: { indexUrl: "http://pypi.sim/simple/", uvVersion: "0.13.9" } }).harbor)).toMatchObject({ INDEX_URL: "http://pypi.sim/simple/", UV_VERSION: "0.13.9" });
  });

  it("clones the seed's Terminal-Bench 2.1 at the pinned commit", () => {
    const h = seedConfig().harbor;
    const source = datasetSource(h, REPO);
    expect(source).toEqual({ kind: "git", url: "https://github.com/harbor-framework/terminal-bench-2-1.git", commit: "7131e4375048a0e408a8fb404b5f499d726b695b" });
    expect(datasetScriptEnv(h, source)).toMatchObject({ TASKS_DIR: "/var/lib/reprobench/terminal-bench-2-1/tasks", EXPECTED_COUNT: "89", UPLOAD_DIR: "" });
  });

  it("uploads a project directory under a content-addressed path", () => {
    const h = seedConfig({ harbor: { datasetRepo: "sim/dataset", datasetCommit: null, datasetDir: "/var/lib/reprobench/sim-dataset", datasetTasksSubdir: "", expectedTaskCount: 3 } }).harbor;
    const source = datasetSource(h, REPO);
    if (source.kind !== "upload") throw new Error("expected an upload");
    expect(source.localDir).toBe(path.join(REPO, "sim/dataset"));
    // Under the login's own uploads dir (CopyToRemote writes as the SSH login, which may not be root).
    expect(source.uploadDir).toBe(`/var/lib/reprobench/uploads/dataset-${source.digest.slice(0, 16)}`);
    expect(datasetScriptEnv(h, source)).toMatchObject({ DATASET_REPO: "", UPLOAD_DIR: source.uploadDir, TASKS_DIR: "/var/lib/reprobench/sim-dataset", EXPECTED_COUNT: "3" });
  });

  it("names harbor.datasetRepo when the directory does not exist", () => {
    const h = seedConfig({ harbor: { datasetRepo: "no/such/dir", datasetCommit: null } }).harbor;
    expect(() => datasetSource(h, REPO)).toThrow(/harbor.datasetRepo: "no\/such\/dir" is neither a git URL nor a directory/);
  });

  it("names a run stack's own dataset keys (reprobench:dataset) for its dataset", () => {
    const h = seedConfig({ harbor: { datasetRepo: "no/such/dir", datasetCommit: null } }).harbor;
    expect(() => datasetSource(h, REPO, RUN_DATASET_KEYS)).toThrow(/^dataset.repo: "no\/such\/dir" is neither a git URL nor a directory/);
    expect(() => datasetSource({ ...h, datasetRepo: "http://git.sim/x.git" }, REPO, RUN_DATASET_KEYS)).toThrow(/^dataset.commit: required for the git dataset/);
  });

  it("digests a directory by paths and contents", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "reprobench-digest-"));
    try {
      mkdirSync(path.join(dir, "a"));
      writeFileSync(path.join(dir, "a/task.toml"), "x");
      const one = directoryDigest(dir);
      expect(directoryDigest(dir)).toBe(one);
      writeFileSync(path.join(dir, "a/task.toml"), "y");
      const two = directoryDigest(dir);
      expect(two).not.toBe(one);
      rmSync(path.join(dir, "a/task.toml"));
      writeFileSync(path.join(dir, "a/task2.toml"), "y");
      expect(directoryDigest(dir)).not.toBe(two);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("parses a script's last JSON line and names the script otherwise", () => {
    expect(lastJsonLine<{ a: number }>("noise\n{\"a\":1}\n", "x.sh")).toEqual({ a: 1 });
    expect(() => lastJsonLine("done\n", "harbor-install.sh")).toThrow(/harbor-install.sh: expected a JSON line at the end of its output, got "done"/);
  });
});

describe("TaskImages inputs", () => {
  it("sorts and deduplicates the list and passes the pull settings", () => {
    const h = seedConfig({ harbor: { imagePullConcurrency: 8, insecureRegistries: ["registry.sim:5000"] } }).harbor;
    expect(taskImagesScriptEnv(h, ["b:1", "a:1", "b:1"], "/etc/docker/daemon.json")).toEqual({
      IMAGES: "a:1\nb:1",
      CONCURRENCY: "8",
      ATTEMPTS: "5",
      INSECURE_REGISTRIES: "registry.sim:5000",
      DAEMON_JSON: "/etc/docker/daemon.json",
      // The step may wait for a registry's pull window all but the last half hour of its 4 h timeout.
      TIME_BUDGET_SECONDS: String(4 * 3600 - 1800),
    });
    expect(taskImagesScriptEnv(h, ["a:1"], "/etc/docker/daemon.json", 60).TIME_BUDGET_SECONDS).toBe("60");
    expect(() => taskImagesScriptEnv(h, [], "/etc/docker/daemon.json")).toThrow(/lists no \[environment\].docker_image/);
  });
});

describe("BenchmarkRun inputs", () => {
  const c = seedConfig();
  const run = runSettings(c, apiBase(c), "reprobench.a100");
  const paths = runPaths(run, "qwen38-x-20260101-000000", run.stackId);

  it("runs harbor with the preflighted files, an absolute --jobs-dir and the fixed --job-name (no --ae)", () => {
    const argv = harborArgv(run, "qwen38-x-20260101-000000", paths);
    expect(argv).toEqual([
      "/var/lib/reprobench/.venv-harbor-0.21.0/bin/harbor", "run",
      "--config", "/var/lib/reprobench/runs/qwen38-x-20260101-000000/harbor-job.yaml",
      "--extra-docker-compose", "/var/lib/reprobench/runs/qwen38-x-20260101-000000/docker-override.yaml",
      "--job-name", "qwen38-x-20260101-000000", "--jobs-dir", "/var/lib/reprobench/jobs", "--yes",
    ]);
    expect(argv.join(" ")).not.toMatch(/--ae|--agent-env|OPENAI/);
  });

  it("keeps the API key out of the launch script's plain inputs", () => {
    const env = launchScriptEnv(run, "j", paths);
    expect(Object.keys(env)).not.toContain("API_KEY");
    expect(env).toMatchObject({ WAIT: "0", STOP_TIMEOUT_SECS: "900", UNIT: "reprobench-harbor-qwen38-x-20260101-000000.service", USE_OVERRIDE: "1" });
    expect(env.CURRENT_FILE).toBe("/var/lib/reprobench/runs/current.d/reprobench.a100");
    expect(env.STOP_SCRIPT).toContain("systemctl kill --kill-whom=main --signal=SIGTERM");
    expect(stopScriptEnv(run, paths)).toEqual({ UNIT: paths.unit, JOB_DIR: paths.jobDir, STOP_TIMEOUT_SECS: "900", ENV_FILE: paths.envFile });
  });

  it("gives a new job for run settings that change the job, not for how up waits or stops", () => {
    const base = runSpec(c, apiBase(c));
    const with6x = seedConfig({ run: { agentTimeoutMultiplier: 3 } });
    expect(runSpec(with6x, apiBase(with6x))).not.toBe(base);
    const filtered = seedConfig({ run: { taskFilter: { include: ["regex-chess"] } } });
    expect(runSpec(filtered, apiBase(filtered))).not.toBe(base);
    const waiting = seedConfig({ run: { waitForCompletion: true, waitTimeoutMinutes: 5, stopTimeoutSecs: 30 } });
    expect(runSpec(waiting, apiBase(waiting))).toBe(base);
  });

  it("never removes a jobs directory: no rm in any run script touches JOBS_DIR or JOB_DIR", async () => {
    const { readFileSync, readdirSync } = await import("node:fs");
    const dir = path.join(REPO, "components/scripts");
    for (const f of readdirSync(dir).filter((n) => n.startsWith("harbor-"))) {
      const text = readFileSync(path.join(dir, f), "utf8");
      expect(text, f).not.toMatch(/rm\s+(-[a-z]+\s+)*["']?\$\{?(JOBS_DIR|JOB_DIR)/);
    }
  });
});
