// Process entry shared by the offline plugins: the engine starts `pulumi-resource-<name> [flags] <engine
// address>`, reads the gRPC port from the first stdout line, and talks ResourceProvider to it.
import { main } from "@pulumi/pulumi/provider";
import { EngineLog, LogSink, MemoryLog } from "./engine-log";
import { PluginSpec, makeProvider } from "./provider";

/** The engine address among the plugin's arguments (flags such as -v=9 or --tracing X are skipped). */
export function engineAddressFromArgs(args: string[]): string | undefined {
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--logtostderr" || a.startsWith("-v=")) continue;
    if (a === "--tracing") {
      i++;
      continue;
    }
    rest.push(a);
  }
  return rest[0];
}

export async function serve(spec: PluginSpec, args: string[] = process.argv.slice(2)): Promise<void> {
  const engine = engineAddressFromArgs(args);
  const sink: LogSink = engine ? new EngineLog(engine) : new MemoryLog();
  await main(makeProvider(spec, sink), args);
}

/** The provider version the npm SDK requests, so the engine's exact-version match succeeds. */
export function sdkPluginVersion(pkg: string): string {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const meta = require(`${pkg}/package.json`) as { pulumi?: { version?: string } };
  const v = meta.pulumi?.version;
  if (!v) throw new Error(`${pkg}/package.json has no pulumi.version; cannot tell which provider version to report`);
  return v.replace(/^v/, "");
}
