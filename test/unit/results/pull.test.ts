import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pullWithTar } from "../../../cli/commands/pull";
import { shellQuote } from "../../../components/transport";
import { filesToFetch, parseListing, remoteListArgv, rsyncArgv, sshArgv, validatePull } from "../../../results/pull";
import { at, tempDir, writeJob } from "../../fixtures/results/build";

const base = { target: "runner@10.0.0.12", remoteDir: "/srv/tb21/results/job 1/", localDir: "/tmp/pulled" };

describe("argv construction", () => {
  it("rsync: archive, resumable partials kept aside, never --delete, ssh in batch mode", () => {
    const argv = rsyncArgv({ ...base, port: 2222, identity: "/home/me/.ssh/id ed", sshOptions: ["StrictHostKeyChecking=accept-new"] });
    expect(argv).toEqual([
      "rsync",
      "-a",
      "--partial-dir=.rsync-partial",
      "--protect-args",
      "--human-readable",
      "--info=stats1",
      "-e",
      "ssh -o BatchMode=yes -o ServerAliveInterval=15 -o ServerAliveCountMax=4 -p 2222 -i '/home/me/.ssh/id ed' -o StrictHostKeyChecking=accept-new",
      "runner@10.0.0.12:/srv/tb21/results/job 1",
      "/tmp/pulled/",
    ]);
    expect(argv.some((a) => a.startsWith("--delete"))).toBe(false);
  });

  it("tar listing quotes the remote dir for the remote shell", () => {
    expect(remoteListArgv(base).slice(-2)).toEqual(["runner@10.0.0.12", "cd '/srv/tb21/results/job 1/' && find . -type f -printf '%s %T@ %P\\0'"]);
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
    expect(sshArgv({ ...base, ssh: "/usr/bin/ssh" })[0]).toBe("/usr/bin/ssh");
  });

  it("rejects option injection and nonsense with the offending value named", () => {
    expect(() => validatePull({ ...base, target: "-oProxyCommand=evil" })).toThrow("ssh target '-oProxyCommand=evil'");
    expect(() => validatePull({ ...base, remoteDir: "/" + "/" })).toThrow("must name the job directory");
    expect(() => validatePull({ ...base, port: 70000 })).toThrow("--port 70000");
    expect(() => validatePull({ ...base, sshOptions: ["ProxyCommand evil"] })).toThrow("ssh option 'ProxyCommand evil'");
  });
});

describe("skip of complete files", () => {
  it("fetches missing, partial, and rewritten files only", () => {
    const remote = parseListing("10 1000.5 a/result.json\u000020 1000 b/trial.log\u00005 2000 c/new.txt\u00007 1000 d/same.txt\u0000");
    const local = new Map([
      ["a/result.json", { size: 10, mtime: 900 }], // older locally: rewritten remotely
      ["b/trial.log", { size: 12, mtime: 1000 }], // partial
      ["d/same.txt", { size: 7, mtime: 1000 }], // complete
    ]);
    expect(filesToFetch(remote, local)).toEqual(["a/result.json", "b/trial.log", "c/new.txt"]);
  });
});

describe("tar over ssh (with a local stand-in for ssh)", () => {
  let root: string;
  beforeAll(() => {
    root = tempDir();
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it("copies a job dir, resumes after a partial copy, and never deletes local files", async () => {
    const fakeSsh = path.join(__dirname, "../../fixtures/results/fake-ssh.sh");
    const remoteJob = writeJob(path.join(root, "remote"), { name: "job-1", trials: [{ task: "a", reward: 1, start: at(0) }, { task: "b", exception: "CancelledError", start: at(0) }] });
    const local = path.join(root, "local");
    const opts = { target: "runner", remoteDir: remoteJob, localDir: local, ssh: fakeSsh };
    const count = (dir: string): number => fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).length;

    expect(await pullWithTar(opts)).toBe(count(remoteJob));
    const dest = path.join(local, "job-1");
    expect(fs.readFileSync(path.join(dest, "result.json"), "utf8")).toBe(fs.readFileSync(path.join(remoteJob, "result.json"), "utf8"));

    // Interrupted copy: one file truncated, one missing, one local-only file that must survive.
    const trial = fs.readdirSync(dest).find((d) => d.startsWith("a__"))!;
    fs.truncateSync(path.join(dest, trial, "result.json"), 10);
    fs.rmSync(path.join(dest, "config.json"));
    fs.writeFileSync(path.join(dest, "my-notes.txt"), "local only");
    expect(await pullWithTar(opts)).toBe(2);
    expect(fs.readFileSync(path.join(dest, trial, "result.json"), "utf8")).toBe(fs.readFileSync(path.join(remoteJob, trial, "result.json"), "utf8"));
    expect(fs.readFileSync(path.join(dest, "my-notes.txt"), "utf8")).toBe("local only");
    expect(await pullWithTar(opts)).toBe(0);
  });
});
