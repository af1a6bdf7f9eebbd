// modelServer.download (components/config/schema.ts downloadSchema, rules/model-server.ts downloadProblems) and
// the pure parts of components/weights-download.ts: absent it changes nothing, each problem names its key,
// and the script's inputs carry no secret.
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { formatProblems, parseConfig, type ReprobenchConfig } from "../../../components/config";
import { downloadEnvironment, downloadScriptEnv, downloadSummary, weightsDownloadSettings, weightsRequirements } from "../../../components/weights-download";
import { REPO, minimalRealConfig } from "../config/helpers";

const DOWNLOAD = { repo: "Qwen/Qwen3-32B", revision: "main" };

function parsed(modelServer: Record<string, unknown>, extra: Record<string, unknown> = {}): ReprobenchConfig {
  const r = parseConfig({ ...minimalRealConfig(), modelServer, ...extra });
  if (!r.ok) throw new Error(formatProblems(r.problems));
  return r.config;
}
function problems(modelServer: Record<string, unknown>): string {
  const r = parseConfig({ ...minimalRealConfig(), modelServer });
  return r.ok ? "" : formatProblems(r.problems);
}

describe("modelServer.download in the stack config", () => {
  it("absent: no key in the parsed config and nothing to download on any worker (today's behaviour)", () => {
    const config = parsed({});
    expect("download" in config.modelServer).toBe(false);
    expect(JSON.stringify(config.modelServer)).not.toContain("download");
    expect(weightsDownloadSettings(config, "worker-a")).toBeUndefined();
    expect(weightsDownloadSettings(config, "worker-b")).toBeUndefined();
  });

  it("set: the defaults are filled in", () => {
    expect(parsed({ download: DOWNLOAD }).modelServer.download).toEqual({
      repo: "Qwen/Qwen3-32B", revision: "main", endpoint: "https://huggingface.co", indexUrl: "https://pypi.org/simple/", venv: "/var/lib/reprobench/.venv-hf-hub", attempts: 5, timeoutMinutes: 240,
    });
    expect(parsed({ download: { ...DOWNLOAD, revision: "0123456789abcdef0123456789abcdef01234567" } }).modelServer.download?.revision).toBe("0123456789abcdef0123456789abcdef01234567");
  });

  it.each([
    ["repo", "Qwen3-32B", "expected a Hugging Face model repo id org/name"],
    ["repo", "Qwen/Qwen3/32B", "expected a Hugging Face model repo id org/name"],
    ["revision", "main..dev", "expected a commit (40 hex characters) or a branch or tag name"],
    ["revision", "-x", "expected a commit (40 hex characters) or a branch or tag name"],
    ["endpoint", "ftp://hub.example", "expected an http(s) URL without credentials"],
    ["endpoint", "https://user:pw@hub.example", "expected an http(s) URL without credentials"],
    ["indexUrl", "not a url", "expected a URL such as https://pypi.org/simple/"],
    ["venv", "/opt", "expected a directory of its own at least two levels deep"],
    ["attempts", 0, "expected"],
  ])("%s = %j is refused, naming modelServer.download.%s", (key, value, expected) => {
    const out = problems({ download: { ...DOWNLOAD, [key]: value } });
    expect(out).toMatch(new RegExp(`^reprobench:modelServer\\.download\\.${key}: .*${expected.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`, "m"));
    // The credentials of a bad endpoint are not echoed back.
    expect(out).not.toContain("user:pw");
  });

  it("a missing repo or revision and an unknown key are named", () => {
    expect(problems({ download: { repo: "a/b" } })).toMatch(/^reprobench:modelServer\.download\.revision: /m);
    expect(problems({ download: { revision: "main" } })).toMatch(/^reprobench:modelServer\.download\.repo: /m);
    expect(problems({ download: { ...DOWNLOAD, token: "hf_x" } })).toMatch(/^reprobench:modelServer\.download/m);
  });

  it("is the section's, not a worker's: modelServer.overrides.<host>.download is refused", () => {
    expect(problems({ overrides: { "worker-a": { download: DOWNLOAD } } })).toMatch(/^reprobench:modelServer\.overrides\.worker-a/m);
  });

  it("needs every worker's modelPath to be a directory of its own, named where it is set", () => {
    expect(problems({ download: DOWNLOAD, modelPath: "/models" })).toMatch(/^reprobench:modelServer\.modelPath: got "\/models" for worker worker-a; expected a directory of its own at least two levels deep/m);
    expect(problems({ download: DOWNLOAD, overrides: { "worker-b": { modelPath: "/srv/" } } })).toMatch(/^reprobench:modelServer\.overrides\.worker-b\.modelPath: got "\/srv\/" for worker worker-b/m);
    // Without download the same path is today's business of the preflight, not a config problem.
    expect(problems({ modelPath: "/models" })).toBe("");
  });

  it("refuses a venv that overlaps a worker's weights", () => {
    expect(problems({ download: { ...DOWNLOAD, venv: "/var/lib/reprobench/models/Qwen3.8-27B/venv" } })).toMatch(/^reprobench:modelServer\.download\.venv: .*overlaps modelServer\.modelPath \/var\/lib\/reprobench\/models\/Qwen3\.8-27B of worker worker-a/m);
  });
});

