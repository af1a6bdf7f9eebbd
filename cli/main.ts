// reprobench command line: one file per subcommand group under cli/commands/, registered below.
import { commands } from "./commands";

function usage(): string {
  const lines = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`);
  return ["usage: reprobench <command> [args…]", "", "commands:", ...lines, "", "Run `reprobench <command> --help` for details."].join("\n");
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === "--help" || name === "-h" || name === "help") {
    console.log(usage());
    return name ? 0 : 2;
  }
  const command = commands[name];
  if (!command) {
    console.error(`reprobench: unknown command '${name}'\n\n${usage()}`);
    return 2;
  }
  return command.run(rest);
}

// A command whose promise never settles ends when nothing is left to wait on (a fetch whose only timer is
// an unref'd AbortSignal.timeout, say), and Node would exit 0 as if it had succeeded: make that an error.
const [commandName] = process.argv.slice(2);
process.once("beforeExit", () => {
  console.error(`reprobench: ${commandName ?? "the command"} stopped before it finished: nothing was left to wait on (a bug in reprobench; rerun it, and report the last lines above)`);
  process.exit(70);
});

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`reprobench: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
