// `reprobench validate --leaderboard <submission dir>` — the leaderboard's rules, checked locally.
import { parseArgs } from "node:util";
import type { Command } from "./command";
import { checkSubmission, datasetFromOption, LeaderboardVerdict, localDatasetTasks, readSubmissionTree, SOURCES, SourceId, summaryLines } from "../../results/leaderboard";

const HELP = `usage: reprobench validate --leaderboard <submission dir> [--dataset NAME|DIR|FILE] [--json]

Checks a Terminal-Bench leaderboard submission folder
(submissions/terminal-bench/<version>/<agent>__<model>/ with metadata.yaml and job folders) against
every rule in results/LEADERBOARD.md: layout and metadata, run conditions (timeout multipliers 1.0, no
overrides) in config.json, result.json and lock.json alike, all tasks of the dataset with at least 5
trials each, lock.json and the run's artifacts in every trial folder, counts that match the job's
result.json, no duplicate trials, no job of another agent or model, ATIF trajectories for passing
trials, no Terminal-Bench site or repository access, no secrets, no leftovers. Each error names its rule
and source.

--dataset   the dataset's tasks: terminal-bench@2.0 (89 tasks), a folder of task folders, or a file
            with one task name per line (default: what the jobs' config.json and lock.json say)

Exit code 0 only for a valid submission.`;

function printVerdict(v: LeaderboardVerdict): void {
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
    for (const s of used) console.log(`    ${s}: ${SOURCES[s]}`);
  }
}

export const validate: Command = {
  summary: "check a leaderboard submission folder against every leaderboard rule (errors name rule and source)",
  async run(args) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { leaderboard: { type: "string" }, dataset: { type: "string" }, json: { type: "boolean" }, help: { type: "boolean", short: "h" } },
    });
    if (values.help) {
      console.log(HELP);
      return 0;
    }
    const dir = values.leaderboard;
    if (!dir || positionals.length > 0) {
      console.error(`reprobench validate: give --leaderboard <submission dir>\n\n${HELP}`);
      return 2;
    }
    const dataset = values.dataset === undefined ? undefined : datasetFromOption(values.dataset);
    const verdict = checkSubmission(readSubmissionTree(dir), { dataset, localDatasetTasks });
    if (values.json) console.log(JSON.stringify(verdict, null, 2));
    else printVerdict(verdict);
    return verdict.label === "submission" ? 0 : 1;
  },
};
