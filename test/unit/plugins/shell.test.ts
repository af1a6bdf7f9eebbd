import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { LineSplitter, envLine, printfLiteral, remoteCommand, tail } from "../../../scripts/plugins/command/shell";

describe("environment preamble", () => {
  const env = { A: "it's 100% \\ \"q\" $HOME `id`\nsecond line\n\n", B: "ünï ✓", EMPTY: "" };

  for (const shell of ["/bin/sh", "/bin/bash"]) {
    it(`reproduces values byte for byte and keeps stdin in ${shell}`, () => {
      const out = execFileSync(shell, ["-c", remoteCommand('printf "%s|" "$A" "$B" "$EMPTY"; cat', env)], {
        input: envLine(env) + "user stdin\n",
      }).toString();
      expect(out).toBe(`${env.A}|${env.B}||user stdin\n`);
    });
  }

  it("puts no value into the command line and only printable ASCII into the preamble", () => {
    const cmd = remoteCommand("env", { TOKEN: "s3cr3t-value" });
    expect(cmd).not.toContain("s3cr3t");
    const line = envLine({ X: "a'b\\c%d\ne" });
    expect(line.trimEnd()).toMatch(/^[\x20-\x7e]*$/);
    expect(line.endsWith("\n")).toBe(true);
  });

  it("leaves the script untouched when there is no environment", () => {
    expect(remoteCommand("echo hi", {})).toBe("echo hi");
  });

  it("rejects names a shell cannot export", () => {
    expect(() => envLine({ "BAD-NAME": "x" })).toThrow(/BAD-NAME.*not a valid shell identifier/);
  });

  it("escapes quote, backslash and percent", () => {
    expect(printfLiteral("a'\\%")).toBe("a\\047\\134\\045");
  });
});

describe("output helpers", () => {
  it("splits chunks into lines across chunk boundaries", () => {
    const lines: string[] = [];
    const s = new LineSplitter((l) => lines.push(l));
    s.push("one\ntw");
    s.push("o\r\nthr");
    s.end();
    expect(lines).toEqual(["one", "two", "thr"]);
  });

  it("keeps the last lines of long output", () => {
    const text = Array.from({ length: 50 }, (_, i) => `line ${i}`).join("\n") + "\n";
    const t = tail(text, 3);
    expect(t).toBe("line 47\nline 48\nline 49");
  });
});
