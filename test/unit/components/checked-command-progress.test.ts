// Progress during `pulumi up`: the CheckedCommand provider forwards a script's "NAME: progress: TEXT"
// stderr lines to the engine's Log RPC as ephemeral statuses of its resource while the script still runs.
// The engine here is a gRPC stand-in serving pulumirpc.Engine on loopback; the dynamic-provider process
// gets the engine's address as its argument, which the provider reads from process.argv[2].
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkedCommandProvider as provider, progressLine } from "../../../components/checked-command";
import type { HostConnection } from "../../../components/transport";

/* eslint-disable @typescript-eslint/no-require-imports -- the generated gRPC modules have no typings */
const grpc = require("@grpc/grpc-js");
const engineRpc = require("@pulumi/pulumi/proto/engine_grpc_pb");
const { Empty } = require("google-protobuf/google/protobuf/empty_pb");
/* eslint-enable @typescript-eslint/no-require-imports */

interface Logged {
  message: string;
  urn: string;
  ephemeral: boolean;
  severity: number;
}

const scratch = mkdtempSync(path.join(tmpdir(), "rb-progress-"));
const logged: Logged[] = [];
let server: { tryShutdown(cb: () => void): void };
let address = "";
const savedArgv = process.argv[2];
const savedPath = process.env.PATH;

beforeAll(async () => {
  const s = new grpc.Server();
  s.addService(engineRpc.EngineService, {
    log(call: { request: { getMessage(): string; getUrn(): string; getEphemeral(): boolean; getSeverity(): number } }, cb: (err: null, res: unknown) => void) {
      const r = call.request;
      logged.push({ message: r.getMessage(), urn: r.getUrn(), ephemeral: r.getEphemeral(), severity: r.getSeverity() });
      cb(null, new Empty());
    },
  });
  const port: number = await new Promise((resolve, reject) => s.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err: Error | null, p: number) => (err ? reject(err) : resolve(p))));
  server = s;
  address = `127.0.0.1:${port}`;
  // A stand-in ssh: runs the script locally, as a connected ssh would.
  const bin = path.join(scratch, "bin");
  mkdirSync(bin);
  writeFileSync(path.join(bin, "ssh"), "#!/usr/bin/env bash\nexec bash -s\n");
  chmodSync(path.join(bin, "ssh"), 0o755);
  process.env.PATH = `${bin}:${savedPath}`;
});

afterAll(async () => {
  process.argv[2] = savedArgv;
  process.env.PATH = savedPath;
  await new Promise<void>((r) => server?.tryShutdown(() => r()));
  rmSync(scratch, { recursive: true, force: true });
});

const connection: HostConnection = { name: "worker-p", host: "10.9.9.9", port: 22, user: "root", privateKey: "-----BEGIN OPENSSH PRIVATE KEY-----\nx\n-----END OPENSSH PRIVATE KEY-----\n", hostKey: "ssh-ed25519 AAAA" };
const URN = "urn:pulumi:local::reprobench::reprobench:server:SglangWorker$pulumi-nodejs:dynamic:Resource::worker-a-ready";

describe("progress lines", () => {
  it("recognises NAME: progress: TEXT and nothing else", () => {
    expect(progressLine("task-images: progress: 37/89 images ready or tried")).toBe("task-images: 37/89 images ready or tried");
    expect(progressLine("server-health[qwen38-worker-a]: progress: loading, 6m12s of 45m00s budget")).toBe("server-health[qwen38-worker-a]: loading, 6m12s of 45m00s budget");
    expect(progressLine("harbor-launch: progress: 3/89 trials done, 25 running, 0 errored")).toBe("harbor-launch: 3/89 trials done, 25 running, 0 errored");
    expect(progressLine("task-images: pulled registry.sim:5000/x (attempt 1)")).toBeUndefined();
    expect(progressLine("progress: no name")).toBeUndefined();
  });

  it("reach the engine as ephemeral statuses of the resource while the script runs", async () => {
    process.argv[2] = address;
    const gate = path.join(scratch, "go-on");
    // The script says where it is, then waits (bounded) until the test has seen that line at the engine:
    // proof that the line went out while the script was still running, not with its result.
    const script = [
      'echo "server-health[qwen38-worker-a]: progress: loading, 0m30s of 5m00s budget" >&2',
      "echo 'an ordinary line' >&2",
      `for _ in $(seq 1 200); do [ -e ${gate} ] && break; sleep 0.05; done`,
      `[ -e ${gate} ] || { echo 'the engine never got the progress line' >&2; exit 7; }`,
      'echo "server-health[qwen38-worker-a]: progress: /health is 200 after 0m31s" >&2',
      "echo done",
    ].join("\n");
    const created = provider.create!({ connection, create: script, check: "echo ok", environment: {}, timeoutSeconds: 60, progressUrn: URN });
    const deadline = Date.now() + 10_000;
    while (logged.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(logged.map((l) => l.message)).toEqual(["server-health[qwen38-worker-a]: loading, 0m30s of 5m00s budget"]);
    writeFileSync(gate, "");
    const result = await created;
    expect(result.outs.stdout).toBe("done\n");
    expect(logged).toEqual([
      { message: "server-health[qwen38-worker-a]: loading, 0m30s of 5m00s budget", urn: URN, ephemeral: true, severity: 1 },
      { message: "server-health[qwen38-worker-a]: /health is 200 after 0m31s", urn: URN, ephemeral: true, severity: 1 },
    ]);
  });

  it("without an engine address (or a URN) nothing is sent and the script runs as before", async () => {
    logged.length = 0;
    process.argv[2] = "not-an-address";
    const r = await provider.create!({ connection, create: 'echo "x: progress: 1/2" >&2; echo fine', check: "echo ok", environment: {}, timeoutSeconds: 60, progressUrn: URN });
    expect(r.outs.stdout).toBe("fine\n");
    process.argv[2] = address;
    const r2 = await provider.create!({ connection, create: 'echo "x: progress: 1/2" >&2; echo fine', check: "echo ok", environment: {}, timeoutSeconds: 60 });
    expect(r2.outs.stdout).toBe("fine\n");
    expect(logged).toEqual([]);
    expect(existsSync(scratch)).toBe(true);
  });
});
