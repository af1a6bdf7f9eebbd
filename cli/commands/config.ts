// `reprobench config validate|show <Pulumi.STACK.yaml>` — checks a stack file without Pulumi.
import { command } from "./command";

const USAGE = `usage: reprobench config validate <Pulumi.STACK.yaml> [--require-secrets]
       reprobench config show <Pulumi.STACK.yaml>`;

const HELP = `
validate  checks every reprobench:* key (types, ranges, cross-field rules) the way \`pulumi up\` does
          before registering anything; prints "ok" (exit 0) or one line per problem (exit 1):
          key, bad value, what is expected. Encrypted values are checked for presence only.
          Secrets not set yet are noted on stderr; --require-secrets makes them errors.
          Warnings (a key under its old name) go to stderr and leave the exit code alone.
show      prints the fully defaulted configuration as JSON (secrets masked).`;

export const config = command("config", {
  summary: "validate or show a stack file (Pulumi.STACK.yaml) without Pulumi",
  define: (cmd) =>
    cmd
      .usage("validate|show <Pulumi.STACK.yaml> [options]")
      .argument("[action]", "validate or show")
      .argument("[file]", "the stack file, Pulumi.STACK.yaml")
      .option("--require-secrets", "validate: secrets not set yet are errors, not notes")
      .addHelpText("after", HELP),
  async action({ opts, args }) {
    const [action, file] = args;
    if ((action !== "validate" && action !== "show") || !file) {
      console.error(`reprobench config: expected 'validate FILE' or 'show FILE'${action && action !== "validate" && action !== "show" ? ` (got '${action}')` : ""}\n\n${USAGE}`);
      return 2;
    }
    // The pure modules, not components/config/index.ts: validating a file must not load the Pulumi SDK.
    const { formatProblems, stackOfFile, withStackInHints } = await import("../../components/config/problems");
    const { SECRET_PLACEHOLDER } = await import("../../components/config/schema");
    const { checkStackFile } = await import("../../components/config/stack-file");
    let check;
    try {
      check = checkStackFile(file, { requireSecrets: Boolean(opts.requireSecrets) });
    } catch (err) {
      console.error(err instanceof Error ? err.message : String(err));
      return 1;
    }
    for (const warning of check.warnings) console.error(`warning: ${warning}`);
    if (!check.ok) {
      console.error(`${file}: ${check.problems.length} problem${check.problems.length === 1 ? "" : "s"}\n${formatProblems(withStackInHints(check.problems, stackOfFile(file)))}`);
      return 1;
    }
    if (check.missingSecrets.length > 0) {
      const stack = stackOfFile(file);
      // `pulumi config set --stack S` needs the stack to exist: a preview creates it (reprobench preview --stack S).
      const order = stack ? `\n(after \`source scripts/env.sh\`; the stack must exist first: \`bin/reprobench preview --stack ${stack}\` creates it)` : "";
      console.error(`note: secrets not set yet (pulumi up needs them):\n${formatProblems(withStackInHints(check.missingSecrets, stack))}${order}`);
    }
    if (action === "show") {
      const shown = {
        ...check.config,
        sshPrivateKeys: Object.fromEntries(Object.keys(check.config?.sshPrivateKeys ?? {}).map((k) => [k, SECRET_PLACEHOLDER])),
        proxyUpstream: check.config?.proxyUpstream === undefined ? undefined : SECRET_PLACEHOLDER,
        hfToken: check.config?.hfToken === undefined ? undefined : SECRET_PLACEHOLDER,
      };
      console.log(JSON.stringify(shown, null, 2));
    } else {
      console.log("ok");
    }
    return 0;
  },
});
