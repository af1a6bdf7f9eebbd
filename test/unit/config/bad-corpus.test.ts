// Every stack file under test/fixtures/config/bad/ breaks one rule; each must fail with a problem that
// names the key listed in bad-expected.yaml, and loadConfig must refuse it before anything is registered.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkStackFile, formatProblems, readStackFile } from "../../../components/config";
import { loadConfig } from "../../../infra/config";
import { FIXTURES, toPulumiConfigMap } from "./helpers";

const BAD = join(FIXTURES, "bad");
const expected = parse(readFileSync(join(FIXTURES, "bad-expected.yaml"), "utf8")) as Record<string, { key: string; contains: string }>;
const files = readdirSync(BAD).filter((f) => f.endsWith(".yaml")).sort();

describe("bad config corpus", () => {
  it("has at least 30 cases, each with an expectation and vice versa", () => {
    expect(files.length).toBeGreaterThanOrEqual(30);
    expect(files.map((f) => f.replace(/\.yaml$/, "")).sort()).toEqual(Object.keys(expected).sort());
  });

  it("the unbroken base file is valid, so each failure comes from its one fault", () => {
    const check = checkStackFile(join(FIXTURES, "good", "base-real.yaml"), { requireSecrets: true });
    expect(check.problems).toEqual([]);
    expect(check.ok).toBe(true);
  });

  it.each(files)("%s fails naming the broken key", (file) => {
    const want = expected[file.replace(/\.yaml$/, "")];
    const check = checkStackFile(join(BAD, file), { requireSecrets: true });
    expect(check.ok).toBe(false);
    const named = check.problems.filter((p) => p.key === want.key);
    expect(named, `problems: ${formatProblems(check.problems)}`).not.toHaveLength(0);
    expect(named.some((p) => p.message.includes(want.contains)), formatProblems(named)).toBe(true);
    // The printed form starts each line with the key.
    expect(formatProblems(check.problems).split("\n")).toContain(`${want.key}: ${named[0].message}`);
  });
});

describe("loadConfig on the bad corpus (the Pulumi program's entry check)", () => {
  const registered: string[] = [];
  beforeAll(() => {
    pulumi.runtime.setMocks(
      {
        newResource: (args) => {
          registered.push(args.name);
          return { id: `${args.name}-id`, state: args.inputs };
        },
        call: (args) => args.inputs,
      },
      "reprobench",
      "test",
      false,
    );
  });
  afterAll(() => pulumi.runtime.setAllConfig({}));

  // Plaintext-secret cases need Pulumi's secret-key list; the other files go through as written.
  it.each(files.filter((f) => !f.includes("plaintext")))("%s throws one error naming the key; nothing is registered", (file) => {
    const want = expected[file.replace(/\.yaml$/, "")];
    const all = toPulumiConfigMap(readStackFile(join(BAD, file)));
    let thrown: unknown;
    try {
      loadConfig({ all, requireSecrets: true, projectDir: FIXTURES, warn: () => undefined });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(Error);
    const message = (thrown as Error).message;
    expect(message).toMatch(/^invalid stack configuration \(\d+ problems?\):\n/);
    expect(message).toContain(`${want.key}: `);
    expect(registered).toEqual([]);
  });
});
