// `reprobench check [--stack S] [--json]`: the preflight of every host of a stack, and what its run needs from
// the outside, seen from the runner (cli/check.ts).
import * as path from "node:path";
import { command, stackOption } from "./command";
import { resolveStack, stackLine } from "../stack-default";

const root = path.resolve(__dirname, "..", "..");

export const check = command("check", {
  summary: "preflight every host of a stack: GPUs, driver, weights, disk, ports; from the runner the proxy, the dataset's pinned commit and the registry's pull quota (changes nothing; before a model loads)",
  define: (cmd) => stackOption(cmd).option("--json", "the findings as JSON"),
  toolchain: () => true,
  async action({ opts }) {
    const choice = resolveStack(opts.stack as string | undefined, root);
    console.error(stackLine(choice));
    const { runCheck } = await import("../check");
    return runCheck({ stack: choice.stack, json: Boolean(opts.json), root });
  },
});
