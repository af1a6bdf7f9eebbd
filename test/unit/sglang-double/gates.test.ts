// The gates that send a completion, run for real (bash + curl + jq) against the thinking double on
// loopback: the router gate's READY probe (components/scripts/ready-probe.sh, run by the router gate
// after sglang-router.sh) and the worker gate's thinking-off check (components/scripts/sglang-worker.sh
// with EXPECT_NO_REASONING=1). The seed's old probe (max_tokens 64, no chat_template_kwargs, READY
// required in content) is run too: it passes against a model that does not think and fails against
// Qwen3 with --reasoning-parser qwen3, which is what the real cluster serves.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot, scenariosDir, seed000WorkerFlags, startDouble, startVllmDouble, waitReady, type RunningDouble } from "./harness";

const KEY = "gate-test-key";
const MODEL = "Qwen/Qwen3.8-27B";
const scenario = path.join(scenariosDir, "sim-default.json");
const script = (name: string) => path.join(repoRoot, "components/scripts", name);

/** Seed 000's worker flags without --reasoning-parser (a model served without thinking). */
const withoutParser = seed000WorkerFlags.filter((f, i, all) => f !== "--reasoning-parser" && all[i - 1] !== "--reasoning-parser");

const started: RunningDouble[] = [];
afterAll(async () => {
  await Promise.all(started.map((d) => d.process.stop()));
});

/** A double with seed 000's worker flags (qwen3 reasoning parser: thinking on unless switched off) plus `extra`. */
async function worker(extra: string[] = [], flags = seed000WorkerFlags): Promise<RunningDouble> {
  const double = await startDouble({ flags: [...flags, "--api-key", KEY, ...extra], scenario });
  started.push(double);
  await waitReady(double);
  return double;
}

