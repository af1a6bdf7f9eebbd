// Rules of hosts[] and their roles: unique names, addresses and SSH endpoints, pinned host keys, root's
// rights, and one router and one runner beside at least one worker.
import type { ReprobenchConfig } from "../schema";
import { hostsWithRole } from "../derive";
import { type ConfigProblem, duplicates, problem } from "../problems";

export function hostProblems(config: ReprobenchConfig): ConfigProblem[] {
  const hosts = config.hosts;
  const out = [
    ...duplicates(hosts, (h) => h.name, (i, f) =>
      problem(["hosts", i, "name"], `got ${JSON.stringify(hosts[i].name)}; expected a unique host name (hosts[${f}] has it)`)),
    ...duplicates(hosts, (h) => h.privateIp, (i, f) =>
      problem(["hosts", i, "privateIp"], `got ${JSON.stringify(hosts[i].privateIp)}; expected a unique private IP (hosts[${f}] has it)`)),
    ...duplicates(hosts, (h) => `${h.ssh.host.toLowerCase()}:${h.ssh.port}`, (i, f) =>
      problem(["hosts", i, "ssh"], `got ${hosts[i].ssh.host}:${hosts[i].ssh.port}; expected a unique SSH endpoint host:port (hosts[${f}] has it)`)),
  ];
  hosts.forEach((h, i) => {
    if (h.ssh.hostKey === undefined && h.ssh.hostKeyFile === undefined) {
      out.push(problem(["hosts", i, "ssh", "hostKey"], "missing; expected exactly one of ssh.hostKey (\"ssh-ed25519 AAAA…\") or ssh.hostKeyFile: host keys are always pinned"));
    } else if (h.ssh.hostKey !== undefined && h.ssh.hostKeyFile !== undefined) {
      out.push(problem(["hosts", i, "ssh", "hostKeyFile"], "got both ssh.hostKey and ssh.hostKeyFile; expected exactly one"));
    }
    if (h.ssh.user !== "root" && !h.ssh.sudo) {
      out.push(problem(["hosts", i, "ssh", "sudo"], `missing; the login ${JSON.stringify(h.ssh.user)} is not root, and reprobench needs root's rights on ${h.name} (daemon.json, systemd units): set hosts[${i}].ssh.sudo: true (the user has NOPASSWD sudo and is in the docker group), or log in as root`));
    } else if (h.ssh.user === "root" && h.ssh.sudo) {
      out.push(problem(["hosts", i, "ssh", "sudo"], `got true for the login "root"; expected false or unset (root needs no sudo)`));
    }
  });
  return out;
}

export function roleProblems(config: ReprobenchConfig): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  for (const role of ["router", "runner"] as const) {
    const indices = config.hosts.flatMap((h, i) => (h.roles.includes(role) ? [i] : []));
    if (role === "router" && !config.router.enabled) {
      for (const i of indices) out.push(problem(["hosts", i, "roles"], `got ${JSON.stringify(config.hosts[i].roles)}; expected no router role: router.enabled is false (Harbor talks to the worker directly)`));
      continue;
    }
    if (indices.length === 0) out.push(problem(["hosts"], `no host has the ${role} role; expected exactly one host with role ${role}`));
    for (const i of indices.slice(1)) {
      out.push(problem(["hosts", i, "roles"], `got ${JSON.stringify(config.hosts[i].roles)}; expected exactly one host with role ${role}, and ${config.hosts[indices[0]].name} (hosts[${indices[0]}]) already has it`));
    }
  }
  const workerCount = hostsWithRole(config, "worker").length;
  if (workerCount === 0) out.push(problem(["hosts"], "no host has the worker role; expected at least one worker"));
  if (!config.router.enabled && workerCount > 1) {
    out.push(problem(["router", "enabled"], `got false with ${workerCount} workers; expected one worker when the router is off (Harbor talks to a single endpoint), or router.enabled: true`));
  }
  return out;
}
