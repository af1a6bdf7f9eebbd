// The `reprobench compare --html` page: self-contained like the report's (Chart.js and the data inlined,
// a Content-Security-Policy that forbids every network fetch), with a flip chart and a per-task duration
// scatter A vs B.
import { costRows } from "./cost";
import { duration, int } from "./format";
import { FLIP_GROUPS, statisticsLines, type Comparison } from "./compare";
import { esc, STYLE } from "./report";

const FLIP_COLOURS: Record<string, string> = {
  "timeout → pass": "#8e7cc3",
  "fail → pass": "#2e9d5b",
  "infra → pass": "#9aa0a6",
  "pass → fail": "#d64545",
  "pass → timeout": "#e69138",
  "pass → infra": "#b8bcc2",
};

/** What the page's charts draw. */
export function compareChartData(c: Comparison) {
  return {
    groups: FLIP_GROUPS.map((g) => ({ group: g, count: c.flips.byCause[g].length, colour: FLIP_COLOURS[g] })),
    tasks: c.tasks.map((t) => ({
      task: t.task,
      flip: t.flip,
      a: t.a.durationSec === null ? null : t.a.durationSec / 60,
      b: t.b.durationSec === null ? null : t.b.durationSec / 60,
      diff: t.b.reward - t.a.reward,
    })),
    colours: FLIP_COLOURS,
  };
}

// Runs in the browser. Plain ES2017, no imports: Chart is the global from the inlined UMD build.
const PAGE_SCRIPT = `
(function () {
  var data = JSON.parse(document.getElementById("compare-data").textContent);
  Chart.defaults.animation = false;
  Chart.defaults.font.size = 11;
  new Chart(document.getElementById("chart-flips"), {
    type: "bar",
    data: { labels: data.groups.map(function (g) { return g.group; }),
      datasets: [{ label: "tasks", data: data.groups.map(function (g) { return g.count; }), backgroundColor: data.groups.map(function (g) { return g.colour; }) }] },
    options: { indexAxis: "y", responsive: true, maintainAspectRatio: false, plugins: { legend: { display: false } },
      scales: { x: { ticks: { precision: 0 }, title: { display: true, text: "tasks that flipped" } } } }
  });
  var many = data.tasks.length > 30;
  new Chart(document.getElementById("chart-diff"), {
    type: "bar",
    data: { labels: data.tasks.map(function (t) { return t.task; }),
      datasets: [{ label: "mean reward B − A", data: data.tasks.map(function (t) { return t.diff; }),
        backgroundColor: data.tasks.map(function (t) { return t.flip ? data.colours[t.flip] : "#c9d1d9"; }) }] },
    options: { responsive: true, maintainAspectRatio: false, plugins: { legend: { display: false } },
      scales: { x: { ticks: { autoSkip: false, maxRotation: 90, minRotation: many ? 90 : 0, font: { size: many ? 8 : 11 } } },
        y: { min: -1, max: 1, title: { display: true, text: "mean reward B − A" } } } }
  });
  var pts = data.tasks.filter(function (t) { return t.a !== null && t.b !== null; });
  var max = pts.reduce(function (m, t) { return Math.max(m, t.a, t.b); }, 0) || 1;
  var groups = {};
  pts.forEach(function (t) { var k = t.flip || "no flip"; (groups[k] = groups[k] || []).push({ x: t.a, y: t.b, task: t.task }); });
  var sets = Object.keys(groups).map(function (k) {
    return { type: "scatter", label: k, data: groups[k], backgroundColor: k === "no flip" ? "#3d85c6" : data.colours[k], pointRadius: 4 };
  });
  sets.push({ type: "line", label: "A = B", data: [{ x: 0, y: 0 }, { x: max, y: max }], borderColor: "#9aa0a6", borderDash: [4, 4], pointRadius: 0 });
  new Chart(document.getElementById("chart-durations"), {
    type: "scatter",
    data: { datasets: sets },
    options: { responsive: true, maintainAspectRatio: false,
      scales: { x: { min: 0, title: { display: true, text: "A: mean trial minutes" } }, y: { min: 0, title: { display: true, text: "B: mean trial minutes" } } },
      plugins: { tooltip: { callbacks: { label: function (c) { return c.raw.task ? c.raw.task + ": " + c.raw.x.toFixed(1) + " → " + c.raw.y.toFixed(1) + " min" : ""; } } } } }
  });
  document.body.setAttribute("data-charts", "ready");
})();
`;

const r4 = (x: number | null): string => (x === null ? "n/a" : x.toFixed(4));

