// The rehearsal dataset (sim/rehearsal) against the double serving sim-default.json: Terminus-2's loop is
// replayed per behaviour in a temp dir standing in for the task container (/app, /logs/verifier rewritten
// into it), then the generated tests/test.sh scores it. `tmux` keystrokes are never run (kill-server would
// end this machine's tmux), and `sleep` waits are checked, not waited out.
import { execFile, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scanText } from "../../../results/taxonomy";
import { rehearsalTaskFiles } from "../../../sim/rehearsal/dataset";
import { OVERTHINK_DELAY_SECONDS, OVERTHINK_REASONING_TOKENS, OVERTHINK_TIER_SEC, REHEARSAL_BEHAVIOURS, TIMEOUT_SCALE, rehearsalDownloadText, rehearsalMarker, rehearsalTasks, VERIFIER_SLEEP_FACTOR, WAIT_COMMAND_SECONDS, type RehearsalBehaviour, type RehearsalTask } from "../../../sim/rehearsal/tasks";
import { chat, firstMessage, scenariosDir, seed000WorkerFlags, startDouble, waitReady, type RunningDouble } from "./harness";

interface Command {
  keystrokes: string;
  duration: number;
}
interface TerminusReply {
  commands: Command[];
  task_complete?: boolean;
}
interface ScenarioRule {
  name: string;
  match: { first_user_contains?: string | string[] };
  delay_seconds?: number;
  turns?: { json: TerminusReply; reasoning_tokens?: number }[];
}

const scenarioFile = path.join(scenariosDir, "sim-default.json");
const rules = (JSON.parse(readFileSync(scenarioFile, "utf-8")) as { rules: ScenarioRule[] }).rules;
const tasks = rehearsalTasks({ count: 12, seed: 0 });
const taskOf = (b: RehearsalBehaviour) => tasks.find((t) => t.behaviour === b)!;
const tmpRoot = mkdtempSync(path.join(tmpdir(), "sim-rehearsal-replay-"));
afterAll(() => rmSync(tmpRoot, { recursive: true, force: true }));

/** A fresh stand-in for the task container: <root>/app with the task's input, <root>/logs/verifier. */
function sandbox(task: RehearsalTask, label: string) {
  const root = path.join(tmpRoot, `${task.name}-${label}`);
  mkdirSync(path.join(root, "app"), { recursive: true });
  mkdirSync(path.join(root, "logs/verifier"), { recursive: true });
  writeFileSync(path.join(root, "app/input.txt"), rehearsalTaskFiles(task)["environment/app/input.txt"].text);
  // Container paths → sandbox paths in one pass (the sandbox itself lives under /tmp).
  const rewrite = (script: string) => script.replace(/\/logs\/verifier|\/app|\/tmp\//g, (p) => (p === "/tmp/" ? `${root}/` : `${root}${p}`));
  return { root, rewrite };
}

function bash(script: string, cwd: string): { status: number | null; output: string } {
  const r = spawnSync("bash", ["-c", script], { cwd, encoding: "utf-8", timeout: 20_000 });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

/** Like bash(), without blocking the event loop: for scripts that talk to a server in this process. */
function bashAsync(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve) => {
    execFile("bash", ["-c", script], { cwd, env, encoding: "utf-8", timeout: 20_000 }, (err, stdout, stderr) => {
      resolve({ status: err ? (typeof err.code === "number" ? err.code : 1) : 0, output: `${stdout}${stderr}` });
    });
  });
}

/** Runs the task's tests/test.sh in the sandbox (with `prelude` before it) and returns the reward and its output. */
function verify(task: RehearsalTask, box: ReturnType<typeof sandbox>, opts: { prelude?: string } = {}): { reward: number; output: string } {
  const script = rehearsalTaskFiles(task)["tests/test.sh"].text;
  const r = bash(`${opts.prelude ?? ""}\n${box.rewrite(script)}`, path.join(box.root, "app"));
  expect(r.status, r.output).toBe(0);
  return { reward: Number(readFileSync(path.join(box.root, "logs/verifier/reward.txt"), "utf-8").trim()), output: r.output };
}