function run(args: string[], env: Record<string, string>) {
  const r = spawnSync("bash", args, { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env }, encoding: "utf8", timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The completion step of the seed's router gate (sglang-router.sh before this change, verbatim), with the helpers it used. */
const OLD_ROUTER_PROBE = `set -euo pipefail
die() { echo "sglang-router[$CONTAINER_NAME]: $*" >&2; exit 1; }
log() { echo "sglang-router[$CONTAINER_NAME]: $*" >&2; }
auth=(-H "Authorization: Bearer $API_KEY")
body=$(jq -nc --arg m "$SERVED_MODEL_NAME" '{model: $m, max_tokens: 64, temperature: 0,
  messages: [{role: "user", content: "Reply with exactly READY."}]}')
reply=$(curl -fsS --max-time 600 "\${auth[@]}" -H 'Content-Type: application/json' -d "$body" "$ROUTER_URL/v1/chat/completions") ||
  die "chat completion through the router failed"
content=$(jq -r '.choices[0].message.content // ""' <<<"$reply")
grep -q READY <<<"$content" || die "completion did not answer READY: $(jq -c '.choices[0].message' <<<"$reply")"
log "completion through the router answered READY"
`;

const oldProbe = (url: string) => run(["-c", OLD_ROUTER_PROBE], { ROUTER_URL: url, API_KEY: KEY, SERVED_MODEL_NAME: MODEL, CONTAINER_NAME: "router" });
const readyProbe = (url: string, env: Record<string, string> = {}) =>
  run([script("ready-probe.sh")], { PROBE_URL: url, API_KEY: KEY, SERVED_MODEL_NAME: MODEL, PROBE_NAME: "sglang-router[router]", ...env });

describe("the router gate's READY probe against a thinking model (seed 000's workers: --reasoning-parser qwen3)", () => {
  let thinking: RunningDouble;
  let plain: RunningDouble;
  beforeAll(async () => {
    thinking = await worker();
    plain = await worker([], withoutParser);
  });

  it("the OLD probe passes against a model that does not think, and FAILS against the thinking one: max_tokens 64 is all thinking", () => {
    const before = oldProbe(plain.url);
    expect(before.stderr).toContain("answered READY");
    expect(before.status).toBe(0);
    const old = oldProbe(thinking.url);
    expect(old.status).toBe(1);
    expect(old.stderr).toContain("completion did not answer READY");
    expect(old.stderr).toContain('"content":""');
    expect(old.stderr).toMatch(/"reasoning_content":"Okay, the user wrote: \\"Reply with exactly READY\./);
  });

  it("the NEW probe (ready-probe.sh) passes against it for the right reason: thinking off per request, READY in content", () => {
    const r = readyProbe(thinking.url);
    expect(r.stderr).toContain("sglang-router[router]: completion answered READY (finish_reason stop, 1 completion tokens, no thinking)");
    expect(r.status).toBe(0);
    expect(r.stdout).toBe("");
    // The old budget is enough too once thinking is off: the fix is the request, not only the budget.
    expect(readyProbe(thinking.url, { READY_MAX_TOKENS: "64" }).status).toBe(0);
  });

  it("reports HTTP errors with the status and body", () => {
    const r = readyProbe(thinking.url, { API_KEY: "wrong" });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("answered HTTP 401");
  });
});

describe("the READY probe against models that think whatever enable_thinking says", () => {
  it("SGLang, qwen3-thinking: a small budget fails naming the budget and the reasoning tokens; the default budget passes after the thinking", async () => {
    const double = await worker(["--reasoning-parser", "qwen3-thinking"], withoutParser);
    const small = readyProbe(double.url, { READY_MAX_TOKENS: "64" });
    expect(small.status).toBe(1);
    expect(small.stderr).toContain(
      'sglang-router[router]: the model spent its whole budget thinking: max_tokens=64 ran out after 64 reasoning tokens in reasoning_content, before any answer (finish_reason "length", content empty)',
    );
    expect(small.stderr).not.toContain("did not answer READY");
    const enough = readyProbe(double.url);
    expect(enough.stderr).toContain("completion answered READY (finish_reason stop) after thinking (400 reasoning of 401 completion tokens");
    expect(enough.status).toBe(0);
  });

  it("vLLM, openai_gptoss (no usage.reasoning_tokens, content null when cut): the message counts the completion tokens instead", async () => {
    const double = await startVllmDouble({ flags: ["--served-model-name", MODEL, "--reasoning-parser", "openai_gptoss", "--api-key", KEY], scenario });
    started.push(double);
    const small = readyProbe(double.url, { READY_MAX_TOKENS: "64" });
    expect(small.status).toBe(1);
    expect(small.stderr).toContain("max_tokens=64 ran out after all 64 completion tokens in reasoning_content");
    expect(readyProbe(double.url).status).toBe(0);
  });
});

describe("the worker gate's thinking-off check (sglang-worker.sh, EXPECT_NO_REASONING=1)", () => {
  const gate = (double: RunningDouble) =>
    run([script("sglang-worker.sh")], {
      CONTAINER_NAME: "worker-a",
      BASE_URL: double.url,
      API_KEY: KEY,
      EXPECTED_JSON: JSON.stringify({ tp_size: 4, dp_size: 2 }),
      SERVED_MODEL_NAME: MODEL,
      EXPECT_NO_REASONING: "1",
    });
  const thinkingOff = ["--default-chat-template-kwargs", '{"enable_thinking": false}'];

  it("passes when --default-chat-template-kwargs switches thinking off", async () => {
    const r = gate(await worker(thinkingOff));
    expect(r.stderr).toContain("thinking is off: a test completion without chat_template_kwargs answered with no reasoning_content");
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout.trim().split("\n").pop() ?? "")).toMatchObject({ tp_size: 4, default_chat_template_kwargs: { enable_thinking: false } });
  });

  it("fails when the server still thinks: the kwargs are missing", async () => {
    const r = gate(await worker());
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("but a completion without chat_template_kwargs still thinks: reasoning_content (");
    expect(r.stderr).toContain("usage.reasoning_tokens 64; finish_reason length");
  });

  it("fails when the model thinks regardless of the kwargs (always-thinking parser)", async () => {
    const r = gate(await worker([...thinkingOff, "--reasoning-parser", "qwen3-thinking"], withoutParser));
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("still thinks: reasoning_content");
  });
});
