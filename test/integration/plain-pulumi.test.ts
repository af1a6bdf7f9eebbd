// Plain `pulumi` after `source scripts/env.sh` leaves the tracked stack files and `git status` alone, as
// `reprobench` does (issue 20, item 8). A throw-away checkout — scripts/env.sh as it is, its toolchain.sh
// handing over to this checkout's (the real pulumi, language host and PULUMI_HOME), a trivial program with
// one dynamic resource, its own file backend and generated passphrase (env.sh's defaults) — is committed to
// git with a Pulumi.dev.yaml holding comments, a `1.0` and a secret but no salt. `stack init`, `preview`,
// `up`, `refresh`, `preview --refresh`, a preview of the selected stack and `destroy`, typed as a user would,
// must keep that file byte for byte (and the program must still decrypt the secret). The same preview run
// with the bare binary (`command pulumi`) shows what env.sh prevents: Pulumi saves the salt into the
// file and re-serialises it.
import { spawnSync } from "node:child_process";
import { run } from "../../sim/exec";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync, copyFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/project";

const PROJECT = "reprobench-plain-pulumi-test";
const SECRET = "s3cr3t-plain-value";
let dir: string;
let scratch: string;
let tracked: Buffer;

const PROGRAM = `const pulumi = require("@pulumi/pulumi");
const cfg = new pulumi.Config();
const provider = {
  async create(inputs) { return { id: "thing-1", outs: inputs }; },
  async read(id, props) { return { id, props }; },
};
class Thing extends pulumi.dynamic.Resource {
  constructor(name, props, opts) { super(provider, name, props, opts); }
}
new Thing("thing", { ratio: cfg.require("ratio"), token: cfg.requireSecret("token") });
exports.ratio = cfg.require("ratio");
exports.tokenDecrypts = pulumi.unsecret(cfg.requireSecret("token").apply((t) => t === ${JSON.stringify(SECRET)}));
`;

/**
 * Runs `command` in bash in the checkout after `source scripts/env.sh`, as a user's shell would. Asynchronous:
 * a spawnSync would block this worker's event loop for the whole pulumi run, past Vitest's 60 s worker RPC
 * timeout (an unhandled "Timeout calling onTaskUpdate" that fails the run with every test green).
 */
async function shell(command: string): Promise<{ status: number | null; out: string }> {
  // The caller's own Pulumi settings (scripts/test.sh sources the real checkout's env.sh) stay out: the
  // throw-away checkout gets env.sh's defaults, its own .pulumi-state backend and passphrase.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^PULUMI_(BACKEND_URL|CONFIG_PASSPHRASE|CONFIG_PASSPHRASE_FILE|FALLBACK_TO_STATE_SECRETS_MANAGER)$/.test(k)));
  const r = await run(["bash", "-c", `set -euo pipefail\nsource scripts/env.sh\n${command}`], { cwd: dir, env, timeoutMs: 300_000 });
  return { status: r.code, out: `${r.stdout}${r.stderr}` };
}
async function ok(command: string): Promise<string> {
  const r = await shell(command);
  expect(r.status, r.out).toBe(0);
  return r.out;
}
const git = (...args: string[]) => spawnSync("git", ["-C", dir, "-c", "user.email=t@t", "-c", "user.name=t", ...args], { encoding: "utf8" });
function expectUntouched(): void {
  expect(readFileSync(join(dir, "Pulumi.dev.yaml")).equals(tracked), readFileSync(join(dir, "Pulumi.dev.yaml"), "utf8")).toBe(true);
  expect(git("status", "--porcelain").stdout).toBe("");
}

