// pulumi-resource-random, offline edition: see resources.ts for what it implements.
import { sdkPluginVersion, serve } from "../common/serve";
import { randomPlugin } from "./resources";

serve(randomPlugin(sdkPluginVersion("@pulumi/random"))).catch((err: unknown) => {
  console.error(`pulumi-resource-random (offline): ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});
