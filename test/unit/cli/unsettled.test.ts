// A command that never settles must not exit 0: the guard cli/main.ts installs, run in a child process whose
// only pending work is a promise nothing will ever resolve (the event loop empties, as it did after a stalled
// fetch in a cold `up`).
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { UNSETTLED_EXIT_CODE } from "../../../cli/unsettled";

const REPO = resolve(__dirname, "../../..");
const node = (script: string) =>
  spawnSync(process.execPath, ["--import", "tsx", "-e", script], { cwd: REPO, encoding: "utf8", timeout: 60_000 });

describe("failIfUnsettled", () => {
  it("turns an exit with the command still pending into exit 70 naming the command", () => {
    const r = node(`const { failIfUnsettled } = require("./cli/unsettled.ts"); failIfUnsettled("up"); new Promise(() => {}).then(() => process.exit(0));`);
    expect(r.status).toBe(UNSETTLED_EXIT_CODE);
    expect(r.stderr).toContain("reprobench: up stopped before it finished");
  });

  it("stays out of the way of a command that settles (its own exit code wins)", () => {
    const r = node(`const { failIfUnsettled } = require("./cli/unsettled.ts"); failIfUnsettled("audit"); Promise.resolve(3).then((c) => process.exit(c));`);
    expect(r.status).toBe(3);
    expect(r.stderr).toBe("");
  });

  it("without the guard the same pending command exits 0 (what it prevents)", () => {
    const r = node(`new Promise(() => {}).then(() => process.exit(1));`);
    expect(r.status).toBe(0);
  });
});

describe("fetchWithin", () => {
  it("keeps a process whose only work is a stalled request alive until its deadline, then fails naming the URL", () => {
    // A server that accepts and never answers, in the same child: the deadline timer is what is left.
    const r = node(`
      const { createServer } = require("node:net");
      const { fetchWithin } = require("./sim/exec.ts");
      const server = createServer(() => undefined).listen(0, "127.0.0.1", () => {
        const url = "http://127.0.0.1:" + server.address().port + "/v2/";
        server.unref();
        fetchWithin(url, {}, 1500, (res) => res.text()).then(() => process.exit(0), (err) => { console.error(String(err.message)); process.exit(3); });
      });`);
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(/no answer from http:\/\/127\.0\.0\.1:\d+\/v2\/ within 1500 ms|aborted/);
  });
});
