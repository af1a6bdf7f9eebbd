// The rehearsal tasks (tasks.ts) in Harbor's task layout, shaped like sim/dataset/*: task.toml (schema
// 1.1), instruction.md, environment/Dockerfile with the task's own /app/input.txt (so every task has an
// image of its own, as every Terminal-Bench task does), tests/test.sh writing /logs/verifier/reward.txt
// and solution/solve.sh. The text of every file is a pure function of the task; writeRehearsalDataset
// puts them on disk.
import { chmodSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pullRef, type ImageSpec } from "../images";
import { REHEARSAL_DOWNLOADS_DIR } from "../outside";
import { rehearsalDownloadText, rehearsalMarker, SEED000_MULTIPLIERS, TIMEOUT_SCALE, VERIFIER_SLEEP_FACTOR, type RehearsalBehaviour, type RehearsalTask } from "./tasks";

export const REHEARSAL_DATASET = "terminal-bench-rehearsal";

/** Registry repository of a task's image: reprobench/rehearsal-<name> (pushed as :latest). */
export function rehearsalImageRepo(task: string): string {
  return `reprobench/rehearsal-${task}`;
}

/** The [environment].docker_image of a task: what the hosts pull. */
export function rehearsalDockerImage(task: string): string {
  return pullRef(rehearsalImageRepo(task));
}

export interface TaskFile {
  text: string;
  mode: number;
}

// The agent's (and oracle's) way to the right answer, and the scripted model's wrong one.
const SUM_COMMAND = `python3 -c 'print(sum(int(l) for l in open("/app/input.txt") if l.strip()))' > /app/answer.txt`;

const toml = (n: number) => (Number.isInteger(n) ? `${n}.0` : String(n));

function taskToml(task: RehearsalTask): string {
  const lines = [
    `# Rehearsal task (sim/rehearsal), behaviour "${task.behaviour}": the scripted model acts on the marker line`,
    `# "${rehearsalMarker(task.behaviour)}" of instruction.md. Timeouts are Terminal-Bench 2.1-like values × 1/${Math.round(1 / TIMEOUT_SCALE)}`,
    `# (agent ${task.unscaled.agentTimeoutSec} s → ${task.agentTimeoutSec} s, verifier ${task.unscaled.verifierTimeoutSec} s → ${task.verifierTimeoutSec} s), run with seed 000's multipliers`,
    `# (agent ×${SEED000_MULTIPLIERS.agentTimeout}, setup ×${SEED000_MULTIPLIERS.agentSetupTimeout}, verifier ×${SEED000_MULTIPLIERS.verifierTimeout}). No [task] section: Harbor names the task after its directory,`,
    "# as seed 000's audit names Terminal-Bench tasks.",
    'schema_version = "1.1"',
    "",
    "[metadata]",
    'difficulty = "easy"',
    'category = "rehearsal"',
    `tags = ["rehearsal", "${task.behaviour}"]`,
    `rehearsal_behaviour = "${task.behaviour}"`,
  ];
  // What a run gets when no injected fault hits it (TOML has no null: absent = no reward / no exception).
  if (task.expected.reward !== null) lines.push(`expected_reward = ${toml(task.expected.reward)}`);
  if (task.expected.exception !== null) lines.push(`expected_exception = "${task.expected.exception}"`);
  lines.push(
    `unscaled_agent_timeout_sec = ${toml(task.unscaled.agentTimeoutSec)}`,
    `unscaled_verifier_timeout_sec = ${toml(task.unscaled.verifierTimeoutSec)}`,
    "",
    "[verifier]",
    `timeout_sec = ${toml(task.verifierTimeoutSec)}`,
    "",
    "[agent]",
    `timeout_sec = ${toml(task.agentTimeoutSec)}`,
    "",
    "[environment]",
    "build_timeout_sec = 600.0",
    `docker_image = "${rehearsalDockerImage(task.name)}"`,
    `cpus = ${task.cpus}`,
    `memory_mb = ${task.memory_mb}`,
    "storage_mb = 1024",
    "",
  );
  return lines.join("\n");
}

/** The part of test.sh before the answer is checked: what makes each behaviour's verifier differ. */
function verifierPreamble(task: RehearsalTask): string[] {
  if (task.behaviour === "verifier-timeout") {
    const seconds = Math.ceil(task.verifierTimeoutSec * VERIFIER_SLEEP_FACTOR);
    return [
      `# A test suite slower than its budget (timeout_sec = ${task.verifierTimeoutSec}): Harbor raises VerifierTimeoutError`,
      "# and stops the container, so the check below never runs.",
      'echo "verifier: running the slow test suite"',
      `sleep ${seconds}`,
      "",
    ];
  }
  if (task.behaviour === "downloads" && task.downloadUrl) {
    return [
      "# The tests first install a dependency over plain HTTP through the container's proxy (HTTP_PROXY /",
      "# http_proxy, which curl honours), as seed 000's prove-plus-comm did; no retries beyond curl's default",
      "# (none). When that fails the answer is never checked: reward 0, and a line naming the HTTP status.",
      `dep_url=${task.downloadUrl}`,
      "dep_file=/tmp/rehearsal-dependency.txt",
      "dep_err=/tmp/rehearsal-dependency.err",
      `status=$(curl -sS --max-time 10 -o "$dep_file" -w '%{http_code}' "$dep_url" 2>"$dep_err") || true`,
      `if [[ "$status" != 200 ]] || [[ "$(cat "$dep_file" 2>/dev/null)" != "${rehearsalDownloadText(task.name).trimEnd()}" ]]; then`,
      '  echo "verifier: could not install dependency: HTTP ${status:-000} through the proxy ($dep_url) $(head -c 200 "$dep_err" 2>/dev/null)"',
      "  echo 0 > /logs/verifier/reward.txt",
      "  exit 0",
      "fi",
      'echo "verifier: installed the dependency from $dep_url"',
      "",
    ];
  }
  return [];
}

