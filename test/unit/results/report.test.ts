import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditDirs, readJob } from "../../../results/load";
import { findManifest, manifestRows } from "../../../results/manifest";
import { parseOverrides } from "../../../results/overrides";
import { chartData, loadChartJs, renderHtml, renderMarkdown, tokenCount } from "../../../results/report";
import { AuditReport } from "../../../results/schema";
import { buildTimeline } from "../../../results/timeline";
import { MULTI_PASS_OVERRIDES, tempDir, writeMultiPassScenario, writeTimelineScenario } from "../../fixtures/results/build";

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
    // Shown folded: its rows inside a closed <details> whose summary names the source and the row count.
    const details = /<details id="manifest-details">(.*?)<\/details>/s.exec(html)![1];
    expect(details).toContain(`<summary>4 fields from <code>${file}</code>`);
    expect(details).toContain("<tr><th>harbor.version</th><td>0.21.0</td></tr>");
    expect(html).not.toMatch(/<details[^>]*\sopen/);
    expect(renderMarkdown(audit, m)).toContain("| router.apiKey | [redacted] |");
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

describe("tokenCount", () => {
  it("is exact below a thousand", () => {
    expect([0, 1, 812, 999, 999.4].map(tokenCount)).toEqual(["0", "1", "812", "999", "999"]);
  });

  it("uses k, M and B with one decimal, a trailing .0 dropped", () => {
    expect(tokenCount(45_300)).toBe("45.3k");
    expect(tokenCount(2_400_000)).toBe("2.4M");
    expect(tokenCount(1_000)).toBe("1k");
    expect(tokenCount(1_049)).toBe("1k");
    expect(tokenCount(1_050)).toBe("1.1k");
    expect(tokenCount(12_345)).toBe("12.3k");
    expect(tokenCount(445_000)).toBe("445k");
    expect(tokenCount(8_900_000)).toBe("8.9M");
    expect(tokenCount(3_000_000_000)).toBe("3B");
  });

  it("moves to the next unit when rounding reaches a thousand of the current one", () => {
    expect(tokenCount(999.6)).toBe("1k");
    expect(tokenCount(999_949)).toBe("999.9k");
    expect(tokenCount(999_950)).toBe("1M");
    expect(tokenCount(999_960_000)).toBe("1B");
    expect(tokenCount(2_500_000_000_000)).toBe("2500B");
  });

  it("keeps the sign and says n/a for what is not a number", () => {
    expect(tokenCount(-45_300)).toBe("-45.3k");
    expect(tokenCount(-0.2)).toBe("0");
    expect(tokenCount(Number.NaN)).toBe("n/a");
  });

  it("is what the page's token card shows: small counts no longer read 0.0M", () => {
    const small = structuredClone(audit);
    small.tokens.chosen = { ...small.tokens.chosen, input: 812, output: 45_300 };
    const html = renderHtml(small, null, "");
    expect(html).toContain("<b>812 in</b><span class=\"muted\">45.3k out</span>");
    expect(html).not.toMatch(/0\.0M|0\.05M/);
    small.tokens.chosen = { ...small.tokens.chosen, input: 2_400_000, output: 812 };
    expect(renderHtml(small, null, "")).toContain("<b>2.4M in</b><span class=\"muted\">812 out</span>");
  });
});

