// Host scripts are real .sh files under components/scripts/ (shellcheck-clean, inputs via env). These
// pure helpers turn one into the command a remote.Command or CheckedCommand runs.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { remoteCommand, shellQuote } from "./transport";

/** Quotes a string for a POSIX shell: the transport's one quoting (components/transport.ts shellQuote). */
export { shellQuote };

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `export K=V` lines for a script's inputs; refuses names a shell would misread. */
export function envPrelude(env: Record<string, string>): string {
  return Object.entries(env)
    .map(([k, v]) => {
      if (!ENV_NAME.test(k)) throw new Error(`invalid environment variable name for a host script: ${JSON.stringify(k)}`);
      return `export ${k}=${shellQuote(v)}`;
    })
    .join("\n");
}

/** The text of components/scripts/<name>.sh. */
export function hostScript(name: string): string {
  return readFileSync(path.join(__dirname, "scripts", `${name}.sh`), "utf8");
}

/**
 * One command line that runs a host script with its inputs: `bash -c '<exports + script>' <name>`.
 * Inputs travel inside the command (not via SSH setenv, which sshd drops unless AcceptEnv allows it);
 * when an input is a Pulumi secret the whole command is secret in state.
 */
export function bashCommand(scriptName: string, env: Record<string, string>): string {
  return `bash -c ${shellQuote(`${envPrelude(env)}\n${hostScript(scriptName)}`)} ${scriptName}`;
}

/**
 * The command line that runs a script read from stdin with root's rights: `bash -s` for a root login,
 * `sudo -n -- bash -s` for a sudo login (no password, no terminal): the transport's one sudo form
 * (components/transport.ts remoteCommand), which CheckedCommand's provider uses too.
 */
export function rootShell(sudo: boolean | undefined): string {
  return remoteCommand(sudo === true);
}

/**
 * A remote.Command's `create` (and `stdin`) running `command` (a shell command line, e.g. bashCommand's)
 * with root's rights. A root login runs it as it is; a sudo login runs rootShell with the command on stdin,
 * so that sudo's log and `ps` show `bash -s`, never the script or its inputs.
 */
export function rootCommand(command: string, sudo: boolean | undefined): { create: string; stdin?: string } {
  return sudo ? { create: rootShell(true), stdin: `${command}\n` } : { create: command };
}

/**
 * Script text with its inputs exported first (for CheckedCommand, which sends it on stdin). Several
 * scripts run in order in one shell, e.g. the health wait then the engine's own gate.
 */
export function scriptWithEnv(scriptNames: string | string[], env: Record<string, string>): string {
  const names = Array.isArray(scriptNames) ? scriptNames : [scriptNames];
  return [envPrelude(env), ...names.map(hostScript)].join("\n");
}

/** A short stable hash of any JSON-able value: the "spec" label that tells a container is current. */
export function specHash(value: unknown): string {
  return createHash("sha256").update(JSON.stringify(value)).digest("hex").slice(0, 16);
}

/** Parses the JSON a host script prints on its last line; the error names the script. */
export function lastJsonLine<T>(stdout: string, script: string): T {
  const line = stdout.trim().split("\n").pop() ?? "";
  try {
    return JSON.parse(line) as T;
  } catch {
    throw new Error(`${script}: expected a JSON line at the end of its output, got ${JSON.stringify(line.slice(0, 200))}`);
  }
}