describe("rehearsal rules in sim-default.json", () => {
  it("has one generic Terminus-2 rule per behaviour, matched on its marker, before terminus-unknown-task", () => {
    const names = rules.map((r) => r.name);
    for (const b of REHEARSAL_BEHAVIOURS) {
      const rule = rules.find((r) => r.name === `terminus-rehearsal-${b}`);
      expect(rule, b).toBeDefined();
      expect(rule!.match.first_user_contains).toEqual(["tasked with solving command-line tasks", rehearsalMarker(b)]);
      expect(names.indexOf(rule!.name)).toBeLessThan(names.indexOf("terminus-unknown-task"));
    }
  });

  it("overthinks: looks first, writes the answer with its second reply, each reply delayed and thinking long", () => {
    const solves = rules.find((r) => r.name === "terminus-rehearsal-solves")!;
    const slow = rules.find((r) => r.name === "terminus-rehearsal-overthinks")!;
    expect(slow.delay_seconds).toBe(OVERTHINK_DELAY_SECONDS);
    expect(slow.turns!.every((t) => t.reasoning_tokens === OVERTHINK_REASONING_TOKENS)).toBe(true);
    const writes = (t: { json: TerminusReply }) => t.json.commands.some((c) => c.keystrokes.includes("> /app/answer.txt"));
    // The first reply writes nothing; the second writes what solves writes and marks the task complete; the third confirms.
    expect(slow.turns!.map(writes)).toEqual([false, true, false]);
    expect(slow.turns![1].json.commands).toEqual(solves.turns![0].json.commands);
    expect(slow.turns!.map((t) => t.json.task_complete)).toEqual([false, true, true]);
    // On its tier (30 s scaled): the ×3 budget ends before the second reply, the ×6 one holds all three
    // with a margin for the commands and Terminus-2's own work — the 3× vs 6× study's flip.
    const tier = OVERTHINK_TIER_SEC * TIMEOUT_SCALE;
    expect(2 * OVERTHINK_DELAY_SECONDS).toBeGreaterThan(3 * tier);
    expect(slow.turns!.length * OVERTHINK_DELAY_SECONDS).toBeLessThan(6 * tier - 20);
  });
});

