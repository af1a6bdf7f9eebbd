// sim/rehearsal/dataset.ts and the file-system half of prepare.ts: Harbor's task layout, one image spec
// per task, the deterministic git commit, and the files the outside serves (temp dirs, real git).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { mustRun } from "../../../sim/exec";
import { resolveImages, type ImageSpec } from "../../../sim/images";
import { publishBareRepository, REHEARSAL_REPO, writeRehearsalDownloads } from "../../../sim/outside";
import { rehearsalDockerImage, rehearsalDownloads, rehearsalImageSpecs, rehearsalTaskFiles, writeRehearsalDataset } from "../../../sim/rehearsal/dataset";
import { buildRehearsalRepo, instanceByName, rehearsalCommit, rehearsalStateDir } from "../../../sim/rehearsal/prepare";
import { REHEARSAL_BEHAVIOURS, rehearsalTasks } from "../../../sim/rehearsal/tasks";

const tmp = mkdtempSync(join(tmpdir(), "sim-rehearsal-test-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const python = process.env.PYTHON ?? "python3";
function readToml(file: string): Record<string, Record<string, unknown>> {
  const r = spawnSync(python, ["-c", "import json, sys, tomllib; print(json.dumps(tomllib.load(open(sys.argv[1], 'rb'))))", file], { encoding: "utf-8" });
  if (r.status !== 0) throw new Error(`cannot parse ${file}: ${r.stderr}`);
  return JSON.parse(r.stdout) as Record<string, Record<string, unknown>>;
}

describe("the dataset on disk", () => {
  const tasks = rehearsalTasks({ count: 12, seed: 0 });
  const dir = join(tmp, "dataset");
  writeRehearsalDataset(dir, tasks, 0);

  it("has README.md and one Harbor task directory per task", () => {
    expect(readdirSync(dir).sort()).toEqual(["README.md", ...tasks.map((t) => t.name)].sort());
    for (const t of tasks) {
      for (const rel of ["task.toml", "instruction.md", "environment/Dockerfile", "environment/app/input.txt", "tests/test.sh", "solution/solve.sh"]) {
        expect(existsSync(join(dir, t.name, rel)), `${t.name}/${rel}`).toBe(true);
      }
      for (const script of ["tests/test.sh", "solution/solve.sh"]) {
        expect(statSync(join(dir, t.name, script)).mode & 0o777, script).toBe(0o755);
        const text = readFileSync(join(dir, t.name, script), "utf8");
        expect(text.startsWith("#!/usr/bin/env bash\n") && text.includes("\nset -euo pipefail\n"), script).toBe(true);
      }
      expect(statSync(join(dir, t.name, "task.toml")).mode & 0o777).toBe(0o644);
    }
    expect(readFileSync(join(dir, "README.md"), "utf8")).toContain("12 tasks, seed 0");
  });

  it("writes task.toml as schema 1.1 with the task's timeouts, resources, image and expected outcome", () => {
    for (const t of tasks) {
      const toml = readToml(join(dir, t.name, "task.toml"));
      expect(toml.schema_version).toBe("1.1");
      expect(toml.task).toBeUndefined(); // Harbor names the task after its directory
      expect(toml.verifier).toEqual({ timeout_sec: t.verifierTimeoutSec });
      expect(toml.agent).toEqual({ timeout_sec: t.agentTimeoutSec });
      expect(toml.environment).toEqual({ build_timeout_sec: 600, docker_image: `registry.sim:5000/reprobench/rehearsal-${t.name}:latest`, cpus: 1, memory_mb: 512, storage_mb: 1024 });
      expect(toml.metadata.rehearsal_behaviour).toBe(t.behaviour);
      expect(toml.metadata.expected_reward ?? null).toBe(t.expected.reward);
      expect(toml.metadata.expected_exception ?? null).toBe(t.expected.exception);
      const dockerfile = readFileSync(join(dir, t.name, "environment/Dockerfile"), "utf8");
      expect(dockerfile).toMatch(/^FROM registry\.sim:5000\/reprobench\/task-base:latest$/m);
      expect(dockerfile.replace(/^#.*$/gm, "")).not.toMatch(/tmux|asciinema/i);
      expect(readFileSync(join(dir, t.name, "environment/app/input.txt"), "utf8")).toBe(`${t.input.join("\n")}\n`);
      expect(readFileSync(join(dir, t.name, "tests/test.sh"), "utf8")).toContain(`expected=${t.answer}\n`);
    }
  });

  it("generates shellcheck-clean scripts for every behaviour", () => {
    if (spawnSync("shellcheck", ["--version"]).status !== 0) return; // not installed here
    const one = REHEARSAL_BEHAVIOURS.map((b) => tasks.find((t) => t.behaviour === b)!);
    const files = one.flatMap((t) => ["tests/test.sh", "solution/solve.sh"].map((s) => join(dir, t.name, s)));
    const r = spawnSync("shellcheck", ["-s", "bash", ...files], { encoding: "utf-8" });
    expect(r.status, r.stdout + r.stderr).toBe(0);
  });

  it("has one image spec per task, FROM task-base, each with its own hash", () => {
    const base: ImageSpec = { name: "task-base", kind: "dockerfile", contextDir: dir, dockerfile: join(dir, "README.md"), hashInputs: [join(dir, "README.md")], buildArgs: {}, extraTags: [] };
    const resolved = resolveImages([base, ...rehearsalImageSpecs(dir, tasks)], tmp).slice(1);
    expect(resolved.map((i) => i.push)).toEqual(tasks.map((t) => `reprobench/rehearsal-${t.name}`));
    expect(resolved.every((i) => i.parent === "task-base" && i.contextDir === join(dir, i.name.slice("rehearsal-".length), "environment"))).toBe(true);
    expect(new Set(resolved.map((i) => i.hash)).size).toBe(tasks.length);
    expect(rehearsalDockerImage("rank-tree")).toBe("registry.sim:5000/reprobench/rehearsal-rank-tree:latest");
  });

  it("serves one download per downloads task under rehearsal/", () => {
    const downloads = rehearsalDownloads(tasks);
    const names = tasks.filter((t) => t.behaviour === "downloads").map((t) => t.name);
    expect(Object.keys(downloads)).toEqual(names.map((n) => `rehearsal/${n}.txt`));
    const tree = join(tmp, "tree");
    mkdirSync(join(tree, "rehearsal"), { recursive: true });
    writeFileSync(join(tree, "rehearsal", "stale.txt"), "from an earlier rehearsal");
    writeRehearsalDownloads(tree, downloads);
    expect(readdirSync(join(tree, "rehearsal")).sort()).toEqual(names.map((n) => `${n}.txt`).sort());
    expect(readFileSync(join(tree, "rehearsal", `${names[0]}.txt`), "utf8")).toBe(`rehearsal dependency for ${names[0]}\n`);
    expect(() => writeRehearsalDownloads(tree, { "../x.txt": "no" })).toThrow(/expected a path under rehearsal\//);
  });

  it("keeps task files a pure function of the task", () => {
    expect(rehearsalTaskFiles(tasks[0])).toEqual(rehearsalTaskFiles(rehearsalTasks({ count: 12, seed: 0 })[0]));
  });
});

describe("the git repository", () => {
  it("has the same commit for the same count and seed, another for another seed", async () => {
    const a = await rehearsalCommit(12, 0);
    expect(a).toMatch(/^[0-9a-f]{40}$/);
    expect(await rehearsalCommit(12, 0)).toBe(a);
    expect(await rehearsalCommit(12, 1)).not.toBe(a);
    console.log(`rehearsal commit (12 tasks, seed 0): ${a}`);
  });

  it("is published bare for dumb HTTP and clones at the commit", async () => {
    const tasks = rehearsalTasks({ count: 9, seed: 5 });
    const work = join(tmp, "work");
    const commit = await buildRehearsalRepo(work, tasks, 5);
    const tree = join(tmp, "git-tree");
    await publishBareRepository(work, tree, REHEARSAL_REPO, commit);
    const bare = join(tree, REHEARSAL_REPO);
    expect(readFileSync(join(bare, "info", "refs"), "utf8")).toContain(`${commit}\trefs/heads/main`);
    expect(readFileSync(join(bare, "objects", "info", "packs"), "utf8")).toContain(".pack");
    const clone = join(tmp, "clone");
    await mustRun(["git", "clone", "-q", bare, clone], { timeoutMs: 60_000 });
    expect((await mustRun(["git", "-C", clone, "rev-parse", "HEAD"], { timeoutMs: 30_000 })).trim()).toBe(commit);
    expect(readdirSync(clone).filter((f) => f !== ".git").sort()).toEqual(["README.md", ...tasks.map((t) => t.name)].sort());
    expect(statSync(join(clone, tasks[0].name, "tests", "test.sh")).mode & 0o111).not.toBe(0);
    // Publishing the same commit again leaves the repository as it is.
    const before = statSync(join(bare, "HEAD")).mtimeMs;
    await publishBareRepository(work, tree, REHEARSAL_REPO, commit);
    expect(statSync(join(bare, "HEAD")).mtimeMs).toBe(before);
  });
});

describe("instances", () => {
  it("keeps the rehearsal in the instance's state dir and finds a test instance's slot from its cluster.json", () => {
    expect(rehearsalStateDir()).toBe(".sim/rehearsal");
    expect(rehearsalStateDir({ name: "itest", slot: 1 })).toBe(".sim/instances/itest/rehearsal");
    const root = join(tmp, "proj");
    mkdirSync(join(root, ".sim", "instances", "itest"), { recursive: true });
    writeFileSync(join(root, ".sim", "instances", "itest", "cluster.json"), JSON.stringify({ registry: { pushHost: "127.0.0.1:5003" } }));
    expect(instanceByName(root, "itest")).toEqual({ name: "itest", slot: 3 });
    expect(instanceByName(root, "default")).toEqual({ name: "default", slot: 0 });
    expect(() => instanceByName(root, "gone")).toThrow(/sim instance 'gone' is not up here/);
  });
});
