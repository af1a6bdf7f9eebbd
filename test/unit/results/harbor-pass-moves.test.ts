// results/remote/harbor-pass.sh's moves (trials set aside before `harbor job resume`), run here with
// systemd-run and systemctl stood in for on PATH: the move happens before the unit starts, and a move that
// cannot be made stops the pass before anything runs or moves.
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { encodeMoves } from "../../../cli/remote-pass";
import { tempDir } from "../../fixtures/results/build";

const run = promisify(execFile);
const root = tempDir();
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** A runner-like directory: stub systemd tools, a Harbor venv, a jobs dir with one trial to set aside. */
function runner(name: string) {
  const dir = path.join(root, name);
  const bin = path.join(dir, "bin");
  const venv = path.join(dir, "venv");
  const jobDir = path.join(dir, "jobs", "run1");
  const trial = path.join(jobDir, "cut__abc");
  for (const d of [bin, path.join(venv, "bin"), path.join(trial, "agent")]) fs.mkdirSync(d, { recursive: true });
  fs.writeFileSync(path.join(trial, "result.json"), "{}");
  fs.writeFileSync(path.join(trial, "agent", "trajectory.json"), "[]");
  const calls = path.join(dir, "calls");
  // systemd-run records whether the trial was still in the job dir when the unit started.
  fs.writeFileSync(path.join(bin, "systemd-run"), `#!/bin/sh\nif [ -e "${trial}" ]; then echo "start: trial in job dir" >>"${calls}"; else echo "start: trial moved" >>"${calls}"; fi\ntouch "${dir}/started"\n`, { mode: 0o755 });
  fs.writeFileSync(path.join(bin, "systemctl"), `#!/bin/sh\nif [ "$1" = is-active ]; then if [ -e "${dir}/started" ]; then echo active; else echo inactive; exit 3; fi; fi\nexit 0\n`, { mode: 0o755 });
  fs.writeFileSync(path.join(venv, "bin", "harbor"), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
  const pass = (moves: { from: string; to: string }[]) =>
    run("bash", [path.resolve("results/remote/harbor-pass.sh")], {
      env: {
        ...process.env,
        PATH: `${bin}:${process.env.PATH}`,
        WORK_DIR: path.dirname(jobDir),
        UNIT: "reprobench-resume-run1.service",
        LOG_FILE: path.join(dir, "logs", "pass.log"),
        API_KEY: "k",
        ARGV_B64: Buffer.from(["harbor", "job", "resume", "-p", jobDir].join("\0")).toString("base64"),
        VENV: venv,
        STAMP: "20261205T000000",
        WAIT: "0",
        MOVES_B64: encodeMoves(moves),
      },
    });
  const callsMade = () => (fs.existsSync(calls) ? fs.readFileSync(calls, "utf8").trim().split("\n") : []);
  return { jobDir, trial, aside: path.join(`${jobDir}.cancelled-trials`, "cut__abc"), pass, callsMade };
}

describe("harbor-pass.sh MOVES_B64", () => {
  it("moves each trial dir, with its files, before the unit starts", async () => {
    const r = runner("moves");
    const { stderr } = await r.pass([{ from: r.trial, to: r.aside }]);
    expect(stderr).toContain(`moved ${r.trial} to ${r.aside}`);
    expect(fs.existsSync(r.trial)).toBe(false);
    expect(fs.readFileSync(path.join(r.aside, "agent", "trajectory.json"), "utf8")).toBe("[]");
    expect(r.callsMade()).toEqual(["start: trial moved"]);
  });

  it("refuses a move onto an existing dir, or between relative paths, before anything starts or moves", async () => {
    const r = runner("refused");
    fs.mkdirSync(r.aside, { recursive: true });
    const other = path.join(r.jobDir, "other__def");
    fs.mkdirSync(other);
    // The refused move comes second: the first, valid one must not have been made either.
    await expect(r.pass([{ from: other, to: `${r.aside}-other` }, { from: r.trial, to: r.aside }])).rejects.toMatchObject({ stderr: expect.stringContaining(`${r.aside} already exists`) });
    expect(fs.existsSync(other)).toBe(true);
    await expect(r.pass([{ from: "jobs/run1/cut__abc", to: "somewhere/cut__abc" }])).rejects.toMatchObject({ stderr: expect.stringContaining("is not between absolute paths") });
    expect(fs.existsSync(path.join(r.trial, "result.json"))).toBe(true);
    expect(r.callsMade()).toEqual([]);
  });
});
