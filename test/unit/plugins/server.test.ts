// The plugins as the engine sees them: a child process started like the toolchain's wrapper
// (`node --import tsx/loader main.ts <engine address>`) that prints its port, then gRPC calls. A fake
// engine receives the Log RPCs, which proves command output is streamed while the command runs.
import * as grpc from "@grpc/grpc-js";
import * as engrpc from "@pulumi/pulumi/proto/engine_grpc_pb";
import * as engproto from "@pulumi/pulumi/proto/engine_pb";
import * as provrpc from "@pulumi/pulumi/proto/provider_grpc_pb";
import * as plugproto from "@pulumi/pulumi/proto/plugin_pb";
import * as provproto from "@pulumi/pulumi/proto/provider_pb";
import { ChildProcess, spawn } from "node:child_process";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as emptyproto from "google-protobuf/google/protobuf/empty_pb";
import * as structproto from "google-protobuf/google/protobuf/struct_pb";
import { SECRET_SIG, SIG_KEY } from "../../../scripts/plugins/common/wire";

const repo = path.resolve(__dirname, "../../..");
const loader = path.join(repo, "node_modules/tsx/dist/loader.mjs");

interface Plugin {
  client: provrpc.ResourceProviderClient;
  child: ChildProcess;
  stderr: () => string;
}

async function startPlugin(name: string, engineAddress: string): Promise<Plugin> {
  const child = spawn(process.execPath, ["--import", loader, path.join(repo, "scripts/plugins", name, "main.ts"), engineAddress], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (b) => (stderr += b));
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`${name} printed no port in 30 s; stderr:\n${stderr}`)), 30_000);
    child.stdout!.on("data", (b: Buffer) => {
      out += b.toString();
      const m = /^(\d+)\n/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once("exit", (code) => reject(new Error(`${name} exited ${code}; stderr:\n${stderr}`)));
  });
  const client = new provrpc.ResourceProviderClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  return { client, child, stderr: () => stderr };
}

const unary = <Req, Res>(fn: (req: Req, cb: (err: grpc.ServiceError | null, res: Res) => void) => void, req: Req) =>
  new Promise<Res>((resolve, reject) => fn(req, (err, res) => (err ? reject(err) : resolve(res))));

const engineLogs: { severity: number; message: string; urn: string }[] = [];
let engine: grpc.Server;
let engineAddress = "";
const plugins: Plugin[] = [];

beforeAll(async () => {
  engine = new grpc.Server();
  engine.addService(engrpc.EngineService, {
    log: (call: grpc.ServerUnaryCall<engproto.LogRequest, emptyproto.Empty>, cb: grpc.sendUnaryData<emptyproto.Empty>) => {
      engineLogs.push({ severity: call.request.getSeverity(), message: call.request.getMessage(), urn: call.request.getUrn() });
      cb(null, new emptyproto.Empty());
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    engine.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  engineAddress = `127.0.0.1:${port}`;
}, 60_000);

afterAll(async () => {
  for (const p of plugins) {
    p.client.close();
    if (p.child.exitCode === null) {
      const exited = new Promise((r) => p.child.once("exit", r));
      p.child.kill("SIGTERM");
      await exited;
    }
  }
  engine?.forceShutdown();
});

describe("plugin processes over gRPC", () => {
  it("random reports its SDK version, accepts secrets and returns the password as a secret", async () => {
    const p = await startPlugin("random", engineAddress);
    plugins.push(p);
    const info = await unary<emptyproto.Empty, plugproto.PluginInfo>(p.client.getPluginInfo.bind(p.client), new emptyproto.Empty());
    expect(info.getVersion()).toBe("4.21.2");

    const conf = await unary<provproto.ConfigureRequest, provproto.ConfigureResponse>(p.client.configure.bind(p.client), new provproto.ConfigureRequest().setAcceptsecrets(true).setArgs(structproto.Struct.fromJavaScript({})));
    expect(conf.getAcceptsecrets()).toBe(true);
    // The engine treats UNIMPLEMENTED CheckConfig/DiffConfig as "no provider config", which is right here.
    await expect(unary(p.client.checkConfig.bind(p.client), new provproto.CheckRequest())).rejects.toMatchObject({ code: grpc.status.UNIMPLEMENTED });

    const req = new provproto.CreateRequest()
      .setUrn("urn:pulumi:dev::proj::random:index/randomPassword:RandomPassword::pw")
      .setProperties(structproto.Struct.fromJavaScript({ length: 20 }));
    const res = await unary<provproto.CreateRequest, provproto.CreateResponse>(p.client.create.bind(p.client), req);
    const props = res.getProperties()!.toJavaScript() as Record<string, Record<string, unknown>>;
    expect(res.getId()).toBe("none");
    expect(props.result[SIG_KEY]).toBe(SECRET_SIG);
    expect(String(props.result.value)).toHaveLength(20);
  }, 60_000);

  it("random names unsupported types in the gRPC error", async () => {
    const p = plugins[0];
    const req = new provproto.CheckRequest()
      .setUrn("urn:pulumi:dev::proj::random:index/randomPet:RandomPet::pet")
      .setOlds(structproto.Struct.fromJavaScript({}))
      .setNews(structproto.Struct.fromJavaScript({}));
    await expect(unary(p.client.check.bind(p.client), req)).rejects.toThrow(/randomPet:RandomPet" is not implemented by the offline "random" plugin/);
  });

  it("command reports 1.2.1 and streams a command's output to the engine's Log RPC", async () => {
    const p = await startPlugin("command", engineAddress);
    plugins.push(p);
    const info = await unary<emptyproto.Empty, plugproto.PluginInfo>(p.client.getPluginInfo.bind(p.client), new emptyproto.Empty());
    expect(info.getVersion()).toBe("1.2.1");
    const urn = "urn:pulumi:dev::proj::command:local:Command::hello";
    const req = new provproto.CreateRequest().setUrn(urn).setProperties(structproto.Struct.fromJavaScript({ create: "echo streamed-line; echo done" }));
    const res = await unary<provproto.CreateRequest, provproto.CreateResponse>(p.client.create.bind(p.client), req);
    expect(res.getProperties()!.toJavaScript().stdout).toBe("streamed-line\ndone");
    expect(engineLogs).toEqual(expect.arrayContaining([{ severity: engproto.LogSeverity.INFO, message: "streamed-line", urn }]));
  }, 60_000);

  it("command delivers every line of a burst of output, in order, before the operation returns", async () => {
    const p = plugins[1];
    const urn = "urn:pulumi:dev::proj::command:local:Command::burst";
    const req = new provproto.CreateRequest().setUrn(urn).setProperties(structproto.Struct.fromJavaScript({ create: "seq 1 2000" }));
    await unary<provproto.CreateRequest, provproto.CreateResponse>(p.client.create.bind(p.client), req);
    const lines = engineLogs.filter((l) => l.urn === urn).flatMap((l) => l.message.split("\n"));
    expect(lines).toEqual(Array.from({ length: 2000 }, (_, i) => String(i + 1)));
  });

  it("command turns a failing command into a gRPC error carrying stderr", async () => {
    const p = plugins[1];
    const req = new provproto.CreateRequest()
      .setUrn("urn:pulumi:dev::proj::command:local:Command::bad")
      .setProperties(structproto.Struct.fromJavaScript({ create: "echo broken >&2; exit 4" }));
    await expect(unary(p.client.create.bind(p.client), req)).rejects.toThrow(/exited with status 4; stderr:\nbroken/);
  });
});
