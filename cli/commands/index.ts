// The command table: `reprobench <name>` runs commands[name]. To add a command, write one file here that
// exports `command("<name>", { summary, define(cmd), toolchain?, action })` (see command.ts; keep its
// imports light and load heavy modules inside `action`) and add one line below. The parser (cli/program.ts)
// then gives it help, `help <name>`, did-you-mean, usage errors with exit 2, and bin/reprobench's
// toolchain decision (its `toolchain(parsed)`), with nothing else to change.
import { audit } from "./audit";
import { check } from "./check";
import { compare } from "./compare";
import { config } from "./config";
import { report } from "./report";
import { resume, rerun } from "./resume";
import { validate } from "./validate";
import { pull } from "./pull";
import { logs } from "./logs";
import { pack } from "./pack";
import { status } from "./status";
import { sim } from "./sim";
import { down, preview, up } from "./stack";
import { forgetHostCommand } from "./forget-host";
import type { Command } from "./command";

export const commands: Record<string, Command> = {
  up,
  preview,
  down,
  check,
  audit,
  compare,
  config,
  report,
  resume,
  rerun,
  validate,
  pack,
  pull,
  status,
  logs,
  sim,
  "forget-host": forgetHostCommand,
};
