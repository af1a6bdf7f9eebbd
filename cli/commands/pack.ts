// `reprobench pack <job dir>… --out DIR --agent NAME --model NAME` — a leaderboard submission folder from
// finished jobs. The work is in results/pack.ts; this file parses flags and prints.
import { command } from "./command";

const HELP = `
Writes DIR/submissions/terminal-bench/<version>/<NAME>__<NAME>/ with metadata.yaml and each job folder
copied through Harbor's upload allowlist (job: config.json lock.json result.json analysis.md job.log;
trial: config.json lock.json result.json analysis.md agent/ verifier/ artifacts/ trial.log
exception.txt) — nothing else. Refuses, writing nothing, when a file that would be submitted holds an API
key, token or credential in a URL, or a non-empty system prompt (naming file and field). Then validates
what it wrote (as validate --leaderboard) and prints the official-like summary; with --previous (the
earlier <Agent>__<Model>/ folder), the change and which job folder it replaces. An existing folder of the
same name under DIR is replaced whole.

--metadata: without it the fields are filled from the jobs and --agent/--model, and pack stops naming
the ones it cannot fill (agent_url, organisations).

Exit code 0 when the packed folder is a valid submission; 1 when pack refused (nothing written) or the
folder it wrote is not a valid submission (the errors are listed); 2 on usage errors.`;

const USAGE = "usage: reprobench pack <job dir>… --out DIR --agent NAME --model NAME [--metadata FILE] [--previous DIR] [--dataset NAME|DIR|FILE] [--tb-version V]";

export const pack = command("pack", {
  summary: "pack finished jobs into a leaderboard submission folder (allowlist copy, secret refusal, validation)",
  define: (cmd) =>
    cmd
      .argument("[job dir...]", "the finished jobs to submit")
      .option("--out <dir>", "where submissions/terminal-bench/… is written (required)")
      .option("--agent <name>", "the agent's name in the folder name and metadata (required)")
      .option("--model <name>", "the model's name in the folder name and metadata (required)")
      .option("--metadata <file>", "metadata.yaml to use")
      .option("--previous <dir>", "the earlier <Agent>__<Model>/ folder, to show the change")
      .option("--dataset <name|dir|file>", "the dataset's tasks for validation (as validate --dataset)")
      .option("--tb-version <v>", "the <version> folder (default: the version the jobs record — their dataset, its git origin or commit, dataset.toml, the run manifest; pack refuses when they name none)")
      .addHelpText("after", HELP),
  async action({ opts, args }) {
    const missing = (["out", "agent", "model"] as const).filter((k) => !opts[k]);
    if (args.length === 0 || missing.length) {
      console.error(`reprobench pack: give job folder(s)${missing.length ? ` and --${missing.join(", --")}` : ""}\n\n${USAGE}`);
      return 2;
    }
    const { datasetFromOption, summaryLines } = await import("../../results/leaderboard");
    const { changeLines, packSubmission } = await import("../../results/pack");
    const r = packSubmission({
      jobDirs: args,
      out: opts.out as string,
      agent: opts.agent as string,
      model: opts.model as string,
      metadataFile: opts.metadata as string | undefined,
      previous: opts.previous as string | undefined,
      tbVersion: opts.tbVersion as string | undefined,
      dataset: opts.dataset === undefined ? undefined : datasetFromOption(opts.dataset as string),
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
});
