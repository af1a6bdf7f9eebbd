import { audit } from "./audit";
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
// The subcommand table. Each entry lives in its own file; keep one import and one line per command.

export const commands: Record<string, Command> = {
  up,
  preview,
  down,
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
