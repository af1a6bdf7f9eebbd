// tool-bundle.ts: the inputs of tool-bundle.sh are seed 000's bundle (lines 293–389): where it is built,
// where containers mount it, the pinned asciinema wheel, and the canary image that proves it.
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { type ReprobenchConfig, formatProblems, parseConfig, readStackFile } from "../../../components/config";
import { envPrelude, hostScript } from "../../../components/host-script";
import { bundleScriptEnv } from "../../../components/tool-bundle";

const REPO = resolve(__dirname, "../../..");

function stack(name: "a100" | "local", edit?: (raw: Record<string, unknown>) => void): ReprobenchConfig {
  const raw = readStackFile(join(REPO, `Pulumi.${name}.yaml`));
  edit?.(raw);
  const result = parseConfig(raw, { requireSecrets: false });
  if (!result.ok) throw new Error(`Pulumi.${name}.yaml: ${formatProblems(result.problems)}`);
  return result.config;
}

const SEED_WHEEL =
  "https://files.pythonhosted.org/packages/55/72/d79812aa210d411f7659fde4bbb1d5ef0e80950ff70f98bfdc57e12787dc/asciinema-2.4.0-py3-none-any.whl";
const SEED_SHA = "249ccf108509d643ddaf38979dac48c99e9e251f597173d8553a30d7a6423104";

describe("bundleScriptEnv", () => {
  it("a100: seed 000's bundle (dir, mount, wheel + sha256, canary image)", () => {
    expect(bundleScriptEnv(stack("a100").toolBundle)).toEqual({
      TOOLS_DIR: "/var/lib/reprobench/harbor-tools-amd64",
      MOUNT_PATH: "/opt/harbor-tools",
      WHEEL_URL: SEED_WHEEL,
      WHEEL_SHA256: SEED_SHA,
      CANARY_IMAGE: "alexgshaw/regex-chess:20251031",
    });
  });

  it("local: the same wheel (same sha256) from the sim's package index, and a canary without tmux/asciinema from the sim registry", () => {
    expect(bundleScriptEnv(stack("local").toolBundle)).toEqual({
      TOOLS_DIR: "/var/lib/reprobench/harbor-tools-amd64",
      MOUNT_PATH: "/opt/harbor-tools",
      WHEEL_URL: "http://pypi.sim/files/asciinema-2.4.0-py3-none-any.whl",
      WHEEL_SHA256: SEED_SHA,
      CANARY_IMAGE: "registry.sim:5000/reprobench/task-base:latest",
    });
  });

  it("follows every toolBundle key it renders", () => {
    const t = stack("a100", (raw) => {
      raw.toolBundle = {
        hostDir: "/srv/tools",
        mountPath: "/opt/tools",
        asciinemaWheelUrl: "https://mirror.local/asciinema-2.4.0-py3-none-any.whl",
        asciinemaSha256: "A".repeat(64),
        canaryImage: "registry.local/canary:1",
      };
    }).toolBundle;
    expect(bundleScriptEnv(t)).toEqual({
      TOOLS_DIR: "/srv/tools",
      MOUNT_PATH: "/opt/tools",
      WHEEL_URL: "https://mirror.local/asciinema-2.4.0-py3-none-any.whl",
      WHEEL_SHA256: "a".repeat(64), // the schema lower-cases digests; sha256sum prints lower case
      CANARY_IMAGE: "registry.local/canary:1",
    });
  });

  it("provides every input tool-bundle.sh insists on, and they export cleanly", () => {
    const env = bundleScriptEnv(stack("a100").toolBundle);
    const required = [...hostScript("tool-bundle").matchAll(/\$\{([A-Z_][A-Z0-9_]*):\?\}/g)].map((m) => m[1]);
    expect(required.length).toBeGreaterThan(0);
    for (const name of required) expect(Object.keys(env), name).toContain(name);
    expect(() => envPrelude(env)).not.toThrow();
  });
});
