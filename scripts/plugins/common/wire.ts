// Values as the engine puts them on the wire (google.protobuf.Struct → plain JS), and back.
// The offline plugins tell the engine they accept secrets, so secret values arrive wrapped in a
// signature object and unknown values (preview only) as a sentinel string; assets and archives are
// signature objects too. These constants are fixed by the Pulumi RPC protocol.

export const SIG_KEY = "4dabf18193072939515e22adb298388d";
export const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";
export const ASSET_SIG = "c44067f5952c0a294b673a41bacd8c17";
export const ARCHIVE_SIG = "0def7320c3a5731c473e5ecbe6d01bc7";
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

export type Props = Record<string, unknown>;

/** Inputs with secret wrappers removed, plus which top-level keys held (or contained) a secret. */
export interface Decoded {
  values: Props;
  secretKeys: Set<string>;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function isSecretWrapper(v: unknown): v is { value?: unknown } {
  return isObject(v) && v[SIG_KEY] === SECRET_SIG;
}

export function wrapSecret(value: unknown): Props {
  return { [SIG_KEY]: SECRET_SIG, value };
}

/** Removes secret wrappers at any depth; `found` reports whether any were present. */
export function unwrapSecrets(v: unknown): { value: unknown; found: boolean } {
  if (isSecretWrapper(v)) {
    return { value: unwrapSecrets(v.value).value, found: true };
  }
  if (Array.isArray(v)) {
    let found = false;
    const value = v.map((e) => {
      const r = unwrapSecrets(e);
      found ||= r.found;
      return r.value;
    });
    return { value, found };
  }
  if (isObject(v) && v[SIG_KEY] === undefined) {
    let found = false;
    const value: Props = {};
    for (const [k, e] of Object.entries(v)) {
      const r = unwrapSecrets(e);
      found ||= r.found;
      value[k] = r.value;
    }
    return { value, found };
  }
  if (isObject(v)) {
    // An asset/archive/resource reference: its fields may still hold secrets (e.g. StringAsset text).
    const r = unwrapSecrets({ ...v, [SIG_KEY]: undefined });
    return { value: { ...(r.value as Props), [SIG_KEY]: v[SIG_KEY] }, found: r.found };
  }
  return { value: v, found: false };
}

export function decode(props: Props | undefined): Decoded {
  const values: Props = {};
  const secretKeys = new Set<string>();
  for (const [k, v] of Object.entries(props ?? {})) {
    const r = unwrapSecrets(v);
    values[k] = r.value;
    if (r.found) secretKeys.add(k);
  }
  return { values, secretKeys };
}

/** Wraps the listed top-level keys as secrets and drops undefined values (Struct cannot hold them). */
export function encode(values: Props, secretKeys: Iterable<string>): Props {
  const secret = new Set(secretKeys);
  const out: Props = {};
  for (const [k, v] of Object.entries(values)) {
    if (v === undefined) continue;
    out[k] = secret.has(k) ? wrapSecret(v) : v;
  }
  return out;
}

/** Present and known: not undefined/null, and not the preview-time unknown sentinel. */
export function isSet(v: unknown): boolean {
  return v !== undefined && v !== null && v !== UNKNOWN;
}

export function containsUnknown(v: unknown): boolean {
  if (v === UNKNOWN) return true;
  if (Array.isArray(v)) return v.some(containsUnknown);
  if (isObject(v)) return Object.values(v).some(containsUnknown);
  return false;
}

/** Structural equality of wire values (after unwrapping secrets); key order does not matter. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((e, i) => deepEqual(e, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    if (ka.length !== kb.length) return false;
    return ka.every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}

/** Every string leaf of a value (used to redact secret values from log lines). */
export function stringLeaves(v: unknown, out: string[] = []): string[] {
  if (typeof v === "string") out.push(v);
  else if (Array.isArray(v)) v.forEach((e) => stringLeaves(e, out));
  else if (isObject(v)) Object.values(v).forEach((e) => stringLeaves(e, out));
  return out;
}

/** `urn:pulumi:stack::project::parent$type::name` → type and name. */
export function parseUrn(urn: string): { type: string; name: string } {
  const parts = urn.split("::");
  if (parts.length < 4) throw new Error(`malformed resource URN "${urn}"`);
  const qualified = parts[2];
  return { type: qualified.slice(qualified.lastIndexOf("$") + 1), name: parts.slice(3).join("::") };
}
