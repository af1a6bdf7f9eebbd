// The offline command plugin's resource and function table.
import { PluginSpec } from "../common/provider";
import { localCommandHandler, localRun, remoteCommandHandler } from "./command";
import { copyFileHandler, copyToRemoteHandler } from "./copy";

export const TYPES = {
  remoteCommand: "command:remote:Command",
  localCommand: "command:local:Command",
  copyToRemote: "command:remote:CopyToRemote",
  copyFile: "command:remote:CopyFile",
} as const;

export function commandPlugin(version: string): PluginSpec {
  return {
    name: "command",
    version,
    resources: {
      [TYPES.remoteCommand]: remoteCommandHandler,
      [TYPES.localCommand]: localCommandHandler,
      [TYPES.copyToRemote]: copyToRemoteHandler,
      [TYPES.copyFile]: copyFileHandler,
    },
    invokes: { "command:local:run": localRun },
  };
}
