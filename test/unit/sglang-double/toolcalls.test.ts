// Tool calls in the double (as SGLang renders them with a tool-call parser) and the mini-swe-agent
// scripts of sim-default.json: Harbor's mini-swe-agent asks for a `bash` tool call per turn and stops
// when a command prints COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT. The scripted commands are replayed in a
// temp directory standing in for the task container and scored by each task's tests/test.sh.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chat, datasetDir, doubleDir, python, scenariosDir, startDouble, waitReady, type RunningDouble } from "./harness";

const SUBMIT = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT";
const tmp = mkdtempSync(path.join(tmpdir(), "sglang-double-toolcalls-"));
const doubles: RunningDouble[] = [];
afterAll(async () => {
  await Promise.all(doubles.map((d) => d.process.stop()));
  rmSync(tmp, { recursive: true, force: true });
});

async function startWith(scenario: string): Promise<RunningDouble> {
  const double = await startDouble({ flags: ["--dp-size", "2", "--tool-call-parser", "qwen3_coder"], scenario });
  doubles.push(double);
  await waitReady(double);
  return double;
}

interface ToolCall {
  id: string;
  index: number;
  type: string;
  function: { name: string; arguments: string };
}
interface AssistantMessage {
  role: string;
  content: string | null;
  tool_calls: ToolCall[] | null;
}
function choice(json: Record<string, unknown>): { message: AssistantMessage; finish_reason: string } {
  return (json.choices as Array<{ message: AssistantMessage; finish_reason: string }>)[0];
}

/** What mini-swe-agent 2.4.6 (config mini.yaml) sends first: a system message, then its instance template. */
function msweaOpening(task: string): Array<Record<string, unknown>> {
  return [
    { role: "system", content: "You are a helpful assistant that can interact with a computer." },
    {
      role: "user",
      content:
        `Please solve this issue: ${task}\n\nYou can execute bash commands and edit files to implement the necessary changes.\n\n` +
        `6. Submit your changes and finish your work by issuing the following command: \`echo ${SUBMIT}\`.\n`,
    },
  ];
}

const bashTool = {
  type: "function",
  function: { name: "bash", description: "Execute a bash command", parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] } },
};

