// `reprobench forget-host <host> [--stack S] [--yes]` — a host that is gone for good leaves its resources
// in the stack's state, and every destroy fails reaching it. This drops exactly that host's resources from
// the state (a backup of the state is kept first); `reprobench down` then tears down the rest.
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { command, stackOption } from "./command";
import type { Deployment } from "../forget-host";
import { resolveStack, stackLine } from "../stack-default";

const root = resolve(__dirname, "..", "..");

const HELP = `
For a host that no longer exists: removes what the stack placed on it (its Docker engine and the
containers and images under it, and every host script resource on its address) from the stack's
state, without contacting it. Nothing on other hosts changes; run \`reprobench down --stack NAME\`
afterwards to tear down the rest. Without --yes it only lists what it would remove. The state as it
was is saved to .pulumi-state/backups/ first (restore with \`pulumi stack import\`).`;

export const forgetHostCommand = command("forget-host", {
  summary: "drop a host that is gone for good from a stack's state (then `down` finishes)",
  define: (cmd) =>
    stackOption(cmd.argument("<host>", "the host's name in the stack file"))
      .option("-y, --yes", "remove them (without it, only list what would be removed)")
      .addHelpText("after", HELP),
  toolchain: () => true,
  async action({ opts, args }) {
    const [host] = args;
    const choice = resolveStack(opts.stack as string | undefined, root);
    const stack = choice.stack;
    console.error(stackLine(choice));
    const { forgetHost } = await import("../forget-host");
    const { openStack } = await import("../pulumi-stack");
    const open = await openStack(root, stack);
    const exported = await open.stack.exportStack();
    let result;
    try {
      result = forgetHost(exported.deployment as Deployment, host);
    } catch (err) {
      console.error(`reprobench forget-host: stack ${stack}: ${(err as Error).message}`);
      return 1;
    }
    for (const urn of result.removed) console.log(`  - ${urn}`);
    if (!opts.yes) {
      console.log(`${result.removed.length} resources of ${host} would leave stack ${stack}'s state (nothing is deleted anywhere); run again with --yes`);
      return 0;
    }
    const backups = join(root, ".pulumi-state", "backups");
    mkdirSync(backups, { recursive: true, mode: 0o700 });
    const backup = join(backups, `${stack}-before-forget-${host}-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
    writeFileSync(backup, JSON.stringify(exported, null, 2), { mode: 0o600 });
    chmodSync(backup, 0o600);
    await open.stack.importStack({ ...exported, deployment: result.deployment });
    console.log(`${result.removed.length} resources of ${host} removed from stack ${stack}'s state (backup: ${backup}); now: reprobench down --stack ${stack}`);
    return 0;
  },
});
