// The package under a strict node_modules layout: `npm ci --install-strategy=linked` (each package sees only
// what it declares, as pnpm lays it out) in a copy of the checkout, from npm's cache (--offline: no registry
// traffic), then the build. The provider plugin starts there and serves its schema to the real CLI, and the
// host scripts' progress path finds one gRPC copy for its engine client: its own declared @grpc/grpc-js is
// the copy @pulumi/pulumi's generated stubs use (two copies would fail grpc-js's credentials check, and
// every progress line would be dropped). A rebuild there never leaves dist/components missing or half built
// for a program or plugin that loads it meanwhile (suites side by side share the checkout's build).
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mustRun, run } from "../../sim/exec";
import { repoRoot, toolchainEnv } from "../helpers/project";

let dir: string | undefined;
let env: Record<string, string>;

beforeAll(async () => {
  env = { ...process.env, ...(await toolchainEnv()) } as Record<string, string>;
  dir = mkdtempSync(path.join(tmpdir(), "rb-linked-"));
  // The checkout's files (tracked and not ignored), without node_modules or anything built.
  const files = (await mustRun(["git", "-C", repoRoot, "ls-files", "-co", "--exclude-standard"])).split("\n").filter(Boolean);
  for (const f of files) cpSync(path.join(repoRoot, f), path.join(dir, f), { recursive: true });
  const install = await run(["npm", "ci", "--install-strategy=linked", "--offline", "--ignore-scripts", "--no-audit", "--no-fund"], { cwd: dir, env, timeoutMs: 600_000 });
  if (install.code !== 0) throw new Error(`npm ci --install-strategy=linked --offline failed:\n${install.stderr.slice(-2000)}`);
  for (const script of ["scripts/build.sh", "plugin/build.sh"]) await mustRun(["bash", path.join(dir, script)], { cwd: dir, env, timeoutMs: 600_000 });
}, 1_200_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the package installed with npm's linked strategy", () => {
  it("has a strict layout: @pulumi/pulumi's own dependencies are not hoisted beside ours", async () => {
    const probe = await run(["node", "-e", "try { require.resolve('google-protobuf'); console.log('hoisted'); } catch { console.log('strict'); }"], { cwd: dir, env });
    expect(probe.stdout.trim()).toBe("strict");
  });

  it("serves the plugin's schema to the CLI: the host scripts, the job name, both components and the typed cluster settings", async () => {
    const r = await run(["pulumi", "package", "get-schema", path.join(dir!, "plugin")], { cwd: tmpdir(), env, timeoutMs: 300_000 });
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    const schema = JSON.parse(r.stdout) as { resources: Record<string, { inputProperties?: Record<string, { $ref?: string }> }> };
    expect(Object.keys(schema.resources).sort()).toEqual(["reprobench:index:BenchCluster", "reprobench:index:BenchmarkRun", "reprobench:index:HostScript", "reprobench:index:JobName"]);
    expect(schema.resources["reprobench:index:BenchCluster"].inputProperties?.settings.$ref).toBe("#/types/reprobench:index:ClusterSettings");
  }, 300_000);

  it("gives the progress lines' engine client one gRPC copy: ours is @pulumi/pulumi's", async () => {
    const script = [
      "const path = require('path');",
      "const components = path.dirname(require.resolve('./dist/components/checked-command'));",
      "const ours = require.resolve('@grpc/grpc-js', { paths: [components] });",
      "const stub = require.resolve('@pulumi/pulumi/proto/engine_grpc_pb', { paths: [components] });",
      "const theirs = require.resolve('@grpc/grpc-js', { paths: [path.dirname(stub)] });",
      "const rpc = require(stub);",
      "const client = new rpc.EngineClient('127.0.0.1:9', require(ours).credentials.createInsecure());",
      "client.close();",
      "console.log(JSON.stringify({ same: ours === theirs, store: ours.includes('/node_modules/.store/') }));",
    ].join("\n");
    const r = await run(["node", "-e", script], { cwd: dir, env });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ same: true, store: true });
  });

  it("rebuilds in place: a reader meanwhile finds a whole build every time, and the source maps still point at components/", async () => {
    const must = ["dist/components/index.js", "dist/components/scripts/harbor-launch.sh", "dist/components/weights/requirements.txt"].map((f) => path.join(dir!, f));
    let reads = 0;
    let missing = 0;
    let done = false;
    const build = run(["bash", "scripts/build.sh"], { cwd: dir, env, timeoutMs: 600_000 }).finally(() => (done = true));
    // Sampled while the build runs (it ends by itself, bounded by its timeout); every 20 ms.
    while (!done) {
      reads++;
      if (!must.every((f) => existsSync(f))) missing++;
      await new Promise((r) => setTimeout(r, 20));
    }
    const r = await build;
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    console.log(`${reads} reads of dist/components during the rebuild, ${missing} found it incomplete`);
    expect(reads).toBeGreaterThan(20);
    expect(missing).toBe(0);
    expect(JSON.parse(readFileSync(path.join(dir!, "dist/components/index.js.map"), "utf8")).sources).toEqual(["../../components/index.ts"]);
    expect(readdirSync(dir!).filter((f) => f.startsWith(".dist-build-"))).toEqual([]);
    expect(readdirSync(path.join(dir!, "dist"))).toEqual(["components"]);
  }, 600_000);
});
