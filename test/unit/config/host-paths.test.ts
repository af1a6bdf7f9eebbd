// Paths on the hosts (hostPath/ownedDir in components/config/schema.ts): absolute, no newline, no '.'/'..'
// component; the directories reprobench replaces and removes (toolBundle.hostDir, harbor.venv,
// harbor.datasetDir) also at least two levels deep. Each problem names its key.
import { describe, expect, it } from "vitest";
import { formatProblems, parseConfig } from "../../../components/config";
import { minimalRealConfig } from "./helpers";

function problems(section: string, key: string, value: unknown): string {
  const r = parseConfig({ ...minimalRealConfig(), [section]: { [key]: value } });
  return r.ok ? "" : formatProblems(r.problems);
}
/** The printed problem line for the key: `reprobench:<section>.<key>: got <value>; expected …`. */
const line = (section: string, key: string, expected: string) => new RegExp(`^reprobench:${section}\\.${key}: got .*; ${expected.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`, "m");

describe("host paths in the stack config", () => {
  it.each([
    ["toolBundle", "hostDir"],
    ["toolBundle", "mountPath"],
    ["harbor", "venv"],
    ["harbor", "workDir"],
    ["harbor", "jobsDir"],
    ["harbor", "datasetDir"],
    ["docker", "daemonConfigPath"],
  ])("%s.%s: relative, '..', '.' and newline are refused, naming the key", (section, key) => {
    expect(problems(section, key, "var/lib/x")).toMatch(line(section, key, "expected an absolute path on the host (starting with '/', no newline)"));
    expect(problems(section, key, "/var/lib/x\n/etc")).toMatch(line(section, key, "expected an absolute path on the host"));
    expect(problems(section, key, "/var/lib/reprobench/../../etc")).toMatch(line(section, key, "expected a path without '.' or '..' components"));
    expect(problems(section, key, "/var/lib/./x")).toMatch(line(section, key, "expected a path without '.' or '..' components"));
    // Characters a shell would act on are data: paths reach the scripts as inputs, quoted.
    expect(problems(section, key, "/var/lib/reprobench/x $(id) 'y'")).toBe("");
  });

  it.each([
    ["toolBundle", "hostDir"],
    ["harbor", "venv"],
    ["harbor", "datasetDir"],
  ])("%s.%s (removed as a whole by reprobench): '/', a top-level directory and a trailing '/' are refused", (section, key) => {
    for (const bad of ["/", "/opt", "/var/lib/reprobench/"]) {
      expect(problems(section, key, bad), bad).toMatch(line(section, key, "expected a directory of its own at least two levels deep"));
    }
    expect(problems(section, key, "/srv/reprobench-x")).toBe("");
  });
});
