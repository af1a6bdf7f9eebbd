// Scripted model behaviour: scenario rules decide replies, multi-turn Terminus-2 scripts, delays and faults.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chat, firstMessage, scenariosDir, startDouble, waitReady, type RunningDouble } from "./harness";

const tmp = mkdtempSync(path.join(tmpdir(), "sglang-double-scenario-"));
const doubles: RunningDouble[] = [];
afterAll(async () => {
  await Promise.all(doubles.map((d) => d.process.stop()));
  rmSync(tmp, { recursive: true, force: true });
});

async function startWith(scenario: string, flags = ["--dp-size", "2"]): Promise<RunningDouble> {
  const double = await startDouble({ flags, scenario });
  doubles.push(double);
  await waitReady(double);
  return double;
}

const user = (content: string) => ({ role: "user", content });
const assistant = (content: string) => ({ role: "assistant", content });

describe("sim-default.json", () => {
  let double: RunningDouble;
  beforeAll(async () => {
    double = await startWith(path.join(scenariosDir, "sim-default.json"));
  });

  it("answers seed 000's probe 'Reply with exactly READY.' with READY", async () => {
    const reply = await chat(double.url, { model: "Qwen/Qwen3.8-27B", messages: [user("Reply with exactly READY.")], temperature: 0, max_tokens: 128 });
    expect(reply.status).toBe(200);
    expect(firstMessage(reply.json).content).toBe("READY");
    expect(reply.headers.get("x-double-rule")).toBe("ready-probe");
  });

  it("anything else gets the default reply, naming host and rank", async () => {
    const reply = await chat(double.url, { messages: [user("What is 2+2?")], data_parallel_rank: 1 });
    expect(reply.headers.get("x-double-rule")).toBe("default");
    expect(firstMessage(reply.json).content).toContain(`${double.hostTag} (dp rank 1)`);
  });

  it("drives Terminus-2 by turn: commands first, then task_complete twice", async () => {
    const prompt =
      "You are an AI assistant tasked with solving command-line tasks in a Linux environment.\n\nTask Description:\n" +
      "Create the file `/app/hello.txt` containing exactly one line: `Hello from reprobench!`\n\nCurrent terminal state:\nroot@x:/app# ";
    const turns: Array<Record<string, unknown>> = [];
    const messages: Array<{ role: string; content: string }> = [user(prompt)];
    for (let i = 0; i < 3; i++) {
      const reply = await chat(double.url, { messages });
      expect(reply.headers.get("x-double-rule")).toBe("terminus-hello-file");
      expect(reply.headers.get("x-double-turn")).toBe(String(i));
      const content = firstMessage(reply.json).content;
      turns.push(JSON.parse(content) as Record<string, unknown>);
      messages.push(assistant(content), user(i === 0 ? "New Terminal Output:\nHello from reprobench!" : "Are you sure you want to mark the task as complete?"));
    }
    expect(turns.map((t) => t.task_complete)).toEqual([false, true, true]);
    for (const turn of turns) expect(Object.keys(turn).sort()).toEqual(["analysis", "commands", "plan", "task_complete"]);
    const commands = turns[0].commands as Array<{ keystrokes: string; duration: number }>;
    expect(commands[0].keystrokes).toContain("/app/hello.txt");
    expect(commands.every((c) => c.keystrokes.endsWith("\n") && typeof c.duration === "number")).toBe(true);
  });

  it("an unknown Terminus-2 task is given up at once instead of looping", async () => {
    const reply = await chat(double.url, { messages: [user("You are an AI assistant tasked with solving command-line tasks in a Linux environment.\n\nTask Description:\nBuild a compiler.")] });
    expect(reply.headers.get("x-double-rule")).toBe("terminus-unknown-task");
    expect(JSON.parse(firstMessage(reply.json).content)).toMatchObject({ commands: [], task_complete: true });
  });

  it("fault triggers: HTTP 500, and 503 only on dp rank 1", async () => {
    const failed = await chat(double.url, { messages: [user("please [[double:fail-500]]")] });
    expect(failed.status).toBe(500);
    expect(failed.json.message).toContain("fault-500");
    const onRank1 = await chat(double.url, { messages: [user("[[double:fail-rank-1]]")], data_parallel_rank: 1 });
    expect(onRank1.status).toBe(503);
    const onRank0 = await chat(double.url, { messages: [user("[[double:fail-rank-1]]")], data_parallel_rank: 0 });
    expect(onRank0.status).toBe(200);
  });

  it("a disconnect fault drops the connection without any reply", async () => {
    await expect(chat(double.url, { messages: [user("[[double:disconnect]]")] })).rejects.toThrow();
    // ...and the server is still fine.
    expect((await chat(double.url, { messages: [user("Reply with exactly READY.")] })).status).toBe(200);
  });
});

