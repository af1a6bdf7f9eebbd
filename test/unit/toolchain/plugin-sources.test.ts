// scripts/toolchain.sh's offline plugin path, run for real in bash on temporary directories: the archive
// checks against MANIFEST.tsv, where the archives are looked for, and the build cache keyed by version +
// archive sha256 (with the Go build replaced by a stub recipe, so this takes milliseconds).
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";

const REPO = resolve(__dirname, "../../..");
const SCRIPT = join(REPO, "scripts/toolchain.sh");
const SHARED = resolve(REPO, "../shared/pulumi-plugin-src");
const scratch = mkdtempSync(join(tmpdir(), "reprobench-toolchain-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const sha256 = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

/** Sources the script (which then defines its functions only) and runs `body` in the same bash. */
function bash(body: string, env: Record<string, string> = {}, script = SCRIPT) {
  // The script path goes in $1, not $0: with $0 == BASH_SOURCE the script would run its main.
  const r = spawnSync("bash", ["-c", `source "$1"\n${body}`, "bash", script], {
    encoding: "utf8",
    env: { ...process.env, REPROBENCH_PLUGIN_SOURCES: "", ...env },
  });
  return { status: r.status, stdout: r.stdout.trim(), stderr: r.stderr };
}

let n = 0;
/** A directory of archives, each holding its one top-level folder, with a MANIFEST.tsv listing them. */
function sources(names: string[], content = (name: string) => `${name}\n`): string {
  const dir = join(scratch, `src-${n++}`);
  mkdirSync(dir);
  const rows = ["file\trepo\tref\tcommit\tsha256"];
  for (const name of names) {
    mkdirSync(join(dir, name));
    writeFileSync(join(dir, name, "SOURCE.txt"), content(name));
    const tar = spawnSync("tar", ["-czf", `${name}.tar.gz`, name], { cwd: dir });
    expect(tar.status).toBe(0);
    rmSync(join(dir, name), { recursive: true });
    rows.push(`${name}.tar.gz\tgithub.com/example/${name}\tv0\t${"0".repeat(40)}\t${sha256(join(dir, `${name}.tar.gz`))}`);
  }
  writeFileSync(join(dir, "MANIFEST.tsv"), rows.join("\n") + "\n");
  return dir;
}

describe("verify_archive", () => {
  it("prints the sha256 of an archive that matches MANIFEST.tsv", () => {
    const dir = sources(["pulumi-command-v1.2.1"]);
    const r = bash(`verify_archive "${dir}" pulumi-command-v1.2.1.tar.gz`);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(sha256(join(dir, "pulumi-command-v1.2.1.tar.gz")));
  });

  it("refuses a tampered archive, naming the file and both checksums", () => {
    const dir = sources(["pulumi-command-v1.2.1"]);
    const file = join(dir, "pulumi-command-v1.2.1.tar.gz");
    const listed = sha256(file);
    writeFileSync(file, Buffer.concat([readFileSync(file), Buffer.from("x")]));
    const r = bash(`verify_archive "${dir}" pulumi-command-v1.2.1.tar.gz`);
    expect(r.status).not.toBe(0);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(`${file}: sha256 ${sha256(file)} does not match MANIFEST.tsv (${listed})`);
  });

  it("refuses an archive the manifest lists but the directory lacks", () => {
    const dir = sources(["pulumi-command-v1.2.1"]);
    rmSync(join(dir, "pulumi-command-v1.2.1.tar.gz"));
    const r = bash(`verify_archive "${dir}" pulumi-command-v1.2.1.tar.gz`);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(`missing plugin source archive ${dir}/pulumi-command-v1.2.1.tar.gz`);
  });

  it("refuses an archive the manifest does not list, and a directory without a manifest", () => {
    const dir = sources(["pulumi-command-v1.2.1"]);
    const unlisted = bash(`verify_archive "${dir}" pulumi-random-v4.21.1.tar.gz`);
    expect(unlisted.status).not.toBe(0);
    expect(unlisted.stderr).toContain(`pulumi-random-v4.21.1.tar.gz is not listed in ${dir}/MANIFEST.tsv`);
    rmSync(join(dir, "MANIFEST.tsv"));
    const noManifest = bash(`verify_archive "${dir}" pulumi-command-v1.2.1.tar.gz`);
    expect(noManifest.status).not.toBe(0);
    expect(noManifest.stderr).toContain(`no MANIFEST.tsv in ${dir}`);
  });
});

describe("plugin_sources", () => {
  // A checkout in a temporary tree, so "../shared/pulumi-plugin-src beside the checkout" can be laid out.
  const root = join(scratch, "tree");
  const script = join(root, "checkout/scripts/toolchain.sh");
  beforeAll(() => {
    mkdirSync(join(root, "checkout/scripts"), { recursive: true });
    cpSync(SCRIPT, script);
  });
  beforeEach(() => rmSync(join(root, "shared"), { recursive: true, force: true }));

  it("prints nothing when unset and there is no ../shared/pulumi-plugin-src", () => {
    const r = bash("plugin_sources", {}, script);
    expect(r).toMatchObject({ status: 0, stdout: "" });
  });

  it("uses ../shared/pulumi-plugin-src beside the checkout when unset", () => {
    mkdirSync(join(root, "shared/pulumi-plugin-src"), { recursive: true });
    expect(bash("plugin_sources", {}, script)).toMatchObject({ status: 0, stdout: join(root, "shared/pulumi-plugin-src") });
  });

  it("prefers REPROBENCH_PLUGIN_SOURCES, and refuses one that is not a directory", () => {
    const dir = sources([]);
    expect(bash("plugin_sources", { REPROBENCH_PLUGIN_SOURCES: dir }, script)).toMatchObject({ status: 0, stdout: dir });
    const bad = bash("plugin_sources", { REPROBENCH_PLUGIN_SOURCES: join(scratch, "nowhere") }, script);
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain(`REPROBENCH_PLUGIN_SOURCES=${join(scratch, "nowhere")} is not a directory`);
  });

  it("without archives, official_plugin stops with one error saying where to put them", () => {
    const r = bash("official_plugin command 1.2.1", {}, script);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain("set REPROBENCH_PLUGIN_SOURCES to it");
    expect(r.stderr).toContain(`(default: ${join(root, "shared/pulumi-plugin-src")})`);
  });
});

describe("official_plugin's cache (stub recipe instead of the Go build)", () => {
  // The stub recipe writes a binary naming its work directory's archive and counts its runs; a fake `go`
  // satisfies the Go check.
  const bin = join(scratch, "fake-bin");
  mkdirSync(bin);
  writeFileSync(join(bin, "go"), "#!/bin/sh\nexit 0\n");
  chmodSync(join(bin, "go"), 0o755);
  const run = (src: string, cache: string) =>
    bash(
      `build_command() { echo built >>"${cache}.builds"; ls "$1" >"$3"; cat "$1/pulumi-command-v$2/SOURCE.txt" >>"$3"; chmod +x "$3"; }
       official_plugin command 9.9.9 && echo "$PLUGIN_BIN"`,
      { REPROBENCH_CACHE: cache, REPROBENCH_PLUGIN_SOURCES: src, PATH: `${bin}:${process.env.PATH}` },
    );
  const builds = (cache: string) => (existsSync(`${cache}.builds`) ? readFileSync(`${cache}.builds`, "utf8").split("\n").filter(Boolean).length : 0);

  it("builds once from the extracted archive, then reuses the cached binary", () => {
    const src = sources(["pulumi-command-v9.9.9"]);
    const cache = join(scratch, "cache-a");
    const first = run(src, cache);
    expect(first.status).toBe(0);
    expect(first.stdout).toMatch(new RegExp(`^${cache}/plugins/command-9\\.9\\.9-[0-9a-f]{16}/pulumi-resource-command$`));
    expect(readFileSync(first.stdout, "utf8")).toBe("pulumi-command-v9.9.9\npulumi-command-v9.9.9\n");
    const second = run(src, cache);
    expect(second).toMatchObject({ status: 0, stdout: first.stdout });
    expect(builds(cache)).toBe(1);
  });

  it("rebuilds into another cache entry when the archive (and its manifest sha256) changes", () => {
    const cache = join(scratch, "cache-b");
    const a = run(sources(["pulumi-command-v9.9.9"]), cache);
    const b = run(sources(["pulumi-command-v9.9.9"], () => "changed\n"), cache);
    expect(a.status).toBe(0);
    expect(b.status).toBe(0);
    expect(b.stdout).not.toBe(a.stdout);
    expect(readFileSync(b.stdout, "utf8")).toContain("changed");
    expect(builds(cache)).toBe(2);
  });

  it("leaves no cache entry and no partial directory when the build fails", () => {
    const src = sources(["pulumi-command-v9.9.9"]);
    const cache = join(scratch, "cache-d");
    const r = bash(`build_command() { false; echo "after a failed step" >&2; }\nofficial_plugin command 9.9.9`, {
      REPROBENCH_CACHE: cache,
      REPROBENCH_PLUGIN_SOURCES: src,
      PATH: `${bin}:${process.env.PATH}`,
    });
    expect(r.status).not.toBe(0);
    expect(r.stderr).not.toContain("after a failed step");
    expect(readdirSync(join(cache, "plugins"))).toEqual([]);
  });

  it("does not build from a tampered archive", () => {
    const src = sources(["pulumi-command-v9.9.9"]);
    writeFileSync(join(src, "pulumi-command-v9.9.9.tar.gz"), "not the archive");
    const cache = join(scratch, "cache-c");
    const r = run(src, cache);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain("does not match MANIFEST.tsv");
    expect(builds(cache)).toBe(0);
  });
});

describe.skipIf(!existsSync(join(SHARED, "MANIFEST.tsv")))("the shared archives and this package.json", () => {
  it("hold every archive the recipes need for the SDKs' plugin versions, each matching its sha256", () => {
    const deps = Object.keys((JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { dependencies: Record<string, string> }).dependencies);
    const plugins = deps
      .map((d) => (JSON.parse(readFileSync(join(REPO, "node_modules", d, "package.json"), "utf8")) as { pulumi?: { resource?: boolean; name?: string; version?: string } }).pulumi)
      .filter((p) => p?.resource)
      .map((p) => `${p!.name} ${p!.version!.replace(/^v/, "")}`);
    expect(plugins.sort()).toEqual(["command 1.2.1", "docker 5.0.0", "random 4.21.1"]);
    const r = bash(
      `for p in "language-nodejs $LANGUAGE_HOST_V" ${plugins.map((p) => `"${p}"`).join(" ")}; do
         for a in $(plugin_archives $p); do verify_archive "${SHARED}" "$a.tar.gz" >/dev/null; echo "$a"; done
       done`,
    );
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.stdout.split("\n")).toHaveLength(8);
  });
});
