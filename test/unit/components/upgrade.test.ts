// State written by a release keeps working under the code that follows it. A dynamic resource's refresh and
// delete run the provider code serialized into its state by the release that last created or updated it
// (@pulumi/pulumi cmd/dynamic-provider: getProvider), while diff and update run the new code. The fixture
// (scripts/upgrade-fixture.ts) is the local stack's host-script resources as release 0.1.0 wrote them, secrets
// replaced. Its old code is loaded exactly as the engine loads it and run against a stand-in ssh.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkedCommandDiff, checkedCommandProvider } from "../../../components/checked-command";
import { resourceProvider } from "../../../components/provider";
import { HOST_SCRIPT_TYPE, LEGACY_DYNAMIC_TYPE } from "../../../components/resource-types";
import { type HostConnection, loginRecordFile, recordLogin } from "../../../components/transport";
import { repoRoot } from "../../helpers/project";

interface FixtureResource {
  name: string;
  urn: string;
  id: string;
  provider: string;
  outputs: Record<string, unknown>;
}
const SECRET_SIG = "4dabf18193072939515e22adb298388d";

/** A secret as `stack export --show-secrets` writes it, as the engine hands it to the provider: plain. */
function unwrap(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(unwrap);
  if (value && typeof value === "object") {
    const o = value as Record<string, unknown>;
    if (o[SECRET_SIG] !== undefined && "plaintext" in o) return JSON.parse(String(o.plaintext));
    return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, unwrap(v)]));
  }
  return value;
}

const releases = ["0.1.0"];
const scratch = mkdtempSync(path.join(tmpdir(), "rb-upgrade-"));
const savedPath = process.env.PATH;
const savedSshDir = process.env.REPROBENCH_SSH_DIR;
beforeAll(() => {
  // `ssh` that records the key it was given and answers a check with what the fixture expects.
  const bin = path.join(scratch, "bin");
  mkdirSync(bin);
  writeFileSync(path.join(bin, "ssh"), `#!/usr/bin/env bash
while [ $# -gt 0 ]; do [ "$1" = -i ] && cp "$2" "$SCRATCH/used-key"; shift; done
cat >"$SCRATCH/stdin"
echo "reprobench: connected" >&2
printf '%s\\n' "$FIXTURE_EXPECTED"
`);
  chmodSync(path.join(bin, "ssh"), 0o755);
  process.env.PATH = `${bin}:${savedPath}`;
  process.env.SCRATCH = scratch;
  process.env.REPROBENCH_SSH_DIR = path.join(scratch, "ssh");
});
afterAll(() => {
  process.env.PATH = savedPath;
  if (savedSshDir === undefined) delete process.env.REPROBENCH_SSH_DIR;
  else process.env.REPROBENCH_SSH_DIR = savedSshDir;
  rmSync(scratch, { recursive: true, force: true });
});

