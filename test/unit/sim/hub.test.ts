// The fake Hugging Face Hub (sim/hub/hub.py) driven by the REAL huggingface_hub client (components/weights/requirements.txt:
// huggingface_hub 1.17.0 and its dependencies, every wheel hash-pinned, no hf-xet), on 127.0.0.1 only: `hf download`
// of a small Qwen3-layout repo (sim/models/hf_model.py --spec small, shards filled with deterministic bytes so a
// misplaced resume changes the sha256), a cut connection resumed with Range on the next run, a server that
// ignores Range, a wrong Content-Length, a wrong sha256 in the tree, the typed 404/401 errors, and the same
// download through the sim's egress proxy (sim/proxy/sim-proxy.py) with Basic auth. Every wait is bounded.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  hfVenvPython,
  hubScript,
  modelScript,
  readHubLog,
  run,
  sha256File,
  startEgressProxy,
  startHub,
  tinyTokenizerDir,
  type HubLogEntry,
  type HubManifest,
  type Service,
} from "../../helpers/hub";

const REPO = "reprobench/small-qwen3";
const TOKEN = "hf_reprobenchFakeHubToken0123456789";
const SHARD1 = "model-00001-of-00002.safetensors";
const SHARD2 = "model-00002-of-00002.safetensors";
const CUT_AT = 11_000_000; // inside shard 1 (11.7 MB), past the 10 MiB the client writes at a time
const CLIENT_CHUNK = 10 * 1024 * 1024; // huggingface_hub constants.DOWNLOAD_CHUNK_SIZE

let work = "";
let python = "";
let hf = "";
let manifest: HubManifest;
let hub: Service;
const services: Service[] = [];
let faultsFile = "";
let logFile = "";
let runs = 0;

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), "rb-hub-"));
  python = await hfVenvPython();
  hf = path.join(path.dirname(python), "hf");
  const src = path.join(work, "src");
  const made = await run("python3", [modelScript, "write", "--out", src, "--spec", "small", "--tokenizer-dir", tinyTokenizerDir], { timeoutMs: 60_000 });
  if (made.code !== 0) throw new Error(made.stderr);
  const added = await run("python3", [hubScript, "add-repo", "--root", path.join(work, "hub"), "--repo", REPO, "--from", src, "--fill", "random", "--gated"], { timeoutMs: 60_000 });
  if (added.code !== 0) throw new Error(added.stderr);
  manifest = JSON.parse(added.stdout) as HubManifest;
  writeFileSync(path.join(work, "token"), `${TOKEN}\n`, { mode: 0o600 });
  faultsFile = path.join(work, "faults.json");
  logFile = path.join(work, "requests.jsonl");
  hub = await startHub({ root: path.join(work, "hub"), tokenFile: path.join(work, "token"), faults: faultsFile, log: logFile });
  services.push(hub);
}, 660_000);

afterAll(async () => {
  await Promise.all(services.map((s) => s.stop()));
  if (work) rmSync(work, { recursive: true, force: true });
});

const file = (p: string) => {
  const f = manifest.files.find((x) => x.path === p);
  if (!f) throw new Error(`no ${p} in the manifest`);
  return f;
};
const endpoint = () => `http://127.0.0.1:${hub.port}`;
const setFaults = (faults: object[]) => writeFileSync(faultsFile, JSON.stringify({ faults }));
const logSince = (mark: number): HubLogEntry[] => readHubLog(logFile).slice(mark);
const logMark = () => readHubLog(logFile).length;

/** A clean environment for the client: no proxy variables unless given, its own HF_HOME, no update check. */
function clientEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: work,
    HF_HOME: path.join(work, "hf-home"),
    HF_ENDPOINT: endpoint(),
    HF_TOKEN: TOKEN,
    HF_HUB_DISABLE_TELEMETRY: "1",
    HF_HUB_DISABLE_UPDATE_CHECK: "1",
    HF_HUB_DISABLE_PROGRESS_BARS: "1",
    HF_HUB_DOWNLOAD_TIMEOUT: "30",
    HF_HUB_ETAG_TIMEOUT: "30",
    NO_COLOR: "1",
    ...extra,
  };
}

function freshDir(name: string): string {
  const d = path.join(work, `${name}-${++runs}`);
  mkdirSync(d);
  return d;
}

const hfDownload = (dir: string, env: NodeJS.ProcessEnv = clientEnv()) =>
  run(hf, ["download", REPO, "--revision", manifest.revision, "--local-dir", dir], { env, timeoutMs: 120_000 });
