// components/scripts/weights-download.sh run for real in bash (as CheckedCommand sends it: retry.sh and
// owned-dir.sh prepended, inputs exported) against the fake hub (sim/hub/hub.py) on 127.0.0.1 and through
// the sim's egress proxy (sim/proxy/sim-proxy.py): the pinned huggingface_hub installed from the package
// index into the script's own venv (once, reused after), the download resumed after a cut (by the retry in
// the same run, and by the next run), every file verified against the hub's tree, a wrong sha256 refused, a
// foreign directory left alone, and the token never printed. Every wait is bounded.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scriptWithEnv } from "../../../components/host-script";
import { weightsRequirements } from "../../../components/weights-download";
import { hubScript, modelScript, readHubLog, run, sha256File, startEgressProxy, startHub, tinyTokenizerDir, type HubManifest, type RunResult, type Service } from "../../helpers/hub";

const REPO_ID = "reprobench/small-qwen3";
const TOKEN = "hf_reprobenchWeightsDownload0123456789";
const SHARD1 = "model-00001-of-00002.safetensors";
const SHARD2 = "model-00002-of-00002.safetensors";
const CUT_AT = 11_000_000; // inside shard 1, past the 10 MiB the client writes at a time
const CLIENT_CHUNK = 10 * 1024 * 1024;
const PROXY_USER = "reprobench";
const PROXY_PASS = "pr0xy-Weights-Secret";

let work = "";
let venv = "";
let manifest: HubManifest;
let hub: Service;
let proxy: Service;
const services: Service[] = [];
let faultsFile = "";
let logFile = "";
let first: RunResult;
let firstDir = "";
let dirs = 0;

const endpoint = () => `http://127.0.0.1:${hub.port}`;
const setFaults = (faults: object[]) => writeFileSync(faultsFile, JSON.stringify({ faults }));
const logMark = () => readHubLog(logFile).length;
const logSince = (mark: number) => readHubLog(logFile).slice(mark);
const freshDir = (name: string) => path.join(work, "models", `${name}-${++dirs}`);
const output = (r: RunResult) => r.stdout + r.stderr;
const report = (r: RunResult) => JSON.parse(r.stdout.trim().split("\n").pop() ?? "") as Record<string, unknown>;

/** Runs the script as CheckedCommand does: non-secret inputs exported in the script, secrets in the environment. */
function download(inputs: Record<string, string>, secrets: Record<string, string | undefined> = { HF_TOKEN: TOKEN }): Promise<RunResult> {
  const script = scriptWithEnv(["retry", "owned-dir", "weights-download"], {
    REPO: REPO_ID, REVISION: "main", ENDPOINT: endpoint(), VENV: venv, REQUIREMENTS: weightsRequirements(), INDEX_URL: "https://pypi.org/simple/", ATTEMPTS: "3", ...inputs,
  });
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: work, RETRY_BACKOFF_SCALE: "0", PROGRESS_SECS: "1" };
  for (const [k, v] of Object.entries(secrets)) if (v !== undefined) env[k] = v;
  return run("bash", ["-s"], { input: script, env, timeoutMs: 300_000 });
}
const check = (dir: string) => run("bash", ["-s"], { input: scriptWithEnv("weights-download-check", { MODEL_PATH: dir }), env: { PATH: process.env.PATH }, timeoutMs: 30_000 });

