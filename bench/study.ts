// Benchmark (not a test): the 3× vs 6× study of issue 33 on a sim instance of its own. The tracked `dev`
// (agent timeout ×3) and `prod` (×6) stacks run on the instance's `local` cluster over the rehearsal
// dataset (sim/rehearsal/), both at once, each to its end; then `bin/reprobench compare dev prod` writes
// the Markdown, the JSON and the HTML page, and a headless Chromium (Debian's package) renders the page.
//   node --import tsx bench/study.ts [tasks] [trials-per-side] [out-dir]
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { SEED000_TASK_COUNT } from "../sim/rehearsal/tasks";
import { prepareRehearsal } from "../sim/rehearsal/prepare";
import { run } from "../sim/exec";
import { repoRoot } from "../test/helpers/project";
import { rehearsalCluster } from "../test/helpers/rehearsal";
import { compareThroughLauncher, runStudySide } from "../test/helpers/study";

const instance = { name: "study", slot: 11 };
const tasks = Number(process.argv[2] ?? SEED000_TASK_COUNT);
const trials = Number(process.argv[3] ?? 12);
const outDir = path.resolve(process.argv[4] ?? fs.mkdtempSync(path.join(os.tmpdir(), "reprobench-study-")));

/** The Chromium binary of Debian's `chromium` package, installed when missing. */
function chromium(): string {
  for (const bin of ["chromium", "chromium-browser"]) {
    try {
      return execFileSync("sh", ["-c", `command -v ${bin}`], { encoding: "utf8" }).trim();
    } catch {
      // not this name
    }
  }
  execFileSync("sh", ["-c", "apt-get update -qq && apt-get install -y -qq chromium >/dev/null"], { stdio: "inherit" });
  return "chromium";
}

async function main(): Promise<void> {
  const log = (m: string) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${m}`);
  fs.mkdirSync(outDir, { recursive: true });
  const sim = await rehearsalCluster(instance, log);
  try {
    const dataset = await prepareRehearsal({ root: repoRoot, instance, count: tasks, seed: 0, log });
    log(`dataset: ${dataset.taskCount} tasks at ${dataset.repoUrl}@${dataset.commit.slice(0, 12)}`);
    const t0 = Date.now();
    await sim.stack.up({ onOutput: () => undefined });
    log(`cluster up in ${((Date.now() - t0) / 1000).toFixed(0)}s`);
    const localJobs = path.join(outDir, "jobs");
    const [dev, prod] = await Promise.all([
      runStudySide(sim, "dev", "Pulumi.dev.yaml", dataset, { trials, agents: trials, localJobs, log }),
      runStudySide(sim, "prod", "Pulumi.prod.yaml", dataset, { trials, agents: trials, localJobs, log }),
    ]);
    const html = path.join(outDir, "compare.html");
    const markdown = await compareThroughLauncher([dev.localDir], [prod.localDir], ["--html", html]);
    fs.writeFileSync(path.join(outDir, "compare.md"), markdown);
    fs.writeFileSync(path.join(outDir, "compare.json"), await compareThroughLauncher([dev.localDir], [prod.localDir], ["--json"]));
    const png = path.join(outDir, "compare.png");
    // No network: the page is self-contained (issue 33), so a page that needed one would render broken here.
    const shot = await run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1400,2600", `--screenshot=${png}`, `file://${html}`], { timeoutMs: 120_000 });
    if (shot.code !== 0 || !fs.existsSync(png)) throw new Error(`chromium could not render ${html}: ${shot.stderr}`);
    console.log(markdown);
    console.log(`study: ${dataset.taskCount} tasks, ${trials} concurrent trials per side, both sides at once`);
    for (const s of [dev, prod]) console.log(`  ${s.stack} (agent ×${s.agentTimeoutMultiplier}): ${s.jobName} in ${(s.upSec / 60).toFixed(1)} min`);
    console.log(`  pages: ${path.join(outDir, "compare.md")}, ${html}, ${png} (${fs.statSync(png).size} bytes)`);
  } finally {
    await sim.cleanup();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(`study: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);
