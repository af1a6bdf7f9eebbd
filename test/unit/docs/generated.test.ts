// The generated references in docs/ are what their generators produce now: a schema key, a JSDoc or a
// command's --help changed without `node --import tsx scripts/gen-docs.ts` fails here, naming the command.
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { commandsFromHelp, renderCliReference } from "../../../scripts/docs/cli-reference";
import { jsdocByPath, renderConfigReference, SCHEMA_FILE } from "../../../scripts/docs/config-reference";

const REPO = path.resolve(__dirname, "../../..");
const REGENERATE = "stale: regenerate with `node --import tsx scripts/gen-docs.ts`";
const read = (rel: string): string => fs.readFileSync(path.join(REPO, rel), "utf8");

describe("docs/config.md", () => {
  it("is what the schema generates", () => {
    expect(read("docs/config.md"), REGENERATE).toBe(renderConfigReference());
  });

  it("gives every key its type, default and JSDoc, nested keys and spread shapes included", () => {
    const doc = read("docs/config.md");
    expect(doc).toContain("| `hosts[].ssh.user` | string | `\"root\"` | The login.");
    expect(doc).toContain("| `modelServer.tp` | integer | `4` | --tp-size (seed: 4). |");
    // A key of the shape spread into modelServer and into its per-host overrides.
    expect(doc).toContain("| `modelServer.overrides.<name>.tp` | integer | — |");
    expect(doc).toContain("| `run.nAttempts` | integer | `1` | n_attempts per task. |");
    expect(doc).toContain("| `hosts` | list of object | required | Every machine of the cluster, any number ≥ 1. |");
    expect(doc).toMatch(/\| `dataset\.expectedTaskCount` \| integer \| required \| Number of task\.toml files/);
  });

  it("a JSDoc edited in the schema changes the page (so a stale page is caught)", () => {
    const source = read(SCHEMA_FILE);
    const edited = source.replace("/** n_attempts per task. */", "/** How many times each task runs. */");
    expect(edited).not.toBe(source);
    expect(jsdocByPath(edited).get("run.nAttempts")).toBe("How many times each task runs.");
    expect(renderConfigReference(edited)).not.toBe(renderConfigReference(source));
  });
});

describe("docs/cli.md", () => {
  it("is every command's --help as the CLI prints it now", async () => {
    expect(read("docs/cli.md"), REGENERATE).toBe(await renderCliReference());
  }, 240_000);

  it("finds the commands in the layouts argument parsers print", () => {
    const commander = "usage: reprobench <command>\n\ncommands:\n  up [options]        converge a stack and run the\n                      benchmark (default: local)\n  pack [options] [job dir...]  pack jobs\n  help [command]      display help for command\n";
    expect(commandsFromHelp(commander)).toEqual(["up", "pack"]);
    const yargs = "reprobench <command>\n\nCommands:\n  reprobench up       converge a stack\n  reprobench status   one screen\n\nOptions:\n  --help  Show help\n";
    expect(commandsFromHelp(yargs)).toEqual(["up", "status"]);
    expect(() => commandsFromHelp("usage: reprobench\n")).toThrow(/no "Commands:" heading/);
  });
});
