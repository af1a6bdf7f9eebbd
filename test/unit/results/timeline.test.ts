// The report's timeline: slots (never two trials at once in one slot, as many slots as the peak
// concurrency), outcome colours, counted vs superseded, and what the Markdown and HTML pages carry.
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditDirs, readJob } from "../../../results/load";
import { renderHtml, renderMarkdown } from "../../../results/report";
import { buildTimeline, type Timeline, timelineOutcome } from "../../../results/timeline";
import { at, tempDir, writeJob, writeTimelineScenario } from "../../fixtures/results/build";

let root: string;
let timeline: Timeline;
let dirs: string[];
beforeAll(() => {
  root = tempDir("reprobench-timeline-");
  dirs = writeTimelineScenario(path.join(root, "jobs"));
  const audit = auditDirs(dirs);
  timeline = buildTimeline(dirs.map(readJob), new Set(audit.tasks.flatMap((t) => t.trials.map((x) => x.path))));
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe("timeline", () => {
  it("has every trial of every pass, none overlapping in a slot, and as many slots as the peak concurrency", () => {
    const trialDirs = dirs.flatMap((d) => fs.readdirSync(d, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name));
    expect(timeline.bars.map((b) => b.trial).sort()).toEqual(trialDirs.sort());
    const bySlot = new Map<number, { start: number; end: number }[]>();
    for (const b of timeline.bars) bySlot.set(b.slot, [...(bySlot.get(b.slot) ?? []), b]);
    for (const bars of bySlot.values()) {
      bars.sort((a, b) => a.start - b.start);
      for (let i = 1; i < bars.length; i++) expect(bars[i].start).toBeGreaterThanOrEqual(bars[i - 1].end);
    }
    // Peak concurrency measured independently: the most bars covering one instant (a start).
    const peak = Math.max(...timeline.bars.map((x) => timeline.bars.filter((y) => y.start <= x.start && y.end > x.start).length));
    expect(timeline.slots).toBe(peak);
    expect(timeline.slots).toBe(25);
    // The first trial starts 20 s after the run (the scenario's queue delay).
    expect(timeline.startedAt).toBe("2026-08-30T15:44:51.000Z");
    expect(timeline.bars.every((b) => b.start >= 0 && b.end >= b.start && b.end <= timeline.hours)).toBe(true);
  });

  it("colours by outcome and marks what a later pass superseded", () => {
    const counts = (pred: (b: Timeline["bars"][number]) => boolean) => timeline.bars.filter(pred).length;
    // The burst of RuntimeErrors in the first pass was re-run by the mop-up, which counts instead.
    expect(counts((b) => b.outcome === "errored")).toBeGreaterThan(10);
    expect(counts((b) => b.outcome === "errored" && b.counted)).toBe(0);
    expect(counts((b) => b.outcome === "cancelled")).toBeGreaterThan(0);
    expect(counts((b) => b.counted)).toBe(89);
    // The errors cluster in hour 1 (1.5 h to 2.2 h into the run), as the per-hour table shows.
    const errorsByHour = timeline.perHour.map((h) => h.counts.errored);
    expect(errorsByHour.indexOf(Math.max(...errorsByHour))).toBe(1);
    expect(timeline.perHour.reduce((s, h) => s + Object.values(h.counts).reduce((a, b) => a + b, 0), 0)).toBe(timeline.bars.length);
  });

  it("outcome rule", () => {
    expect(timelineOutcome({ reward: 1, exceptionType: "AgentTimeoutError" })).toBe("passed");
    expect(timelineOutcome({ reward: 0, exceptionType: "AgentTimeoutError" })).toBe("agent timeout");
    expect(timelineOutcome({ reward: null, exceptionType: "AgentTimeoutError" })).toBe("agent timeout");
    expect(timelineOutcome({ reward: 0, exceptionType: null })).toBe("failed");
    expect(timelineOutcome({ reward: null, exceptionType: "RuntimeError" })).toBe("errored");
    expect(timelineOutcome({ reward: null, exceptionType: "CancelledError" })).toBe("cancelled");
  });

  it("leaves out trials without times and says so; an empty run has no timeline section", () => {
    const jobsDir = path.join(root, "small");
    const dir = writeJob(jobsDir, { name: "small", trials: [{ task: "a", reward: 1, start: at(0) }, { task: "b", start: at(0), noResult: true }] });
    const t = buildTimeline([readJob(dir)], new Set());
    expect(t).toMatchObject({ slots: 1, skipped: 1 });
    expect(buildTimeline([], new Set())).toMatchObject({ bars: [], slots: 0 });
    const audit = auditDirs([dir]);
    expect(renderMarkdown(audit, null, buildTimeline([], new Set()))).not.toContain("## Timeline");
    expect(renderHtml(audit, null, "", buildTimeline([], new Set()))).not.toContain('id="chart-timeline"');
  });

  it("the pages carry it: a per-hour table in Markdown, the data and a canvas sized by slots in HTML", () => {
    const audit = auditDirs(dirs);
    const md = renderMarkdown(audit, null, timeline);
    expect(md).toContain("## Timeline");
    expect(md).toContain(`${timeline.bars.length} trials from ${timeline.startedAt}`);
    expect(md).toMatch(/\| 1–2 h \| \d+ \| \d+ \| \d+ \| \d+ \| \d+ \|/);
    const html = renderHtml(audit, null, "/*chart.js*/", timeline);
    expect(html).toContain('<canvas id="chart-timeline">');
    expect(html).toContain(`height:${16 * 25 + 90}px`);
    const data = JSON.parse(/<script type="application\/json" id="timeline-data">([\s\S]*?)<\/script>/.exec(html)![1]);
    expect(data.bars).toHaveLength(timeline.bars.length);
    expect(data.outcomes).toEqual(["passed", "failed", "agent timeout", "errored", "cancelled"]);
  });
});