/** The self-contained comparison page; `chartJs` is Chart.js's UMD source (results/report.ts loadChartJs). */
export function renderCompareHtml(c: Comparison, chartJs: string): string {
  const s = statisticsLines(c);
  const card = (title: string, value: string, sub: string): string => `<div class="card"><span class="muted">${esc(title)}</span><b>${esc(value)}</b><span class="muted">${esc(sub)}</span></div>`;
  const byTask = new Map(c.tasks.map((t) => [t.task, t]));
  const flips = FLIP_GROUPS.filter((g) => c.flips.byCause[g].length)
    .map((g) => `<h3>${esc(g)} (${c.flips.byCause[g].length})</h3><ul>${c.flips.byCause[g].map((n) => {
      const t = byTask.get(n)!;
      return `<li>${esc(n)}: reward ${r4(t.a.reward)} → ${r4(t.b.reward)}; A ${esc(t.a.exception ?? "no exception")}, B ${esc(t.b.exception ?? "no exception")}</li>`;
    }).join("")}</ul>`)
    .join("");
  const conditions = c.conditions.map((r) => `<tr${r.differs ? ' class="differs"' : ""}><th>${esc(r.field)}</th><td>${esc(r.a)}</td><td>${esc(r.b)}</td><td>${r.differs ? "<b>differs</b>" : ""}</td></tr>`).join("");
  const cost = c.cost.a && c.cost.b
    ? (() => {
        const rb = costRows(c.cost.b!);
        return costRows(c.cost.a!).map((row, i) => `<tr><th>${esc(row.what)}</th><td>${esc(row.value)}</td><td>${esc(rb[i].value)}</td></tr>`).join("");
      })()
    : "";
  const rows = c.tasks
    .map(
      (t) =>
        `<tr><td>${esc(t.task)}</td><td class="${t.a.outcome}">${t.a.outcome} (${t.a.passedAttempts}/${t.a.attempts})</td><td class="${t.b.outcome}">${t.b.outcome} (${t.b.passedAttempts}/${t.b.attempts})</td><td>${t.flip ? `<b>${esc(t.flip)}</b>` : ""}</td><td>${r4(t.a.reward)} → ${r4(t.b.reward)}</td><td>${esc(t.a.exception ?? "")}</td><td>${esc(t.b.exception ?? "")}</td><td>${duration(t.a.durationSec)} / ${duration(t.b.durationSec)}</td><td>${int(t.a.tokens.input)} / ${int(t.a.tokens.output)}</td><td>${int(t.b.tokens.input)} / ${int(t.b.tokens.output)}</td></tr>`,
    )
    .join("");
  // JSON inside <script>: escape "<" so no string in the data can close the element.
  const data = JSON.stringify(compareChartData(c)).replace(/</g, "\\u003c");
  const safeLib = chartJs.replace(/<\/script/gi, "<\\/script");
  const jobs = (xs: string[]) => xs.map((j) => `<code>${esc(j)}</code>`).join(", ");
  const differing = c.conditions.filter((r) => r.differs).length;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<title>Run comparison — ${esc(c.a.jobs.join(", "))} vs ${esc(c.b.jobs.join(", "))}</title>
<style>${STYLE} tr.differs td, tr.differs th { background: #fff4e5; }</style></head>
<body>
<h1>Run comparison</h1>
<div class="muted">generated ${esc(c.generatedAt)} · A: ${jobs(c.a.jobs)} · B: ${jobs(c.b.jobs)}</div>
${differing ? `<div class="banner repro"><b>${differing} run condition(s) differ</b> (highlighted under <a href="#conditions">Run conditions</a>): ${esc(c.conditions.filter((r) => r.differs).map((r) => r.field).join(", "))}</div>` : `<div class="banner ok">Same run conditions on both sides.</div>`}
${c.notes.map((n) => `<div class="banner repro">${esc(n)}</div>`).join("")}
<h2 id="scores">Scores</h2>
<div class="cards">
${card("A: mean reward over tasks", r4(c.a.meanReward), `${c.a.passedTasks}/${c.a.tasks} tasks passed`)}
${card("B: mean reward over tasks", r4(c.b.meanReward), `${c.b.passedTasks}/${c.b.tasks} tasks passed`)}
${card(`B − A, ${Math.round(c.bootstrap.level * 100)}% CI`, `${r4(c.bootstrap.diff)}`, `[${r4(c.bootstrap.lo)}, ${r4(c.bootstrap.hi)}]`)}
${card("McNemar exact p", c.mcnemar.p.toPrecision(3), `b = ${c.mcnemar.b} pass → fail, c = ${c.mcnemar.c} fail → pass`)}
</div>
<p>${esc(s.bootstrap)}.<br>${esc(s.mcnemar)}.</p>
<h2 id="flips">Flips</h2><div class="chart small"><canvas id="chart-flips"></canvas></div>
<p class="muted">Cause: what most of the failing side's attempts ended with — timeout (AgentTimeoutError), infra (infra/setup/cancelled, not scored), fail (anything else).</p>
${flips || "<p>No task flipped.</p>"}
<h2>Mean reward difference per task</h2><div class="chart"><canvas id="chart-diff"></canvas></div>
<h2>Duration per task, A vs B</h2><div class="chart" style="max-width:720px"><canvas id="chart-durations"></canvas></div>
<h2 id="conditions">Run conditions</h2>
<table><tr><th></th><th>A</th><th>B</th><th></th></tr>${conditions}</table>
<h2 id="cost">Cost</h2>
${cost ? `<table><tr><th></th><th>A</th><th>B</th></tr>${cost}</table>` : "<p>not computed</p>"}
<h2 id="per-task">Per task</h2>
<table><tr><th>task</th><th>A</th><th>B</th><th>flip</th><th>reward A → B</th><th>exception A</th><th>exception B</th><th>duration A / B</th><th>tokens in / out A</th><th>tokens in / out B</th></tr>${rows}</table>
<script type="application/json" id="compare-data">${data}</script>
<script>${safeLib}</script>
<script>${PAGE_SCRIPT}</script>
</body></html>
`;
}
