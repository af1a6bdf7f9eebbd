// Starts test/fixtures/plugins/sshd.sh on a free loopback port and resolves once sshd reports it is
// listening (read from its stderr; no fixed sleeps). stop() kills exactly the process it started.
import { ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import * as net from "node:net";
import { tmpdir } from "node:os";
import * as path from "node:path";

export interface Sshd {
  port: number;
  dir: string;
  hostKey: string;
  /** The server's other host keys (RSA, ECDSA), in authorized_keys format. */
  rsaHostKey: string;
  ecdsaHostKey: string;
  otherHostKey: string;
  clientKey: string;
  encryptedClientKey: string;
  passphrase: string;
  log(): string;
  stop(): Promise<void>;
}

const SCRIPT = path.resolve(__dirname, "../../fixtures/plugins/sshd.sh");

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export async function startSshd(opts: { acceptEnv?: string } = {}): Promise<Sshd> {
  const dir = mkdtempSync(path.join(tmpdir(), "rb-sshd-"));
  const port = await freePort();
  const passphrase = "test-passphrase";
  const child: ChildProcess = spawn("bash", [SCRIPT], {
    env: { ...process.env, SSHD_DIR: dir, SSHD_PORT: String(port), SSHD_ACCEPT_ENV: opts.acceptEnv ?? "", SSHD_KEY_PASSPHRASE: passphrase },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sshd did not start within 20 s:\n${stderr}`)), 20_000);
    child.stderr!.on("data", (b: Buffer) => {
      stderr += b.toString();
      if (stderr.includes(`Server listening on 127.0.0.1 port ${port}`)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`sshd exited with ${code} before listening:\n${stderr}`));
    });
  });
  const read = (f: string) => readFileSync(path.join(dir, f), "utf8");
  return {
    port,
    dir,
    hostKey: read("host_ed25519.pub"),
    rsaHostKey: read("host_rsa.pub"),
    ecdsaHostKey: read("host_ecdsa.pub"),
    otherHostKey: read("other_host_ed25519.pub"),
    clientKey: read("client_ed25519"),
    encryptedClientKey: read("client_encrypted"),
    passphrase,
    log: () => stderr,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