async function expectComplete(dir: string): Promise<void> {
  for (const f of manifest.files) expect(await sha256File(path.join(dir, f.path)), f.path).toBe(f.sha256);
  const partial = path.join(dir, ".cache/huggingface/download");
  expect(existsSync(partial) ? readdirSync(partial).filter((n) => n.endsWith(".incomplete")) : []).toEqual([]);
}

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), "rb-weights-"));
  venv = path.join(work, "venv", "hf-hub");
  const src = path.join(work, "src");
  const made = await run("python3", [modelScript, "write", "--out", src, "--spec", "small", "--tokenizer-dir", tinyTokenizerDir], { timeoutMs: 60_000 });
  if (made.code !== 0) throw new Error(made.stderr);
  const added = await run("python3", [hubScript, "add-repo", "--root", path.join(work, "hub"), "--repo", REPO_ID, "--from", src, "--fill", "random", "--gated"], { timeoutMs: 60_000 });
  if (added.code !== 0) throw new Error(added.stderr);
  manifest = JSON.parse(added.stdout) as HubManifest;
  writeFileSync(path.join(work, "token"), `${TOKEN}\n`, { mode: 0o600 });
  faultsFile = path.join(work, "faults.json");
  logFile = path.join(work, "requests.jsonl");
  setFaults([]);
  hub = await startHub({ root: path.join(work, "hub"), tokenFile: path.join(work, "token"), faults: faultsFile, log: logFile });
  services.push(hub);
  writeFileSync(path.join(work, "proxy-url"), `http://${PROXY_USER}:${PROXY_PASS}@127.0.0.1:1\n`, { mode: 0o600 });
  // hub.sim is resolved by the proxy only: through it is the one way to the hub.
  proxy = await startEgressProxy({ credentialsFile: path.join(work, "proxy-url"), allow: `hub.sim:${hub.port}`, resolve: "hub.sim=127.0.0.1" });
  services.push(proxy);
  // The first download also builds the script's venv from the package index (reused by every later run).
  firstDir = freshDir("plain");
  first = await download({ MODEL_PATH: firstDir });
}, 600_000);

