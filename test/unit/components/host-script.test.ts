// host-script.ts turns a components/scripts/*.sh file plus its inputs into what runs on a host. The
// quoting is proven by a real bash: every tricky value must reach the script's environment unchanged.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { bashCommand, envPrelude, hostScript, scriptWithEnv, shellQuote, specHash } from "../../../components/host-script";

const REPO = resolve(__dirname, "../../..");
const scratch = mkdtempSync(join(tmpdir(), "reprobench-host-script-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Values a shell would mangle if quoting were wrong (no NUL: the environment cannot carry it). */
const TRICKY: Record<string, string> = {
  EMPTY: "",
  SPACES: "  two  spaces  ",
  SINGLE: "it's a 'quoted' word",
  ONLY_QUOTE: "'",
  QUOTE_ESCAPE: `'\\''`,
  DOUBLE: 'say "hi" \\"escaped\\"',
  DOLLAR: "$HOME ${PATH} $0 $1 $@ $$ $? ${X:-fallback}",
  SUBSHELL: `$(touch ${join(scratch, "pwned-subshell")})`,
  BACKTICK: "`touch " + join(scratch, "pwned-backtick") + "`",
  NEWLINES: "line1\nline2\n\nline4\n",
  CRLF_TAB: "a\r\nb\tc\x0bd\x1b[31m",
  UNICODE: "模型 Qwen3.8 — ünïcødé 🚀 \u200b",
  GLOB: "* ? [a-z] ~ ~root {a,b}",
  OPERATORS: "a; b && c || d | e > /dev/null < x & ( ) #not-a-comment",
  BACKSLASH: "C:\\path\\to\\file\\",
  LEADING_DASH: "-n -e --help",
  ASSIGNMENT_LIKE: "A=B C=D",
  BANG: "!! !$ !-1",
  PERCENT_URL: "http://user:p%40ss@proxy:3128/?a=1&b=2",
};

// bash sources ~/.bashrc when stdin is a socket (it assumes rshd/sshd): give it /dev/null instead.
const NO_STDIN: ["ignore", "pipe", "pipe"] = ["ignore", "pipe", "pipe"];

/** Runs bash with a clean environment and returns the environment node sees after the prelude. */
function envAfterPrelude(prelude: string): Record<string, string> {
  const script = `${prelude}\nexec ${shellQuote(process.execPath)} -e 'process.stdout.write(JSON.stringify(process.env))'`;
  const result = spawnSync("bash", ["-c", script], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, encoding: "utf8", stdio: NO_STDIN });
  expect(result.stderr).toBe("");
  expect(result.status).toBe(0);
  return JSON.parse(result.stdout) as Record<string, string>;
}

/** A fake `docker` on PATH that records its argv (NUL-separated) so a real host script can run harmlessly. */
function stubDocker(): { pathDir: string; log: string } {
  const pathDir = mkdtempSync(join(scratch, "bin-"));
  const log = join(pathDir, "docker.argv");
  writeFileSync(join(pathDir, "docker"), `#!/usr/bin/env bash\nprintf '%s\\0' "$@" >>${shellQuote(log)}\necho "id=0123456789ab running=true started=stub"\n`);
  chmodSync(join(pathDir, "docker"), 0o755);
  return { pathDir, log };
}

describe("shellQuote", () => {
  it("leaves plain words unquoted and quotes everything else", () => {
    for (const word of ["abc", "/var/lib/x.y", "http://10.0.0.11:30001", "K=V", "a,b+c%d@e", "-x"]) expect(shellQuote(word)).toBe(word);
    expect(shellQuote("")).toBe("''");
    expect(shellQuote("a b")).toBe("'a b'");
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
  });

  it.each(Object.entries(TRICKY))("%s survives one round of shell parsing byte for byte", (_name, value) => {
    const result = spawnSync("bash", ["-c", `printf '%s' ${shellQuote(value)}`], { encoding: "buffer", stdio: NO_STDIN });
    expect(result.status).toBe(0);
    expect(result.stdout.equals(Buffer.from(value, "utf8"))).toBe(true);
  });

  it("also round-trips through POSIX sh (dash), which sshd may use as the login shell", () => {
    const value = Object.values(TRICKY).join("|");
    const result = spawnSync("sh", ["-c", `printf '%s' ${shellQuote(value)}`], { encoding: "buffer", stdio: NO_STDIN });
    expect(result.stdout.equals(Buffer.from(value, "utf8"))).toBe(true);
  });
});

describe("envPrelude", () => {
  it("exports every tricky value into the script's environment byte-identical, executing nothing", () => {
    const env = envAfterPrelude(envPrelude(TRICKY));
    for (const [name, value] of Object.entries(TRICKY)) {
      expect(Buffer.from(env[name] ?? "<unset>", "utf8").equals(Buffer.from(value, "utf8")), name).toBe(true);
    }
    expect(existsSync(join(scratch, "pwned-subshell"))).toBe(false);
    expect(existsSync(join(scratch, "pwned-backtick"))).toBe(false);
  });

  it("exports (not just assigns): a child process sees the variables", () => {
    const env = envAfterPrelude(envPrelude({ ONLY_IN_PRELUDE: "visible" }));
    expect(env.ONLY_IN_PRELUDE).toBe("visible");
  });

  it("keeps the order of the inputs, one export per variable", () => {
    const prelude = envPrelude({ B: "1", A: "2", C_3: "x y" });
    expect(prelude.split("\n")).toEqual(["export B=1", "export A=2", "export C_3='x y'"]);
    expect(envPrelude({})).toBe("");
  });

  it.each(["", "1ABC", "A-B", "A B", "A=B", "$X", "A;rm", "ÉTÉ", "A\nB", "a.b"])("rejects the name %j, naming it", (name) => {
    expect(() => envPrelude({ OK: "1", [name]: "v" })).toThrow(`invalid environment variable name for a host script: ${JSON.stringify(name)}`);
  });

  it("accepts names a shell accepts", () => {
    expect(() => envPrelude({ _: "1", _a: "1", A1_b2: "1", lower: "1" })).not.toThrow();
  });
});

describe("hostScript", () => {
  it("reads components/scripts/<name>.sh verbatim", () => {
    expect(hostScript("container-started")).toBe(readFileSync(join(REPO, "components/scripts/container-started.sh"), "utf8"));
  });

  it("names the missing script in the error", () => {
    expect(() => hostScript("no-such-script")).toThrow(/no-such-script\.sh/);
  });
});

describe("bashCommand", () => {
  it("is `bash -c <prelude + script> <name>` once a shell parses it", () => {
    const env = { CONTAINER_NAME: TRICKY.SINGLE, OTHER: TRICKY.NEWLINES };
    const command = bashCommand("container-started", env);
    expect(command.startsWith("bash -c '")).toBe(true);
    expect(command.endsWith(" container-started")).toBe(true);
    // Replace the interpreter by printf to see exactly which argv the shell builds from the command line.
    const result = spawnSync("sh", ["-c", command.replace(/^bash -c /, "printf '%s\\0' ")], { encoding: "utf8", stdio: NO_STDIN });
    expect(result.status).toBe(0);
    expect(result.stdout.split("\0")).toEqual([scriptWithEnv("container-started", env), "container-started", ""]);
  });

  it("runs the real script with every tricky input delivered intact (docker stubbed)", () => {
    const { pathDir, log } = stubDocker();
    for (const value of [TRICKY.SINGLE, TRICKY.DOLLAR, TRICKY.BACKTICK, TRICKY.NEWLINES, TRICKY.UNICODE, TRICKY.OPERATORS]) {
      rmSync(log, { force: true });
      const result = spawnSync("sh", ["-c", bashCommand("container-started", { CONTAINER_NAME: value })], {
        env: { PATH: `${pathDir}:${process.env.PATH}` },
        encoding: "utf8",
        stdio: NO_STDIN,
      });
      expect(result.stderr).toBe("");
      expect(result.status).toBe(0);
      expect(result.stdout).toBe("id=0123456789ab running=true started=stub\n");
      const argv = readFileSync(log, "utf8").split("\0");
      expect(argv[argv.length - 2]).toBe(value); // container-started.sh passes "$CONTAINER_NAME" last
    }
    expect(existsSync(join(scratch, "pwned-backtick"))).toBe(false);
  });

  it("refuses a bad variable name before building anything", () => {
    expect(() => bashCommand("container-started", { "BAD-NAME": "x" })).toThrow(/"BAD-NAME"/);
  });
});

describe("scriptWithEnv", () => {
  it("is the prelude, a newline, then the script text unchanged", () => {
    const env = { CONTAINER_NAME: "qwen38-worker-a" };
    const text = scriptWithEnv("container-started", env);
    expect(text).toBe(`${envPrelude(env)}\n${hostScript("container-started")}`);
    expect(text.split("\n")[0]).toBe("export CONTAINER_NAME=qwen38-worker-a");
  });

  it("works fed on stdin to `bash -s`, as CheckedCommand sends it", () => {
    const { pathDir, log } = stubDocker();
    const value = TRICKY.NEWLINES + TRICKY.DOUBLE;
    const result = spawnSync("bash", ["-s"], {
      input: scriptWithEnv("container-started", { CONTAINER_NAME: value }),
      env: { PATH: `${pathDir}:${process.env.PATH}` },
      encoding: "utf8",
    });
    expect(result.status).toBe(0);
    const argv = readFileSync(log, "utf8").split("\0");
    expect(argv[argv.length - 2]).toBe(value);
  });

  it("lets the script's own `: ${VAR:?}` guard fail when an input is missing", () => {
    const result = spawnSync("bash", ["-s"], { input: scriptWithEnv("container-started", {}), env: { PATH: process.env.PATH }, encoding: "utf8" });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/CONTAINER_NAME/);
  });
});

