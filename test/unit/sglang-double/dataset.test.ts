// sim/dataset: Harbor's task format, and a Docker-free replay of each task. The oracle's solve.sh and
// the scripted model's Terminus-2 keystrokes (served by the double from sim-default.json) run in a temp
// directory standing in for the container (/app and /logs/verifier are rewritten to point into it),
// then tests/test.sh scores them. Rewards must equal each task's [metadata].expected_reward.
import { spawnSync } from "node:child_process";
import { accessSync, constants, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chat, datasetDir, firstMessage, python, scenariosDir, startDouble, waitReady, type RunningDouble } from "./harness";

interface TaskToml {
  schema_version: string;
  task: { name: string };
  metadata: { expected_reward: number };
  verifier: { timeout_sec: number };
  agent: { timeout_sec: number };
  environment: { docker_image: string; build_timeout_sec: number };
}

/** Parse a task.toml with python's tomllib (no TOML dependency in the project). */
function readTaskToml(file: string): TaskToml {
  const result = spawnSync(python, ["-c", "import json, sys, tomllib; print(json.dumps(tomllib.load(open(sys.argv[1], 'rb'))))", file], { encoding: "utf-8" });
  if (result.status !== 0) throw new Error(`cannot parse ${file}: ${result.stderr}`);
  return JSON.parse(result.stdout) as TaskToml;
}