afterAll(async () => {
  await Promise.all(services.map((s) => s.stop()));
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("weights-download.sh against the fake hub", () => {
  it("installs the pinned client, downloads repo@main, verifies every file and leaves the marker; the check agrees", async () => {
    expect(first.code, output(first)).toBe(0);
    expect(first.stderr).toContain(`installed the pinned huggingface_hub in ${venv}`);
    expect(report(first)).toEqual({ repo: REPO_ID, revision: "main", commit: manifest.revision, modelPath: firstDir, files: manifest.files.length, bytes: manifest.files.reduce((n, f) => n + f.size, 0), changed: true });
    await expectComplete(firstDir);
    const marker = JSON.parse(readFileSync(path.join(firstDir, ".reprobench-weights.json"), "utf8")) as { repo: string; commit: string; files: { path: string; size: number }[] };
    expect(marker).toMatchObject({ repo: REPO_ID, revision: "main", commit: manifest.revision, endpoint: endpoint() });
    expect(marker.files).toEqual(manifest.files.map((f) => ({ path: f.path, size: f.size })));
    expect(existsSync(path.join(venv, "bin", "hf"))).toBe(true);
    const c = await check(firstDir);
    expect(c.stdout.trim()).toBe(`weights=${REPO_ID}@${manifest.revision} files=${manifest.files.length}/${manifest.files.length}`);
    expect(output(first)).not.toContain(TOKEN);
    expect(readHubLog(logFile).every((e) => e.auth === "ok")).toBe(true);
  });

  it("a second run with the same repo and revision does nothing: no request reaches the hub", async () => {
    const mark = logMark();
    const again = await download({ MODEL_PATH: firstDir });
    expect(again.code, output(again)).toBe(0);
    expect(report(again)).toMatchObject({ commit: manifest.revision, changed: false });
    expect(logSince(mark)).toEqual([]);
  });

  it("a file lost or cut short is drift for the check; the next run downloads only it again and verifies", async () => {
    writeFileSync(path.join(firstDir, "tokenizer.json"), "{}");
    expect((await check(firstDir)).stdout.trim()).toBe(`weights=${REPO_ID}@${manifest.revision} files=${manifest.files.length - 1}/${manifest.files.length}`);
    rmSync(path.join(firstDir, ".cache/huggingface/download/tokenizer.json.metadata"));
    const mark = logMark();
    const r = await download({ MODEL_PATH: firstDir });
    expect(r.code, output(r)).toBe(0);
    expect(report(r)).toMatchObject({ changed: true });
    expect(logSince(mark).filter((e) => e.method === "GET" && e.endpoint === "resolve").map((e) => e.file)).toEqual(["tokenizer.json"]);
    await expectComplete(firstDir);
  });

  it("through the sim's egress proxy: cut once, resumed with Range by the retry in the same run, then verified", async () => {
    setFaults([{ kind: "drop", path: SHARD1, afterBytes: CUT_AT, times: 1 }]);
    const dir = freshDir("proxy");
    const mark = logMark();
    const viaProxy = `http://${PROXY_USER}:${PROXY_PASS}@127.0.0.1:${proxy.port}`;
    const r = await download({ MODEL_PATH: dir, ENDPOINT: `http://hub.sim:${hub.port}` }, { HF_TOKEN: TOKEN, HTTP_PROXY: viaProxy, HTTPS_PROXY: viaProxy, http_proxy: viaProxy });
    expect(r.code, output(r)).toBe(0);
    expect(r.stderr).toMatch(/weights-download: progress: retrying hf download reprobench\/small-qwen3@[0-9a-f]{40} \(attempt 2\/3 in 0s\)/);
    expect(r.stderr).toContain(`through proxy 127.0.0.1:${proxy.port}`);
    const shard = logSince(mark).filter((e) => e.file === SHARD1 && e.method === "GET");
    expect(shard.map((e) => [e.status, e.range, e.fault])).toEqual([
      [200, null, "drop"],
      [206, `bytes=${CLIENT_CHUNK}-`, null],
    ]);
    await expectComplete(dir);
    expect(report(r)).toMatchObject({ commit: manifest.revision, changed: true });
    expect(logSince(mark).every((e) => e.auth === "ok")).toBe(true);
    expect(proxy.output()).toMatch(new RegExp(`OK \\S+ GET http://hub\\.sim:${hub.port}/${REPO_ID}/resolve/${manifest.revision}/${SHARD1}`));
    for (const text of [output(r), proxy.output()]) {
      expect(text).not.toContain(TOKEN);
      expect(text).not.toContain(PROXY_PASS);
    }
  });

  it("cut with no attempt left: the run fails, keeps the partial file, leaves no marker; the next run resumes it and verifies", async () => {
    setFaults([{ kind: "drop", path: SHARD1, afterBytes: CUT_AT, times: 1 }]);
    const dir = freshDir("resume");
    const mark = logMark();
    const cut = await download({ MODEL_PATH: dir, ATTEMPTS: "1" });
    expect(cut.code).not.toBe(0);
    expect(cut.stderr).toContain("the next `up` resumes");
    expect(existsSync(path.join(dir, ".reprobench-weights.json"))).toBe(false);
    expect(readdirSync(path.join(dir, ".cache/huggingface/download")).filter((n) => n.endsWith(".incomplete"))).toHaveLength(1);
    expect((await check(dir)).stdout.trim()).toBe("weights=missing");
    const resumed = await download({ MODEL_PATH: dir, ATTEMPTS: "1" });
    expect(resumed.code, output(resumed)).toBe(0);
    expect(logSince(mark).filter((e) => e.file === SHARD1 && e.method === "GET").map((e) => [e.status, e.range])).toEqual([
      [200, null],
      [206, `bytes=${CLIENT_CHUNK}-`],
    ]);
    await expectComplete(dir);
  });

  it("a wrong sha256 in the hub's tree is refused: the file is named and removed, no marker; the next run fetches it again", async () => {
    setFaults([{ kind: "tree-sha256", path: SHARD2 }]);
    const dir = freshDir("sha");
    const bad = await download({ MODEL_PATH: dir });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(new RegExp(`weights-download: refused: ${SHARD2}: sha256 \\(the hub's lfs\\.oid\\) ${manifest.files.find((f) => f.path === SHARD2)!.sha256}, the hub lists [0-9a-f]{64}`));
    expect(bad.stderr).toContain("1 of 8 files");
    expect(bad.stderr).not.toContain(`refused: ${SHARD1}`);
    expect(existsSync(path.join(dir, SHARD2))).toBe(false);
    expect(existsSync(path.join(dir, SHARD1))).toBe(true);
    expect(existsSync(path.join(dir, ".reprobench-weights.json"))).toBe(false);
    setFaults([]);
    const mark = logMark();
    const good = await download({ MODEL_PATH: dir });
    expect(good.code, output(good)).toBe(0);
    expect(logSince(mark).filter((e) => e.method === "GET" && e.endpoint === "resolve").map((e) => e.file)).toEqual([SHARD2]);
    await expectComplete(dir);
  });

  it("a directory of someone else's files is refused and left as it was; nothing is asked of the hub", async () => {
    const dir = freshDir("foreign");
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, "config.json"), "{}");
    const mark = logMark();
    const r = await download({ MODEL_PATH: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`modelServer.modelPath ${dir} holds files reprobench did not download`);
    expect(readdirSync(dir)).toEqual(["config.json"]);
    expect(logSince(mark)).toEqual([]);
    const top = await download({ MODEL_PATH: "/models" });
    expect(top.stderr).toContain("modelServer.modelPath '/models': it is a top-level directory");
  });

  it("a gated repo without a token, or with a wrong one, is said in one line and not retried; no token is printed", async () => {
    setFaults([]);
    let mark = logMark();
    const none = await download({ MODEL_PATH: freshDir("no-token") }, {});
    expect(none.code).not.toBe(0);
    expect(none.stderr).toContain(`${REPO_ID} at ${endpoint()} is gated and no token (reprobench:hfToken is not set) gives no access`);
    expect(logSince(mark).filter((e) => e.endpoint === "info")).toHaveLength(1);
    mark = logMark();
    const wrong = await download({ MODEL_PATH: freshDir("bad-token") }, { HF_TOKEN: "hf_wrongTokenValue42" });
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toContain(`refused the token (reprobench:hfToken) for ${REPO_ID} (HTTP 401)`);
    expect(logSince(mark)).toHaveLength(1);
    expect(output(wrong)).not.toContain("hf_wrongTokenValue42");
  });

  it("another revision replaces the files of the first: what only the earlier one had is removed", async () => {
    const a = path.join(work, "rev-a");
    const b = path.join(work, "rev-b");
    mkdirSync(a);
    mkdirSync(b);
    writeFileSync(path.join(a, "config.json"), '{"v": 1}\n');
    writeFileSync(path.join(a, "old-notes.txt"), "only in the first revision\n");
    writeFileSync(path.join(b, "config.json"), '{"v": 2}\n');
    const add = async (from: string) => JSON.parse((await run("python3", [hubScript, "add-repo", "--root", path.join(work, "hub"), "--repo", "reprobench/two-revisions", "--from", from], { timeoutMs: 30_000 })).stdout) as HubManifest;
    const revA = await add(a);
    const revB = await add(b);
    const dir = freshDir("revisions");
    const one = await download({ MODEL_PATH: dir, REPO: "reprobench/two-revisions", REVISION: revA.revision });
    expect(one.code, output(one)).toBe(0);
    expect(readFileSync(path.join(dir, "old-notes.txt"), "utf8")).toBe("only in the first revision\n");
    const two = await download({ MODEL_PATH: dir, REPO: "reprobench/two-revisions", REVISION: revB.revision });
    expect(two.code, output(two)).toBe(0);
    expect(report(two)).toMatchObject({ commit: revB.revision, changed: true });
    expect(existsSync(path.join(dir, "old-notes.txt"))).toBe(false);
    expect(readFileSync(path.join(dir, "config.json"), "utf8")).toBe('{"v": 2}\n');
  });
});
