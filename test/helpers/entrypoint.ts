// Runs a container's entrypoint + command the way Docker does (entrypoint argv, then the command appended)
// on this machine, with the command's program replaced by a stub that prints the argv it was exec'd with.
// Tells exactly what the server process inside the container would receive.
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";

export function execArgv(entrypoint: string[], command: string[], env: Record<string, string>): string[] {
  const dir = mkdtempSync(path.join(tmpdir(), "rb-entrypoint-"));
  try {
    const program = path.basename(command[0]);
    const stub = path.join(dir, program);
    writeFileSync(stub, `#!/bin/sh\nprintf '%s\\0' "${program}" "$@"\n`);
    chmodSync(stub, 0o755);
    const r = spawnSync(entrypoint[0], [...entrypoint.slice(1), ...command], {
      env: { PATH: `${dir}:/usr/bin:/bin`, ...env },
      encoding: "utf8",
    });
    if (r.status !== 0) throw new Error(`entrypoint exited ${r.status}: ${r.stderr}`);
    return r.stdout.split("\0").slice(0, -1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
