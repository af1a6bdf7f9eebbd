// `resume|rerun --stack`: the pieces that need no runner (what crosses to harbor-pass.sh, the unit
// name, the usage rules); the pass itself runs against the sim in the rehearsal suite.
import { execFileSync } from "node:child_process";
import { afterEach, describe, expect, it, vi } from "vitest";
import { rerun, resume } from "../../../cli/commands/resume";
import { encodeFiles, passUnit } from "../../../cli/remote-pass";

afterEach(() => vi.restoreAllMocks());

function captureErrors(): string[] {
  const err: string[] = [];
  vi.spyOn(console, "error").mockImplementation((...a: unknown[]) => void err.push(a.join(" ")));
  vi.spyOn(console, "log").mockImplementation(() => undefined);
  return err;
}

describe("encodeFiles", () => {
  it("decodes in bash, line by line, to the same paths and bytes (tabs, newlines and quotes in the content)", () => {
    const files = [
      { path: "/var/lib/reprobench/jobs/j/config.json", content: '{\n    "a": "tab\there",\n    "q": "it\'s"\n}\n' },
      { path: "/var/lib/reprobench/jobs/j/lock.json", content: "" },
    ];
    // The same decoding harbor-pass.sh does, printing each path and the sha256 of what it would write.
    const script = `while IFS=$'\\t' read -r file content; do [ -n "$file" ] || continue; printf '%s %s\\n' "$file" "$(printf '%s' "$content" | base64 -d | sha256sum | cut -c1-64)"; done < <(printf '%s' "$FILES_B64" | base64 -d)`;
    const out = execFileSync("bash", ["-c", script], { env: { ...process.env, FILES_B64: encodeFiles(files) } }).toString().trim().split("\n");
    const sha = (s: string) => execFileSync("sha256sum", { input: s }).toString().slice(0, 64);
    expect(out).toEqual(files.map((f) => `${f.path} ${sha(f.content)}`));
  });

  it("encodes no files as the empty string (the script writes nothing)", () => {
    expect(encodeFiles([])).toBe("");
  });
});

describe("passUnit", () => {
  it("names one unit per kind and job, with characters systemd accepts", () => {
    expect(passUnit("resume", "qwen38-tb21-20260830-234431")).toBe("reprobench-resume-qwen38-tb21-20260830-234431.service");
    expect(passUnit("rerun", "a b/c")).toBe("reprobench-rerun-a_b_c.service");
  });
});

describe("usage", () => {
  it("--job and --wait need --stack; --stack takes no job dir; --harbor is for local dirs only", async () => {
    let err = captureErrors();
    expect(await resume.run(["/tmp/some-job", "--job", "x"])).toBe(2);
    expect(err.join("\n")).toContain("--job needs --stack");
    err = captureErrors();
    expect(await resume.run(["/tmp/some-job", "--stack", "local"])).toBe(2);
    expect(err.join("\n")).toContain("give exactly one job dir, or --stack (without a dir)");
    err = captureErrors();
    expect(await resume.run(["--stack", "local", "--harbor", "/usr/bin/harbor"])).toBe(2);
    expect(err.join("\n")).toContain("with --stack Harbor is the runner's");
    err = captureErrors();
    expect(await rerun.run(["/tmp/some-job", "task-a", "--wait"])).toBe(2);
    expect(err.join("\n")).toContain("--wait needs --stack");
    err = captureErrors();
    expect(await rerun.run(["--stack", "local"])).toBe(2);
    expect(err.join("\n")).toContain("give at least one task");
  });
});