const hfVerify = (dir: string, env: NodeJS.ProcessEnv = clientEnv()) =>
  run(hf, ["cache", "verify", REPO, "--revision", manifest.revision, "--local-dir", dir, "--fail-on-missing-files"], { env, timeoutMs: 120_000 });

/** Every manifest file present with its size and sha256 (our own check, independent of the client). */
async function expectComplete(dir: string): Promise<void> {
  for (const f of manifest.files) {
    expect(statSync(path.join(dir, f.path)).size, f.path).toBe(f.size);
    expect(await sha256File(path.join(dir, f.path)), f.path).toBe(f.sha256);
  }
  expect(incompletes(dir)).toEqual([]);
}

/** The client's partial files: <local_dir>/.cache/huggingface/download/<name>.<etag>.incomplete */
function incompletes(dir: string): { name: string; size: number }[] {
  const d = path.join(dir, ".cache/huggingface/download");
  if (!existsSync(d)) return [];
  return readdirSync(d)
    .filter((n) => n.endsWith(".incomplete"))
    .map((n) => ({ name: n, size: statSync(path.join(d, n)).size }));
}

/** The hub answers the part of the Hub's HTTP contract huggingface_hub uses (gpus.md §4), with no Xet in it. */
describe("fake hub: the HTTP contract", () => {
  const auth = { Authorization: `Bearer ${TOKEN}` };

  it("model info, tree (recursive=true and True), HEAD resolve and ranged GET", async () => {
    const info = (await (await fetch(`${endpoint()}/api/models/${REPO}/revision/main`, { headers: auth })).json()) as { id: string; sha: string; siblings: { rfilename: string }[] };
    expect(info.id).toBe(REPO);
    expect(info.sha).toBe(manifest.revision);
    expect(info.siblings.map((s) => s.rfilename).sort()).toEqual(manifest.files.map((f) => f.path).sort());
    expect(manifest.files.map((f) => f.path)).toEqual(expect.arrayContaining(["config.json", "model.safetensors.index.json", "tokenizer.json", "tokenizer_config.json", SHARD1, SHARD2]));

    const trees: string[] = [];
    for (const flag of ["true", "True"]) {
      const r = await fetch(`${endpoint()}/api/models/${REPO}/tree/${manifest.revision}?recursive=${flag}&expand=False`, { headers: auth });
      expect(r.status).toBe(200);
      trees.push(await r.text());
    }
    expect(trees[1]).toBe(trees[0]);
    expect(trees[0].toLowerCase()).not.toContain("xet");
    const tree = JSON.parse(trees[0]) as { type: string; oid: string; size: number; path: string; lfs?: { oid: string; size: number; pointerSize: number } }[];
    expect(tree.map((e) => e.path).sort()).toEqual(manifest.files.map((f) => f.path).sort());
    for (const e of tree) {
      const f = file(e.path);
      expect(e).toMatchObject({ type: "file", oid: f.gitSha1, size: f.size });
      if (e.path.endsWith(".safetensors")) expect(e.lfs).toEqual({ oid: f.sha256, size: f.size, pointerSize: 134 });
      else expect(e.lfs).toBeUndefined();
    }

    const head = await fetch(`${endpoint()}/${REPO}/resolve/main/${SHARD2}`, { method: "HEAD", headers: auth });
    expect(head.status).toBe(200);
    expect(head.headers.get("x-repo-commit")).toBe(manifest.revision);
    expect(head.headers.get("etag")).toBe(`"${file(SHARD2).sha256}"`);
    expect(head.headers.get("content-length")).toBe(String(file(SHARD2).size));
    expect(head.headers.get("x-xet-hash")).toBeNull();
    const small = await fetch(`${endpoint()}/${REPO}/resolve/${manifest.revision}/config.json`, { method: "HEAD", headers: auth });
    expect(small.headers.get("etag")).toBe(`"${file("config.json").gitSha1}"`);

    const from = file(SHARD2).size - 1000;
    const part = await fetch(`${endpoint()}/${REPO}/resolve/${manifest.revision}/${SHARD2}`, { headers: { ...auth, Range: `bytes=${from}-` } });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe(`bytes ${from}-${file(SHARD2).size - 1}/${file(SHARD2).size}`);
    const body = Buffer.from(await part.arrayBuffer());
    const whole = Buffer.from(await (await fetch(`${endpoint()}/${REPO}/resolve/${manifest.revision}/${SHARD2}`, { headers: auth })).arrayBuffer());
    expect(body.length).toBe(1000);
    expect(body.equals(whole.subarray(from))).toBe(true);
    const past = await fetch(`${endpoint()}/${REPO}/resolve/${manifest.revision}/${SHARD2}`, { headers: { ...auth, Range: `bytes=${file(SHARD2).size}-` } });
    expect(past.status).toBe(416);
  });

  it("error codes: RepoNotFound, RevisionNotFound, EntryNotFound, GatedRepo, invalid token", async () => {
    const code = async (url: string, headers: Record<string, string> = auth) => {
      const r = await fetch(`${endpoint()}${url}`, { method: "HEAD", headers });
      return [r.status, r.headers.get("x-error-code"), r.headers.get("x-error-message")];
    };
    expect(await code(`/nobody/missing/resolve/main/config.json`)).toEqual([404, "RepoNotFound", "Repository not found"]);
    expect(await code(`/${REPO}/resolve/${"0".repeat(40)}/config.json`)).toEqual([404, "RevisionNotFound", `Invalid rev id: ${"0".repeat(40)}`]);
    expect(await code(`/${REPO}/resolve/main/nope.json`)).toEqual([404, "EntryNotFound", "Entry not found"]);
    expect((await code(`/${REPO}/resolve/main/config.json`, {})).slice(0, 2)).toEqual([401, "GatedRepo"]);
    expect(await code(`/${REPO}/resolve/main/config.json`, { Authorization: "Bearer hf_wrong" })).toEqual([401, null, "Invalid credentials in Authorization header"]);
  });
});