describe.each(releases)("state written by release %s", (release) => {
  const fixture = JSON.parse(readFileSync(path.join(repoRoot, "test/fixtures/upgrade", `${release}.json`), "utf8")) as { providers: Record<string, string>; resources: FixtureResource[] };
  // What the engine's dynamic provider host uses, resolved from @pulumi/pulumi (whose dependency it is).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const requireFromString = require(require.resolve("require-from-string", { paths: [path.dirname(require.resolve("@pulumi/pulumi"))] })) as (code: string) => { handler(): Record<string, (...a: unknown[]) => Promise<Record<string, unknown>>> };
  const oldProvider = (r: FixtureResource) => requireFromString(fixture.providers[r.provider]).handler();
  const checked = fixture.resources.filter((r) => "check" in r.outputs);

  it("holds the host-script resources of a whole local stack", () => {
    expect(checked.map((r) => r.name)).toEqual(expect.arrayContaining(["worker-a-facts", "worker-a-sglang-image-digest", "worker-b-docker-daemon-json", "harbor-install", "benchmark-harbor", "tool-bundle-build"]));
  });

  it("the current diff reads each one as unchanged, and a rotated key, user or sudo setting replaces none", () => {
    for (const r of checked) {
      const olds = unwrap(r.outputs) as Parameters<typeof checkedCommandDiff>[0];
      expect(checkedCommandDiff(olds, olds), r.name).toEqual({ changes: false, replaces: [], deleteBeforeReplace: true });
      const rotated = { ...olds, connection: { ...olds.connection, privateKey: "rotated", user: "ops", sudo: true } };
      expect(checkedCommandDiff(olds, rotated).replaces, r.name).toEqual([]);
    }
  });

  it("the current code updates each one in place (its old stdout reaching the scripts as PREVIOUS_STDOUT)", async () => {
    for (const r of checked) {
      const olds = unwrap(r.outputs) as Record<string, unknown> & { expected: string; stdout: string };
      process.env.FIXTURE_EXPECTED = olds.expected;
      const updated = await checkedCommandProvider.update!(r.id, olds, { ...olds, create: `${String(olds.create)}\n# changed` });
      expect(updated.outs, r.name).toMatchObject({ observed: olds.expected, expected: olds.expected });
      expect(readFileSync(path.join(scratch, "stdin"), "utf8"), r.name).toContain("export PREVIOUS_STDOUT=");
    }
  });

  it("the provider plugin takes each one over: no change against what the program registers now, and a read that is the current code's", async () => {
    for (const r of checked) {
      const olds: Record<string, unknown> & { expected: string } = { ...(unwrap(r.outputs) as Record<string, unknown> & { expected: string }), __provider: fixture.providers[r.provider] };
      // What CheckedCommand registers now: no serialized code, no progressUrn, outputs unset.
      const { __provider: _code, progressUrn: _urn, expected: _e, observed: _o, info: _i, stdout: _s, ...news } = olds;
      // The engine hands the plugin the resource under its new type (the alias matched the old URN).
      const urn = r.urn.replace(LEGACY_DYNAMIC_TYPE, HOST_SCRIPT_TYPE);
      expect(await resourceProvider.diff(r.id, urn, olds, news), r.name).toEqual({ changes: false, replaces: [], deleteBeforeReplace: true });
      process.env.FIXTURE_EXPECTED = olds.expected;
      const read = await resourceProvider.read(r.id, urn, olds);
      expect(read.props.observed, r.name).toBe(olds.expected);
      // The old code's read gives back its own code and the URN input; the plugin's keeps neither in the state.
      expect(Object.keys(read.props), r.name).not.toContain("__provider");
      expect(Object.keys(read.props), r.name).not.toContain("progressUrn");
    }
  });

  it("its own code refreshes clean and deletes with the login the current program records", async () => {
    for (const r of checked) {
      const props = unwrap(r.outputs) as Record<string, unknown> & { connection: HostConnection; expected: string };
      const key = `-----BEGIN OPENSSH PRIVATE KEY-----\nrecorded-${r.name}\n-----END OPENSSH PRIVATE KEY-----\n`;
      const m = /^urn:pulumi:([^:]+)::([^:]+)::/.exec(r.urn)!;
      recordLogin(loginRecordFile(m[2], m[1], props.connection.host, props.connection.port), { ...props.connection, privateKey: key });
      process.env.FIXTURE_EXPECTED = props.expected;
      const provider = oldProvider(r);
      const read = (await provider.read(r.id, props)) as { props: Record<string, unknown> & { observed: string; connection: HostConnection } };
      expect(read.props.observed, r.name).toBe(props.expected);
      expect(readFileSync(path.join(scratch, "used-key"), "utf8"), r.name).toBe(key);
      expect(read.props.connection.privateKey, r.name).toBe(key);
      if (props.delete) {
        rmSync(path.join(scratch, "used-key"));
        await provider.delete(r.id, props);
        expect(readFileSync(path.join(scratch, "used-key"), "utf8"), r.name).toBe(key);
        expect(readFileSync(path.join(scratch, "stdin"), "utf8"), r.name).toContain(String(props.delete).split("\n").find((l) => l.startsWith("#!")) ?? "");
      }
    }
  });
});
