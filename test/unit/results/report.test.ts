import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditDirs } from "../../../results/load";
import { findManifest, manifestRows } from "../../../results/manifest";
import { parseOverrides } from "../../../results/overrides";
import { chartData, loadChartJs, renderHtml, renderMarkdown } from "../../../results/report";
import { AuditReport } from "../../../results/schema";
import { MULTI_PASS_OVERRIDES, tempDir, writeMultiPassScenario } from "../../fixtures/results/build";

let root: string;
let dirs: string[];
let audit: AuditReport;
beforeAll(() => {
  root = tempDir();
  dirs = writeMultiPassScenario(path.join(root, "jobs"));
  audit = auditDirs(dirs, { overrides: parseOverrides(MULTI_PASS_OVERRIDES, "o.yaml") });
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe("manifest", () => {
  it("says 'no manifest' when there is none", () => {
    expect(findManifest(dirs)).toBeNull();
    expect(renderMarkdown(audit, null)).toContain("no manifest");
    expect(renderHtml(audit, null, "/*chart*/")).toContain("<b>no manifest</b>");
  });

  it("finds the manifest beside the job dir and redacts secrets before showing it", () => {
    const file = path.join(root, "jobs", "qwen-full-mopup-1.reprobench-manifest.json");
    fs.writeFileSync(file, JSON.stringify({ harbor: { version: "0.21.0" }, router: { apiKey: "sk-123" }, proxy: "http://u:p4ss@proxy:3128", env: { HF_TOKEN: "hf_abc" } }));
    const m = findManifest(dirs)!;
    expect(m.path).toBe(file);
    const rows = Object.fromEntries(manifestRows(m.data));
    expect(rows).toEqual({ "harbor.version": "0.21.0", "router.apiKey": "[redacted]", proxy: "http://[redacted]@proxy:3128", "env.HF_TOKEN": "[redacted]" });
    const html = renderHtml(audit, m, "");
    expect(html).not.toMatch(/sk-123|p4ss|hf_abc/);
    fs.rmSync(file);
  });
});

describe("html page", () => {
  it("is self-contained: Chart.js and the data inlined, CSP forbids network, no external URLs", () => {
    const lib = loadChartJs();
    expect(lib).toMatch(/Chart\.js v4/);
    const html = renderHtml(audit, null, lib);
    expect(html).toContain(lib.slice(0, 200));
    expect(html).toContain(`content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"`);
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href=|@import/);
    for (const id of ["chart-outcomes", "chart-durations", "chart-tokens", "chart-taxonomy"]) expect(html).toContain(`<canvas id="${id}">`);
    const json = /<script type="application\/json" id="chart-data">(.*?)<\/script>/s.exec(html)![1];
    expect(JSON.parse(json)).toEqual(JSON.parse(JSON.stringify(chartData(audit))));
  });

  it("escapes text from the run so a hostile task name cannot inject markup", () => {
    const evil = structuredClone(audit);
    evil.tasks[0].task = "</script><img src=x onerror=alert(1)>";
    evil.tasks[0].trials[0].task = evil.tasks[0].task;
    const html = renderHtml(evil, null, "");
    expect(html).not.toContain("<img src=x");
    expect(html).toContain("&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;");
    expect(html).toContain("\\u003c/script>\\u003cimg");
  });

  it("chart data: one entry per task, outcomes and taxonomy counts", () => {
    const d = chartData(audit);
    expect(d.tasks).toHaveLength(16);
    const i = d.tasks.indexOf("golf");
    expect([d.outcomes.passed[i], d.outcomes.failed[i], d.outcomes.errored[i]]).toEqual([1, 0, 0]);
    expect(d.taxonomy.labels).toContain("infra / network");
    expect(d.taxonomy.counts.reduce((a, b) => a + b, 0)).toBe(14);
  });
});

describe("markdown", () => {
  it("shows raw and corrected scores, evidence lines and the per-task table", () => {
    const text = renderMarkdown(audit, null);
    expect(text).toContain("| raw | 3/16 passed, mean 0.1875 (18.75%); pass rate 3/11 = 27.27% over scored trials |");
    expect(text).toContain("| corrected (3 manual verdicts) | 4/15 passed, mean 0.2667 (26.67%); pass rate 4/10 = 40.00% over scored trials |");
    expect(text).toMatch(/`qwen-full\/foxtrot__\w+\/verifier\/test-stdout\.txt:3` proxy-502/);
    expect(text).toContain("**A reproduction, not a leaderboard submission:**");
    const perTask = text.slice(text.indexOf("## Per task")).split("\n");
    expect(perTask.filter((l) => /^\| [a-z]+ \| (passed|failed|errored) \|/.test(l))).toHaveLength(16);
  });
});
