// `reprobench validate --leaderboard <submission dir>` — the leaderboard's rules, checked locally.
import { command } from "./command";
import type { LeaderboardVerdict, SourceId } from "../../results/leaderboard";

const HELP = `
Checks a Terminal-Bench leaderboard submission folder
(submissions/terminal-bench/<version>/<agent>__<model>/ with metadata.yaml and job folders) against
every rule in results/LEADERBOARD.md: layout and metadata, run conditions (timeout multipliers 1.0, no
overrides) in config.json, result.json and lock.json alike, all tasks of the dataset with at least 5
trials each, lock.json and the run's artifacts in every trial folder, counts that match the job's
result.json, no duplicate trials, no job of another agent or model, ATIF trajectories for passing
trials, no Terminal-Bench site or repository access, no secrets, no leftovers. Each error names its rule
and source.

--dataset: the dataset's tasks: terminal-bench@2.0 (89 tasks), a folder of task folders, or a file with
one task name per line (default: what the jobs' config.json and lock.json say).

Exit code 0 only for a valid submission.`;

function printVerdict(v: LeaderboardVerdict, sources: Record<SourceId, string>, summaryLines: (v: LeaderboardVerdict) => string[]): void {
  console.log(`${v.label.toUpperCase()}: ${v.summary}`);
  for (const line of summaryLines(v)) console.log(`  ${line}`);
  for (const x of v.violations) {
    const where = x.where.length > 5 ? `${x.where.slice(0, 5).join(", ")} … (${x.where.length} in all)` : x.where.join(", ");
    console.log(`  ✗ [${x.rule}] ${x.message} — ${where} (source: ${x.sources.join(", ")})`);
  }
  for (const w of v.warnings) console.log(`  warning: ${w}`);
  const used = [...new Set(v.violations.flatMap((x) => x.sources))] as SourceId[];
  if (used.length) {
    console.log("  sources:");
    for (const s of used) console.log(`    ${s}: ${sources[s]}`);
  }
}

export const validate = command("validate", {
  summary: "check a leaderboard submission folder against every leaderboard rule (errors name rule and source)",
  define: (cmd) =>
    cmd
      .option("--leaderboard <dir>", "the submission folder to check")
      .option("--dataset <name|dir|file>", "the dataset's tasks (terminal-bench@2.0, a folder of tasks, a task list)")
      .option("--json", "print the verdict as JSON")
      .addHelpText("after", HELP),
  async action({ opts }) {
    const dir = opts.leaderboard as string | undefined;
    if (!dir) {
      console.error(`reprobench validate: give --leaderboard <submission dir>\n\nusage: reprobench validate --leaderboard <submission dir> [--dataset NAME|DIR|FILE] [--json]`);
      return 2;
    }
    const { checkSubmission, datasetFromOption, localDatasetTasks, readSubmissionTree, SOURCES, summaryLines } = await import("../../results/leaderboard");
    const dataset = opts.dataset === undefined ? undefined : datasetFromOption(opts.dataset as string);
    const verdict = checkSubmission(readSubmissionTree(dir), { dataset, localDatasetTasks });
    if (opts.json) console.log(JSON.stringify(verdict, null, 2));
    else printVerdict(verdict, SOURCES, summaryLines);
    return verdict.label === "submission" ? 0 : 1;
  },
});
