import { describe, expect, it } from "vitest";
import { CommandError, describeArgv, mustRun, run, waitFor } from "../../../sim/exec";

describe("run", () => {
  it("returns exit code, stdout and stderr, and feeds stdin", async () => {
    const r = await run(["bash", "-c", "cat; echo oops >&2; exit 3"], { input: "hello" });
    expect(r).toEqual({ code: 3, stdout: "hello", stderr: "oops\n" });
  });

  it("kills a command that outlives its timeout (exit 124)", async () => {
    const started = Date.now();
    const r = await run(["bash", "-c", "exec sleep 30"], { timeoutMs: 300 });
    expect(r.code).toBe(124);
    expect(r.stderr).toContain("timed out after 300 ms");
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("reports a missing program instead of throwing", async () => {
    const r = await run(["/nonexistent/reprobench-tool"]);
    expect(r.code).toBe(127);
    expect(r.stderr).toContain("ENOENT");
  });
});

describe("mustRun", () => {
  it("names the failed command and shows its last output lines", async () => {
    const err = await mustRun(["bash", "-c", "echo first >&2; echo last >&2; exit 2"]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CommandError);
    expect((err as Error).message).toMatch(/^`bash -c echo first.* exited 2: first\nlast$/s);
  });

  it("elides long arguments in messages", () => {
    expect(describeArgv(["docker", "x".repeat(100)])).toBe(`docker ${"x".repeat(40)}…`);
  });
});

describe("waitFor", () => {
  it("returns the first defined value", async () => {
    let calls = 0;
    const v = await waitFor("the third call", async () => (++calls === 3 ? "ok" : undefined), { timeoutMs: 10_000, intervalMs: 1 });
    expect(v).toBe("ok");
    expect(calls).toBe(3);
  });

  it("gives up at the deadline, naming what it waited for and the last error", async () => {
    await expect(waitFor("the moon", async () => undefined, { timeoutMs: 50, intervalMs: 5, lastError: () => "still dark" })).rejects.toThrow(
      "timed out after 0s waiting for the moon: still dark",
    );
  });
});