describe("weights-download.ts: what the script gets", () => {
  const config = parsed({ download: { ...DOWNLOAD, endpoint: "http://hub.sim:8080/" }, overrides: { "worker-b": { modelPath: "/data/models/q" } } }, { hfToken: "hf_secretToken" });

  it("per worker: the section's download into that worker's modelPath (an override's when set)", () => {
    expect(weightsDownloadSettings(config, "worker-a")).toMatchObject({ hostName: "worker-a", repo: "Qwen/Qwen3-32B", revision: "main", endpoint: "http://hub.sim:8080", modelPath: "/var/lib/reprobench/models/Qwen3.8-27B" });
    expect(weightsDownloadSettings(config, "worker-b")?.modelPath).toBe("/data/models/q");
  });

  it("the script's inputs hold the pins and no secret; the token and proxy go in the secret environment only", () => {
    const s = weightsDownloadSettings(config, "worker-a")!;
    const env = downloadScriptEnv(s, weightsRequirements());
    expect(env).toMatchObject({ REPO: "Qwen/Qwen3-32B", REVISION: "main", MODEL_PATH: s.modelPath, ENDPOINT: "http://hub.sim:8080", VENV: "/var/lib/reprobench/.venv-hf-hub", INDEX_URL: "https://pypi.org/simple/", ATTEMPTS: "5" });
    expect(env.REQUIREMENTS).toContain("huggingface_hub==1.17.0 --hash=sha256:");
    expect(JSON.stringify(env)).not.toContain("hf_secretToken");
    expect(JSON.stringify(downloadSummary(s))).not.toContain("hf_secretToken");
    expect(downloadSummary(s).slice(0, 7)).toEqual(["hf", "download", "Qwen/Qwen3-32B", "--revision", "main", "--local-dir", s.modelPath]);
    expect(downloadEnvironment({ HTTPS_PROXY: "http://p:3128" }, "hf_t")).toEqual({ HTTPS_PROXY: "http://p:3128", HF_TOKEN: "hf_t" });
    expect(downloadEnvironment(undefined, undefined)).toEqual({});
    expect(downloadEnvironment(undefined, "")).toEqual({});
  });
});

describe("the client's pins belong to the program", () => {
  const pins = readFileSync(path.join(REPO, "components/weights/requirements.txt"), "utf8");

  it("components/weights/requirements.txt: every requirement pinned with a sha256, no hf-xet; found from dist/ too", () => {
    const reqs = pins.replace(/\\\n/g, " ").split("\n").filter((l) => l.trim() && !l.startsWith("#"));
    expect(reqs.length).toBeGreaterThan(10);
    for (const r of reqs) expect(r, r).toMatch(/^[A-Za-z0-9_.-]+==\S+( +--hash=sha256:[0-9a-f]{64})+\s*$/);
    expect(reqs.some((r) => /^hf[-_]xet/i.test(r))).toBe(false);
    expect(weightsRequirements()).toBe(pins);
    // Built, this module runs from dist/components; the package ships components/ beside it.
    expect(weightsRequirements(path.join(REPO, "dist", "components"))).toBe(pins);
  });

  it("sim/hub/hf-venv.sh builds the test client from them; nothing in components/ reads sim/", () => {
    expect(readFileSync(path.join(REPO, "sim/hub/hf-venv.sh"), "utf8")).toContain('requirements="$here/../../components/weights/requirements.txt"');
    for (const f of ["components/weights-download.ts", "components/scripts/weights-download.sh", "components/scripts/weights-download-check.sh"]) {
      expect(readFileSync(path.join(REPO, f), "utf8"), f).not.toMatch(/["'/(]sim\//);
    }
  });
});
