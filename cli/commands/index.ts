import { audit } from "./audit";
import { report } from "./report";
// The subcommand table. Each entry lives in its own file; keep one import and one line per command.
export interface Command {
  /** One line for `reprobench --help`. */
  readonly summary: string;
  /** Runs the command with the arguments after its name; resolves to the process exit code. */
  run(args: string[]): Promise<number>;
}

export const commands: Record<string, Command> = {
  audit,
  report,
};
