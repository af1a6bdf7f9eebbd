// A login with sudo: how CheckedCommand and the remote.Commands build what they run (the script and its
// inputs only ever on stdin; the command line is one of two fixed strings), what a refusing sudo looks like,
// and host-rights.sh, the check that runs as the login before anything on any host changes.
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { checkedCommandProvider as provider, remoteInvocation } from "../../../components/checked-command";
import { bashCommand, hostScript, rootCommand, rootShell, scriptWithEnv } from "../../../components/host-script";
import type { HostConnection } from "../../../components/transport";
import { type Sshd, keyPair, sshdAvailable, startSshd } from "../../helpers/sshd";
import { rejection } from "../../helpers/rejection";

const SECRET = "sk-sudo-test-3f9a";
const scratch = mkdtempSync(path.join(tmpdir(), "rb-sudo-"));
const client = keyPair(scratch, "client");
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const root: HostConnection = { name: "worker-b", host: "10.0.0.12", port: 22, user: "root", privateKey: "k", hostKey: "ssh-ed25519 AAAA" };
const bench: HostConnection = { ...root, name: "worker-a", host: "10.0.0.11", user: "bench", sudo: true };

function state(connection: HostConnection, fields: Record<string, unknown> = {}): Record<string, unknown> & { connection: HostConnection } {
  return { connection, create: "echo created", check: "echo ok", environment: {}, spec: "", summary: [], timeoutSeconds: 30, onDrift: "replace", expected: "ok", observed: "ok", stdout: "", ...fields };
}

describe("remoteInvocation (CheckedCommand's command line and stdin)", () => {
  it("root runs `bash -s`; a sudo login `sudo -n -- bash -s`; runAs login never sudo", () => {
    expect(remoteInvocation({ connection: root }, "true").command).toBe("bash -s");
    expect(remoteInvocation({ connection: bench }, "true").command).toBe("sudo -n -- bash -s");
    expect(remoteInvocation({ connection: bench, runAs: "login" }, "true").command).toBe("bash -s");
    expect(remoteInvocation({ connection: bench, runAs: "root" }, "true").command).toBe("sudo -n -- bash -s");
  });

  it("agrees with host-script.ts rootShell, which the remote.Commands use", () => {
    expect(remoteInvocation({ connection: bench }, "true").command).toBe(rootShell(true));
    expect(remoteInvocation({ connection: root }, "true").command).toBe(rootShell(false));
  });

  it("inputs and the script go on stdin only; the marker comes first, then the exports, then set -euo pipefail", () => {
    const { command, stdin, marker } = remoteInvocation({ connection: bench, environment: { API_KEY: SECRET }, recorded: { MANIFEST_JSON: "{}" } }, "echo $API_KEY");
    expect(command).not.toContain(SECRET);
    expect(command).not.toContain("echo");
    const lines = stdin.split("\n");
    expect(lines[0]).toBe(`echo ${marker} >&2`);
    expect(lines.slice(1, 3)).toEqual(["export MANIFEST_JSON='{}'", `export API_KEY='${SECRET}'`]);
    expect(lines[3]).toBe("set -euo pipefail");
    expect(lines[4]).toBe("echo $API_KEY");
  });
});