describe("tool calls in /v1/chat/completions", () => {
  let double: RunningDouble;
  beforeAll(async () => {
    const file = path.join(tmp, "tools.json");
    writeFileSync(
      file,
      JSON.stringify({
        rules: [
          {
            name: "two-calls",
            match: { last_user_contains: ["list", "files"] },
            reply: {
              content: "Listing first.",
              tool_calls: [
                { id: "call_fixed", function: { name: "bash", arguments: { command: "ls -la" } } },
                { type: "function", function: { name: "bash", arguments: '{"command": "pwd"}' } },
              ],
            },
          },
          { name: "bare-call", match: { last_user_contains: "bare" }, reply: { tool_calls: [{ function: { name: "bash", arguments: { command: "true" } } }] } },
        ],
      }),
    );
    double = await startWith(file);
  });

  it("renders calls OpenAI-style: ids, type function, arguments as JSON text, finish_reason tool_calls", async () => {
    const reply = await chat(double.url, { messages: [{ role: "user", content: "please list the files" }], tools: [bashTool] });
    expect(reply.status).toBe(200);
    const { message, finish_reason } = choice(reply.json);
    expect(finish_reason).toBe("tool_calls");
    expect(message.content).toBe("Listing first.");
    expect(message.tool_calls).toHaveLength(2);
    const [first, second] = message.tool_calls ?? [];
    expect(first).toMatchObject({ id: "call_fixed", index: 0, type: "function", function: { name: "bash" } });
    expect(JSON.parse(first.function.arguments)).toEqual({ command: "ls -la" });
    expect(second.id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(second.index).toBe(1);
    expect(JSON.parse(second.function.arguments)).toEqual({ command: "pwd" });
    // Generated ids are fresh per response (clients pair tool results with them).
    const again = choice((await chat(double.url, { messages: [{ role: "user", content: "list files" }] })).json);
    expect(again.message.tool_calls?.[1].id).not.toBe(second.id);
  });

  it("a list in *_contains needs every string; a call without text has content null", async () => {
    const noMatch = await chat(double.url, { messages: [{ role: "user", content: "list nothing" }] });
    expect(noMatch.headers.get("x-double-rule")).toBe("default");
    expect(choice(noMatch.json).message.tool_calls).toBeNull();
    const bare = choice((await chat(double.url, { messages: [{ role: "user", content: "bare" }] })).json);
    expect(bare.message.content).toBeNull();
    expect(bare.finish_reason).toBe("tool_calls");
  });

  it("refuses to stream a tool-call reply instead of dropping the calls", async () => {
    const streamed = await chat(double.url, { messages: [{ role: "user", content: "bare" }], stream: true });
    expect(streamed.status).toBe(400);
    expect(String(streamed.json.message)).toContain("bare-call");
  });
});

describe("scenario validation of tool calls", () => {
  /** Parse a scenario in-process; returns the ScenarioError text, or "" when it loads. */
  function parseError(scenario: unknown): string {
    const code = "import json, sys\nfrom sglang_double.scenario import parse_scenario, ScenarioError\ntry:\n    parse_scenario(json.loads(sys.stdin.read()), 't.json')\nexcept ScenarioError as e:\n    print(e)";
    const run = spawnSync(python, ["-c", code], { input: JSON.stringify(scenario), encoding: "utf-8", env: { ...process.env, PYTHONPATH: doubleDir, PYTHONDONTWRITEBYTECODE: "1" } });
    expect(run.status, run.stderr).toBe(0);
    return run.stdout.trim();
  }
  const withReply = (reply: unknown, match: unknown = { last_user_contains: "x" }) => ({ rules: [{ name: "r", match, reply }] });

  it("names the bad key", () => {
    expect(parseError(withReply({ tool_calls: [] }))).toContain("rules[0].reply.tool_calls must be a non-empty list");
    expect(parseError(withReply({ tool_calls: [{ function: { name: "bash", arguments: "{not json" } }] }))).toContain(
      "rules[0].reply.tool_calls[0].function.arguments is a string but not JSON text",
    );
    expect(parseError(withReply({ tool_calls: [{ type: "tool", function: { name: "bash" } }] }))).toContain("tool_calls[0].type must be 'function'");
    expect(parseError(withReply({ tool_calls: [{ function: { arguments: {} } }] }))).toContain("tool_calls[0].function.name must be a non-empty string");
    expect(parseError(withReply({ tool_calls: [{ function: { name: "bash", argz: {} } }] }))).toContain("tool_calls[0].function.argz is not a known key");
    expect(parseError(withReply({ reasoning_content: "only" }))).toContain("needs exactly one of 'content' (text) or 'json'");
    expect(parseError(withReply({ content: "a" }, { first_user_contains: ["a", 3] }))).toContain("match.first_user_contains must be a string or a non-empty list of strings");
    expect(parseError(withReply({ content: "a" }, { any_user_contains: [] }))).toContain("match.any_user_contains must be a string or a non-empty list of strings");
    expect(parseError(withReply({ content: "ok", tool_calls: [{ function: { name: "bash", arguments: { command: "ls" } } }] }))).toBe("");
  });
});

describe("sim-default.json drives mini-swe-agent through sim/dataset", () => {
  let double: RunningDouble;
  beforeAll(async () => {
    double = await startWith(path.join(scenariosDir, "sim-default.json"));
  });

  /** Play mini-swe-agent against the double: one bash call per turn until the submit command. */
  async function play(task: string): Promise<{ rule: string; commands: string[] }> {
    const messages = msweaOpening(task);
    const commands: string[] = [];
    let rule = "";
    for (let turn = 0; turn < 5; turn++) {
      const reply = await chat(double.url, { model: "Qwen/Qwen3.8-27B", messages, tools: [bashTool] });
      expect(reply.status).toBe(200);
      rule = reply.headers.get("x-double-rule") ?? "";
      const { message, finish_reason } = choice(reply.json);
      expect(finish_reason).toBe("tool_calls");
      expect(message.tool_calls).toHaveLength(1);
      const call = (message.tool_calls ?? [])[0];
      expect(call.function.name).toBe("bash");
      const command = (JSON.parse(call.function.arguments) as { command: string }).command;
      if (command === `echo ${SUBMIT}`) return { rule, commands };
      commands.push(command);
      messages.push({ role: "assistant", content: message.content, tool_calls: message.tool_calls });
      messages.push({ role: "tool", tool_call_id: call.id, content: '{"returncode": 0, "output": ""}' });
    }
    throw new Error(`rule ${rule} never submitted`);
  }

  function replay(task: string, commands: string[]): number {
    const root = path.join(tmp, `replay-${task}`);
    mkdirSync(path.join(root, "app"), { recursive: true });
    mkdirSync(path.join(root, "logs/verifier"), { recursive: true });
    const shipped = path.join(datasetDir, task, "environment/app");
    if (existsSync(shipped)) cpSync(shipped, path.join(root, "app"), { recursive: true });
    const rewrite = (script: string) => script.replaceAll("/logs/verifier", `${root}/logs/verifier`).replaceAll("/app", `${root}/app`);
    for (const command of commands) {
      const run = spawnSync("bash", ["-c", rewrite(command)], { cwd: path.join(root, "app"), encoding: "utf-8", timeout: 20_000 });
      expect(run.status, `${command}\n${run.stdout}${run.stderr}`).toBe(0);
    }
    const test = spawnSync("bash", ["-c", rewrite(readFileSync(path.join(datasetDir, task, "tests/test.sh"), "utf-8"))], { cwd: path.join(root, "app"), encoding: "utf-8", timeout: 20_000 });
    expect(test.status, test.stdout + test.stderr).toBe(0);
    return Number(readFileSync(path.join(root, "logs/verifier/reward.txt"), "utf-8").trim());
  }

  it.each([
    ["hello-file", 1],
    ["sum-numbers", 1],
    ["sha-preimage", 0],
  ])("%s: the scripted commands score reward %d, then the agent submits", async (task, expected) => {
    const instruction = readFileSync(path.join(datasetDir, task, "instruction.md"), "utf-8");
    const { rule, commands } = await play(instruction);
    expect(rule).toBe(`mswea-${task}`);
    expect(commands.length).toBeGreaterThan(0);
    expect(replay(task, commands)).toBe(expected);
  });

  it("an unknown task is submitted at once; Terminus-2 prompts still get the Terminus rules", async () => {
    expect(await play("Build a compiler.")).toEqual({ rule: "mswea-unknown-task", commands: [] });
    const terminus = await chat(double.url, {
      messages: [{ role: "user", content: "You are an AI assistant tasked with solving command-line tasks in a Linux environment.\n\nTask Description:\nCreate the file `/app/hello.txt` containing exactly one line" }],
    });
    expect(terminus.headers.get("x-double-rule")).toBe("terminus-hello-file");
    expect(choice(terminus.json).message.tool_calls).toBeNull();
  });
});
