// The double's Prometheus /metrics (only with --enable-metrics, as SGLang routes it): SGLang's scheduler
// gauge names and labels, per DP rank, read back with the parser `reprobench status` uses.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parsePrometheus, sglangRankLoads } from "../../../results/prometheus";
import { chat, seed000WorkerFlags, startDouble, waitFor, waitReady, type RunningDouble } from "./harness";

const started: RunningDouble[] = [];
afterAll(async () => {
  await Promise.all(started.map((d) => d.process.stop()));
});

async function metrics(d: RunningDouble): Promise<{ status: number; text: string }> {
  const r = await fetch(`${d.url}/metrics`);
  return { status: r.status, text: await r.text() };
}

describe("sglang double /metrics", () => {
  let plain: RunningDouble;
  let withMetrics: RunningDouble;
  beforeAll(async () => {
    // One running slot per rank: a second request on a busy rank waits in the queue.
    const flags = seed000WorkerFlags.map((f, i, all) => (all[i - 1] === "--max-running-requests" ? "1" : f));
    plain = await startDouble({ flags: seed000WorkerFlags });
    withMetrics = await startDouble({ flags: [...flags, "--enable-metrics"] });
    started.push(plain, withMetrics);
    await Promise.all([waitReady(plain), waitReady(withMetrics)]);
  });

  it("is not served without --enable-metrics (404, like SGLang)", async () => {
    expect((await metrics(plain)).status).toBe(404);
  });

  it("names SGLang's scheduler gauges with model_name, engine_type, tp_rank, pp_rank and dp_rank labels", async () => {
    const { status, text } = await metrics(withMetrics);
    expect(status).toBe(200);
    const samples = parsePrometheus(text);
    for (const name of ["sglang:num_running_reqs", "sglang:num_queue_reqs", "sglang:gen_throughput"]) {
      const series = samples.filter((s) => s.name === name);
      expect(series.map((s) => s.labels.dp_rank).sort()).toEqual(["0", "1"]);
      for (const s of series) expect(s.labels).toMatchObject({ model_name: "Qwen/Qwen3.8-27B", engine_type: "unified", tp_rank: "0", pp_rank: "0" });
    }
    expect(text).toContain("# TYPE sglang:num_running_reqs gauge");
  });

  it("counts running and queued requests on the rank that serves them, and throughput after replies", async () => {
    // Every reply takes 1.5 s; three requests pinned to rank 1 with one slot: one runs, two wait.
    await fetch(`${withMetrics.url}/_double/state`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ extra_delay_seconds: 1.5 }) });
    const body = { model: "Qwen/Qwen3.8-27B", messages: [{ role: "user", content: "Reply with exactly READY." }], max_tokens: 64, data_parallel_rank: 1 };
    const inflight = [chat(withMetrics.url, body), chat(withMetrics.url, body), chat(withMetrics.url, body)];
    const busy = await waitFor(
      "rank 1 to show 1 running and 2 queued",
      async () => {
        const ranks = sglangRankLoads(parsePrometheus((await metrics(withMetrics)).text));
        const r1 = ranks.find((r) => r.dpRank === 1);
        return r1 && r1.running === 1 && r1.queued === 2 ? ranks : undefined;
      },
      5_000,
      50,
    );
    expect(busy.find((r) => r.dpRank === 0)).toMatchObject({ running: 0, queued: 0 });
    const replies = await Promise.all(inflight);
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200]);
    await fetch(`${withMetrics.url}/_double/state`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ extra_delay_seconds: 0 }) });
    const after = sglangRankLoads(parsePrometheus((await metrics(withMetrics)).text));
    const r1 = after.find((r) => r.dpRank === 1)!;
    expect(r1).toMatchObject({ running: 0, queued: 0 });
    const tokens = replies.reduce((s, r) => s + Number((r.json.usage as { completion_tokens: number }).completion_tokens), 0);
    // Tokens of the last 10 s, per second.
    expect(r1.genThroughput).toBeCloseTo(tokens / 10, 2);
    expect(after.find((r) => r.dpRank === 0)!.genThroughput).toBe(0);
  });
});