describe("scenario rules from a file written by the test", () => {
  it("`times` limits a rule to its first N matches; `delay_seconds` slows the reply; `hang_seconds` drops it late", async () => {
    const file = path.join(tmp, "flaky.json");
    writeFileSync(
      file,
      JSON.stringify({
        name: "flaky",
        rules: [
          { name: "flaky", match: { last_user_contains: "flaky" }, times: 2, fail: { status: 502, message: "warming up" } },
          { name: "flaky-ok", match: { last_user_contains: "flaky" }, reply: { content: "recovered" } },
          { name: "slow", match: { last_user_regex: "^slow \\d+$" }, delay_seconds: 0.4, reply: { content: "finally" } },
          { name: "hang", match: { any_user_contains: "hang" }, fail: { hang_seconds: 0.3 } },
        ],
      }),
    );
    const double = await startWith(file);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await chat(double.url, { messages: [user("flaky")] })).status);
    expect(statuses).toEqual([502, 502, 200]);

    const started = Date.now();
    const slow = await chat(double.url, { messages: [user("slow 7")] });
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(firstMessage(slow.json).content).toBe("finally");
    expect((await chat(double.url, { messages: [user("slow seven")] })).headers.get("x-double-rule")).toBe("default");

    await expect(chat(double.url, { messages: [user("hang please")] })).rejects.toThrow();
    const stats = (await (await fetch(`${double.url}/_double/stats`)).json()) as { rules: Record<string, number> };
    expect(stats.rules).toEqual({ flaky: 2, "flaky-ok": 1, slow: 1, hang: 1 });
  });

  it("rules can match on model, dp rank and host; the first matching rule wins", async () => {
    const file = path.join(tmp, "targeted.json");
    writeFileSync(
      file,
      JSON.stringify({
        default: { content: "fallback" },
        rules: [
          { name: "rank1-model-a", match: { model: "a", dp_rank: 1 }, reply: { content: "a on rank 1" } },
          { name: "model-a", match: { model: "a" }, reply: { content: "a anywhere" } },
          { name: "other-host", match: { host: "not-this-host" }, reply: { content: "never" } },
        ],
      }),
    );
    const double = await startWith(file);
    const answer = async (body: Record<string, unknown>) => firstMessage((await chat(double.url, { messages: [user("q")], ...body })).json).content;
    expect(await answer({ model: "a", data_parallel_rank: 1 })).toBe("a on rank 1");
    expect(await answer({ model: "a", data_parallel_rank: 0 })).toBe("a anywhere");
    expect(await answer({ model: "b", data_parallel_rank: 0 })).toBe("fallback");
  });
});

describe("runtime fault injection through /_double/state", () => {
  it("forces /health 503 and chat failures, then recovers", async () => {
    const double = await startWith(path.join(scenariosDir, "sim-default.json"));
    const setState = (state: Record<string, unknown>) =>
      fetch(`${double.url}/_double/state`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(state) });
    expect((await setState({ health_status: 503, chat_fail_status: 500 })).status).toBe(200);
    expect((await fetch(`${double.url}/health`)).status).toBe(503);
    expect((await chat(double.url, { messages: [user("Reply with exactly READY.")] })).status).toBe(500);
    await setState({ health_status: null, chat_fail_status: null });
    expect((await fetch(`${double.url}/health`)).status).toBe(200);
    expect((await chat(double.url, { messages: [user("Reply with exactly READY.")] })).status).toBe(200);
    const bad = await setState({ helth_status: 503 });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("helth_status");
  });
});
