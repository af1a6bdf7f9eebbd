// pulumi-resource-command, offline edition: see plugin.ts for what it implements.
import { sdkPluginVersion, serve } from "../common/serve";
import { commandPlugin } from "./plugin";

serve(commandPlugin(sdkPluginVersion("@pulumi/command"))).catch((err: unknown) => {
  console.error(`pulumi-resource-command (offline): ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});
