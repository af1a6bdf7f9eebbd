// The shape of a `reprobench` subcommand: what each file under cli/commands/ exports and index.ts registers.
export interface Command {
  /** One line for `reprobench --help`. */
  readonly summary: string;
  /** Runs the command with the arguments after its name; resolves to the process exit code. */
  run(args: string[]): Promise<number>;
}
