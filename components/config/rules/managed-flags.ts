// Rules of extraArgs: no flag reprobench sets itself from its own keys.
import type { ReprobenchConfig } from "../schema";
import { ROUTER_MANAGED_FLAGS, SGLANG_MANAGED_FLAGS, VLLM_MANAGED_FLAGS } from "../derive";
import { type ConfigProblem, type PathPart, problem } from "../problems";

function flagName(arg: string): string {
  return arg.split("=")[0];
}

export function managedFlagProblems(config: ReprobenchConfig): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const check = (args: string[] | undefined, managed: string[], path: PathPart[]) =>
    (args ?? []).forEach((arg, i) => {
      if (managed.includes(flagName(arg))) {
        out.push(problem([...path, i], `got ${JSON.stringify(arg)}; expected a flag reprobench does not set itself (${flagName(arg)} is managed: use the ${String(path[0])} keys)`));
      }
    });
  const serverFlags = config.modelServer.engine === "vllm" ? VLLM_MANAGED_FLAGS : SGLANG_MANAGED_FLAGS;
  check(config.modelServer.extraArgs, serverFlags, ["modelServer", "extraArgs"]);
  for (const [name, override] of Object.entries(config.modelServer.overrides)) check(override.extraArgs, serverFlags, ["modelServer", "overrides", name, "extraArgs"]);
  check(config.router.extraArgs, ROUTER_MANAGED_FLAGS, ["router", "extraArgs"]);
  return out;
}
