// An offline Node.js language host for the Pulumi engine.
//
// The official `pulumi-language-nodejs` is a Go module that the (allowlisted) Go module proxy on
// air-gapped machines does not serve, while the engine itself (`pkg/v3`) is. This host implements the
// engine's LanguageRuntime gRPC contract with the generated stubs that ship inside @pulumi/pulumi, and
// runs programs exactly as the official host does: through @pulumi/pulumi's own `cmd/run` entry point,
// with config passed in PULUMI_CONFIG / PULUMI_CONFIG_SECRET_KEYS. Online installs use the official host.
//
// Protocol: the engine starts this executable (last positional argument = engine address), reads the
// port from the first line of stdout, then calls Handshake, GetRequiredPackages, Run, … over gRPC.
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as grpc from "@grpc/grpc-js";

/* eslint-disable @typescript-eslint/no-require-imports, @typescript-eslint/no-explicit-any -- the generated gRPC stubs are untyped CommonJS */
const languageGrpc = require("@pulumi/pulumi/proto/language_grpc_pb");
const languagePb = require("@pulumi/pulumi/proto/language_pb");
const pluginPb = require("@pulumi/pulumi/proto/plugin_pb");
const emptyPb = require("google-protobuf/google/protobuf/empty_pb");
const sdkVersion: string = require("@pulumi/pulumi/package.json").version;
/* eslint-enable @typescript-eslint/no-require-imports */

/** A provider package a program depends on, as found in node_modules. */
export interface PulumiPackage {
  name: string;
  version: string;
  server?: string;
}

interface PackageJson {
  name?: string;
  version?: string;
  dependencies?: Record<string, string>;
  pulumi?: { resource?: boolean; name?: string; version?: string; server?: string; pluginDownloadURL?: string };
}

function readPackageJson(dir: string): PackageJson | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")) as PackageJson;
  } catch {
    return undefined;
  }
}

/** Resolves a dependency's directory the way Node does: walk up node_modules from `fromDir`. */
function resolvePackageDir(name: string, fromDir: string): string | undefined {
  for (let dir = fromDir; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, "node_modules", name);
    if (fs.existsSync(path.join(candidate, "package.json"))) return candidate;
    if (path.dirname(dir) === dir) return undefined;
  }
}

/**
 * The resource plugins a program needs: every package reachable through `dependencies` from the
 * program's package.json whose package.json carries `pulumi.resource: true` (the npm SDK convention).
 */
