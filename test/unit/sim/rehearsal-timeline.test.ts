// The rehearsal's fault timelines: the files parse, events fire by job progress in file order, and bad
// files are refused naming the event and the problem.
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { describeEvent, dueEvents, parseFaultTimeline } from "../../../sim/rehearsal/timeline";

const scenario = (name: string) => {
  const file = path.join(__dirname, "../../../sim/scenarios", name);
  return parseFaultTimeline(readFileSync(file, "utf8"), file);
};

describe("fault timelines", () => {
  it("seed 000's timeline: proxy window, server kill, window closed once the downloads are done, stop — fired as the job progresses", () => {
    const t = scenario("rehearsal-seed000.json");
    const fired = new Set<string>();
    const behaviourOf = new Map([["prove-plus-comm", "downloads"], ["hello", "solves"]]);
    const step = (started: number, finished: number, done: string[] = []) => {
      const due = dueEvents(t, { started, finished, total: 89, finishedTasks: new Set(done) }, fired, behaviourOf).map((e) => e.name);
      for (const n of due) fired.add(n);
      return due;
    };
    expect(step(0, 0)).toEqual([]);
    expect(step(25, 0)).toEqual(["proxy-502-window-opens"]);
    expect(step(40, 17)).toEqual([]);
    expect(step(43, 18)).toEqual(["worker-a-server-killed"]); // ceil(0.2 × 89) = 18
    expect(step(89, 60, ["hello"])).toEqual([]); // the window stays open until every downloads task is done
    expect(step(89, 60, ["hello", "prove-plus-comm"])).toEqual(["proxy-502-window-closes", "graceful-stop"]);
    expect(step(89, 89)).toEqual([]);
  });

  it("a later event never fires before an earlier one that is not due", () => {
    const t = parseFaultTimeline(
      JSON.stringify({ name: "x", seed: 1, events: [{ name: "a", when: { finishedFraction: 0.5 }, stop: true }, { name: "b", when: { started: 1 }, killServer: "worker-a" }] }),
      "x.json",
    );
    expect(dueEvents(t, { started: 5, finished: 0, total: 10 }, new Set()).map((e) => e.name)).toEqual([]);
    expect(dueEvents(t, { started: 5, finished: 5, total: 10 }, new Set()).map((e) => e.name)).toEqual(["a", "b"]);
  });

  it("the CI timeline keeps the proxy window open until every downloads task is done, then stops", () => {
    const t = scenario("rehearsal-ci.json");
    const behaviourOf = new Map([["rank-tree", "downloads"], ["cache-shader", "solves"]]);
    const opened = new Set(["proxy-502-window-opens"]);
    expect(dueEvents(t, { started: 12, finished: 6, total: 12, finishedTasks: new Set(["cache-shader"]) }, opened, behaviourOf)).toEqual([]);
    expect(dueEvents(t, { started: 12, finished: 6, total: 12, finishedTasks: new Set(["rank-tree"]) }, opened, behaviourOf).map((e) => e.name)).toEqual(["proxy-502-window-closes", "graceful-stop"]);
    expect(() => dueEvents(t, { started: 12, finished: 6, total: 12 }, opened, new Map())).toThrow(/no task of this run has behaviour downloads/);
    expect(t.events.map(describeEvent)).toEqual([
      "proxy-502-window-opens: proxy fails 100% of connections to pypi.sim:80 with 502, after 1 trial(s) started",
      "proxy-502-window-closes: proxy failures off, at 50% of trials finished and every downloads task done",
      "graceful-stop: graceful stop (destroy of the run stack), at 50% of trials finished and every downloads task done",
    ]);
  });

  it("refuses bad files with every problem, naming the event", () => {
    const bad = { name: "x", seed: 0, events: [{ name: "a", when: { started: 1, finishedFraction: 0.5 }, stop: true }, { name: "a", when: { started: 1 } }, { name: "c", when: { finishedFraction: 2 }, stop: true }] };
    expect(() => parseFaultTimeline(JSON.stringify(bad), "bad.json")).toThrow(/bad\.json: \d+ problem\(s\)/);
    try {
      parseFaultTimeline(JSON.stringify(bad), "bad.json");
    } catch (err) {
      const m = (err as Error).message;
      expect(m).toContain("events.0.when: give exactly one of started, finishedFraction");
      expect(m).toContain("events.1: needs exactly one action: proxy, killServer or stop");
      expect(m).toContain("events.2.when.finishedFraction");
    }
    expect(() => parseFaultTimeline("{", "b.json")).toThrow(/b\.json: not valid JSON/);
  });
});
