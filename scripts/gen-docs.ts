// Regenerates the generated references in docs/: config.md (from the zod schema) and cli.md (from each
// command's --help). `--check` writes nothing and exits 1 naming the stale files, for CI and hooks; the
// unit tests in test/unit/docs/ make the same comparison.
//   node --import tsx scripts/gen-docs.ts [--check] [config|cli]…
import * as fs from "node:fs";
import * as path from "node:path";
import { renderCliReference } from "./docs/cli-reference";
import { renderConfigReference } from "./docs/config-reference";

const REPO = path.resolve(__dirname, "..");

export const GENERATED: Record<string, { file: string; render: () => string | Promise<string> }> = {
  config: { file: "docs/config.md", render: () => renderConfigReference() },
  cli: { file: "docs/cli.md", render: () => renderCliReference() },
};

async function main(argv: string[]): Promise<number> {
  const check = argv.includes("--check");
  const wanted = argv.filter((a) => a !== "--check");
  const unknown = wanted.filter((w) => !(w in GENERATED));
  if (unknown.length) {
    console.error(`gen-docs: unknown page ${unknown.join(", ")} (pages: ${Object.keys(GENERATED).join(", ")})`);
    return 2;
  }
  const stale: string[] = [];
  for (const name of wanted.length ? wanted : Object.keys(GENERATED)) {
    const { file, render } = GENERATED[name];
    const abs = path.join(REPO, file);
    const text = await render();
    const current = fs.existsSync(abs) ? fs.readFileSync(abs, "utf8") : null;
    if (current === text) continue;
    if (check) stale.push(file);
    else {
      fs.mkdirSync(path.dirname(abs), { recursive: true });
      fs.writeFileSync(abs, text);
      console.log(`wrote ${file}`);
    }
  }
  if (stale.length) {
    console.error(`gen-docs: stale: ${stale.join(", ")}; run: node --import tsx scripts/gen-docs.ts`);
    return 1;
  }
  return 0;
}

if (require.main === module) void main(process.argv.slice(2)).then((code) => (process.exitCode = code));
