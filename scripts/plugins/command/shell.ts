// How environment variables reach a remote command. The real provider only uses SSH `setenv`, which
// sshd silently drops unless its AcceptEnv allows the name. We send setenv too, and additionally
// prepend a POSIX-sh preamble that reads one line from the command's stdin and evals it into exports.
// Values therefore never appear in the remote argv (`ps`), in sshd logs or in our logs, and large
// values (PULUMI_COMMAND_STDOUT of a chatty command) are not limited by ARG_MAX. The user's own stdin
// follows the preamble line unchanged: `read` on a pipe consumes exactly one line.

export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const PREAMBLE_VAR = "__reprobench_env";

/** Single-quoted printf format that reproduces `value` byte for byte (octal escapes for the rest). */
export function printfLiteral(value: string): string {
  let out = "";
  for (const byte of Buffer.from(value, "utf8")) {
    const printable = byte >= 0x20 && byte < 0x7f;
    const special = byte === 0x27 /* ' */ || byte === 0x5c /* \ */ || byte === 0x25; /* % */
    out += printable && !special ? String.fromCharCode(byte) : "\\" + byte.toString(8).padStart(3, "0");
  }
  return out;
}

/** One line of shell that exports every variable; trailing newlines in values survive (`x` guard). */
export function envLine(env: Record<string, string>): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(env)) {
    if (!ENV_NAME.test(k)) throw new Error(`environment variable name "${k}" is not a valid shell identifier`);
    if (v.includes("\0")) throw new Error(`environment variable ${k} contains a NUL byte, which no environment can hold`);
    parts.push(`${k}=$(printf '${printfLiteral(v)}x'); ${k}=\${${k}%x}; export ${k};`);
  }
  return parts.join(" ") + "\n";
}

/** The command line sent to sshd: the preamble (only when there is an environment) then the script. */
export function remoteCommand(script: string, env: Record<string, string>): string {
  if (Object.keys(env).length === 0) return script;
  return `IFS= read -r ${PREAMBLE_VAR} || exit 98; eval "$${PREAMBLE_VAR}"; unset ${PREAMBLE_VAR}\n${script}`;
}

/** Splits a byte stream into complete lines for logging; `end` returns any unterminated rest. */
export class LineSplitter {
  private rest = "";
  constructor(private readonly emit: (line: string) => void) {}
  push(chunk: string): void {
    const text = this.rest + chunk;
    const lines = text.split("\n");
    this.rest = lines.pop() ?? "";
    for (const l of lines) this.emit(l.replace(/\r$/, ""));
  }
  end(): void {
    if (this.rest) this.emit(this.rest);
    this.rest = "";
  }
}

/** The last `maxLines` lines (and at most `maxChars` characters) of some output, for error messages. */
export function tail(text: string, maxLines = 20, maxChars = 4000): string {
  const lines = text.replace(/\n+$/, "").split("\n");
  let out = lines.slice(-maxLines).join("\n");
  if (out.length > maxChars) out = "…" + out.slice(-maxChars);
  return out;
}
