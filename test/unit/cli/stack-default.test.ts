// The default stack: --stack, else $REPROBENCH_STACK, else Pulumi's selection, else `local` only where no
// real stack exists; read from a file backend and Pulumi's workspace file in a temporary checkout.
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { backendStacks, chooseStack, isSimStack, resolveStack, selectedPulumiStack, stackLine } from "../../../cli/stack-default";

describe("chooseStack", () => {
  it("takes --stack, then REPROBENCH_STACK, then the selected stack", () => {
    expect(chooseStack("prod", { envStack: "dev", selected: "x", realStacks: ["a100"] })).toEqual({ stack: "prod", from: "--stack" });
    expect(chooseStack(undefined, { envStack: "dev", selected: "x", realStacks: [] })).toEqual({ stack: "dev", from: "REPROBENCH_STACK" });
    expect(chooseStack(undefined, { selected: "x", realStacks: ["a100"] })).toEqual({ stack: "x", from: "the selected Pulumi stack" });
  });

  it("defaults to local only while no real stack exists, and otherwise names --stack", () => {
    expect(chooseStack(undefined, { realStacks: [] }).stack).toBe("local");
    expect(() => chooseStack(undefined, { realStacks: ["a100", "prod"] })).toThrow(/real stacks \(a100, prod\).*pass --stack NAME/);
    expect(() => chooseStack("a/b", { realStacks: [] })).toThrow('invalid stack name "a/b"');
    expect(() => chooseStack(undefined, { envStack: "../x", realStacks: [] })).toThrow(/from REPROBENCH_STACK/);
  });

  it("prints where the name came from", () => {
    expect(stackLine({ stack: "prod", from: "--stack" })).toBe("stack: prod");
    expect(stackLine({ stack: "local", from: "the default: no real stack exists here" })).toBe("stack: local (the default: no real stack exists here)");
  });
});

describe("resolveStack in a checkout", () => {
  let root = "";
  afterEach(() => rmSync(root, { recursive: true, force: true }));
  const checkout = () => {
    root = mkdtempSync(join(tmpdir(), "reprobench-stackdefault-"));
    writeFileSync(join(root, "Pulumi.yaml"), "name: reprobench\nruntime: nodejs\n");
    writeFileSync(join(root, "Pulumi.local.yaml"), "config: {}\n");
    writeFileSync(join(root, "Pulumi.rehearsal.yaml"), "config:\n  reprobench:cluster: local\n");
    writeFileSync(join(root, "Pulumi.prod.yaml"), "config:\n  reprobench:cluster: a100\n");
    return root;
  };
  const addState = (...stacks: string[]) => {
    const dir = join(root, ".pulumi-state", ".pulumi", "stacks", "reprobench");
    mkdirSync(dir, { recursive: true });
    for (const s of stacks) writeFileSync(join(dir, `${s}.json`), "{}");
  };

  it("a fresh checkout means local; sim stacks in the backend keep it so; a real one ends the default", () => {
    const env = { PULUMI_HOME: join(checkout(), "home") };
    expect(resolveStack(undefined, root, env)).toEqual({ stack: "local", from: "the default: no real stack exists here" });
    addState("local", "rehearsal");
    expect(backendStacks(root, env)).toEqual(["local", "rehearsal"]);
    expect(isSimStack(root, "rehearsal")).toBe(true);
    expect(resolveStack(undefined, root, env).stack).toBe("local");
    addState("prod");
    expect(() => resolveStack(undefined, root, env)).toThrow(/real stacks \(prod\)/);
    expect(resolveStack(undefined, root, { ...env, REPROBENCH_STACK: "prod" })).toEqual({ stack: "prod", from: "REPROBENCH_STACK" });
  });

  it("reads the stack Pulumi selected for this project (plain or organization/project/stack)", () => {
    const home = join(checkout(), "home");
    const file = join(home, "workspaces", `reprobench-${createHash("sha1").update(join(root, "Pulumi.yaml")).digest("hex")}-workspace.json`);
    mkdirSync(join(home, "workspaces"), { recursive: true });
    expect(selectedPulumiStack(root, { PULUMI_HOME: home })).toBeUndefined();
    writeFileSync(file, JSON.stringify({ stack: "organization/reprobench/prod" }));
    expect(selectedPulumiStack(root, { PULUMI_HOME: home })).toBe("prod");
    addState("prod");
    expect(resolveStack(undefined, root, { PULUMI_HOME: home })).toEqual({ stack: "prod", from: "the selected Pulumi stack" });
  });
});
