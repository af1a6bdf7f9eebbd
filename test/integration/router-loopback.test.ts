// The REAL sglang-router 0.3.2 (PyPI, cached venv) in front of two SGLang test doubles on loopback,
// started the way seed 000 starts it: --dp-aware, cache_aware with abs 1 / rel 1.2, and ONE
// --worker-urls followed by both URLs. Two "hosts" x dp 2 must register as 4 workers, and a batch of
// chat completions through the router must reach every rank of every host (the doubles tag replies).
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  chat,
  firstMessage,
  freePort,
  routerVenvPython,
  scenariosDir,
  seed000WorkerFlags,
  spawnManaged,
  startDouble,
  waitFor,
  type ManagedProcess,
  type RunningDouble,
} from "../unit/sglang-double/harness";

interface RouterWorker {
  url: string;
  model_id: string;
  is_healthy: boolean;
}

describe("real sglang-router 0.3.2 over two loopback doubles (dp 2 each)", () => {
  let routerPython: string;
  let doubles: RunningDouble[] = [];
  let router: ManagedProcess | undefined;
  let routerUrl: string;

  beforeAll(async () => {
    routerPython = await routerVenvPython();

    // The doubles stay "loading" (503 everywhere) until the test flips them, so the router starts
    // against workers that are not ready yet, as it would against real ones still loading weights.
    const scenario = path.join(scenariosDir, "sim-default.json");
    doubles = await Promise.all(
      ["worker-a", "worker-b"].map((hostTag) => startDouble({ hostTag, flags: seed000WorkerFlags, scenario, loadSeconds: 600 })),
    );
    const port = await freePort();
    // The 0.3.2 CLI always binds Prometheus (default 0.0.0.0:29000): keep it on loopback, on a free port.
    const prometheusPort = await freePort();
    routerUrl = `http://127.0.0.1:${port}`;
    router = spawnManaged(
      "sglang-router",
      routerPython,
      [
        "-m", "sglang_router.launch_router",
        "--host", "127.0.0.1",
        "--port", String(port),
        "--worker-urls", ...doubles.map((d) => d.url),
        "--dp-aware",
        "--policy", "cache_aware",
        "--balance-abs-threshold", "1",
        "--balance-rel-threshold", "1.2",
        "--prometheus-host", "127.0.0.1",
        "--prometheus-port", String(prometheusPort),
        "--log-level", "info",
      ],
      // The router loads the tokenizer from the worker's model_path (the double's tiny-model dir);
      // offline mode keeps it from ever asking the HuggingFace Hub.
      { ...process.env, HF_HUB_OFFLINE: "1", NO_COLOR: "1" },
    );
  }, 700_000);

  afterAll(async () => {
    await router?.stop();
    await Promise.all(doubles.map((d) => d.process.stop()));
  });

  it("answers /health while the workers still load, but /readiness and /v1/models are 503", async () => {
    const health = await waitFor(
      "router /health",
      async () => {
        if (router && !router.running) throw new Error(`router exited:\n${router.logs}`);
        const response = await fetch(`${routerUrl}/health`);
        return response.status;
      },
      30_000,
    );
    expect(health).toBe(200);
    expect((await fetch(`${routerUrl}/readiness`)).status).toBe(503);
    expect((await fetch(`${routerUrl}/v1/models`)).status).toBe(503);
    // The router keeps probing /health on the loading doubles.
    await waitFor(
      "the router's /health probes on both doubles",
      async () => {
        const counts = await Promise.all(
          doubles.map(async (d) => ((await (await fetch(`${d.url}/_double/stats`)).json()) as { by_path: Record<string, number> }).by_path["/health"] ?? 0),
        );
        return counts.every((n) => n > 0) ? true : undefined;
      },
      30_000,
      100,
    );
    // "Model loaded": from here /health, /server_info, /model_info and /v1/models all answer 200.
    for (const double of doubles) {
      const flipped = await fetch(`${double.url}/_double/state`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phase: "ready" }) });
      expect(flipped.status).toBe(200);
    }
  });

  it("lists 4 workers: url@0 and url@1 for each double, with the served model name", async () => {
    const workers = await waitFor(
      "4 workers in router /workers",
      async () => {
        const body = (await (await fetch(`${routerUrl}/workers`)).json()) as { workers: RouterWorker[]; total: number };
        return body.workers.length === 4 && body.workers.every((w) => w.is_healthy) ? body.workers : undefined;
      },
      60_000,
      250,
    );
    const expected = doubles.flatMap((d) => [`${d.url}@0`, `${d.url}@1`]).sort();
    expect(workers.map((w) => w.url).sort()).toEqual(expected);
    expect(new Set(workers.map((w) => w.model_id))).toEqual(new Set(["Qwen/Qwen3.8-27B"]));
    const readiness = await fetch(`${routerUrl}/readiness`);
    expect(readiness.status).toBe(200);
    expect(await readiness.json()).toMatchObject({ status: "ready", healthy_workers: 4, total_workers: 4 });
    // The router asked each double for its DP size, trying /server_info first.
    for (const double of doubles) {
      const stats = (await (await fetch(`${double.url}/_double/stats`)).json()) as { by_path: Record<string, number> };
      expect(stats.by_path["/server_info"]).toBeGreaterThanOrEqual(1);
    }
  });

  it("serves /v1/models and seed 000's READY probe through the router", async () => {
    const models = (await (await fetch(`${routerUrl}/v1/models`)).json()) as { data: Array<{ id: string }> };
    expect(models.data.map((m) => m.id)).toContain("Qwen/Qwen3.8-27B");
    const reply = await chat(routerUrl, {
      model: "Qwen/Qwen3.8-27B",
      messages: [{ role: "user", content: "Reply with exactly READY." }],
      temperature: 0,
      max_tokens: 128,
      // The workers run a qwen3 reasoning parser: without this the double thinks first and 128 tokens run out.
      chat_template_kwargs: { enable_thinking: false },
    });
    expect(reply.status).toBe(200);
    expect(firstMessage(reply.json).content).toBe("READY");
    // Response headers come back through the router: the reply names the host and rank that served it.
    expect(["worker-a", "worker-b"]).toContain(reply.headers.get("x-double-worker"));
    expect(reply.headers.get("x-double-routed-by")).toBe("router");
  });

  it("spreads a concurrent batch over every rank of every host", async () => {
    for (const double of doubles) await fetch(`${double.url}/_double/reset`, { method: "POST" });
    const batch = 24;
    // routing-probe replies take 0.3 s, so requests overlap and cache_aware (abs 1 / rel 1.2) balances by load.
    const replies = await Promise.all(
      Array.from({ length: batch }, (_, i) =>
        chat(routerUrl, { model: "Qwen/Qwen3.8-27B", messages: [{ role: "user", content: `[[double:routing-probe]] request ${i}` }], max_tokens: 32 }),
      ),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(batch).fill(200));
    const seen = new Map<string, number>();
    for (const reply of replies) {
      const key = `${reply.headers.get("x-double-worker")}@${reply.headers.get("x-double-dp-rank")}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
      // The tag in the body agrees with the headers.
      expect(String(reply.json.id)).toContain(`${reply.headers.get("x-double-worker")}-dp${reply.headers.get("x-double-dp-rank")}-`);
    }
    console.log(`router spread of ${batch} requests: ${JSON.stringify(Object.fromEntries([...seen].sort()))}`);
    expect([...seen.keys()].sort()).toEqual(["worker-a@0", "worker-a@1", "worker-b@0", "worker-b@1"]);
    // Every request arrived with the router's data_parallel_rank (none fell back to the double's own DP).
    let routed = 0;
    for (const double of doubles) {
      const stats = (await (await fetch(`${double.url}/_double/stats`)).json()) as { ranks: Array<{ requests: number; routed_by_router: number }> };
      for (const rank of stats.ranks) {
        expect(rank.routed_by_router).toBe(rank.requests);
        routed += rank.routed_by_router;
      }
    }
    expect(routed).toBe(batch);
  });

  it("tears down cleanly: router and doubles exit on SIGTERM to their process groups", async () => {
    await router?.stop();
    await Promise.all(doubles.map((d) => d.process.stop()));
    expect(router?.running).toBe(false);
    expect(doubles.every((d) => !d.process.running)).toBe(true);
    await expect(fetch(`${routerUrl}/health`)).rejects.toThrow();
  });
});

describe("real sglang-router 0.3.2 with --api-key on router and worker", () => {
  const key = "sk-loopback-test-key";
  let double: RunningDouble | undefined;
  let router: ManagedProcess | undefined;

  afterAll(async () => {
    await router?.stop();
    await double?.process.stop();
  });

  it("forwards the key as Bearer to the worker (discovery works) and demands it from clients", async () => {
    const routerPython = await routerVenvPython();
    double = await startDouble({ hostTag: "keyed", flags: ["--dp-size", "2", "--api-key", key] });
    const port = await freePort();
    const routerUrl = `http://127.0.0.1:${port}`;
    router = spawnManaged(
      "sglang-router",
      routerPython,
      ["-m", "sglang_router.launch_router", "--host", "127.0.0.1", "--port", String(port), "--worker-urls", double.url,
        "--dp-aware", "--api-key", key, "--prometheus-host", "127.0.0.1", "--prometheus-port", String(await freePort())],
      { ...process.env, HF_HUB_OFFLINE: "1", NO_COLOR: "1" },
    );
    const auth = { Authorization: `Bearer ${key}` };
    const urls = await waitFor(
      "2 workers behind the keyed router",
      async () => {
        if (!router?.running) throw new Error(`router exited:\n${router?.logs}`);
        const response = await fetch(`${routerUrl}/workers`, { headers: auth });
        const body = (await response.json()) as { workers: RouterWorker[] };
        return body.workers.length === 2 ? body.workers.map((w) => w.url).sort() : undefined;
      },
      60_000,
      250,
    );
    expect(urls).toEqual([`${double.url}@0`, `${double.url}@1`]);
    expect((await fetch(`${routerUrl}/workers`)).status).toBe(401);
    const body = { messages: [{ role: "user", content: "Reply with exactly READY." }] };
    expect((await chat(routerUrl, body)).status).toBe(401);
    expect((await chat(routerUrl, body, auth)).status).toBe(200);
    const stats = (await (await fetch(`${double.url}/_double/stats`)).json()) as { unauthorized: number };
    // The router never reached the worker without the key.
    expect(stats.unauthorized).toBe(0);
    expect(router.logs).not.toContain(key);
  });
});

