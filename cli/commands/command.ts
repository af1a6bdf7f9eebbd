// The shape of a `reprobench` subcommand: what each file under cli/commands/ exports and index.ts registers.
//
// The parser is commander (not yargs): no dependencies of its own, TypeScript types in the package, and it
// has what this CLI needs built in — generated help per command, `help <cmd>`, `--version`, did-you-mean for
// both commands and options, and errors as exceptions (exitOverride) so that usage errors become exit 2.
// yargs suggests commands only and pulls in a dozen packages.
//
// A command's file must stay cheap to load: bin/reprobench asks the parser (cli/needs.ts) what a command
// line needs before it loads the toolchain, and that loads every command's definition. Import heavy modules
// (results/, sim/, the Pulumi SDK) inside `action`, with `await import(…)`.
import { Command as CliCommand, CommanderError, Help } from "commander";

export { CliCommand };

/** What the parser made of a command line. */
export interface Parsed {
  /** The options, by commander's camel-case names (`--dry-run` → dryRun). */
  opts: Record<string, unknown>;
  /** The positional arguments. */
  args: string[];
  /** The arguments after the command's name, as given. */
  argv: string[];
}

export interface CommandSpec {
  /** One line for `reprobench --help`. */
  readonly summary: string;
  /** Declares the command's arguments, options and help text on `cmd` (named by the registry). */
  define(cmd: CliCommand): void;
  /** Whether this command line needs the Pulumi toolchain (scripts/env.sh); default: no. Help never does. */
  toolchain?(p: Parsed): boolean;
  /** Runs the command; resolves to the process exit code. */
  action(p: Parsed): Promise<number>;
}

export interface Command extends CommandSpec {
  /** The command's name in the registry (for help and messages). */
  readonly name: string;
  /**
   * Runs the command with the arguments after its name, in this process: parsed as the CLI parses them
   * (help printed through console.log resolves to 0; what the parser refuses rejects with a UsageError).
   */
  run(args: string[]): Promise<number>;
}

/** A command line the parser refuses; the CLI prints it with the usage and exits 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly help = "",
  ) {
    super(message);
    this.name = "UsageError";
  }
}

export const USAGE_EXIT_CODE = 2;

/** Help in the style of the old texts: lower-case titles ("usage:", "options:"), 104 columns. */
export function configureHelpStyle(cmd: CliCommand): CliCommand {
  return cmd.configureHelp({ helpWidth: 104, styleTitle: (t: string) => t.toLowerCase(), sortOptions: false } as Partial<Help>);
}

/** The commander command of `spec`, standalone, with errors thrown instead of exiting. */
export function cliCommand(name: string, spec: Pick<CommandSpec, "summary" | "define">, out: { writeOut(s: string): void; writeErr(s: string): void } = consoleOut): CliCommand {
  const cmd = new CliCommand(name);
  cmd.summary(spec.summary).description(spec.summary).helpOption("-h, --help", "show this help").allowExcessArguments(false).showSuggestionAfterError(true);
  configureHelpStyle(cmd);
  spec.define(cmd);
  cmd.exitOverride().configureOutput({ writeOut: out.writeOut, writeErr: out.writeErr, outputError: () => undefined });
  return cmd;
}

const consoleOut = {
  writeOut: (s: string) => console.log(s.replace(/\n$/, "")),
  writeErr: (s: string) => console.error(s.replace(/\n$/, "")),
};

/** commander's message without its "error: " prefix, first letter capitalised. */
export function usageMessage(err: CommanderError): string {
  const m = err.message.replace(/^error: /, "");
  return m.charAt(0).toUpperCase() + m.slice(1);
}

/** Parses `argv` with `spec`'s definition; null when help was printed. Throws a UsageError for what it refuses. */
export function parseCommand(name: string, spec: Pick<CommandSpec, "summary" | "define">, argv: string[]): Parsed | null {
  let parsed: Parsed | null = null;
  const cmd = cliCommand(name, spec);
  cmd.action(function (this: CliCommand) {
    parsed = { opts: this.opts(), args: this.args.map(String), argv };
  });
  try {
    cmd.parse(argv, { from: "user" });
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.exitCode === 0) return null;
      throw new UsageError(usageMessage(err), cmd.helpInformation());
    }
    throw err;
  }
  return parsed;
}

/** A registered command from its spec: adds `run`, the in-process entry that parses as the CLI does. */
export function command(name: string, spec: CommandSpec): Command {
  return {
    ...spec,
    name,
    async run(args) {
      const parsed = parseCommand(name, spec, args);
      return parsed ? spec.action(parsed) : 0;
    },
  };
}

/** Collects a repeatable option's values (`--target a --target b`). */
export const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

/** The stack options every stack command takes (the default stack is resolved by cli/stack-default.ts). */
export function stackOption(cmd: CliCommand, what = "stack"): CliCommand {
  return cmd.option("-s, --stack <name>", `${what} (default: $REPROBENCH_STACK, else the selected Pulumi stack, else local when no real stack exists)`);
}
