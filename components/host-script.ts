// Host scripts are real .sh files under components/scripts/ (shellcheck-clean, inputs via env). These
// pure helpers turn one into the command a remote.Command or CheckedCommand runs.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import * as path from "node:path";

/** Quotes a string for a POSIX shell. */
export function shellQuote(value: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

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
