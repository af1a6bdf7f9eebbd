// Typed access to decoded inputs with failures that name the property and what was expected.
import { CheckFailure } from "./provider";
import { Props, UNKNOWN, containsUnknown, deepEqual } from "./wire";

export class InputReader {
  readonly failures: CheckFailure[] = [];
  constructor(readonly values: Props, private readonly prefix = "") {}

  private fail(key: string, reason: string): undefined {
    this.failures.push({ property: this.prefix + key, reason });
    return undefined;
  }

  /** True while a value is unknown (preview): it cannot be validated yet. */
  unknown(key: string): boolean {
    return containsUnknown(this.values[key]);
  }

  string(key: string, required = false): string | undefined {
    const v = this.values[key];
    if (v === undefined || v === null) return required ? this.fail(key, "is required (a string)") : undefined;
    if (v === UNKNOWN) return undefined;
    if (typeof v !== "string") return this.fail(key, `must be a string, got ${typeof v}`);
    return v;
  }

  bool(key: string): boolean | undefined {
    const v = this.values[key];
    if (v === undefined || v === null || v === UNKNOWN) return undefined;
    if (typeof v !== "boolean") return this.fail(key, `must be a boolean, got ${JSON.stringify(v)}`);
    return v;
  }

  integer(key: string, required = false): number | undefined {
    const v = this.values[key];
    if (v === undefined || v === null) return required ? this.fail(key, "is required (an integer)") : undefined;
    if (v === UNKNOWN) return undefined;
    if (typeof v !== "number" || !Number.isSafeInteger(v)) return this.fail(key, `must be an integer, got ${JSON.stringify(v)}`);
    return v;
  }

  stringMap(key: string): Record<string, string> | undefined {
    const v = this.values[key];
    if (v === undefined || v === null || containsUnknown(v)) return undefined;
    if (typeof v !== "object" || Array.isArray(v)) return this.fail(key, "must be a map of strings");
    for (const [k, e] of Object.entries(v)) {
      if (typeof e !== "string") return this.fail(`${key}.${k}`, `must be a string, got ${typeof e}`);
    }
    return v as Record<string, string>;
  }

  oneOf<T extends string>(key: string, allowed: readonly T[]): T | undefined {
    const v = this.string(key);
    if (v === undefined) return undefined;
    if (!(allowed as readonly string[]).includes(v)) return this.fail(key, `must be one of ${allowed.join(", ")}, got "${v}"`);
    return v as T;
  }
}

/** Keys among `keys` whose values differ between old state and new inputs. */
export function changedKeys(olds: Props, news: Props, keys: Iterable<string>): string[] {
  const out: string[] = [];
  for (const k of keys) {
    if (containsUnknown(news[k]) || !deepEqual(olds[k] ?? undefined, news[k] ?? undefined)) out.push(k);
  }
  return out;
}
