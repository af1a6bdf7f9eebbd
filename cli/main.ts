// reprobench command line: the parser and the command table are in cli/program.ts (commander) and
// cli/commands/index.ts; this file runs one command line and exits with its code.
import { runLine } from "./program";
import { failIfUnsettled } from "./unsettled";

failIfUnsettled(process.argv[2]);

runLine(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`reprobench${process.argv[2] ? ` ${process.argv[2]}` : ""}: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