describe("real sglang-router 0.3.2 against an older worker without /server_info", () => {
  let double: RunningDouble | undefined;
  let router: ManagedProcess | undefined;

  afterAll(async () => {
    await router?.stop();
    await double?.process.stop();
  });

  it("falls back to /get_server_info on 404 and still discovers both DP ranks", async () => {
    const routerPython = await routerVenvPython();
    double = await startDouble({ hostTag: "legacy", flags: ["--dp-size", "2"], env: { SGLANG_DOUBLE_SERVER_INFO_404: "1" } });
    const port = await freePort();
    const routerUrl = `http://127.0.0.1:${port}`;
    router = spawnManaged(
      "sglang-router",
      routerPython,
      ["-m", "sglang_router.launch_router", "--host", "127.0.0.1", "--port", String(port), "--worker-urls", double.url,
        "--dp-aware", "--prometheus-host", "127.0.0.1", "--prometheus-port", String(await freePort())],
      { ...process.env, HF_HUB_OFFLINE: "1", NO_COLOR: "1" },
    );
    const urls = await waitFor(
      "2 workers discovered through /get_server_info",
      async () => {
        if (!router?.running) throw new Error(`router exited:\n${router?.logs}`);
        const body = (await (await fetch(`${routerUrl}/workers`)).json()) as { workers: RouterWorker[] };
        return body.workers.length === 2 ? body.workers.map((w) => w.url).sort() : undefined;
      },
      60_000,
      250,
    );
    expect(urls).toEqual([`${double.url}@0`, `${double.url}@1`]);
    const stats = (await (await fetch(`${double.url}/_double/stats`)).json()) as { by_path: Record<string, number> };
    expect(stats.by_path["/server_info"]).toBeGreaterThanOrEqual(1);
    expect(stats.by_path["/get_server_info"]).toBeGreaterThanOrEqual(1);
  });
});
