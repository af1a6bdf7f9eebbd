// The README is a guide (under 200 lines) that keeps the two commands CI relies on, and every relative
// link in it and in docs/ points at a file of this repository (and, with #anchor, at a heading there).
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

const REPO = path.resolve(__dirname, "../../..");
const PAGES = ["README.md", ...fs.readdirSync(path.join(REPO, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to '-', repeats numbered. */
export function headingAnchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const m = !fenced && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = m[1]
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n ? `${base}-${n}` : base);
  }
  return anchors;
}

/** Markdown links outside code: [text](target). */
function links(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, "").replace(/`[^`\n]*`/g, "");
  return [...prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]);
}

describe("README and docs/ links", () => {
  it.each(PAGES)("every relative link in %s resolves", (page) => {
    const text = fs.readFileSync(path.join(REPO, page), "utf8");
    const broken: string[] = [];
    for (const target of links(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      const [file, anchor] = target.split("#");
      const abs = file ? path.resolve(path.dirname(path.join(REPO, page)), decodeURIComponent(file)) : path.join(REPO, page);
      if (!abs.startsWith(REPO + path.sep) || !fs.existsSync(abs)) {
        broken.push(`${target} (no such file in the repository)`);
        continue;
      }
      if (anchor && abs.endsWith(".md") && !headingAnchors(fs.readFileSync(abs, "utf8")).has(anchor)) broken.push(`${target} (no such heading)`);
    }
    expect(broken).toEqual([]);
  });

  it("anchors follow GitHub's rules", () => {
    expect([...headingAnchors("## Registries: pull limits, credentials, mirrors\n## What `up` does, in order\n## Run\n## Run\n")]).toEqual([
      "registries-pull-limits-credentials-mirrors",
      "what-up-does-in-order",
      "run",
      "run-1",
    ]);
  });
});

describe("README", () => {
  const readme = fs.readFileSync(path.join(REPO, "README.md"), "utf8");

  it("is a guide under 200 lines", () => {
    expect(readme.split("\n").length).toBeLessThan(200);
  });

  it("keeps the main job and the test command CI runs, verbatim", () => {
    expect(readme).toContain("./bin/reprobench up          # the main job: the `local` stack on the simulated cluster\n");
    expect(readme).toContain("./scripts/test.sh            # the whole test suite (what CI runs)\n");
    expect(fs.readFileSync(path.join(REPO, ".ci/run"), "utf8")).toMatch(/^exec bash scripts\/test\.sh$/m);
  });

  it("defines each seed it names", () => {
    const glossary = readme.slice(readme.indexOf("## Glossary"));
    for (const seed of new Set(readme.match(/seed 00\d/g))) expect(glossary, seed).toContain(`**${seed}**`);
  });
});
