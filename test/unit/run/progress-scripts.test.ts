// The long host steps say how far they are while they run ("NAME: progress: TEXT" on stderr, which the
// CheckedCommand provider forwards to `pulumi up` as it comes): the image pre-pull after every image, the
// model-server health wait every PROGRESS_SECS. Run here against stand-ins for docker, skopeo and curl.
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { progressLine } from "../../../components/checked-command";

const REPO = path.resolve(__dirname, "../../..");
const dir = mkdtempSync(path.join(tmpdir(), "rb-progress-scripts-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function tools(name: string, files: Record<string, string>): string {
  const bin = path.join(dir, name);
  mkdirSync(bin, { recursive: true });
  for (const [file, text] of Object.entries(files)) {
    writeFileSync(path.join(bin, file), text);
    chmodSync(path.join(bin, file), 0o755);
  }
  return bin;
}

const run = (script: string, env: Record<string, string>) =>
  spawnSync("bash", [path.join(REPO, "components/scripts", script)], { env: { ...process.env, ...env }, encoding: "utf8", timeout: 60_000 });

const progress = (stderr: string) => stderr.split("\n").map(progressLine).filter((x): x is string => x !== undefined);

describe("task-images.sh progress", () => {
  it("one line per image done, counting up to the total, whichever pull finishes first", () => {
    // Every image is already in the daemon (amd64): each is "cached" and done at once.
    const bin = tools("images", { docker: "#!/bin/sh\ncase \"$*\" in *Architecture*) echo amd64;; *RepoDigests*) echo '[]';; *) echo sha256:x;; esac\n", skopeo: "#!/bin/sh\nexit 9\n" });
    const r = run("task-images.sh", { PATH: `${bin}:${process.env.PATH}`, IMAGES: "a/one:1\na/two:1\na/three:1", CONCURRENCY: "3", ATTEMPTS: "1", DAEMON_JSON: "/nonexistent", DIGESTS_DIR: path.join(bin, "digests") });
    expect(r.status, r.stderr).toBe(0);
    expect(progress(r.stderr)).toEqual(["task-images: 1/3 images ready or tried", "task-images: 2/3 images ready or tried", "task-images: 3/3 images ready or tried"]);
  });
});

describe("server-health.sh progress", () => {
  it("says how long the model has been loading against its budget, then that /health is 200", () => {
    const state = path.join(dir, "curl-calls");
    // /health fails three times, then answers; the container keeps running; sleep returns at once.
    const bin = tools("health", {
      curl: `#!/bin/sh\necho x >>${state}\n[ "$(wc -l <${state})" -gt 3 ]\n`,
      docker: "#!/bin/sh\necho true\n",
      sleep: "#!/bin/sh\nexit 0\n",
    });
    const r = run("server-health.sh", { PATH: `${bin}:${process.env.PATH}`, CONTAINER_NAME: "qwen38-worker-a", BASE_URL: "http://10.0.0.11:30001", API_KEY: "k", READY_TIMEOUT_SECONDS: "2700", PROGRESS_SECS: "0" });
    expect(r.status, r.stderr).toBe(0);
    const lines = progress(r.stderr);
    expect(lines).toHaveLength(4);
    for (const l of lines.slice(0, 3)) expect(l).toMatch(/^server-health\[qwen38-worker-a\]: loading, 0m0\ds of 45m00s budget \(\/health not 200 yet\)$/);
    expect(lines[3]).toMatch(/^server-health\[qwen38-worker-a\]: \/health is 200 after 0m0\ds$/);
    expect(r.stderr).not.toContain("k\n");
  });
});