beforeAll(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "reprobench-plain-pulumi-")));
  scratch = mkdtempSync(join(tmpdir(), "reprobench-plain-scratch-"));
  mkdirSync(join(dir, "scripts"));
  copyFileSync(join(repoRoot, "scripts/env.sh"), join(dir, "scripts/env.sh"));
  // The toolchain is this checkout's (built once, cached): its toolchain.sh prints the same environment.
  writeFileSync(join(dir, "scripts/toolchain.sh"), `exec bash ${JSON.stringify(join(repoRoot, "scripts/toolchain.sh"))} "$@"\n`);
  symlinkSync(join(repoRoot, "node_modules"), join(dir, "node_modules"));
  writeFileSync(join(dir, "Pulumi.yaml"), `name: ${PROJECT}\nruntime: nodejs\nmain: index.js\n`);
  writeFileSync(join(dir, "package.json"), `{ "name": "${PROJECT}", "private": true }\n`);
  writeFileSync(join(dir, "index.js"), PROGRAM);
  writeFileSync(join(dir, ".gitignore"), ".pulumi-state/\nnode_modules\n");
  expect(git("init", "-q").status).toBe(0);
  expect(git("add", ".").status).toBe(0);
  expect(git("commit", "-qm", "project").status).toBe(0);
}, 1_800_000);

afterAll(() => {
  // `stack select` wrote this project's workspace file into the shared PULUMI_HOME.
  const home = process.env.PULUMI_HOME ?? join(repoRoot, ".pulumi-home");
  try {
    for (const f of readdirSync(join(home, "workspaces"))) if (f.startsWith(`${PROJECT}-`)) rmSync(join(home, "workspaces", f));
  } catch {
    // no workspaces directory
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe("plain pulumi after `source scripts/env.sh`", () => {
  it("stack init writes nothing in the checkout", async () => {
    await ok("pulumi stack init dev");
    expect(git("status", "--porcelain").stdout).toBe("");
    // A secret encrypted with the stack's key (the salt lives in its state), put into a tracked stack
    // file with comments and a `1.0`, and no salt: the shape Pulumi rewrites.
    const scratchFile = join(scratch, "Pulumi.dev.yaml");
    await ok(`command pulumi config set --stack dev --secret token ${SECRET} --config-file ${scratchFile}`);
    const secure = /secure: (v1:\S+)/.exec(readFileSync(scratchFile, "utf8"))?.[1];
    expect(secure).toBeDefined();
    writeFileSync(join(dir, "Pulumi.dev.yaml"), `# Tracked by hand: comments, a 1.0 and a secret.\nconfig:\n  ${PROJECT}:ratio: 1.0   # keep as written\n  ${PROJECT}:token:\n    secure: ${secure}\n`);
    expect(git("add", "Pulumi.dev.yaml").status).toBe(0);
    expect(git("commit", "-qm", "stack file").status).toBe(0);
    tracked = readFileSync(join(dir, "Pulumi.dev.yaml"));
    expect(tracked.toString()).not.toContain("encryptionsalt");
  });

  it.each([
    ["pulumi preview --stack dev", /\+ 2 to create/],
    ["pulumi up --stack dev --yes", /tokenDecrypts: true[\s\S]*\+ 2 created/],
    ["pulumi refresh --stack dev --yes", /2 unchanged/],
    ["pulumi preview --stack dev --refresh", /2 unchanged/],
    ["pulumi stack select dev && pulumi preview --diff && pulumi stack unselect", /2 unchanged/],
    ["pulumi destroy --stack dev --yes", /2 deleted/],
  ])("%s keeps Pulumi.dev.yaml byte for byte and git status clean", async (command, expected) => {
    const out = await ok(command);
    expect(out).toMatch(expected);
    expect(out).not.toMatch(/incorrect passphrase|error:/);
    expect(out).not.toContain(SECRET);
    expectUntouched();
  });

  it("the bare binary, for contrast, saves the salt into the file and re-serialises it (what env.sh's pulumi() prevents)", async () => {
    await ok("command pulumi preview --stack dev");
    const after = readFileSync(join(dir, "Pulumi.dev.yaml"), "utf8");
    expect(after).toContain("encryptionsalt: v1:");
    expect(after).not.toContain("ratio: 1.0");
    writeFileSync(join(dir, "Pulumi.dev.yaml"), tracked);
    expectUntouched();
  });
});
