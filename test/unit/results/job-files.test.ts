// results/remote/job-files.sh, run here on a fixture job: what `resume|rerun --stack` plans from crosses
// as the JSON files plus, of each trial.log, only Harbor's cancel line (logs and artifacts stay).
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { readJob } from "../../../results/load";
import { at, tempDir, writeJob } from "../../fixtures/results/build";

const run = promisify(execFile);
const root = tempDir();
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

function filesUnder(dir: string): string[] {
  return (fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as fs.Dirent[])
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

describe("job-files.sh", () => {
  it("copies the JSON files and the cancel line of a cancelled trial's log, nothing else; readJob reads the copy as the original", async () => {
    const jobDir = writeJob(path.join(root, "jobs"), {
      name: "run1",
      trials: [
        { task: "ok", reward: 1, start: at(0), files: { "agent/trajectory.json": "{}" } },
        { task: "cut", exception: "AgentTimeoutError", start: at(0) },
      ],
    });
    const cut = fs.readdirSync(jobDir).find((d) => d.startsWith("cut__"))!;
    fs.appendFileSync(path.join(jobDir, cut, "trial.log"), `verifier started\nTrial ${cut} cancelled\nstopping environment\n`);

    const { stdout } = await run("bash", [path.resolve("results/remote/job-files.sh")], { env: { ...process.env, JOB_DIR: jobDir } });
    const copy = path.join(root, "copy", "run1");
    fs.mkdirSync(copy, { recursive: true });
    await promisify((cb: (e: Error | null) => void) => {
      const tar = execFile("tar", ["-xzf", "-", "-C", copy], (e) => cb(e));
      tar.stdin!.end(Buffer.from(stdout.trim(), "base64"));
    })();

    const ok = fs.readdirSync(jobDir).find((d) => d.startsWith("ok__"))!;
    expect(filesUnder(copy)).toEqual(
      ["config.json", "lock.json", "result.json", `${cut}/config.json`, `${cut}/result.json`, `${cut}/trial.log`, `${ok}/config.json`, `${ok}/result.json`].sort(),
    );
    expect(fs.readFileSync(path.join(copy, cut, "trial.log"), "utf8")).toBe(`Trial ${cut} cancelled\n`);
    const flags = (dir: string) => Object.fromEntries(readJob(dir).trials.map((t) => [t.task, t.cancelledAfterException === true]));
    expect(flags(copy)).toEqual({ ok: false, cut: true });
    expect(flags(copy)).toEqual(flags(jobDir));
  });
});
