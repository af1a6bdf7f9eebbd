// `reprobench audit <job dir>… [--overrides FILE] [--json]` — thin wrapper over results/load + format.
import * as fs from "node:fs";
import { command } from "./command";

const HELP = `
Audits one or more Harbor job dirs (original run, resume passes, rerun jobs) together: per task (and
attempt slot) the newest genuine trial counts — one with a reward or an error the audit scores; a later
infra/setup/cancelled attempt never displaces it and is listed as superseded. Prints outcomes, raw and
corrected scores, tokens, durations and the failure taxonomy with evidence (file:line).

--overrides FILE: manual verdicts (YAML/JSON): overrides: [{task, verdict: passed|failed|excluded,
reason, evidence, trial?}] — reported as the corrected score, never mixed into raw. A verdict naming a
trial that no longer counts is listed as not applied, with the trial that counts instead.`;

export const audit = command("audit", {
  summary: "audit Harbor job dirs: latest trial per task, scores, taxonomy with evidence",
  define: (cmd) =>
    cmd
      .argument("[job dir...]", "Harbor job dirs of one run (its passes, rerun jobs)")
      .option("--overrides <file>", "manual verdicts (YAML/JSON), reported as the corrected score")
      .option("--json", "print the audit as JSON (schema: results/SCHEMA.md, schemaVersion 2)")
      .addHelpText("after", HELP),
  async action({ opts, args }) {
    if (args.length === 0) {
      console.error(`reprobench audit: give at least one job dir\n\nusage: reprobench audit <job dir>… [--overrides FILE] [--json]`);
      return 2;
    }
    const { renderAuditText } = await import("../../results/format");
    const { auditDirs } = await import("../../results/load");
    const { parseOverrides } = await import("../../results/overrides");
    const file = opts.overrides as string | undefined;
    let overrides;
    if (file) {
      if (!fs.existsSync(file)) throw new Error(`--overrides ${file}: no such file`);
      overrides = parseOverrides(fs.readFileSync(file, "utf8"), file);
    }
    const report = auditDirs(args, { overrides });
    console.log(opts.json ? JSON.stringify(report, null, 2) : renderAuditText(report));
    return 0;
  },
});
