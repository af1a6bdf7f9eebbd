// IPv4 arithmetic for Docker address pools, shared by the config rules and the daemon component.

/** Parses dotted-quad IPv4 into a 32-bit unsigned number, or null. */
export function parseIpv4(text: string): number | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  let value = 0;
  for (const part of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part)) return null;
    const octet = Number(part);
    if (octet > 255) return null;
    value = value * 256 + octet;
  }
  return value;
}

/** Parses "a.b.c.d/n" into network address and prefix; null when malformed or host bits are set. */
export function parseCidr(text: string): { network: number; prefix: number } | null {
  const match = /^([0-9.]+)\/([0-9]{1,2})$/.exec(text);
  if (!match) return null;
  const address = parseIpv4(match[1]);
  const prefix = Number(match[2]);
  if (address === null || prefix > 32) return null;
  const size = 2 ** (32 - prefix);
  if (address % size !== 0) return null;
  return { network: address, prefix };
}

/** True when the IPv4 number lies inside the CIDR. */
export function cidrContains(cidr: { network: number; prefix: number }, address: number): boolean {
  const size = 2 ** (32 - cidr.prefix);
  return address >= cidr.network && address < cidr.network + size;
}
