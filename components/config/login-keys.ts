// The key a stack that does not own its cluster logs into a host with: the owner exports logins without
// keys. No imports: the CLI reads these without loading the Pulumi SDK.

/**
 * The private key a stack that does not own the cluster (a run stack, the CLI) logs into a host with: its
 * own `sshPrivateKeys` (the host's, else "default"), else the owner's ssh.privateKeyFile as read from this
 * project, else what an owner brought up before keys left its outputs still exports; undefined: none.
 */
export function loginKeyFor(hostName: string, sources: { ownKeys?: Record<string, string>; keyFiles?: Record<string, string>; exported?: string }): string | undefined {
  const own = sources.ownKeys ?? {};
  return own[hostName] ?? own.default ?? sources.keyFiles?.[hostName] ?? (sources.exported || undefined);
}

/** Why a host has no key for a stack that does not own its cluster, and how to give it one. */
export function missingLoginKeyMessage(hostName: string, owner: string, stack?: string): string {
  const where = stack === undefined ? "" : ` --stack ${stack}`;
  return (
    `host ${hostName}: no SSH private key for this stack (stack '${owner}', which owns the cluster, exports none): ` +
    `pulumi config set${where} --secret --path 'reprobench:sshPrivateKeys.${hostName}' < KEYFILE (or sshPrivateKeys.default), ` +
    `or name the key file as hosts[].ssh.privateKeyFile in the owner's stack file`
  );
}
