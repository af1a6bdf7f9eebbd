// The double as a thinking model (Qwen3 behind `--reasoning-parser qwen3`): it thinks before it answers,
// the thinking goes to reasoning_content and counts in completion_tokens (and usage.reasoning_tokens),
// max_tokens / max_completion_tokens caps thinking and answer together, and a budget spent while
// thinking ends in finish_reason "length" with no answer. chat_template_kwargs.enable_thinking per
// request sits on top of --default-chat-template-kwargs (a request key wins); always-thinking parsers
// ignore it. Same in vLLM mode, with vLLM's field names and content null when cut off.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chat, doubleDir, python, scenariosDir, seed000WorkerFlags, sseFrames, startDouble, startVllmDouble, waitReady, type RunningDouble } from "./harness";

const tmp = mkdtempSync(path.join(tmpdir(), "sglang-double-thinking-"));
const started: RunningDouble[] = [];
afterAll(async () => {
  await Promise.all(started.map((d) => d.process.stop()));
  rmSync(tmp, { recursive: true, force: true });
});

const THINK = 300;
const ANSWER = "the default answer has six words";
const scenarioFile = path.join(tmp, "thinking.json");
writeFileSync(
  scenarioFile,
  JSON.stringify({
    name: "thinking",
    reasoning: { tokens: THINK },
    default: { content: ANSWER },
    rules: [
      { name: "brief", match: { last_user_contains: "think briefly" }, reply: { content: "done", reasoning_tokens: 7 } },
      { name: "scripted", match: { last_user_contains: "scripted" }, reply: { content: "ok", reasoning_content: "I know exactly what to say." } },
      { name: "tool", match: { last_user_contains: "run ls" }, reply: { tool_calls: [{ function: { name: "bash", arguments: { command: "ls" } } }] } },
    ],
  }),
);

async function sglang(flags: string[], scenario = scenarioFile): Promise<RunningDouble> {
  const double = await startDouble({ flags: ["--dp-size", "2", ...flags], scenario });
  started.push(double);
  await waitReady(double);
  return double;
}

interface Message {
  role: string;
  content: string | null;
  reasoning_content?: string | null;
  reasoning?: string | null;
  tool_calls: unknown[] | null;
}
interface Completion {
  choices: Array<{ message: Message; finish_reason: string }>;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number; reasoning_tokens?: number };
}

async function ask(double: RunningDouble, text: string, extra: Record<string, unknown> = {}): Promise<{ message: Message; finish: string; usage: Completion["usage"] }> {
  const reply = await chat(double.url, { messages: [{ role: "user", content: text }], ...extra });
  expect(reply.status, JSON.stringify(reply.json)).toBe(200);
  const json = reply.json as unknown as Completion;
  return { message: json.choices[0].message, finish: json.choices[0].finish_reason, usage: json.usage };
}

const words = (text: string | null | undefined) => (text ? text.split(/\s+/).filter(Boolean).length : 0);