describe("scripted-model replay of the rehearsal behaviours", () => {
  let double: RunningDouble;
  let proxy: Server;
  let proxyPort: number;
  let proxyAnswer: "ok" | "502" = "ok";
  const proxied: string[] = [];

  beforeAll(async () => {
    double = await startDouble({ flags: seed000WorkerFlags, scenario: scenarioFile });
    await waitReady(double);
    // Stands in for the container's proxy: sees the absolute URL, answers like the sim's index or fails.
    proxy = createServer((req, res) => {
      proxied.push(req.url ?? "");
      if (proxyAnswer === "502") {
        res.writeHead(502, { "Content-Type": "text/plain" });
        res.end("sim proxy: injected failure\n");
        return;
      }
      const name = /\/rehearsal\/([a-z-]+)\.txt$/.exec(req.url ?? "")?.[1] ?? "";
      res.writeHead(200, { "Content-Type": "text/plain" });
      res.end(rehearsalDownloadText(name));
    });
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
    proxyPort = (proxy.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await double.process.stop();
    await new Promise((r) => proxy.close(r));
  });

  /**
   * Terminus-2's loop over the double (at most `episodes` replies): runs the keystrokes in the sandbox
   * except tmux and sleep, which are only recorded. Stops on the second task_complete in a row.
   */
  async function replay(task: RehearsalTask, box: ReturnType<typeof sandbox>, episodes = 8) {
    const messages = [
      { role: "user", content: `You are an AI assistant tasked with solving command-line tasks in a Linux environment.\n\nTask Description:\n${task.instruction}\n\nCurrent terminal state:\nroot@sim:/app# ` },
    ];
    const replies: TerminusReply[] = [];
    const skipped: Command[] = [];
    let pending = false;
    let finished = false;
    for (let episode = 0; episode < episodes && !finished; episode++) {
      // No thinking: the scripted reply is what is checked here (thinking.test.ts covers thinking).
      const reply = await chat(double.url, { model: "Qwen/Qwen3.8-27B", messages, chat_template_kwargs: { enable_thinking: false } });
      expect(reply.status).toBe(200);
      const content = firstMessage(reply.json).content;
      const parsed = JSON.parse(content) as TerminusReply;
      replies.push(parsed);
      messages.push({ role: "assistant", content });
      if (parsed.task_complete) {
        if (pending) finished = true;
        pending = true;
        messages.push({ role: "user", content: "Are you sure you want to mark the task as complete? ..." });
        continue;
      }
      pending = false;
      let screen = "";
      for (const command of parsed.commands) {
        if (/^\s*(tmux|sleep)\b/.test(command.keystrokes)) skipped.push(command);
        else screen += bash(box.rewrite(command.keystrokes), path.join(box.root, "app")).output;
      }
      messages.push({ role: "user", content: `New Terminal Output:\n${screen}` });
    }
    return { replies, skipped, finished };
  }

  it("solves: the sum, then task_complete twice: reward 1", async () => {
    const task = taskOf("solves");
    const box = sandbox(task, "model");
    const run = await replay(task, box);
    expect(run.finished).toBe(true);
    expect(run.replies).toHaveLength(3);
    expect(verify(task, box).reward).toBe(1);
  });

  it("fails: a wrong answer, then completes: reward 0", async () => {
    const task = taskOf("fails");
    const box = sandbox(task, "model");
    expect((await replay(task, box)).finished).toBe(true);
    expect(Number(readFileSync(path.join(box.root, "app/answer.txt"), "utf-8"))).toBe(task.answer - task.input[0]);
    expect(verify(task, box).reward).toBe(0);
  });

  it("agent-timeout: waits with `sleep 5` on every turn and never completes: reward 0", async () => {
    const task = taskOf("agent-timeout");
    const box = sandbox(task, "model");
    const run = await replay(task, box, 6);
    expect(run.finished).toBe(false);
    expect(run.replies.every((r) => r.task_complete === false)).toBe(true);
    expect(run.skipped).toEqual(Array(6).fill({ keystrokes: `sleep ${WAIT_COMMAND_SECONDS}\n`, duration: WAIT_COMMAND_SECONDS }));
    expect(verify(task, box).reward).toBe(0);
  });

  it("agent-timeout-solved: writes the answer, then waits forever: reward 1 at the timeout", async () => {
    const task = taskOf("agent-timeout-solved");
    const box = sandbox(task, "model");
    const run = await replay(task, box, 6);
    expect(run.finished).toBe(false);
    expect(run.skipped).toHaveLength(5);
    expect(run.skipped.every((c) => c.keystrokes === `sleep ${WAIT_COMMAND_SECONDS}\n`)).toBe(true);
    expect(verify(task, box).reward).toBe(1);
  });

  it("verifier-timeout: the agent solves; test.sh sleeps well past its verifier timeout first", async () => {
    const task = taskOf("verifier-timeout");
    const box = sandbox(task, "model");
    expect((await replay(task, box)).finished).toBe(true);
    // `sleep` shadowed by a function: the check after it still scores 1, and the sleep is recorded.
    const slept = path.join(box.root, "slept");
    const { reward } = verify(task, box, { prelude: `sleep() { echo "$1" > ${slept}; }` });
    expect(reward).toBe(1);
    expect(Number(readFileSync(slept, "utf-8"))).toBe(Math.ceil(task.verifierTimeoutSec * VERIFIER_SLEEP_FACTOR));
    expect(Number(readFileSync(slept, "utf-8"))).toBeGreaterThan(task.verifierTimeoutSec);
  });

  it("kills-tmux: runs `tmux kill-server` with a command after it in the same reply (whose send-keys fails)", async () => {
    const task = taskOf("kills-tmux");
    const box = sandbox(task, "model");
    const run = await replay(task, box, 1);
    expect(run.replies[0].commands.map((c) => c.keystrokes)).toEqual(["tmux kill-server\n", "cat /app/answer.txt\n"]);
    expect(run.skipped).toEqual([{ keystrokes: "tmux kill-server\n", duration: 1 }]);
  });

  it("downloads: the agent solves; the verifier fetches its dependency through the proxy, and a 502 there gives reward 0", async () => {
    const task = taskOf("downloads");
    const box = sandbox(task, "model");
    expect((await replay(task, box)).finished).toBe(true);
    const env = { ...process.env, http_proxy: `http://127.0.0.1:${proxyPort}`, HTTP_PROXY: `http://127.0.0.1:${proxyPort}`, no_proxy: "", NO_PROXY: "" };
    const verifyThroughProxy = async () => {
      const r = await bashAsync(box.rewrite(rehearsalTaskFiles(task)["tests/test.sh"].text), path.join(box.root, "app"), env);
      expect(r.status, r.output).toBe(0);
      return { reward: Number(readFileSync(path.join(box.root, "logs/verifier/reward.txt"), "utf-8").trim()), output: r.output };
    };
    proxyAnswer = "ok";
    const ok = await verifyThroughProxy();
    expect(ok.reward, ok.output).toBe(1);
    expect(proxied).toContain(`http://pypi.sim/rehearsal/${task.name}.txt`);
    proxyAnswer = "502";
    const failed = await verifyThroughProxy();
    expect(failed.reward).toBe(0);
    expect(failed.output).toContain(`verifier: could not install dependency: HTTP 502 through the proxy (http://pypi.sim/rehearsal/${task.name}.txt)`);
    // The audit finds the line: a reward-0 trial it marks as suspected infra.
    expect(scanText(failed.output, "verifier/test-stdout.txt").map((e) => e.signature)).toContain("proxy-502");
    expect(proxied.filter((u) => u.endsWith(`/${task.name}.txt`))).toHaveLength(2); // no retries
  });

  it("overthinks: each reply takes its delay and thinks its tokens when the server thinks", async () => {
    const task = taskOf("overthinks");
    const started = Date.now();
    const reply = await chat(double.url, { model: "Qwen/Qwen3.8-27B", messages: [{ role: "user", content: `You are an AI assistant tasked with solving command-line tasks.\n${task.instruction}` }] });
    const seconds = (Date.now() - started) / 1000;
    expect(reply.status).toBe(200);
    expect(seconds).toBeGreaterThanOrEqual(OVERTHINK_DELAY_SECONDS);
    const message = firstMessage(reply.json);
    expect((message.reasoning_content ?? "").split(/\s+/).filter(Boolean).length).toBe(OVERTHINK_REASONING_TOKENS);
    // The first reply only looks (the answer comes with the second).
    expect((JSON.parse(message.content) as TerminusReply).commands[0].keystrokes).toBe("cat /app/input.txt\n");
  }, 90_000);
});
