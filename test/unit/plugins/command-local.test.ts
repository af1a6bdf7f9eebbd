import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MemoryLog } from "../../../scripts/plugins/common/engine-log";
import { makeProvider } from "../../../scripts/plugins/common/provider";
import { wrapSecret } from "../../../scripts/plugins/common/wire";
import { TYPES, commandPlugin } from "../../../scripts/plugins/command/plugin";

const LOCAL = `urn:pulumi:dev::proj::${TYPES.localCommand}::local`;
const work = mkdtempSync(path.join(tmpdir(), "rb-local-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const provider = makeProvider(commandPlugin("1.2.1"), new MemoryLog());

describe("local Command", () => {
  it("runs create in dir with the environment and stdin via /bin/sh -c", async () => {
    const r = await provider.create!(LOCAL, { create: 'pwd; echo "$V"; cat', dir: work, environment: { V: "v1" }, stdin: "in" });
    expect(r.outs.stdout).toBe(`${work}\nv1\nin`);
  });

  it("honours a custom interpreter", async () => {
    const r = await provider.create!(LOCAL, { create: "echo ${BASH_VERSION:+bash}", interpreter: ["/bin/bash", "-c"] });
    expect(r.outs.stdout).toBe("bash");
  });

  it("update prefers `update`, falls back to `create`, and sees the previous output", async () => {
    const olds = { create: "echo c", stdout: "c", stderr: "" };
    expect((await provider.update!("id", LOCAL, olds, { create: "echo c", update: 'echo "u<$PULUMI_COMMAND_STDOUT>"' })).outs.stdout).toBe("u<c>");
    expect((await provider.update!("id", LOCAL, olds, { create: "echo again" })).outs.stdout).toBe("again");
  });

  it("delete runs `delete` with the last output", async () => {
    const f = path.join(work, "deleted");
    await provider.delete!("id", LOCAL, { delete: `echo "$PULUMI_COMMAND_STDOUT" > ${f}`, stdout: "last" });
    expect(readFileSync(f, "utf8")).toBe("last\n");
  });

  it("fails on a non-zero exit with stderr in the error, redacting secrets", async () => {
    await expect(provider.create!(LOCAL, { create: 'echo "no $P" >&2; exit 7', environment: wrapSecret({ P: "pa55word" }) })).rejects.toThrow(
      /create command \("echo \\"no \$P\\" >&2; exit 7"\) on local \/bin\/sh -c exited with status 7; stderr:\nno \[secret\]/,
    );
  });

  it("refuses assetPaths/archivePaths by name instead of silently ignoring them", async () => {
    const r = await provider.check!(LOCAL, {}, { create: "true", assetPaths: ["*.txt"] });
    expect(r.failures?.[0].property).toBe("assetPaths");
  });

  it("implements the command:local:run function", async () => {
    const r = await provider.invoke!("command:local:run", { command: "echo ran", dir: work });
    expect(r.outputs.stdout).toBe("ran");
    await expect(provider.invoke!("command:local:nope", {})).rejects.toThrow(/"command:local:nope" is not implemented.*command:local:run/);
  });
});

describe("Command diff", () => {
  it("treats an unset addPreviousOutputInEnv/logging as their defaults, not as a change", async () => {
    const olds = { create: "x", addPreviousOutputInEnv: true, logging: "stdoutAndStderr", stdout: "", stderr: "" };
    expect((await provider.diff!("id", LOCAL, olds, { create: "x" })).changes).toBe(false);
    expect((await provider.diff!("id", LOCAL, olds, { create: "x", addPreviousOutputInEnv: false })).changes).toBe(true);
  });
});