describe("rootCommand (benchmark-run's remote.Commands)", () => {
  const preflight = bashCommand("harbor-preflight", { VENV: "/v", RUN_DIR: "/r", JOB_CONFIG_YAML: "agents: []" });

  it("a root login runs the command line as it always did (no stdin: no diff for root stacks)", () => {
    expect(rootCommand(preflight, false)).toEqual({ create: preflight });
    expect(rootCommand(preflight, undefined)).toEqual({ create: preflight });
  });

  it("a sudo login runs `sudo -n -- bash -s` with the command on stdin: the script never reaches sudo's argv or log", () => {
    const r = rootCommand(preflight, true);
    expect(r.create).toBe("sudo -n -- bash -s");
    expect(r.stdin).toBe(`${preflight}\n`);
    expect(r.create).not.toContain("agents");
  });

  it("the stdin form runs the same script: bash -s executing it prints what the command prints", () => {
    const command = `bash -c ${"'printf \"%s|%s\" \"$0\" \"$X\"'"} name`;
    const direct = spawnSync("bash", ["-c", `X=1; export X; ${command}`], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    const viaStdin = spawnSync("bash", ["-s"], { input: `export X=1\n${rootCommand(command, true).stdin}`, encoding: "utf8" });
    expect(viaStdin.stdout).toBe(direct.stdout);
    expect(viaStdin.stdout).toBe("name|1");
  });
});

describe("CheckedCommand through a stand-in ssh and a stand-in sudo", () => {
  // ssh: records its argv and runs the remote command (its last argument) with bash, stdin attached, as a
  // connected ssh would. sudo: records its argv, refuses like `sudo -n` when the flag file exists, else
  // drops `-n --` and runs the rest with SUDO_USER/SUDO_UID/SUDO_GID set, as sudo does.
  const bin = path.join(scratch, "bin");
  const sshArgv = path.join(scratch, "ssh-argv");
  const sudoArgv = path.join(scratch, "sudo-argv");
  const refuse = path.join(scratch, "sudo-refuses");
  const savedPath = process.env.PATH;
  beforeAll(() => {
    mkdirSync(bin, { recursive: true });
    writeFileSync(path.join(bin, "ssh"), `#!/usr/bin/env bash\nprintf '%s\\n' "$@" >${JSON.stringify(sshArgv)}\nexec bash -c "\${@: -1}"\n`);
    writeFileSync(
      path.join(bin, "sudo"),
      [
        "#!/usr/bin/env bash",
        `printf '%s\\n' "$@" >${JSON.stringify(sudoArgv)}`,
        `if [ -e ${JSON.stringify(refuse)} ]; then echo "sudo: a password is required" >&2; exit 1; fi`,
        '[ "$1" = -n ] && shift; [ "$1" = -- ] && shift',
        'SUDO_USER=bench SUDO_UID=1000 SUDO_GID=1001 exec "$@"',
        "",
      ].join("\n"),
    );
    chmodSync(path.join(bin, "ssh"), 0o755);
    chmodSync(path.join(bin, "sudo"), 0o755);
    process.env.PATH = `${bin}:${savedPath}`;
  });
  afterEach(() => {
    for (const f of [sshArgv, sudoArgv, refuse]) rmSync(f, { force: true });
  });
  afterAll(() => {
    process.env.PATH = savedPath;
  });
  const conn: HostConnection = { ...bench, privateKey: client.privateKey, hostKey: client.publicKey };

  it("runs the script through sudo; the secret is on neither ssh's nor sudo's command line", async () => {
    const r = await provider.create!(state(conn, { create: 'printf "%s as %s" "$(printf %s "$API_KEY" | rev)" "$SUDO_USER"', environment: { API_KEY: SECRET } }));
    // The script got the key (reversed here: stdout never shows a secret input as it is).
    expect(r.outs.stdout).toBe(`${[...SECRET].reverse().join("")} as bench`);
    const ssh = readFileSync(sshArgv, "utf8").split("\n");
    expect(ssh).toEqual(expect.arrayContaining(["-l", "bench", "sudo -n -- bash -s"]));
    expect(ssh.join(" ")).not.toContain(SECRET);
    expect(readFileSync(sudoArgv, "utf8")).toBe("-n\n--\nbash\n-s\n");
  });

  it("runAs login runs without sudo (the rights check)", async () => {
    const r = await provider.create!(state(conn, { create: 'echo "${SUDO_USER:-none}"', runAs: "login" }));
    expect(r.outs.stdout).toBe("none\n");
    expect(existsSync(sudoArgv)).toBe(false);
    expect(readFileSync(sshArgv, "utf8").split("\n")).toContain("bash -s");
  });

  it("a sudo that refuses is named as such: the host, the login, NOPASSWD, sudo's words; not 'cannot be reached'", async () => {
    writeFileSync(refuse, "");
    const message = await rejection(provider.create!(state(conn, { create: "echo never" })));
    expect(message).toContain("host worker-a (bench@10.0.0.11:22): sudo refused to run the script as root, so nothing ran");
    expect(message).toContain("needs NOPASSWD sudo there (hosts[].ssh.sudo)");
    expect(message).toContain("sudo: a password is required");
    expect(message).not.toContain("cannot be reached");
  });

  it("host-facts.sh under sudo reports the login's uid:gid (SUDO_UID/SUDO_GID), not root's", async () => {
    // Only the refresh probe (CLAIM=0): it needs no docker and writes nothing.
    const ownerFile = path.join(scratch, "owner.json");
    const check = scriptWithEnv("host-facts", { OWNER_JSON: '{"project":"p","stack":"s","token":"t"}', OWNER_FILE: ownerFile, CLAIM: "0" });
    const stubDocker = path.join(bin, "docker");
    writeFileSync(stubDocker, "#!/usr/bin/env bash\nexit 0\n");
    chmodSync(stubDocker, 0o755);
    try {
      const r = await provider.create!(state(conn, { create: "true", check }));
      expect(r.outs.observed).toBe("login=1000:1001 owner=null");
    } finally {
      rmSync(stubDocker, { force: true });
    }
  });
});

describe("host-rights.sh (as the login, with stand-in sudo and docker)", () => {
  // PATH = the stubs, then links to just the tools the script uses: the machine's own sudo and docker
  // (if any) stay out of sight.
  const bin = path.join(scratch, "rights-bin");
  const tools = path.join(scratch, "rights-tools");
  beforeAll(() => {
    mkdirSync(bin, { recursive: true });
    mkdirSync(tools, { recursive: true });
    for (const tool of ["bash", "cat", "grep", "head", "hostname", "id", "sed", "stat", "tail", "tr"]) {
      const found = spawnSync("bash", ["-c", `command -v ${tool}`], { encoding: "utf8" }).stdout.trim();
      if (!found) throw new Error(`${tool} is needed by host-rights.sh`);
      symlinkSync(found, path.join(tools, tool));
    }
  });

  function stub(name: string, body: string): void {
    writeFileSync(path.join(bin, name), `#!/usr/bin/env bash\n${body}\n`);
    chmodSync(path.join(bin, name), 0o755);
  }
  function run(env: Record<string, string>) {
    return spawnSync("bash", ["-s"], { input: hostScript("host-rights"), env: { PATH: `${bin}:${tools}`, ...env }, encoding: "utf8" });
  }

  it("with working sudo and docker: one line, exit 0", () => {
    stub("sudo", '[ "$*" = "-n -- bash -s" ] || exit 9; bash -s | sed s/^.*$/0/');
    stub("docker", "echo 26.1.5");
    const r = run({ HOST_NAME: "worker-a", SUDO: "1" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^login=\S+ root=sudo docker=ok\n$/);
  });

  it("a sudo that wants a password and a docker socket the login may not use: one message naming the host and both rights", () => {
    stub("sudo", 'cat >/dev/null; echo "sudo: a password is required" >&2; exit 1');
    stub("docker", "echo 'permission denied while trying to connect to the Docker daemon socket at unix:///var/run/docker.sock' >&2; exit 1");
    const r = run({ HOST_NAME: "worker-a", SUDO: "1" });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe("");
    const lines = r.stderr.trim().split("\n");
    expect(lines[0]).toMatch(/^host worker-a \(.+\): the SSH login \S+ lacks what reprobench needs there, so nothing was changed on any host:$/);
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatch(/^ {2}- root's rights: .*password.*NOPASSWD sudo/);
    expect(lines[2]).toMatch(/^ {2}- Docker: \S+ may not use the Docker socket \/var\/run\/docker\.sock .*usermod -aG/);
  });

  it("sudo that is not installed, and a sudo that needs a terminal, are named as such", () => {
    rmSync(path.join(bin, "sudo"), { force: true });
    stub("docker", "echo 26.1.5");
    const noSudo = run({ HOST_NAME: "worker-a", SUDO: "1" });
    expect(noSudo.status).toBe(1);
    expect(noSudo.stderr).toContain("root's rights: sudo is not installed, so");
    stub("sudo", 'cat >/dev/null; echo "sudo: sorry, you must have a tty to run sudo" >&2; exit 1');
    expect(run({ HOST_NAME: "worker-a", SUDO: "1" }).stderr).toContain("sudo wants a terminal on this host (Defaults requiretty)");
  });

  it("a login that is not root without SUDO=1 lacks root's rights; root without sudo needs none", () => {
    stub("docker", "echo 26.1.5");
    stub("id", 'case "$1" in -u) echo 1000 ;; -un) echo ops ;; *) echo ops ;; esac');
    try {
      const r = run({ HOST_NAME: "worker-c", SUDO: "0" });
      expect(r.status).toBe(1);
      expect(r.stderr).toContain("root's rights: the login ops is not root and hosts[].ssh.sudo is not set");
    } finally {
      rmSync(path.join(bin, "id"), { force: true });
    }
    if (process.getuid?.() === 0) expect(run({ HOST_NAME: "worker-c", SUDO: "0" }).stdout).toBe("login=root root=login docker=ok\n");
  });
});

// scripts/test.sh runs as root and installs openssh-server and sudo: a missing prerequisite fails these
// tests, naming it, instead of skipping them.
describe("the dataset upload of a sudo login (as root, like the scripts under sudo)", () => {
  beforeAll(() => {
    if (process.getuid?.() !== 0) throw new Error("these tests run as root (as scripts/test.sh does in CI)");
  });
  const scripts = path.join(__dirname, "../../../components/scripts");
  const runScript = (name: string, env: Record<string, string>) =>
    spawnSync("bash", [path.join(scripts, name)], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env }, encoding: "utf8", timeout: 60_000 });

  it("harbor-install.sh makes UPLOADS_DIR the login's own (SUDO_UID:SUDO_GID, 0700), also when it exists already", () => {
    const dir = mkdtempSync(path.join(scratch, "install-"));
    const uploads = path.join(dir, "work", "uploads");
    mkdirSync(uploads, { recursive: true, mode: 0o755 });
    // No wheel in FIND_LINKS: the script stops after making its directories, naming the wheel.
    const env = { HARBOR_VERSION: "0.21.0", WHEEL_SHA256: "0".repeat(64), VENV: path.join(dir, "venv"), PYTHON_VERSION: "3.13", FIND_LINKS: dir, WORK_DIR: path.join(dir, "work"), JOBS_DIR: path.join(dir, "jobs"), UPLOADS_DIR: uploads };
    const r = runScript("harbor-install.sh", { ...env, SUDO_UID: "4321", SUDO_GID: "4322" });
    expect(r.stderr).toContain("not found (harbor.pipFindLinks");
    const st = statSync(uploads);
    expect([st.uid, st.gid, st.mode & 0o777]).toEqual([4321, 4322, 0o700]);
    // A root login keeps it root's.
    runScript("harbor-install.sh", env);
    expect(statSync(uploads).uid).toBe(0);
  });

  it("harbor-dataset.sh copies the login's upload in owned by root", () => {
    const dir = mkdtempSync(path.join(scratch, "dataset-"));
    const upload = path.join(dir, "upload");
    execFileSync("cp", ["-a", path.join(__dirname, "../../../sim/dataset"), upload]);
    execFileSync("chown", ["-R", "4321:4322", upload]);
    const r = runScript("harbor-dataset.sh", { UPLOAD_DIR: upload, DATASET_DIR: path.join(dir, "ds"), TASKS_DIR: path.join(dir, "ds"), EXPECTED_COUNT: "3" });
    expect(r.status, r.stderr).toBe(0);
    const owners = execFileSync("find", [path.join(dir, "ds"), "-printf", "%u:%g\\n"], { encoding: "utf8" }).trim().split("\n");
    expect(new Set(owners)).toEqual(new Set(["root:root"]));
  });
});

describe("against a real sshd and a real sudo on loopback", () => {
  beforeAll(() => {
    if (!sshdAvailable() || !existsSync("/usr/bin/sudo")) throw new Error("needs /usr/sbin/sshd and /usr/bin/sudo (scripts/test.sh installs openssh-server and sudo)");
  });
  // The harness logs in as the test's own user (root here), for whom sudo needs no password: what this
  // shows is that the real sudo hands the script on stdin to bash and the inputs arrive, with the fixed
  // command line; the refusals of a real unprivileged user are the integration test's (test/integration/nonroot.test.ts).
  let sshd: Sshd;
  beforeAll(async () => {
    sshd = await startSshd();
  });
  afterAll(async () => {
    await sshd?.stop();
  });
  const conn = (): HostConnection => ({ name: "worker-s", host: "127.0.0.1", port: sshd.port, user: sshd.user, privateKey: sshd.clientKey, hostKey: sshd.hostKey, sudo: true });

  it("create runs the script as root through sudo -n, with its inputs", async () => {
    const created = await provider.create!(state(conn(), { create: 'echo "$(id -u) $SUDO_USER ${#API_KEY}"', check: "echo checked", environment: { API_KEY: SECRET } }));
    expect(created.outs.stdout).toBe(`0 ${sshd.user} ${SECRET.length}\n`);
    expect(created.outs.observed).toBe("checked");
  });

  it("host-rights.sh as the login passes (sudo -n works, the Docker socket answers or is named)", async () => {
    const script = scriptWithEnv("host-rights", { HOST_NAME: "worker-s", SUDO: "1" });
    const outcome = await provider.create!(state(conn(), { create: script, check: script, runAs: "login" })).then(
      (r) => String(r.outs.stdout),
      (e: Error) => e.message,
    );
    // dockerd may not run where the unit tests run: then the only missing right is Docker's.
    expect(outcome).toMatch(/^login=\S+ root=sudo docker=ok\n$|- Docker: the engine does not answer/);
    expect(outcome).not.toContain("root's rights");
  });
});
