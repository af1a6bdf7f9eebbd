// `node cli/needs.ts <reprobench arguments>`: prints `toolchain` when that command line needs the Pulumi
// toolchain (scripts/env.sh), else `node`. bin/reprobench asks this before it loads anything: the answer
// comes from the same parser and command definitions that run the command (cli/program.ts), so that help,
// usage errors and every Node-only command never build the toolchain.
import { needsToolchain } from "./program";

needsToolchain(process.argv.slice(2)).then(
  (needed) => {
    process.stdout.write(needed ? "toolchain\n" : "node\n");
    process.exit(0);
  },
  (err: unknown) => {
    // A parser that cannot decide must not cost a build: the Node-only run reports the error itself.
    process.stderr.write(`reprobench: cannot tell what this command needs (${err instanceof Error ? err.message : String(err)})\n`);
    process.stdout.write("node\n");
    process.exit(0);
  },
);
