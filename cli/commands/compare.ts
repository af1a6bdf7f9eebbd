// `reprobench compare A B [options]` — thin wrapper: each side audited as `audit` does (results/load),
// compared by results/compare, rendered as Markdown, JSON or the HTML page.
import * as fs from "node:fs";
import * as path from "node:path";
import { command } from "./command";
// For the defaults the help shows; the rest of results/ is loaded when the command runs.
import { type CompareSide, DEFAULT_BOOTSTRAP, DEFAULT_PASS_THRESHOLD } from "../../results/compare";

const HELP = `
A and B are each a Harbor job dir, or the job dirs of one run's passes joined by commas
(run-1,run-1-mopup). Each side is audited as \`reprobench audit\` does (the newest genuine trial per
task and attempt slot counts), then matched task by task. Prints Markdown: the scores, the flips both
ways grouped by cause (timeout → pass, fail → pass, pass → fail, pass → timeout, infra), McNemar's
exact test on pass/fail per task, a paired bootstrap CI of the mean-reward difference B − A over tasks
(each task's attempts averaged first), the run conditions side by side (differences marked), what each
run cost (wall time, trial time by phase, tokens by outcome, GPU-hours from the run manifest), and the
per-task table. For a stack's job on its runner, \`reprobench pull --stack S --job J\` it first.`;

/** Parses a numeric option; throws a usage message naming it. */
function numberOption(name: string, text: string | undefined, fallback: number, ok: (n: number) => boolean, expected: string): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (text.trim() === "" || !Number.isFinite(n) || !ok(n)) throw new UsageError(`--${name}: got '${text}'; expected ${expected}`);
  return n;
}

class UsageError extends Error {}

/** The job dirs of one side ("a,b" → [a, b]); each must exist. */
function sideDirs(label: string, arg: string): string[] {
  const dirs = arg.split(",").filter((d) => d.length > 0);
  if (dirs.length === 0) throw new UsageError(`${label}: no job dir given`);
  for (const d of dirs) if (!fs.existsSync(d) || !fs.statSync(d).isDirectory()) throw new UsageError(`${label}: ${d}: no such directory`);
  const twice = dirs.find((d, i) => dirs.findIndex((x) => path.resolve(x) === path.resolve(d)) !== i);
  if (twice) throw new UsageError(`${label}: ${twice} is given twice`);
  return dirs;
}

async function loadSide(dirs: string[]): Promise<CompareSide> {
  const { runConditions } = await import("../../results/compare");
  const { runCost } = await import("../../results/cost");
  const { auditDirs, readJob } = await import("../../results/load");
  const { findManifest } = await import("../../results/manifest");
  const jobs = dirs.map(readJob);
  const manifest = findManifest(dirs)?.data ?? null;
  return { jobs: jobs.map((j) => j.name), audit: auditDirs(dirs), conditions: runConditions(jobs, manifest), cost: runCost(jobs, manifest) };
}

const USAGE = "usage: reprobench compare A B [--pass-threshold X] [--allow-different-tasks] [--seed N] [--resamples N] [--level X] [--html FILE] [--json]";

export const compare = command("compare", {
  summary: "compare two runs task by task: flips by cause, McNemar, paired bootstrap CI, conditions, cost",
  define: (cmd) =>
    cmd
      .argument("[A]", "a job dir, or one run's job dirs joined by commas")
      .argument("[B]", "the same for the other run")
      .option("--pass-threshold <x>", `a task passes when its mean reward over its attempts is ≥ X (default ${DEFAULT_PASS_THRESHOLD})`)
      .option("--allow-different-tasks", "compare the tasks both sides have when their task sets differ (else refused)")
      .option("--seed <n>", `bootstrap seed (default ${DEFAULT_BOOTSTRAP.seed})`)
      .option("--resamples <n>", `bootstrap resamples (default ${DEFAULT_BOOTSTRAP.resamples})`)
      .option("--level <x>", `confidence level of the interval (default ${DEFAULT_BOOTSTRAP.level})`)
      .option("--html <file>", "also write a self-contained page (no network access) with a flip chart and a per-task duration scatter A vs B")
      .option(
        "--json",
        "print the comparison as JSON instead: tasks[{task, a, b, flip}], flips{passToFail, failToPass, byCause}, mcnemar{b, c, p}, bootstrap{diff, lo, hi, level, resamples, seed}, conditions[], cost{a, b}, notes[]",
      )
      .addHelpText("after", HELP),
  async action({ opts, args }) {
    const text = (k: string) => opts[k] as string | undefined;
    let o;
    let sides: [string[], string[]];
    try {
      if (args.filter((a) => a !== undefined).length !== 2) throw new UsageError(`give two sides, A and B (got ${args.length} argument(s))`);
      o = {
        passThreshold: numberOption("pass-threshold", text("passThreshold"), DEFAULT_PASS_THRESHOLD, (n) => n > 0 && n <= 1, "a number in (0, 1]"),
        seed: numberOption("seed", text("seed"), DEFAULT_BOOTSTRAP.seed, (n) => Number.isInteger(n) && n >= 0 && n < 2 ** 32, "an integer from 0 to 4294967295"),
        resamples: numberOption("resamples", text("resamples"), DEFAULT_BOOTSTRAP.resamples, (n) => Number.isInteger(n) && n >= 100 && n <= 1_000_000, "an integer from 100 to 1000000"),
        level: numberOption("level", text("level"), DEFAULT_BOOTSTRAP.level, (n) => n > 0 && n < 1, "a number in (0, 1), e.g. 0.95"),
        allowDifferentTasks: Boolean(opts.allowDifferentTasks),
      };
      sides = [sideDirs("A", args[0]), sideDirs("B", args[1])];
    } catch (err) {
      if (!(err instanceof UsageError)) throw err;
      console.error(`reprobench compare: ${err.message}\n\n${USAGE}`);
      return 2;
    }
    const { compareJson, compareRuns, DifferentTasksError, renderCompareMarkdown } = await import("../../results/compare");
    let comparison;
    try {
      comparison = compareRuns(await loadSide(sides[0]), await loadSide(sides[1]), o);
    } catch (err) {
      if (!(err instanceof DifferentTasksError)) throw err;
      console.error(`reprobench compare: refused: ${err.message}`);
      return 1;
    }
    console.log(opts.json ? compareJson(comparison) : renderCompareMarkdown(comparison).trimEnd());
    if (opts.html) {
      const { renderCompareHtml } = await import("../../results/compare-html");
      const { loadChartJs } = await import("../../results/report");
      const file = path.resolve(opts.html as string);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, renderCompareHtml(comparison, loadChartJs()));
      console.error(`wrote ${file}`);
    }
    return 0;
  },
});