const taskNames = readdirSync(datasetDir, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

const tmpRoot = mkdtempSync(path.join(tmpdir(), "sim-dataset-"));
afterAll(() => rmSync(tmpRoot, { recursive: true, force: true }));

/** A fresh stand-in for a task container: <root>/app (with environment/app/*) and <root>/logs/verifier. */
function sandbox(task: string, label: string): { root: string; rewrite: (script: string) => string } {
  const root = path.join(tmpRoot, `${task}-${label}`);
  mkdirSync(path.join(root, "app"), { recursive: true });
  mkdirSync(path.join(root, "logs/verifier"), { recursive: true });
  const shipped = path.join(datasetDir, task, "environment/app");
  if (existsSync(shipped)) cpSync(shipped, path.join(root, "app"), { recursive: true });
  const rewrite = (script: string) => script.replaceAll("/logs/verifier", `${root}/logs/verifier`).replaceAll("/app", `${root}/app`);
  return { root, rewrite };
}

function bash(script: string, cwd: string): { status: number | null; output: string } {
  const result = spawnSync("bash", ["-c", script], { cwd, encoding: "utf-8", timeout: 20_000 });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

function verify(task: string, box: { root: string; rewrite: (s: string) => string }): number {
  const testScript = readFileSync(path.join(datasetDir, task, "tests/test.sh"), "utf-8");
  const run = bash(box.rewrite(testScript), path.join(box.root, "app"));
  expect(run.status, run.output).toBe(0);
  return Number(readFileSync(path.join(box.root, "logs/verifier/reward.txt"), "utf-8").trim());
}

describe("Harbor task format", () => {
  it("has three tasks, with both rewards 1 and 0 expected", () => {
    expect(taskNames).toEqual(["hello-file", "sha-preimage", "sum-numbers"]);
    const rewards = taskNames.map((t) => readTaskToml(path.join(datasetDir, t, "task.toml")).metadata.expected_reward);
    expect(rewards.sort()).toEqual([0, 1, 1]);
  });

  for (const task of taskNames) {
    it(`${task}: task.toml, instruction, environment, tests and solution as harbor expects`, () => {
      const dir = path.join(datasetDir, task);
      const toml = readTaskToml(path.join(dir, "task.toml"));
      expect(toml.schema_version).toBe("1.1");
      expect(toml.task.name).toBe(`reprobench-sim/${task}`);
      // The sim-cluster helper pushes each task image under this name.
      expect(toml.environment.docker_image).toBe(`registry.sim:5000/reprobench/task-${task}:latest`);
      expect(toml.verifier.timeout_sec).toBeGreaterThan(0);
      expect(toml.agent.timeout_sec).toBeGreaterThan(0);
      expect(readFileSync(path.join(dir, "instruction.md"), "utf-8").trim().length).toBeGreaterThan(20);
      // harbor skips a task dir without environment/ even when docker_image is set.
      const dockerfile = readFileSync(path.join(dir, "environment/Dockerfile"), "utf-8");
      expect(dockerfile).toMatch(/^FROM registry\.sim:5000\/reprobench\/task-base:latest$/m);
      // No task installs tmux/asciinema: Terminus-2 must get them from the tool bundle.
      expect(dockerfile.replace(/^#.*$/gm, "")).not.toMatch(/tmux|asciinema/i);
      for (const script of ["tests/test.sh", "solution/solve.sh"]) {
        const file = path.join(dir, script);
        expect(readFileSync(file, "utf-8").startsWith("#!/usr/bin/env bash\n"), script).toBe(true);
        accessSync(file, constants.X_OK);
      }
    });
  }
});

describe("oracle replay: solution/solve.sh then tests/test.sh", () => {
  for (const task of taskNames) {
    it(`${task} scores its expected reward`, () => {
      const box = sandbox(task, "oracle");
      const solve = bash(box.rewrite(readFileSync(path.join(datasetDir, task, "solution/solve.sh"), "utf-8")), path.join(box.root, "app"));
      expect(solve.status, solve.output).toBe(0);
      const expected = readTaskToml(path.join(datasetDir, task, "task.toml")).metadata.expected_reward;
      expect(verify(task, box)).toBe(expected);
    });
  }

  it("an untouched environment scores 0 on every task (the tests can fail)", () => {
    for (const task of taskNames) expect(verify(task, sandbox(task, "untouched")), task).toBe(0);
  });
});

describe("scripted-model replay: Terminus-2's loop against the double serving sim-default.json", () => {
  let double: RunningDouble;
  beforeAll(async () => {
    double = await startDouble({ flags: ["--dp-size", "2", "--served-model-name", "Qwen/Qwen3.8-27B"], scenario: path.join(scenariosDir, "sim-default.json") });
    await waitReady(double);
  });
  afterAll(() => double.process.stop());

  for (const task of taskNames) {
    it(`${task} scores its expected reward`, async () => {
      const box = sandbox(task, "model");
      const instruction = readFileSync(path.join(datasetDir, task, "instruction.md"), "utf-8");
      // The shape of Terminus-2's first prompt (terminus-json-plain): preamble, task, terminal screen.
      const messages: Array<{ role: string; content: string }> = [
        {
          role: "user",
          content: `You are an AI assistant tasked with solving command-line tasks in a Linux environment.\n\nTask Description:\n${instruction}\n\nCurrent terminal state:\nroot@sim:/app# `,
        },
      ];
      let pendingCompletion = false;
      let finished = false;
      for (let episode = 0; episode < 8 && !finished; episode++) {
        const reply = await chat(double.url, { model: "Qwen/Qwen3.8-27B", messages });
        expect(reply.status).toBe(200);
        const content = firstMessage(reply.json).content;
        const parsed = JSON.parse(content) as { commands: Array<{ keystrokes: string }>; task_complete?: boolean };
        messages.push({ role: "assistant", content });
        if (parsed.task_complete) {
          // Terminus-2 only stops on the second task_complete in a row.
          if (pendingCompletion) finished = true;
          pendingCompletion = true;
          messages.push({ role: "user", content: "Are you sure you want to mark the task as complete? ..." });
          continue;
        }
        pendingCompletion = false;
        let screen = "";
        for (const command of parsed.commands) screen += bash(box.rewrite(command.keystrokes), path.join(box.root, "app")).output;
        messages.push({ role: "user", content: `New Terminal Output:\n${screen}` });
      }
      expect(finished).toBe(true);
      const expected = readTaskToml(path.join(datasetDir, task, "task.toml")).metadata.expected_reward;
      expect(verify(task, box)).toBe(expected);
    });
  }
});