describe("section order at full size (89 tasks, a manifest of every worker's server arguments)", () => {
  let big: string;
  let html: string;
  let markdown: string;
  let manifestRowCount: number;
  beforeAll(() => {
    big = tempDir("reprobench-report-89-");
    const jobs = writeTimelineScenario(path.join(big, "jobs"));
    // /server_info of two SGLang workers: ~110 server arguments each, as the run manifest records them.
    const serverInfo = Object.fromEntries(Array.from({ length: 110 }, (_, i) => [`server_arg_${String(i).padStart(3, "0")}`, i % 3 ? `value-${i}` : i]));
    const manifestData = { schema: "reprobench-manifest/v1", harbor: { version: "0.21.0" }, dataset: { count: 89 }, workers: { "worker-a": serverInfo, "worker-b": serverInfo } };
    fs.writeFileSync(`${jobs[0]}.reprobench-manifest.json`, JSON.stringify(manifestData));
    const full = auditDirs(jobs);
    const manifest = findManifest(jobs)!;
    manifestRowCount = manifestRows(manifest.data).length;
    const timeline = buildTimeline(jobs.map(readJob), new Set(full.tasks.flatMap((t) => t.trials.map((x) => x.path))));
    expect(full.scores.raw.nTasks).toBe(89);
    html = renderHtml(full, manifest, "/*chart.js*/", timeline);
    markdown = renderMarkdown(full, manifest, timeline);
  });
  afterAll(() => fs.rmSync(big, { recursive: true, force: true }));

  const at = (needle: string): number => {
    const i = html.indexOf(needle);
    expect(i, needle).toBeGreaterThanOrEqual(0);
    return i;
  };

  it("html: scores, outcome chart, timeline, the other charts, per-task tables, then the manifest", () => {
    expect(manifestRowCount).toBeGreaterThan(200);
    const order = [
      '<h2 id="scores">Scores</h2>',
      '<canvas id="chart-outcomes">',
      '<canvas id="chart-timeline">',
      '<canvas id="chart-durations">',
      '<canvas id="chart-tokens">',
      '<canvas id="chart-taxonomy">',
      '<h2 id="per-task">Per task</h2>',
      '<h2 id="manifest">Run manifest</h2>',
      '<details id="manifest-details">',
      "<tr><th>workers.worker-a.server_arg_000</th>",
      "</details>",
      '<script type="application/json" id="chart-data">',
    ].map(at);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    // The run conditions qualify the scores, so they come just before them.
    expect(at('<div class="banner')).toBeLessThan(at('<h2 id="scores">'));
  });

  it("html: nothing tabular comes before the outcome chart; the manifest is folded (closed) at the end", () => {
    const firstScreen = html.slice(html.indexOf("<body>"), at('<canvas id="chart-outcomes">'));
    expect(firstScreen).not.toContain("<tr>");
    expect(firstScreen).not.toContain("server_arg_");
    expect(firstScreen).toContain('<a href="#manifest">run manifest</a>');
    const open = /<details[^>]*>/g.exec(html)!;
    expect(open[0]).toBe('<details id="manifest-details">');
    expect(html.match(/<details/g)).toHaveLength(1);
    const details = html.slice(at('<details id="manifest-details">'), at("</details>"));
    expect(details).toContain(`<summary>${manifestRowCount} fields from <code>`);
    expect(details).toContain("(schema, harbor, dataset, workers)</span></summary>");
    expect(details.match(/<tr>/g)).toHaveLength(manifestRowCount);
    // Every manifest row is inside it; none is left outside the fold.
    expect(html.match(/<th>workers\./g)).toHaveLength(220);
  });

  it("markdown: the manifest last, after the per-task table", () => {
    const headings = markdown.split("\n").filter((l) => /^## /.test(l));
    expect(headings[0]).toBe("## Run conditions");
    expect(headings.at(-1)).toBe("## Run manifest");
    expect(markdown.indexOf("## Scores")).toBeLessThan(markdown.indexOf("## Timeline"));
    expect(markdown.indexOf("## Timeline")).toBeLessThan(markdown.indexOf("## Per task"));
    expect(markdown.indexOf("## Per task")).toBeLessThan(markdown.indexOf("## Run manifest"));
    expect(markdown.indexOf("| workers.worker-a.server_arg_000 | 0 |")).toBeGreaterThan(markdown.indexOf("## Run manifest"));
    expect(markdown.endsWith("| workers.worker-b.server_arg_109 | value-109 |\n")).toBe(true);
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
