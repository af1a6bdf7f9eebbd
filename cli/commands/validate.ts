// `reprobench validate --leaderboard <submission dir>` — the leaderboard's static checks, run locally.
import { parseArgs } from "node:util";
import type { Command } from "./index";
import { checkSubmission } from "../../results/leaderboard";
import { readSubmission } from "../../results/load";

const HELP = `usage: reprobench validate --leaderboard <submission dir> [--json]

Static checks of a Terminal-Bench leaderboard submission (<agent>__<model>/ with metadata.yaml and
job dirs): timeout multipliers 1.0, no timeout or resource overrides, at least 5 trials per task, a
valid result.json per trial, an ATIF trajectory for every passing trial, metadata.yaml fields. Every
violation is listed. A run that only breaks the run conditions (e.g. agent_timeout_multiplier 6) is
labelled a reproduction, not a submission. Exit code 0 only for a valid submission.`;

export const validate: Command = {
  summary: "leaderboard static checks for a submission dir (submission / reproduction / invalid)",
  async run(args) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { leaderboard: { type: "string" }, json: { type: "boolean" }, help: { type: "boolean", short: "h" } },
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
    const verdict = checkSubmission(readSubmission(dir));
    if (values.json) console.log(JSON.stringify(verdict, null, 2));
    else {
      const c = verdict.counts;
      console.log(`${verdict.label.toUpperCase()}: ${verdict.summary}`);
      console.log(`jobs ${c.jobs}, trials ${c.trials}, tasks ${c.tasks}, passed ${c.passed}`);
      for (const v of verdict.violations) {
        const where = v.where.length > 5 ? `${v.where.slice(0, 5).join(", ")} … (${v.where.length} in all)` : v.where.join(", ");
        console.log(`  [${v.kind}] ${v.rule}: ${v.message} — ${where}`);
      }
      for (const w of verdict.warnings) console.log(`  warning: ${w}`);
    }
    return verdict.label === "submission" ? 0 : 1;
  },
};
