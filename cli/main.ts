// reprobench command line: one file per subcommand group under cli/commands/, registered below.
import { commands } from "./commands";
import { failIfUnsettled } from "./unsettled";

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

failIfUnsettled(process.argv[2]);

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`reprobench: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
