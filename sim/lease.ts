// Process leases of test and bench instances: "pid:starttime" from /proc, alive while that process runs.
import { readFileSync } from "node:fs";

/** "pid:starttime" of a running process (starttime tells a reused pid apart), or undefined if none runs. */
export function processLease(pid: number): string | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // Field 22 (starttime), counted after the parenthesised command name, which may contain spaces.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return `${pid}:${fields[19]}`;
}

/** This process's lease. */
export function currentLease(): string {
  return processLease(process.pid) ?? `${process.pid}:?`;
}

/** Whether the process a lease label names still runs. */
export function leaseAlive(lease: string): boolean {
  const pid = Number(lease.split(":")[0]);
  return Number.isInteger(pid) && pid > 0 && processLease(pid) === lease;
}