function testScript(task: RehearsalTask): string {
  return [
    "#!/usr/bin/env bash",
    `# Verifier for rehearsal task ${task.name} (${task.behaviour}): reward 1 when /app/answer.txt holds the sum`,
    "# of the shipped numbers, else 0. The expected value is fixed here (the agent could edit /app/input.txt).",
    "set -euo pipefail",
    "",
    "mkdir -p /logs/verifier",
    ...verifierPreamble(task),
    `expected=${task.answer}`,
    "actual=\"$(tr -d '[:space:]' < /app/answer.txt 2>/dev/null || true)\"",
    'if [[ "$actual" == "$expected" ]]; then',
    '  echo "PASS: the sum is $expected"',
    "  echo 1 > /logs/verifier/reward.txt",
    "else",
    "  echo \"FAIL: expected $expected in /app/answer.txt, got '${actual}'\"",
    "  echo 0 > /logs/verifier/reward.txt",
    "fi",
    "",
  ].join("\n");
}

function solveScript(task: RehearsalTask): string {
  return ["#!/usr/bin/env bash", `# Oracle solution for rehearsal task ${task.name}: the sum of /app/input.txt.`, "set -euo pipefail", "", SUM_COMMAND, ""].join("\n");
}

function dockerfile(task: RehearsalTask): string {
  return [
    `# Built by \`reprobench sim rehearsal\` with this directory as context and pushed as`,
    `# ${rehearsalDockerImage(task.name)} (task.toml [environment].docker_image). Its own`,
    "# /app/input.txt makes the image (and its digest) this task's alone.",
    "FROM registry.sim:5000/reprobench/task-base:latest",
    "WORKDIR /app",
    "COPY app/ /app/",
    "",
  ].join("\n");
}

/** Every file of one task directory, by path relative to it. */
export function rehearsalTaskFiles(task: RehearsalTask): Record<string, TaskFile> {
  return {
    "task.toml": { text: taskToml(task), mode: 0o644 },
    "instruction.md": { text: task.instruction, mode: 0o644 },
    "environment/Dockerfile": { text: dockerfile(task), mode: 0o644 },
    "environment/app/input.txt": { text: `${task.input.join("\n")}\n`, mode: 0o644 },
    "tests/test.sh": { text: testScript(task), mode: 0o755 },
    "solution/solve.sh": { text: solveScript(task), mode: 0o755 },
  };
}

/** The dataset's README.md: what the rehearsal is and how many tasks of each behaviour it has. */
export function rehearsalReadme(tasks: readonly RehearsalTask[], seed: number): string {
  const counts = new Map<RehearsalBehaviour, number>();
  for (const t of tasks) counts.set(t.behaviour, (counts.get(t.behaviour) ?? 0) + 1);
  return [
    `# ${REHEARSAL_DATASET}`,
    "",
    `A generated rehearsal of seed 000's full Terminal-Bench run for the simulated cluster: ${tasks.length} tasks, seed ${seed}`,
    "(sim/rehearsal in reprobench). Every task sums the integers of /app/input.txt; the scripted model acts",
    "on the marker line at the end of each instruction.",
    "",
    "| behaviour | tasks |",
    "| --- | --- |",
    ...[...counts.entries()].map(([b, n]) => `| ${b} | ${n} |`),
    "",
  ].join("\n");
}

function writeFile(path: string, file: TaskFile): void {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, file.text);
  // Explicit modes: git records only the executable bit, and the umask must not decide it.
  chmodSync(path, file.mode);
}

/** Writes the dataset (README.md and one directory per task) into `dir`, replacing what was there. */
export function writeRehearsalDataset(dir: string, tasks: readonly RehearsalTask[], seed: number): void {
  rmSync(dir, { recursive: true, force: true });
  writeFile(join(dir, "README.md"), { text: rehearsalReadme(tasks, seed), mode: 0o644 });
  for (const task of tasks) {
    for (const [rel, file] of Object.entries(rehearsalTaskFiles(task))) writeFile(join(dir, task.name, rel), file);
  }
}

/** One image per task, built FROM task-base out of the task's environment/ in `datasetDir`. */
export function rehearsalImageSpecs(datasetDir: string, tasks: readonly RehearsalTask[]): ImageSpec[] {
  return tasks.map((task) => {
    const env = join(datasetDir, task.name, "environment");
    return {
      name: `rehearsal-${task.name}`,
      kind: "dockerfile",
      contextDir: env,
      dockerfile: join(env, "Dockerfile"),
      hashInputs: [env],
      parent: "task-base",
      buildArgs: {},
      extraTags: [],
      push: rehearsalImageRepo(task.name),
    };
  });
}

/** The files the sim's package index serves for the downloads tasks, by path under its tree. */
export function rehearsalDownloads(tasks: readonly RehearsalTask[]): Record<string, string> {
  return Object.fromEntries(tasks.filter((t) => t.downloadUrl).map((t) => [`${REHEARSAL_DOWNLOADS_DIR}/${t.name}.txt`, rehearsalDownloadText(t.name)]));
}