describe("specHash", () => {
  it("is the first 16 hex digits of sha256 over the JSON text", () => {
    const value = { image: "lmsysorg/sglang:latest-runtime", args: ["--tp-size", "4"] };
    expect(specHash(value)).toMatch(/^[0-9a-f]{16}$/);
    expect(specHash(value)).toBe(createHash("sha256").update(JSON.stringify(value)).digest("hex").slice(0, 16));
  });

  it("is stable: equal values built separately hash the same", () => {
    const build = () => ({ image: "img:1", dockerArgs: ["--network", "host"], command: ["sglang", "serve"], user: "ssh-user" });
    expect(specHash(build())).toBe(specHash(build()));
    expect(specHash(build())).toBe(specHash(JSON.parse(JSON.stringify(build()))));
  });

  it("changes with any field, array element or element order", () => {
    const base = { image: "img:1", dockerArgs: ["--network", "host"], command: ["a", "b"], user: "ssh-user" };
    const variants = [
      { ...base, image: "img:2" },
      { ...base, dockerArgs: ["--network", "bridge"] },
      { ...base, command: ["b", "a"] },
      { ...base, command: ["a", "b", ""] },
      { ...base, user: "1000:1000" },
      { ...base, extra: true },
    ];
    const hashes = new Set([base, ...variants].map(specHash));
    expect(hashes.size).toBe(variants.length + 1);
  });

  it("tells a number from its string form", () => {
    expect(specHash({ port: 30001 })).not.toBe(specHash({ port: "30001" }));
  });
});