async function stream(double: RunningDouble, body: Record<string, unknown>) {
  const response = await fetch(`${double.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ stream: true, stream_options: { include_usage: true }, ...body }),
  });
  expect(response.status).toBe(200);
  const chunks = sseFrames(await response.text()) as Array<{
    choices: Array<{ delta: Record<string, string | undefined>; finish_reason: string | null }>;
    usage?: Completion["usage"];
  }>;
  const deltas = chunks.flatMap((c) => c.choices.map((ch) => ch.delta));
  return {
    deltas,
    reasoning: deltas.map((d) => d.reasoning_content ?? "").join(""),
    content: deltas.map((d) => d.content ?? "").join(""),
    finish: chunks.flatMap((c) => c.choices.map((ch) => ch.finish_reason)).filter(Boolean),
    usage: chunks[chunks.length - 1].usage,
  };
}

describe("SGLang mode, --reasoning-parser qwen3, thinking on (the default)", () => {
  let double: RunningDouble;
  beforeAll(async () => {
    double = await sglang(["--reasoning-parser", "qwen3"]);
  });

  it("thinks first: reasoning_content holds the thinking, counted in completion_tokens and usage.reasoning_tokens", async () => {
    const { message, finish, usage } = await ask(double, "hello there");
    expect(message.content).toBe(ANSWER);
    expect(words(message.reasoning_content)).toBe(THINK);
    expect(message.reasoning_content).toMatch(/^Okay, the user wrote: "hello there"\./);
    expect(finish).toBe("stop");
    expect(usage).toMatchObject({ reasoning_tokens: THINK, completion_tokens: THINK + 6 });
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
  });

  it("one budget for thinking and answer: max_tokens just above the thinking cuts the answer", async () => {
    const { message, finish, usage } = await ask(double, "hello", { max_tokens: THINK + 3 });
    expect(words(message.reasoning_content)).toBe(THINK);
    expect(message.content).toBe("the default answer");
    expect(finish).toBe("length");
    expect(usage).toMatchObject({ completion_tokens: THINK + 3, reasoning_tokens: THINK });
  });

  it("a budget spent while thinking: finish_reason length, content empty, the thinking cut at the budget", async () => {
    const { message, finish, usage } = await ask(double, "Reply with exactly READY.", { max_tokens: 64 });
    expect(finish).toBe("length");
    expect(message.content).toBe("");
    expect(words(message.reasoning_content)).toBe(64);
    // The thinking quotes the request, READY included: only content is the answer.
    expect(message.reasoning_content).toContain("READY");
    expect(usage).toMatchObject({ completion_tokens: 64, reasoning_tokens: 64 });
  });

  it("max_completion_tokens is the budget when both are sent (SGLang: max_completion_tokens or max_tokens)", async () => {
    const { message, finish, usage } = await ask(double, "hello", { max_completion_tokens: 20, max_tokens: 5000 });
    expect(finish).toBe("length");
    expect(words(message.reasoning_content)).toBe(20);
    expect(usage.completion_tokens).toBe(20);
  });

  it("a tool call the budget never reached is not returned", async () => {
    const cut = await ask(double, "run ls", { max_tokens: 10 });
    expect(cut.finish).toBe("length");
    expect(cut.message.tool_calls).toBeNull();
    const full = await ask(double, "run ls");
    expect(full.finish).toBe("tool_calls");
    expect(full.message.tool_calls).toHaveLength(1);
    expect(words(full.message.reasoning_content)).toBe(THINK);
  });

  it("a reply may set its own thinking length (reasoning_tokens) or script the thinking text", async () => {
    const brief = await ask(double, "think briefly");
    expect(words(brief.message.reasoning_content)).toBe(7);
    expect(brief.usage).toMatchObject({ reasoning_tokens: 7, completion_tokens: 8 });
    expect((await ask(double, "scripted")).message.reasoning_content).toBe("I know exactly what to say.");
  });

  it("chat_template_kwargs {enable_thinking: false} per request: no thinking, reasoning_content null, the whole budget for the answer", async () => {
    const { message, finish, usage } = await ask(double, "hello", { max_tokens: 64, chat_template_kwargs: { enable_thinking: false } });
    expect(message.content).toBe(ANSWER);
    expect("reasoning_content" in message).toBe(true);
    expect(message.reasoning_content).toBeNull();
    expect(finish).toBe("stop");
    expect(usage).toMatchObject({ completion_tokens: 6, reasoning_tokens: 0 });
  });

  it("separate_reasoning=false puts the thinking inline, left open when cut off", async () => {
    const inline = await ask(double, "hello", { separate_reasoning: false });
    expect(inline.message.content).toMatch(new RegExp(`^<think>Okay, .*</think>${ANSWER}$`));
    const cut = await ask(double, "hello", { separate_reasoning: false, max_tokens: 5 });
    expect(cut.message.content).toMatch(/^<think>\S+( \S+){4}$/);
    expect(cut.message.reasoning_content).toBeNull();
  });

  it("streams the thinking first (delta.reasoning_content), then the answer; usage counts both", async () => {
    const whole = await ask(double, "hello");
    const s = await stream(double, { messages: [{ role: "user", content: "hello" }] });
    expect(s.reasoning).toBe(whole.message.reasoning_content);
    expect(s.content).toBe(ANSWER);
    const lastReasoning = s.deltas.map((d) => d.reasoning_content !== undefined).lastIndexOf(true);
    const firstContent = s.deltas.findIndex((d) => (d.content ?? "") !== "");
    expect(lastReasoning).toBeGreaterThan(0);
    expect(firstContent).toBeGreaterThan(lastReasoning);
    expect(s.deltas.filter((d) => d.reasoning_content !== undefined).length).toBe(THINK);
    expect(s.finish).toEqual(["stop"]);
    expect(s.usage).toMatchObject({ reasoning_tokens: THINK, completion_tokens: THINK + 6 });
  });

  it("a stream cut off while thinking has no answer and ends in length; stream_reasoning=false sends the thinking in one delta", async () => {
    const cut = await stream(double, { messages: [{ role: "user", content: "hello" }], max_tokens: 10 });
    expect(words(cut.reasoning)).toBe(10);
    expect(cut.content).toBe("");
    expect(cut.finish).toEqual(["length"]);
    expect(cut.usage).toMatchObject({ completion_tokens: 10, reasoning_tokens: 10 });
    const buffered = await stream(double, { messages: [{ role: "user", content: "hello" }], stream_reasoning: false });
    expect(buffered.deltas.filter((d) => d.reasoning_content !== undefined)).toHaveLength(1);
    expect(words(buffered.reasoning)).toBe(THINK);
  });
});

describe("--default-chat-template-kwargs '{\"enable_thinking\": false}' (seed 002 Run 3) and per-request kwargs", () => {
  let double: RunningDouble;
  beforeAll(async () => {
    double = await sglang(["--reasoning-parser", "qwen3", "--default-chat-template-kwargs", '{"enable_thinking": false}']);
  });

  it("the server default switches thinking off", async () => {
    const { message, usage } = await ask(double, "hello");
    expect(message.reasoning_content).toBeNull();
    expect(usage.reasoning_tokens).toBe(0);
  });

  it("a request's enable_thinking wins over the server default", async () => {
    const { message } = await ask(double, "hello", { chat_template_kwargs: { enable_thinking: true } });
    expect(words(message.reasoning_content)).toBe(THINK);
  });

  it("request kwargs are merged over the default key by key: other keys leave the default's enable_thinking in force", async () => {
    const { message } = await ask(double, "hello", { chat_template_kwargs: { some_template_flag: 1 } });
    expect(message.reasoning_content).toBeNull();
  });
});

describe("who never thinks, who always does", () => {
  it("no --reasoning-parser: no reasoning_content even with enable_thinking true", async () => {
    const double = await sglang([]);
    const { message, usage } = await ask(double, "hello", { chat_template_kwargs: { enable_thinking: true } });
    expect(message.content).toBe(ANSWER);
    expect(message.reasoning_content).toBeNull();
    expect(usage.completion_tokens).toBe(6);
  });

  it("an always-thinking parser (qwen3-thinking) thinks whatever enable_thinking says, per request or by default", async () => {
    const double = await sglang(["--reasoning-parser", "qwen3-thinking", "--default-chat-template-kwargs", '{"enable_thinking": false}']);
    const { message, finish } = await ask(double, "hello", { chat_template_kwargs: { enable_thinking: false }, max_tokens: 64 });
    expect(finish).toBe("length");
    expect(words(message.reasoning_content)).toBe(64);
    expect(message.content).toBe("");
  });
});

describe("vLLM mode (`vllm serve --reasoning-parser qwen3`)", () => {
  let double: RunningDouble;
  beforeAll(async () => {
    double = await startVllmDouble({ flags: ["--reasoning-parser", "qwen3"], scenario: scenarioFile });
    started.push(double);
  });

  it("thinks in `reasoning` (and the older `reasoning_content`); cut off while thinking, content is null", async () => {
    const whole = await ask(double, "hello");
    expect(whole.message.content).toBe(ANSWER);
    expect(words(whole.message.reasoning)).toBe(THINK);
    expect(whole.message.reasoning_content).toBe(whole.message.reasoning);
    expect(whole.usage.completion_tokens).toBe(THINK + 6);
    expect("reasoning_tokens" in whole.usage).toBe(false);
    const cut = await ask(double, "hello", { max_tokens: 64 });
    expect(cut.finish).toBe("length");
    expect(cut.message.content).toBeNull();
    expect(words(cut.message.reasoning)).toBe(64);
  });

  it("enable_thinking false per request turns it off; streamed thinking carries `reasoning`", async () => {
    const off = await ask(double, "hello", { chat_template_kwargs: { enable_thinking: false } });
    expect(off.message.reasoning).toBeNull();
    expect(off.message.content).toBe(ANSWER);
    const s = await stream(double, { messages: [{ role: "user", content: "hello" }], max_tokens: 3 });
    expect(s.deltas.filter((d) => d.reasoning !== undefined).map((d) => d.reasoning).join("")).toBe(s.reasoning);
    expect(words(s.reasoning)).toBe(3);
    expect(s.finish).toEqual(["length"]);
  });
});

describe("sim-default.json on seed 000's flags (qwen3, thinking on): the agents still get their answers", () => {
  const defaultScenario = path.join(scenariosDir, "sim-default.json");
  const configured = (JSON.parse(readFileSync(defaultScenario, "utf-8")) as { reasoning: { tokens: number } }).reasoning.tokens;
  let double: RunningDouble;
  beforeAll(async () => {
    double = await sglang(seed000WorkerFlags.filter((f, i, all) => f !== "--dp-size" && all[i - 1] !== "--dp-size"), defaultScenario);
  });

  it("thinks several hundred tokens by default, so seed 000's probe budget (128) ends before the answer", async () => {
    expect(configured).toBeGreaterThanOrEqual(200);
    const free = await ask(double, "Reply with exactly READY.");
    expect(free.message.content).toBe("READY");
    expect(free.usage.reasoning_tokens).toBe(configured);
    const seed = await ask(double, "Reply with exactly READY.", { max_tokens: 128, temperature: 0 });
    expect(seed.finish).toBe("length");
    expect(seed.message.content).toBe("");
  });

  it("Terminus-2 (LiteLLM, no max_tokens) gets its JSON turn in content, the thinking beside it", async () => {
    const prompt =
      "You are an AI assistant tasked with solving command-line tasks in a Linux environment.\n\nTask Description:\n" +
      "Create the file `/app/hello.txt` containing exactly one line: `Hello from reprobench!`\n\nCurrent terminal state:\nroot@x:/app# ";
    const { message, finish } = await ask(double, prompt);
    expect(finish).toBe("stop");
    expect(words(message.reasoning_content)).toBe(configured);
    const turn = JSON.parse(message.content ?? "") as { task_complete: boolean; commands: unknown[] };
    expect(turn.task_complete).toBe(false);
    expect(turn.commands.length).toBeGreaterThan(0);
  });

  it("mini-swe-agent gets its bash tool call after the thinking", async () => {
    const reply = await chat(double.url, {
      messages: [
        { role: "system", content: "You are a helpful assistant that can interact with a computer." },
        {
          role: "user",
          content:
            "Please solve this issue: Create the file `/app/hello.txt` containing exactly one line: `Hello from reprobench!`\n\n" +
            "6. Submit your changes and finish your work by issuing the following command: `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`.\n",
        },
      ],
      tools: [{ type: "function", function: { name: "bash", parameters: { type: "object" } } }],
    });
    const json = reply.json as unknown as Completion;
    expect(json.choices[0].finish_reason).toBe("tool_calls");
    expect(json.choices[0].message.tool_calls).toHaveLength(1);
    expect(words(json.choices[0].message.reasoning_content)).toBe(configured);
  });
});

describe("scenario validation of the thinking keys", () => {
  function parseError(scenario: unknown): string {
    const code = "import json, sys\nfrom sglang_double.scenario import parse_scenario, ScenarioError\ntry:\n    s = parse_scenario(json.loads(sys.stdin.read()), 't.json')\n    print('ok', s.reasoning_tokens)\nexcept ScenarioError as e:\n    print(e)";
    const run = spawnSync(python, ["-c", code], { input: JSON.stringify(scenario), encoding: "utf-8", env: { ...process.env, PYTHONPATH: doubleDir, PYTHONDONTWRITEBYTECODE: "1" } });
    expect(run.status, run.stderr).toBe(0);
    return run.stdout.trim();
  }

  it("defaults to several hundred tokens; names a bad key", () => {
    expect(parseError({})).toBe("ok 400");
    expect(parseError({ reasoning: { tokens: 0 } })).toBe("ok 0");
    expect(parseError({ reasoning: { tokens: -1 } })).toContain("reasoning.tokens must be an integer >= 0");
    expect(parseError({ reasoning: { tokenz: 5 } })).toContain("reasoning.tokenz is not a known key");
    expect(parseError({ rules: [{ name: "r", reply: { content: "a", reasoning_tokens: 1.5 } }] })).toContain("rules[0].reply.reasoning_tokens must be an integer >= 0");
    expect(parseError({ rules: [{ name: "r", reply: { content: "a", reasoning_tokens: 3, reasoning_content: "x" } }] })).toContain(
      "rules[0].reply has both reasoning_content and reasoning_tokens",
    );
  });
});