export function requiredPackages(programDir: string): PulumiPackage[] {
  const found = new Map<string, PulumiPackage>();
  const seen = new Set<string>();
  const visit = (dir: string) => {
    const real = fs.realpathSync(dir);
    if (seen.has(real)) return;
    seen.add(real);
    const pkg = readPackageJson(dir);
    if (!pkg) return;
    if (pkg.pulumi?.resource && dir !== programDir) {
      const name = pkg.pulumi.name ?? (pkg.name ?? "").replace(/^@pulumi\//, "");
      const version = (pkg.pulumi.version ?? pkg.version ?? "").replace(/^v/, "");
      found.set(`${name}@${version}`, { name, version, server: pkg.pulumi.server ?? pkg.pulumi.pluginDownloadURL });
    }
    for (const dep of Object.keys(pkg.dependencies ?? {})) {
      const depDir = resolvePackageDir(dep, dir);
      if (depDir) visit(depDir);
    }
  };
  visit(programDir);
  return [...found.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** Runtime options from Pulumi.yaml (`runtime: {name: nodejs, options: {...}}`), as the engine sends them. */
interface RuntimeOptions {
  typescript?: boolean;
  nodeargs?: string;
}

function programInfo(info: any): { root: string; programDir: string; entryPoint: string; options: RuntimeOptions } {
  const options = (info?.getOptions()?.toJavaScript() ?? {}) as RuntimeOptions;
  return {
    root: info?.getRootDirectory() ?? process.cwd(),
    programDir: info?.getProgramDirectory() ?? process.cwd(),
    entryPoint: info?.getEntryPoint() || ".",
    options,
  };
}

/** The argv for @pulumi/pulumi's `cmd/run`, mirroring the flags it documents in its usage text. */
export function runArgs(req: {
  runScript: string;
  nodeArgs: string[];
  monitor: string;
  engine: string;
  project: string;
  stack: string;
  organization: string;
  pwd: string;
  root: string;
  dryRun: boolean;
  parallel: number;
  program: string;
  args: string[];
}): string[] {
  const argv = [...req.nodeArgs, req.runScript, `--monitor=${req.monitor}`, `--engine=${req.engine}`];
  argv.push(`--project=${req.project}`, `--stack=${req.stack}`, `--pwd=${req.pwd}`, `--root-directory=${req.root}`);
  if (req.organization) argv.push(`--organization=${req.organization}`);
  if (req.dryRun) argv.push("--dry-run");
  if (req.parallel > 0) argv.push(`--parallel=${req.parallel}`);
  argv.push(req.program, ...req.args);
  return argv;
}

// Exit code @pulumi/pulumi's runner uses after it already showed the user an actionable error.
const EXIT_ALREADY_LOGGED = 32;

function main(): void {
  const positional = process.argv.slice(2).filter((a) => !a.startsWith("-"));
  let engineAddress = positional[positional.length - 1] ?? "";
  const running = new Set<ChildProcess>();

  const unimplemented = (what: string) => (_call: unknown, callback: grpc.sendUnaryData<unknown>) =>
    callback({ code: grpc.status.UNIMPLEMENTED, details: `${what} is not implemented by the offline nodejs language host` }, null);

  const service: Record<string, unknown> = {
    handshake(call: grpc.ServerUnaryCall<any, any>, callback: grpc.sendUnaryData<unknown>) {
      engineAddress = call.request.getEngineAddress() || engineAddress;
      callback(null, new languagePb.LanguageHandshakeResponse());
    },
    getPluginInfo(_call: unknown, callback: grpc.sendUnaryData<unknown>) {
      callback(null, new pluginPb.PluginInfo().setVersion(sdkVersion));
    },
    getRequiredPackages(call: grpc.ServerUnaryCall<any, any>, callback: grpc.sendUnaryData<unknown>) {
      try {
        const { programDir } = programInfo(call.request.getInfo());
        const res = new languagePb.GetRequiredPackagesResponse();
        for (const p of requiredPackages(programDir)) {
          const dep = new pluginPb.PackageDependency().setName(p.name).setKind("resource").setVersion(p.version);
          if (p.server) dep.setServer(p.server);
          res.addPackages(dep);
        }
        callback(null, res);
      } catch (err) {
        callback({ code: grpc.status.INTERNAL, details: String(err) }, null);
      }
    },
    getRequiredPlugins(call: grpc.ServerUnaryCall<any, any>, callback: grpc.sendUnaryData<unknown>) {
      try {
        const { programDir } = programInfo(call.request.getInfo());
        const res = new languagePb.GetRequiredPluginsResponse();
        for (const p of requiredPackages(programDir)) {
          const dep = new pluginPb.PluginDependency().setName(p.name).setKind("resource").setVersion(p.version);
          if (p.server) dep.setServer(p.server);
          res.addPlugins(dep);
        }
        callback(null, res);
      } catch (err) {
        callback({ code: grpc.status.INTERNAL, details: String(err) }, null);
      }
    },
    getProgramDependencies(call: grpc.ServerUnaryCall<any, any>, callback: grpc.sendUnaryData<unknown>) {
      const { programDir } = programInfo(call.request.getInfo());
      const res = new languagePb.GetProgramDependenciesResponse();
      for (const dep of Object.keys(readPackageJson(programDir)?.dependencies ?? {})) {
        const dir = resolvePackageDir(dep, programDir);
        const version = dir ? readPackageJson(dir)?.version : undefined;
        if (version) res.addDependencies(new languagePb.DependencyInfo().setName(dep).setVersion(version));
      }
      callback(null, res);
    },
    about(_call: unknown, callback: grpc.sendUnaryData<unknown>) {
      callback(null, new languagePb.AboutResponse().setExecutable(process.execPath).setVersion(process.version));
    },
    installDependencies(call: grpc.ServerWritableStream<any, any>) {
      // Dependencies are installed by scripts/toolchain.sh (npm ci --ignore-scripts); say so rather than
      // silently running a package manager that might try to download plugins.
      const msg = "dependencies are managed by scripts/toolchain.sh (npm ci --ignore-scripts)\n";
      call.write(new languagePb.InstallDependenciesResponse().setStdout(Buffer.from(msg)));
      call.end();
    },
    run(call: grpc.ServerUnaryCall<any, any>, callback: grpc.sendUnaryData<unknown>) {
      const req = call.request;
      const { root, programDir, entryPoint, options } = programInfo(req.getInfo());
      let runScript: string;
      try {
        runScript = require.resolve("@pulumi/pulumi/cmd/run", { paths: [programDir] });
      } catch {
        callback(null, new languagePb.RunResponse().setError(
          `@pulumi/pulumi is not installed in ${programDir}; run scripts/toolchain.sh (npm ci) first`));
        return;
      }
      const config: Record<string, string> = {};
      req.getConfigMap().forEach((v: string, k: string) => (config[k] = v));
      const program = path.resolve(programDir, entryPoint);
      const argv = runArgs({
        runScript,
        nodeArgs: (options.nodeargs ?? "").split(/\s+/).filter(Boolean),
        monitor: req.getMonitorAddress(),
        engine: engineAddress,
        project: req.getProject(),
        stack: req.getStack(),
        organization: req.getOrganization(),
        pwd: req.getPwd() || programDir,
        root,
        dryRun: req.getDryrun(),
        parallel: req.getParallel(),
        program: entryPoint === "." ? "." : program,
        args: req.getArgsList(),
      });
      const env = {
        ...process.env,
        PULUMI_CONFIG: JSON.stringify(config),
        PULUMI_CONFIG_SECRET_KEYS: JSON.stringify(req.getConfigsecretkeysList()),
        PULUMI_NODEJS_TYPESCRIPT: String(options.typescript ?? true),
      };
      const child = spawn(process.execPath, argv, { cwd: req.getPwd() || programDir, env, stdio: ["ignore", "inherit", "inherit"] });
      running.add(child);
      child.on("error", (err) => {
        running.delete(child);
        callback(null, new languagePb.RunResponse().setError(`failed to start node: ${err.message}`));
      });
      child.on("exit", (code, signal) => {
        running.delete(child);
        const res = new languagePb.RunResponse();
        if (code === EXIT_ALREADY_LOGGED) res.setBail(true);
        else if (code !== 0) res.setError(`Program exited with ${signal ? `signal ${signal}` : `non-zero exit code: ${code}`}`);
        callback(null, res);
      });
    },
    cancel(_call: unknown, callback: grpc.sendUnaryData<unknown>) {
      for (const child of running) child.kill("SIGINT");
      callback(null, new emptyPb.Empty());
    },
    runPlugin: unimplemented("RunPlugin"),
    generateProgram: unimplemented("GenerateProgram"),
    generateProject: unimplemented("GenerateProject"),
    generatePackage: unimplemented("GeneratePackage"),
    pack: unimplemented("Pack"),
    link: unimplemented("Link"),
    template: unimplemented("Template"),
    runtimeOptionsPrompts(_call: unknown, callback: grpc.sendUnaryData<unknown>) {
      callback(null, new languagePb.RuntimeOptionsResponse());
    },
  };

  const server = new grpc.Server({ "grpc.max_receive_message_length": 400 * 1024 * 1024 });
  server.addService(languageGrpc.LanguageRuntimeService, service as grpc.UntypedServiceImplementation);
  server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, port) => {
    if (err) {
      console.error(`offline nodejs language host: cannot listen: ${err.message}`);
      process.exit(1);
    }
    process.stdout.write(`${port}\n`);
  });
}

if (require.main === module) main();
