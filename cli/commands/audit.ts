// `reprobench audit <job dir>… [--overrides FILE] [--json]` — thin wrapper over results/load + format.
import * as fs from "node:fs";
import { parseArgs } from "node:util";
import type { Command } from "./command";
import { renderAuditText } from "../../results/format";
import { auditDirs } from "../../results/load";
import { parseOverrides } from "../../results/overrides";

const HELP = `usage: reprobench audit <job dir>… [--overrides FILE] [--json]

Audits one or more Harbor job dirs (original run, resume passes, rerun jobs) together: per task (and
attempt slot) the newest genuine trial counts — one with a reward or an error the audit scores; a later
infra/setup/cancelled attempt never displaces it and is listed as superseded. Prints outcomes, raw and
corrected scores, tokens, durations and the failure taxonomy with evidence (file:line).

  --overrides FILE  manual verdicts (YAML/JSON): overrides: [{task, verdict: passed|failed|excluded,
                    reason, evidence, trial?}] — reported as the corrected score, never mixed into raw.
                    A verdict naming a trial that no longer counts is listed as not applied, with the
                    trial that counts instead
  --json            print the audit as JSON (schema: results/SCHEMA.md, schemaVersion 2)`;

export const audit: Command = {
  summary: "audit Harbor job dirs: latest trial per task, scores, taxonomy with evidence",
  async run(args) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { overrides: { type: "string" }, json: { type: "boolean" }, help: { type: "boolean", short: "h" } },
    });
    if (values.help) {
      console.log(HELP);
      return 0;
    }
    if (positionals.length === 0) {
      console.error(`reprobench audit: give at least one job dir\n\n${HELP}`);
      return 2;
    }
    let overrides;
    if (values.overrides) {
      if (!fs.existsSync(values.overrides)) throw new Error(`--overrides ${values.overrides}: no such file`);
      overrides = parseOverrides(fs.readFileSync(values.overrides, "utf8"), values.overrides);
    }
    const report = auditDirs(positionals, { overrides });
    console.log(values.json ? JSON.stringify(report, null, 2) : renderAuditText(report));
    return 0;
  },
};
