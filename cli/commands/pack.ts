// `reprobench pack <job dir>… --out DIR --agent NAME --model NAME` — a leaderboard submission folder from
// finished jobs. The work is in results/pack.ts; this file parses flags and prints.
import { parseArgs } from "node:util";
import type { Command } from "./command";
import { datasetFromOption, summaryLines } from "../../results/leaderboard";
import { changeLines, packSubmission } from "../../results/pack";

const HELP = `usage: reprobench pack <job dir>… --out DIR --agent NAME --model NAME [--metadata FILE]
                      [--previous DIR] [--dataset NAME|DIR|FILE] [--tb-version V]

Writes DIR/submissions/terminal-bench/<version>/<NAME>__<NAME>/ with metadata.yaml and each job folder
copied through Harbor's upload allowlist (job: config.json lock.json result.json analysis.md job.log;
trial: config.json lock.json result.json analysis.md agent/ verifier/ artifacts/ trial.log
exception.txt) — nothing else. Refuses, writing nothing, when a file that would be submitted holds an API
key, token or credential in a URL, or a non-empty system prompt (naming file and field). Then validates
what it wrote (as validate --leaderboard) and prints the official-like summary; with --previous (the
earlier <Agent>__<Model>/ folder), the change and which job folder it replaces. An existing folder of the
same name under DIR is replaced whole.

--metadata    metadata.yaml to use; without it the fields are filled from the jobs and --agent/--model,
              and pack stops naming the ones it cannot fill (agent_url, organisations)
--dataset     the dataset's tasks for validation (as validate --dataset)
--tb-version  the <version> folder (default: the jobs' terminal-bench dataset version, else 2.0)

Exit code 0 when the packed folder is a valid submission; 1 when pack refused (nothing written) or the
folder it wrote is not a valid submission (the errors are listed); 2 on usage errors.`;

export const pack: Command = {
  summary: "pack finished jobs into a leaderboard submission folder (allowlist copy, secret refusal, validation)",
  async run(args) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        out: { type: "string" },
        agent: { type: "string" },
        model: { type: "string" },
        metadata: { type: "string" },
        previous: { type: "string" },
        dataset: { type: "string" },
        "tb-version": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
    if (values.help) {
      console.log(HELP);
      return 0;
    }
    const missing = (["out", "agent", "model"] as const).filter((k) => !values[k]);
    if (positionals.length === 0 || missing.length) {
      console.error(`reprobench pack: give job folder(s)${missing.length ? ` and --${missing.join(", --")}` : ""}\n\n${HELP}`);
      return 2;
    }
    const r = packSubmission({
      jobDirs: positionals,
      out: values.out!,
      agent: values.agent!,
      model: values.model!,
      metadataFile: values.metadata,
      previous: values.previous,
      tbVersion: values["tb-version"],
      dataset: values.dataset === undefined ? undefined : datasetFromOption(values.dataset),
    });
    console.log(`packed ${Object.keys(r.leftOut).length} job folder(s) → ${r.dest}`);
    for (const n of r.notes) console.log(`note: ${n}`);
    for (const [job, left] of Object.entries(r.leftOut)) {
      console.log(`left out of ${job} (not in Harbor's upload allowlist):${left.length ? "" : " nothing"}`);
      for (const l of left) console.log(`  ${job}/${l}`);
    }
    const v = r.verdict;
    console.log(`${v.label.toUpperCase()}: ${v.summary}`);
    for (const line of summaryLines(v)) console.log(`  ${line}`);
    for (const x of v.violations) console.log(`  ✗ [${x.rule}] ${x.message} — ${x.where.slice(0, 5).join(", ")}${x.where.length > 5 ? ` … (${x.where.length} in all)` : ""} (source: ${x.sources.join(", ")})`);
    for (const w of v.warnings) console.log(`  warning: ${w}`);
    if (r.previous) for (const line of changeLines(r.previous, v)) console.log(line);
    return v.label === "submission" ? 0 : 1;
  },
};