describe("fake hub: the real huggingface_hub client", () => {
  it("hf download with the token fetches every file, sizes and sha256 as published; hf cache verify agrees", async () => {
    setFaults([]);
    const mark = logMark();
    const dir = freshDir("plain");
    const r = await hfDownload(dir);
    expect(r.code, r.stderr).toBe(0);
    await expectComplete(dir);
    const v = await hfVerify(dir);
    expect(v.code, v.stdout + v.stderr).toBe(0);
    expect(v.stdout).toContain(`Verified ${manifest.files.length} file(s)`);

    const log = logSince(mark);
    const downloads = log.filter((e) => e.method === "GET" && e.endpoint === "resolve");
    expect(downloads.map((e) => e.file).sort()).toEqual(manifest.files.map((f) => f.path).sort());
    expect(downloads.every((e) => e.status === 200 && e.range === null)).toBe(true);
    expect(log.every((e) => e.auth === "ok")).toBe(true); // the token went with every request
    expect(log.every((e) => ["info", "tree", "resolve"].includes(e.endpoint))).toBe(true); // nothing else asked (no Xet)
    expect(log.some((e) => e.endpoint === "info")).toBe(true);
    expect(downloads[0].ua).toContain("hf_hub/1.17.0");
  });

  it("a connection cut inside a shard fails the run and leaves a .incomplete; the next run resumes it with Range", async () => {
    setFaults([{ kind: "drop", path: SHARD1, afterBytes: CUT_AT }]);
    const dir = freshDir("resume");
    const mark = logMark();
    const first = await hfDownload(dir);
    expect(first.code).not.toBe(0);
    expect(first.stdout + first.stderr).toContain(`peer closed connection without sending complete message body (received ${CUT_AT} bytes, expected ${file(SHARD1).size})`);
    const partial = incompletes(dir);
    expect(partial).toHaveLength(1);
    expect(partial[0].name).toBe(`${partial[0].name.split(".")[0]}.${file(SHARD1).sha256}.incomplete`);
    expect(partial[0].size).toBe(CLIENT_CHUNK); // what had been written when the body stopped
    expect(existsSync(path.join(dir, SHARD1))).toBe(false);
    const cut = logSince(mark).filter((e) => e.file === SHARD1 && e.method === "GET");
    expect(cut).toEqual([expect.objectContaining({ status: 200, range: null, bytes: CUT_AT, fault: "drop" })]);

    const keptAfterFirst = manifest.files.filter((f) => existsSync(path.join(dir, f.path))).map((f) => f.path);
    expect(keptAfterFirst).not.toContain(SHARD1);
    setFaults([]);
    const resumedMark = logMark();
    const second = await hfDownload(dir);
    expect(second.code, second.stderr).toBe(0);
    const resumed = logSince(resumedMark).filter((e) => e.file === SHARD1 && e.method === "GET");
    expect(resumed).toEqual([expect.objectContaining({ status: 206, range: `bytes=${CLIENT_CHUNK}-`, bytes: file(SHARD1).size - CLIENT_CHUNK, fault: null })]);
    const fetchedAgain = logSince(resumedMark).filter((e) => e.method === "GET" && e.endpoint === "resolve").map((e) => e.file);
    expect(fetchedAgain).toContain(SHARD1);
    for (const kept of keptAfterFirst) expect(fetchedAgain).not.toContain(kept); // what the first run finished is kept
    await expectComplete(dir);
    const v = await hfVerify(dir);
    expect(v.code, v.stdout + v.stderr).toBe(0);
  });

  it("a server that ignores Range: the resumed run gets 200 and the client restarts the file from zero", async () => {
    setFaults([{ kind: "drop", path: SHARD1, afterBytes: CUT_AT }]);
    const dir = freshDir("norange");
    expect((await hfDownload(dir)).code).not.toBe(0);
    expect(incompletes(dir).map((p) => p.size)).toEqual([CLIENT_CHUNK]);

    setFaults([{ kind: "ignore-range", path: "*" }]);
    const mark = logMark();
    const r = await hfDownload(dir);
    expect(r.code, r.stderr).toBe(0);
    expect(logSince(mark).filter((e) => e.file === SHARD1 && e.method === "GET")).toEqual([
      expect.objectContaining({ status: 200, range: `bytes=${CLIENT_CHUNK}-`, bytes: file(SHARD1).size, fault: "ignore-range" }),
    ]);
    await expectComplete(dir); // appended instead of restarted, the shard would be 10 MiB too long
  });

  it("a wrong Content-Length on HEAD: the client's consistency check refuses the file", async () => {
    setFaults([{ kind: "content-length", path: "config.json", delta: 7 }]);
    const dir = freshDir("length");
    const r = await hfDownload(dir);
    expect(r.code).not.toBe(0);
    const size = file("config.json").size;
    expect(r.stdout + r.stderr).toContain(`Consistency check failed: file should be of size ${size + 7} but has size ${size}`);
    expect(existsSync(path.join(dir, "config.json"))).toBe(false);
  });

  it("a wrong sha256 in the tree: the download does not hash files, hf cache verify and the manifest check catch it", async () => {
    setFaults([{ kind: "tree-sha256", path: SHARD2 }]);
    const dir = freshDir("sha");
    const r = await hfDownload(dir);
    // 1.17.0 downloads from the model info's siblings and the HEAD's ETag; it never reads the tree's lfs.oid.
    expect(r.code, r.stderr).toBe(0);
    await expectComplete(dir);
    const v = await hfVerify(dir);
    expect(v.code).not.toBe(0);
    expect(v.stdout + v.stderr).toContain(SHARD2);
    expect(v.stdout + v.stderr).not.toContain(SHARD1);
    // Our own check, as a preflight does it: every LFS entry of the tree against the file's sha256.
    const tree = (await (await fetch(`${endpoint()}/api/models/${REPO}/tree/${manifest.revision}?recursive=true`, { headers: { Authorization: `Bearer ${TOKEN}` } })).json()) as { path: string; lfs?: { oid: string } }[];
    const wrong: string[] = [];
    for (const e of tree) if (e.lfs && e.lfs.oid !== (await sha256File(path.join(dir, e.path)))) wrong.push(e.path);
    expect(wrong).toEqual([SHARD2]);
  });

  it("typed errors: RepositoryNotFoundError, RevisionNotFoundError, RemoteEntryNotFoundError, GatedRepoError, 401 for a bad token", async () => {
    setFaults([]);
    const script = String.raw`
import json, sys, tempfile
from huggingface_hub import hf_hub_download, snapshot_download
repo, rev = sys.argv[1], sys.argv[2]
cases = {
    "repo": lambda d: snapshot_download("nobody/missing", local_dir=d),
    "revision": lambda d: snapshot_download(repo, revision="0" * 40, local_dir=d),
    "entry": lambda d: hf_hub_download(repo, "nope.json", revision=rev, local_dir=d),
    "gated": lambda d: hf_hub_download(repo, "config.json", revision=rev, local_dir=d, token=False),
    "token": lambda d: hf_hub_download(repo, "config.json", revision=rev, local_dir=d, token="hf_wrong"),
}
out = {}
for name, call in cases.items():
    with tempfile.TemporaryDirectory() as d:
        try:
            call(d)
            out[name] = ["no error", None]
        except Exception as e:
            response = getattr(e, "response", None)
            out[name] = [type(e).__name__, getattr(response, "status_code", None)]
print(json.dumps(out))
`;
    const r = await run(python, ["-c", script, REPO, manifest.revision], { env: clientEnv(), timeoutMs: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout.trim().split("\n").pop() ?? "{}")).toEqual({
      repo: ["RepositoryNotFoundError", 404],
      revision: ["RevisionNotFoundError", 404],
      entry: ["RemoteEntryNotFoundError", 404],
      gated: ["GatedRepoError", 401],
      token: ["HfHubHTTPError", 401],
    });
  });

  it("a paginated tree (Link rel=next) is followed to the end", async () => {
    writeFileSync(faultsFile, JSON.stringify({ faults: [], treePageSize: 3 }));
    const mark = logMark();
    const script = "import sys; from huggingface_hub import HfApi; print(sorted(f.path for f in HfApi().list_repo_tree(sys.argv[1], revision=sys.argv[2], recursive=True)))";
    const r = await run(python, ["-c", script, REPO, manifest.revision], { env: clientEnv(), timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(`[${manifest.files.map((f) => `'${f.path}'`).sort().join(", ")}]`);
    expect(logSince(mark).filter((e) => e.endpoint === "tree")).toHaveLength(Math.ceil(manifest.files.length / 3));
    setFaults([]);
  });
});

/** The issue's acceptance line, on loopback: through the sim's egress proxy, interrupted once, resumed, verified. */
describe("fake hub through the sim's egress proxy", () => {
  let proxy: Service;
  const USER = "reprobench";
  const PASS = "pr0xy-Secret";

  beforeAll(async () => {
    writeFileSync(path.join(work, "proxy-url"), `http://${USER}:${PASS}@127.0.0.1:1\n`, { mode: 0o600 });
    // hub.sim is resolved by the proxy only: the client cannot reach the hub any other way.
    proxy = await startEgressProxy({ credentialsFile: path.join(work, "proxy-url"), allow: `hub.sim:${hub.port}`, resolve: "hub.sim=127.0.0.1" });
    services.push(proxy);
  });

  const viaProxy = (password = PASS) => clientEnv({ HF_ENDPOINT: `http://hub.sim:${hub.port}`, HTTP_PROXY: `http://${USER}:${password}@127.0.0.1:${proxy.port}`, HTTPS_PROXY: `http://${USER}:${password}@127.0.0.1:${proxy.port}` });

  it("downloads through the proxy with Basic auth, is cut once, resumes with Range on the next run, then verifies", async () => {
    setFaults([{ kind: "drop", path: SHARD1, afterBytes: CUT_AT, times: 1 }]);
    const dir = freshDir("proxy");
    const mark = logMark();
    const first = await hfDownload(dir, viaProxy());
    expect(first.code).not.toBe(0);
    expect(incompletes(dir).map((p) => p.size)).toEqual([CLIENT_CHUNK]);
    const second = await hfDownload(dir, viaProxy()); // the fault fired once; the same faults file is still in place
    expect(second.code, second.stderr).toBe(0);
    await expectComplete(dir);
    const v = await hfVerify(dir, viaProxy());
    expect(v.code, v.stdout + v.stderr).toBe(0);

    const shard = logSince(mark).filter((e) => e.file === SHARD1 && e.method === "GET");
    expect(shard.map((e) => [e.status, e.range, e.fault])).toEqual([
      [200, null, "drop"],
      [206, `bytes=${CLIENT_CHUNK}-`, null],
    ]);
    expect(logSince(mark).every((e) => e.auth === "ok")).toBe(true);
    expect(proxy.output()).toMatch(new RegExp(`OK \\S+ GET http://hub\\.sim:${hub.port}/${REPO}/resolve/${manifest.revision}/${SHARD1}`));
    expect(proxy.output()).not.toContain(PASS);
    expect(proxy.output()).not.toContain(TOKEN);
  });

  it("a wrong proxy password is refused by the proxy (407) before the hub sees anything", async () => {
    setFaults([]);
    const mark = logMark();
    const r = await hfDownload(freshDir("proxy-auth"), viaProxy("wrong"));
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toContain("407");
    expect(logSince(mark)).toEqual([]);
  });
});
