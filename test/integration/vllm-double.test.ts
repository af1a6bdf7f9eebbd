// The test double in vLLM mode (`vllm serve MODEL ...`, sim/sglang-double/bin/vllm) on loopback: its
// CLI and HTTP contract (shared/reference/sglang.md §5), then the REAL sglang-router 0.3.2 in front of
// two vLLM-mode doubles, to find the launch that works for vLLM workers and prove the one that does
// not (--dp-aware: vLLM has no /server_info, so no DP rank is ever discovered).
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  chat,
  doubleDir,
  doubleEnv,
  firstMessage,
  freePort,
  routerVenvPython,
  runDoubleCli,
  scenariosDir,
  spawnManaged,
  tinyModelDir,
  python,
  waitFor,
  type ManagedProcess,
} from "../unit/sglang-double/harness";

const vllmBin = path.join(doubleDir, "bin/vllm");
const servedName = "openai/gpt-oss-20b";
const scenario = path.join(scenariosDir, "sim-default.json");

/** Seed 002 Run 2's model as the lead's stack runs it, plus the flags a user would add. */
const fullFlags = [
  "--served-model-name", servedName,
  "--tensor-parallel-size", "1",
  "--data-parallel-size", "2",
  "--max-model-len", "32k",
  "--max-num-seqs", "4",
  "--gpu-memory-utilization", "0.85",
  "--reasoning-parser", "openai_gptoss",
  "--tool-call-parser", "openai",
  "--enable-auto-tool-choice",
  "--trust-remote-code",
  "--kv-cache-dtype", "fp8",
  "--enable-prefix-caching",
  "--max-num-batched-tokens", "8192",
  "--enable-chunked-prefill",
  "--dtype", "bfloat16",
  "--async-scheduling",
  "--disable-log-requests",
];

interface VllmDouble {
  url: string;
  hostTag: string;
  process: ManagedProcess;
}

interface DoubleStats {
  engine: string;
  requests_total: number;
  by_path: Record<string, number>;
  ranks: Array<{ dp_rank: number; requests: number; routed_by_router: number }>;
  unauthorized: number;
}

interface RouterWorker {
  url: string;
  model_id: string;
  is_healthy: boolean;
}

/** Start `vllm serve` (the double) on 127.0.0.1; the port stays closed for `loadSeconds`. Does not wait. */
async function spawnVllmDouble(hostTag: string, flags: string[], loadSeconds: number): Promise<VllmDouble> {
  const port = await freePort();
  const argv = [vllmBin, "serve", tinyModelDir, "--host", "127.0.0.1", "--port", String(port), ...flags];
  const env = doubleEnv({ SGLANG_DOUBLE_HOST_TAG: hostTag, SGLANG_DOUBLE_LOAD_SECONDS: String(loadSeconds), SGLANG_DOUBLE_SCENARIO: scenario });
  return { url: `http://127.0.0.1:${port}`, hostTag, process: spawnManaged(`vllm double ${hostTag}`, python, argv, env) };
}

async function waitHealthy(double: VllmDouble, timeoutMs = 20_000): Promise<void> {
  await waitFor(
    `${double.url}/health to be 200`,
    async () => {
      if (!double.process.running) throw new Error(`double exited early:\n${double.process.logs}`);
      return (await fetch(`${double.url}/health`)).status === 200 ? true : undefined;
    },
    timeoutMs,
    50,
  );
}

async function stats(double: VllmDouble): Promise<DoubleStats> {
  return (await (await fetch(`${double.url}/_double/stats`)).json()) as DoubleStats;
}

/** The real router on loopback (Prometheus too: the 0.3.2 CLI always binds it, default 0.0.0.0:29000). */
async function startRouter(pythonPath: string, extra: string[]): Promise<{ url: string; process: ManagedProcess }> {
  const port = await freePort();
  const args = ["-m", "sglang_router.launch_router", "--host", "127.0.0.1", "--port", String(port),
    "--prometheus-host", "127.0.0.1", "--prometheus-port", String(await freePort()), ...extra];
  const process_ = spawnManaged("sglang-router", pythonPath, args, { ...process.env, HF_HUB_OFFLINE: "1", NO_COLOR: "1" });
  return { url: `http://127.0.0.1:${port}`, process: process_ };
}

