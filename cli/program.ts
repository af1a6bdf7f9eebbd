// The whole command line: commander's root program over the command table (cli/commands/index.ts). One
// parser serves both cli/main.ts (parse, then run) and cli/needs.ts (parse, then say whether the toolchain
// is needed), so bin/reprobench never decides from a case list of its own.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CommanderError } from "commander";
import { commands } from "./commands";
import { type Command, type Parsed, CliCommand, cliCommand, configureHelpStyle, UsageError, USAGE_EXIT_CODE, usageMessage } from "./commands/command";

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
}

const processIo: CliIo = { out: (t) => void process.stdout.write(t), err: (t) => void process.stderr.write(t) };

export function version(): string {
  return (JSON.parse(readFileSync(join(__dirname, "..", "package.json"), "utf8")) as { version: string }).version;
}

/** The root program; `onParsed` gets the command and what its line parsed to (instead of running it). */
export function buildProgram(table: Record<string, Command>, io: CliIo, argv: string[], onParsed: (c: Command, p: Parsed) => void): CliCommand {
  const out = { writeOut: io.out, writeErr: io.err };
  const program = new CliCommand("reprobench");
  program
    .usage("<command> [options]")
    .description("Stands up an LLM benchmark cluster over SSH and runs Terminal-Bench with Harbor (or a simulated cluster).")
    .version(version(), "-V, --version", "print the version")
    .helpOption("-h, --help", "show this help")
    .helpCommand("help [command]", "show the help of a command")
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({ ...out, outputError: () => undefined })
    .addHelpText("after", "\nRun `reprobench help <command>` or `reprobench <command> --help` for a command's options.");
  configureHelpStyle(program);
  for (const [name, c] of Object.entries(table)) {
    const cmd = cliCommand(name, c, out);
    cmd.action(function (this: CliCommand) {
      // The root takes no option with a value: the command's name is the first argument that is no option.
      const at = argv.findIndex((a) => !a.startsWith("-"));
      onParsed(c, { opts: this.opts(), args: this.args.map(String), argv: argv.slice(at + 1) });
    });
    program.addCommand(cmd);
  }
  return program;
}

export type ParseResult =
  | { kind: "run"; command: Command; parsed: Parsed }
  /** Help or the version was printed. */
  | { kind: "printed" }
  | { kind: "usage"; message: string; help: string };

/** Parses a whole command line (the arguments after `reprobench`). Prints help/version itself. */
export async function parseLine(argv: string[], io: CliIo = processIo, table: Record<string, Command> = commands): Promise<ParseResult> {
  let result: ParseResult = { kind: "printed" };
  const program = buildProgram(table, io, argv, (command, parsed) => void (result = { kind: "run", command, parsed }));
  if (argv.length === 0) return { kind: "usage", message: "no command given", help: program.helpInformation() };
  try {
    await program.parseAsync(argv, { from: "user" });
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    if (err.exitCode === 0) return { kind: "printed" };
    const sub = program.commands.find((c) => c.name() === argv.find((a) => !a.startsWith("-")));
    return { kind: "usage", message: usageMessage(err), help: (sub ?? program).helpInformation() };
  }
  return result;
}

/** Runs a command line; resolves to the exit code (2 for usage errors, with the usage on stderr). */
export async function runLine(argv: string[], io: CliIo = processIo, table: Record<string, Command> = commands): Promise<number> {
  const r = await parseLine(argv, io, table);
  if (r.kind === "printed") return 0;
  if (r.kind === "usage") {
    const name = table[argv[0]] ? ` ${argv[0]}` : "";
    io.err(`reprobench${name}: ${r.message}\n\n${r.help}`);
    return USAGE_EXIT_CODE;
  }
  try {
    return await r.command.action(r.parsed);
  } catch (err) {
    // A command may refuse its arguments after parsing (no default stack, a bad value): usage, exit 2.
    if (!(err instanceof UsageError)) throw err;
    io.err(`reprobench ${argv[0]}: ${err.message}\n`);
    return USAGE_EXIT_CODE;
  }
}

/**
 * Whether a command line needs the Pulumi toolchain. Help, the version and usage errors never do (the
 * Node-only run prints them).
 */
export async function needsToolchain(argv: string[], table: Record<string, Command> = commands): Promise<boolean> {
  const silent: CliIo = { out: () => undefined, err: () => undefined };
  const r = await parseLine(argv, silent, table);
  return r.kind === "run" && (r.command.toolchain?.(r.parsed) ?? false);
}