async function routerWorkers(routerUrl: string, headers: Record<string, string> = {}): Promise<{ workers: RouterWorker[]; total: number }> {
  return (await (await fetch(`${routerUrl}/workers`, { headers })).json()) as { workers: RouterWorker[]; total: number };
}

function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-9;]*m/g, "");
}

async function stopAll(processes: Array<ManagedProcess | undefined>): Promise<void> {
  await Promise.all(processes.map((p) => p?.stop()));
}

describe("vLLM-mode double: the `vllm` CLI", () => {
  it("`vllm --version` prints the bare version; `vllm serve --help` exits 0 and lists vLLM's flags", () => {
    const version = runDoubleCli([vllmBin, "--version"]);
    expect(version.status).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    const help = runDoubleCli([vllmBin, "serve", "--help"]);
    expect(help.status).toBe(0);
    for (const flag of ["--max-num-seqs", "--max-model-len", "--data-parallel-size", "--gpu-memory-utilization", "--enable-auto-tool-choice"]) {
      expect(help.stdout).toContain(flag);
    }
    // The older entry point takes the same flags.
    const legacy = runDoubleCli(["-m", "vllm.entrypoints.openai.api_server", "--model", tinyModelDir, "--bogus-flag"]);
    expect(legacy.status).toBe(2);
    expect(legacy.stderr).toContain("api_server.py: error: unrecognized arguments: --bogus-flag");
  });

  it.each([
    ["an unknown flag", ["--bogus-flag", "1"], /unrecognized arguments: --bogus-flag/],
    ["an SGLang flag", ["--tp-size", "4"], /unrecognized arguments: --tp-size/],
    ["a non-integer --max-num-seqs", ["--max-num-seqs", "many"], /argument --max-num-seqs: invalid int value: 'many'/],
    ["a --kv-cache-dtype outside its choices", ["--kv-cache-dtype", "fp7"], /argument --kv-cache-dtype: invalid choice: 'fp7'/],
    ["--enable-auto-tool-choice without a parser", ["--enable-auto-tool-choice"], /--enable-auto-tool-choice requires --tool-call-parser/],
    ["an unknown tool parser", ["--tool-call-parser", "nonesuch"], /invalid tool call parser: nonesuch/],
    ["a missing local model directory", ["/models/not-mounted"], /'\/models\/not-mounted' is neither an existing local directory/],
  ])("%s exits 2 with argparse's error", (_name, args, message) => {
    const model = args[0].startsWith("/") ? [] : [tinyModelDir];
    const result = runDoubleCli([vllmBin, "serve", ...model, ...args, "--port", "1"]);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/^usage: vllm serve/m);
    expect(result.stderr).toMatch(message);
  });

  it("a broken scenario file stops `vllm serve` with exit 2 naming the bad key, as in SGLang mode", () => {
    const result = runDoubleCli([vllmBin, "serve", tinyModelDir, "--port", "1"], {
      SGLANG_DOUBLE_SCENARIO: `${__dirname}/../fixtures/sglang-double/bad-scenario.json`,
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain("vllm-double: bad scenario (SGLANG_DOUBLE_SCENARIO)");
    expect(result.stderr).toContain("rules[1].match.last_user_contain is not a known key");
  });
});

describe("vLLM-mode double: HTTP contract", () => {
  const key = "sk-vllm-double-test-key";
  let double: VllmDouble;
  const auth = { Authorization: `Bearer ${key}` };

  beforeAll(async () => {
    double = await spawnVllmDouble("vllm-a", [...fullFlags, "--api-key", key], 2);
  });

  afterAll(async () => {
    await double?.process.stop();
  });

  it("keeps the port closed while loading (connection refused, never a 503), then /health is 200", async () => {
    const seen: string[] = [];
    await waitFor(
      "the vLLM double to bind and answer /health",
      async () => {
        if (!double.process.running) throw new Error(`double exited early:\n${double.process.logs}`);
        try {
          const status = (await fetch(`${double.url}/health`)).status;
          seen.push(String(status));
          return status === 200 ? true : undefined;
        } catch {
          seen.push("refused");
          return undefined;
        }
      },
      20_000,
      50,
    );
    expect(seen[0]).toBe("refused");
    expect(new Set(seen)).toEqual(new Set(["refused", "200"]));
    // Printed before the first answer; read from the double's stderr pipe, which may trail the HTTP reply.
    await waitFor("the double's startup line", async () => (double.process.logs.includes("Application startup complete.") ? true : undefined), 5_000, 20);
  });

  it("/health and /ping are 200 with an empty body and need no key; /version gives the version", async () => {
    for (const route of ["/health", "/ping"]) {
      const response = await fetch(`${double.url}${route}`);
      expect(response.status, route).toBe(200);
      expect(await response.text(), route).toBe("");
    }
    const version = await fetch(`${double.url}/version`);
    expect(version.status).toBe(200);
    expect(((await version.json()) as { version: string }).version).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it("has no SGLang info routes: /server_info, /get_server_info, /model_info, /get_model_info are FastAPI 404s", async () => {
    for (const route of ["/server_info", "/get_server_info", "/model_info", "/get_model_info", "/generate", "/flush_cache"]) {
      const response = await fetch(`${double.url}${route}`, { headers: auth });
      expect(response.status, route).toBe(404);
      expect(await response.json(), route).toEqual({ detail: "Not Found" });
    }
  });

  it("--api-key guards /v1/* only: 401 {error: Unauthorized} without the key, 200 with it", async () => {
    const before = (await stats(double)).unauthorized;
    const denied = await fetch(`${double.url}/v1/models`);
    expect(denied.status).toBe(401);
    expect(await denied.json()).toEqual({ error: "Unauthorized" });
    const wrong = await chat(double.url, { model: servedName, messages: [{ role: "user", content: "hi" }] }, { Authorization: "Bearer nope" });
    expect(wrong.status).toBe(401);
    expect((await stats(double)).unauthorized).toBe(before + 2);
    const models = await fetch(`${double.url}/v1/models`, { headers: auth });
    expect(models.status).toBe(200);
    const body = (await models.json()) as { object: string; data: Array<Record<string, unknown>> };
    expect(body.object).toBe("list");
    expect(body.data).toHaveLength(1);
    // --max-model-len 32k is 32000 (vLLM reads a lowercase k as 10^3).
    expect(body.data[0]).toMatchObject({ id: servedName, object: "model", owned_by: "vllm", root: tinyModelDir, max_model_len: 32000 });
  });

  it("answers chat completions vLLM-style and balances its DP ranks itself (data_parallel_rank ignored)", async () => {
    const ready = await chat(double.url, { model: servedName, messages: [{ role: "user", content: "Reply with exactly READY." }], data_parallel_rank: 7 }, auth);
    expect(ready.status).toBe(200);
    expect(firstMessage(ready.json).content).toBe("READY");
    expect(String(ready.json.id)).toMatch(/^chatcmpl-[0-9a-f]{32}$/);
    expect(ready.json.system_fingerprint).toBeNull();
    expect(ready.headers.get("x-double-worker")).toBe("vllm-a");
    expect(ready.headers.get("x-double-routed-by")).toBe("internal");
    const message = (ready.json.choices as Array<{ message: Record<string, unknown> }>)[0].message;
    expect(message.tool_calls).toEqual([]);
    // Both DP ranks serve: the double's own round-robin, as vLLM's internal DP load balancer would.
    for (let i = 0; i < 3; i++) {
      expect((await chat(double.url, { model: servedName, messages: [{ role: "user", content: `ping ${i}` }] }, auth)).status).toBe(200);
    }
    const after = await stats(double);
    expect(after.engine).toBe("vllm");
    expect(after.ranks.map((r) => r.requests > 0)).toEqual([true, true]);
    expect(after.ranks.every((r) => r.routed_by_router === 0)).toBe(true);
  });

  it("a model that is not served is a 404 NotFoundError; a request without `model` is served", async () => {
    const missing = await chat(double.url, { model: "unknown", messages: [{ role: "user", content: "hi" }] }, auth);
    expect(missing.status).toBe(404);
    expect(missing.json).toMatchObject({ error: { type: "NotFoundError", code: 404 } });
    const noModel = await chat(double.url, { messages: [{ role: "user", content: "Reply with exactly READY." }] }, auth);
    expect(noModel.status).toBe(200);
  });

  it("streams SSE chunks with a vLLM id and ends with [DONE]; the key is logged only with the start-up args, as vLLM does", async () => {
    const response = await fetch(`${double.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...auth },
      body: JSON.stringify({ model: servedName, stream: true, messages: [{ role: "user", content: "Reply with exactly READY." }] }),
    });
    expect(response.status).toBe(200);
    const frames = (await response.text()).split("\n\n").filter(Boolean);
    expect(frames.at(-1)).toBe("data: [DONE]");
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f.slice("data: ".length)) as { id: string; choices: Array<{ delta: { content?: string } }> });
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks[0].id).toMatch(/^chatcmpl-[0-9a-f]{32}$/);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("READY");
    // vLLM before vllm-project/vllm#52523 prints its non-default args, --api-key included, at start-up;
    // no request line carries it.
    const withKey = double.process.logs.split("\n").filter((l) => l.includes(key));
    expect(withKey.length).toBeGreaterThan(0);
    for (const line of withKey) expect(line).toMatch(/non-default args/);
  });
});

describe("real sglang-router 0.3.2 in front of two vLLM-mode doubles (no --dp-aware)", () => {
  const key = "sk-router-vllm-test-key";
  const auth = { Authorization: `Bearer ${key}` };
  let pythonPath: string;
  const doubles: VllmDouble[] = [];
  const keyed: VllmDouble[] = [];
  const routers: ManagedProcess[] = [];

  beforeAll(async () => {
    pythonPath = await routerVenvPython();
    // dp 2 on worker-a: vLLM's internal DP must not change what the router sees (one worker per URL).
    doubles.push(await spawnVllmDouble("worker-a", ["--served-model-name", servedName, "--data-parallel-size", "2"], 1.5));
    doubles.push(await spawnVllmDouble("worker-b", ["--served-model-name", servedName], 1.5));
    // A second pair that demands an API key, as the stack runs vLLM (`--api-key KEY`).
    for (const tag of ["keyed-a", "keyed-b"]) keyed.push(await spawnVllmDouble(tag, ["--served-model-name", servedName, "--api-key", key], 1.5));
  }, 700_000);

  afterAll(async () => {
    await stopAll([...routers, ...doubles.map((d) => d.process), ...keyed.map((d) => d.process)]);
  });

  /**
   * /readiness turns 200 as soon as ONE worker is healthy, and the router registers each worker when its
   * own /health answers, so wait for the whole set (the doubles finish loading at slightly different times).
   */
  async function waitReadiness(routerUrl: string, router: ManagedProcess, headers: Record<string, string> = {}, workers = 2): Promise<unknown> {
    return waitFor(
      `router /readiness 200 with ${workers} healthy workers`,
      async () => {
        if (!router.running) throw new Error(`router exited:\n${router.logs}`);
        const response = await fetch(`${routerUrl}/readiness`, { headers });
        if (response.status !== 200) throw new Error(`/readiness answered ${response.status}`);
        const body = (await response.json()) as { healthy_workers?: number };
        if (body.healthy_workers !== workers) throw new Error(`/readiness: ${JSON.stringify(body)}`);
        return body;
      },
      60_000,
      100,
    );
  }

  async function sendBatch(routerUrl: string, n: number, headers: Record<string, string> = {}): Promise<Array<Awaited<ReturnType<typeof chat>>>> {
    const replies = [];
    // One at a time: round_robin then alternates exactly.
    for (let i = 0; i < n; i++) replies.push(await chat(routerUrl, { model: servedName, messages: [{ role: "user", content: "Reply with exactly READY." }] }, headers));
    return replies;
  }

  it("plain `--worker-urls A B --policy round_robin`: both register as one worker each and share the traffic", async () => {
    // Started while the doubles still load (ports closed): the router keeps probing /health.
    const router = await startRouter(pythonPath, ["--worker-urls", ...doubles.map((d) => d.url), "--policy", "round_robin"]);
    routers.push(router.process);
    const readiness = await waitReadiness(router.url, router.process);
    expect(readiness).toMatchObject({ status: "ready", healthy_workers: 2, total_workers: 2 });
    const { workers } = await routerWorkers(router.url);
    expect(workers.map((w) => w.url).sort()).toEqual(doubles.map((d) => d.url).sort());
    expect(workers.every((w) => w.is_healthy && !w.url.includes("@"))).toBe(true);
    // Without /server_info or /model_info the router knows no model name: it files them as "unknown".
    expect(workers.map((w) => w.model_id)).toEqual(["unknown", "unknown"]);
    const models = (await (await fetch(`${router.url}/v1/models`)).json()) as { data: Array<{ id: string }> };
    expect(models.data.map((m) => m.id)).toEqual(["unknown"]);

    // What 0.3.2 called on each vLLM worker at start-up: /health, then the metadata routes (404 each,
    // each SGLang name then its old alias), never /v1/models.
    for (const double of doubles) {
      const byPath = (await stats(double)).by_path;
      console.log(`router start-up calls on ${double.hostTag}: ${JSON.stringify(byPath)}`);
      expect(byPath["/health"]).toBeGreaterThanOrEqual(1);
      for (const route of ["/server_info", "/get_server_info", "/model_info", "/get_model_info"]) expect(byPath[route], route).toBe(1);
      expect(byPath["/v1/models"]).toBeUndefined();
      await fetch(`${double.url}/_double/reset`, { method: "POST" });
    }

    const replies = await sendBatch(router.url, 8);
    expect(replies.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(replies.every((r) => firstMessage(r.json).content === "READY")).toBe(true);
    const tags = replies.map((r) => r.headers.get("x-double-worker"));
    expect(tags.filter((t) => t === "worker-a")).toHaveLength(4);
    expect(tags.filter((t) => t === "worker-b")).toHaveLength(4);
    const perDouble = await Promise.all(doubles.map(async (d) => stats(d)));
    expect(perDouble.map((s) => s.requests_total)).toEqual([4, 4]);
    // Behind the router, worker-a's own DP (--data-parallel-size 2) still spreads over both ranks.
    expect(perDouble[0].ranks.map((r) => r.requests)).toEqual([2, 2]);

    // Streams pass through the router unchanged.
    const stream = await fetch(`${router.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ model: servedName, stream: true, messages: [{ role: "user", content: "Reply with exactly READY." }] }),
    });
    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toContain("text/event-stream");
    const frames = (await stream.text()).split("\n\n").filter(Boolean);
    expect(frames.at(-1)).toBe("data: [DONE]");

    // The router fills a missing `model` with "unknown", which vLLM rejects: clients must name the model.
    const noModel = await chat(router.url, { messages: [{ role: "user", content: "Reply with exactly READY." }] });
    expect(noModel.status).toBe(404);
    expect(JSON.stringify(noModel.json)).toContain("The model `unknown` does not exist.");
    await router.process.stop();
  });

  it("workers added with POST /workers {url, model_id}: /v1/models shows the served name, traffic still shared", async () => {
    const router = await startRouter(pythonPath, ["--policy", "round_robin"]);
    routers.push(router.process);
    await waitFor("router /health", async () => ((await fetch(`${router.url}/health`)).status === 200 ? true : undefined), 30_000, 100);
    for (const double of doubles) {
      const added = await fetch(`${router.url}/workers`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ url: double.url, model_id: servedName }),
      });
      expect(added.status).toBe(202);
    }
    expect(await waitReadiness(router.url, router.process)).toMatchObject({ healthy_workers: 2, total_workers: 2 });
    const { workers } = await routerWorkers(router.url);
    expect(workers.map((w) => w.url).sort()).toEqual(doubles.map((d) => d.url).sort());
    expect(workers.map((w) => w.model_id)).toEqual([servedName, servedName]);
    const models = (await (await fetch(`${router.url}/v1/models`)).json()) as { data: Array<{ id: string }> };
    expect(models.data.map((m) => m.id)).toEqual([servedName]);
    for (const double of doubles) await fetch(`${double.url}/_double/reset`, { method: "POST" });
    const replies = await sendBatch(router.url, 6);
    expect(replies.map((r) => r.status)).toEqual(Array(6).fill(200));
    expect(await Promise.all(doubles.map(async (d) => (await stats(d)).requests_total))).toEqual([3, 3]);
    await router.process.stop();
  });

  it("the same plain launch with --api-key on router and workers: the key reaches the workers, clients need it", async () => {
    const router = await startRouter(pythonPath, ["--worker-urls", ...keyed.map((d) => d.url), "--policy", "round_robin", "--api-key", key]);
    routers.push(router.process);
    expect(await waitReadiness(router.url, router.process, auth)).toMatchObject({ healthy_workers: 2, total_workers: 2 });
    expect((await fetch(`${router.url}/workers`)).status).toBe(401);
    const { workers } = await routerWorkers(router.url, auth);
    expect(workers.map((w) => w.url).sort()).toEqual(keyed.map((d) => d.url).sort());
    expect((await chat(router.url, { model: servedName, messages: [{ role: "user", content: "hi" }] })).status).toBe(401);
    const replies = await sendBatch(router.url, 4, auth);
    expect(replies.map((r) => r.status)).toEqual(Array(4).fill(200));
    const counts = await Promise.all(keyed.map(async (d) => stats(d)));
    expect(counts.map((c) => c.requests_total)).toEqual([2, 2]);
    // The router sent its key with every request a worker checks (/v1/*): none was refused.
    expect(counts.map((c) => c.unauthorized)).toEqual([0, 0]);
    expect(router.process.logs).not.toContain(key);
    await router.process.stop();
  });

  it("`--backend openai` (external endpoints) is no balancer: one endpoint takes everything, x-double-* headers are lost", async () => {
    // In openai mode the router discovers models only with a key (else it runs in wildcard mode),
    // so it runs with the keyed pair.
    await Promise.all(keyed.map((d) => waitHealthy(d)));
    for (const double of keyed) await fetch(`${double.url}/_double/reset`, { method: "POST" });
    const router = await startRouter(pythonPath, ["--backend", "openai", "--api-key", key, "--worker-urls", ...keyed.map((d) => d.url), "--policy", "round_robin"]);
    routers.push(router.process);
    await waitReadiness(router.url, router.process, auth);
    const models = (await (await fetch(`${router.url}/v1/models`, { headers: auth })).json()) as { data: Array<{ id: string }> };
    expect(models.data.map((m) => m.id)).toEqual([servedName]);
    const replies = await sendBatch(router.url, 6, auth);
    expect(replies.map((r) => r.status)).toEqual(Array(6).fill(200));
    expect(replies.every((r) => r.headers.get("x-double-worker") === null)).toBe(true);
    const totals = (await Promise.all(keyed.map(async (d) => (await stats(d)).requests_total))).sort();
    expect(totals).toEqual([0, 6]);
    await router.process.stop();
  });

  it("`--dp-aware` never makes a vLLM worker routable: DP discovery finds no /server_info and the worker is dropped", async () => {
    const router = await startRouter(pythonPath, ["--worker-urls", ...doubles.map((d) => d.url), "--dp-aware", "--policy", "round_robin"]);
    routers.push(router.process);
    // discover_dp_info: 3 tries, 1 s apart, then the registration workflow fails for good.
    await waitFor(
      "both registrations to fail at discover_dp_info",
      async () => {
        if (!router.process.running) throw new Error(`router exited:\n${router.process.logs}`);
        const failures = stripAnsi(router.process.logs).split("\n").filter((l) => l.includes("Workflow failed") && l.includes("failed_step=discover_dp_info"));
        return failures.length >= 2 ? true : undefined;
      },
      60_000,
      200,
    );
    const readiness = await fetch(`${router.url}/readiness`);
    expect(readiness.status).toBe(503);
    expect((await routerWorkers(router.url)).total).toBe(0);
    const reply = await chat(router.url, { model: servedName, messages: [{ role: "user", content: "Reply with exactly READY." }] });
    expect(reply.status).toBe(503);
    expect(JSON.stringify(reply.json)).toContain("no_available_workers");
    await router.process.stop();
  });
});
