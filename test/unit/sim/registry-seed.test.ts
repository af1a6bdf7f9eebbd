// A new instance's registry storage seeded from another's: blobs are the same files (hard links), every
// repository file is a copy (a tag rewritten on one instance stays as it was on the other), unfinished
// uploads stay behind, and a storage that has content, or no seed at all, is left alone.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { hasRepositories, seedRegistryStorage, STORAGE_ROOT } from "../../../sim/registry-seed";

let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), "reprobench-regseed-"));
  dirs.push(d);
  return d;
}
function put(root: string, rel: string, text: string): string {
  const file = join(root, STORAGE_ROOT, rel);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
}
const BLOB = "blobs/sha256/aa/aaaa/data";
const TAG = "repositories/reprobench/task-base/_manifests/tags/latest/current/link";
const UPLOAD = "repositories/reprobench/task-base/_uploads/1234/data";

function seedStorage(parent: string): string {
  const seed = join(parent, "default");
  put(seed, BLOB, "layer bytes");
  put(seed, TAG, "sha256:aaaa");
  put(seed, UPLOAD, "half an upload");
  return seed;
}

describe("seedRegistryStorage", () => {
  it("links the blobs, copies the repositories without unfinished uploads", async () => {
    const parent = tmp();
    const seed = seedStorage(parent);
    const dest = join(parent, "cluster");
    expect(await seedRegistryStorage(dest, [seed])).toBe(seed);
    expect(statSync(join(dest, STORAGE_ROOT, BLOB)).ino).toBe(statSync(join(seed, STORAGE_ROOT, BLOB)).ino);
    expect(statSync(join(dest, STORAGE_ROOT, TAG)).ino).not.toBe(statSync(join(seed, STORAGE_ROOT, TAG)).ino);
    expect(existsSync(join(dest, STORAGE_ROOT, UPLOAD))).toBe(false);
    // A push to the new instance rewrites its tag in place: the seed's tag stays.
    writeFileSync(join(dest, STORAGE_ROOT, TAG), "sha256:bbbb");
    expect(readFileSync(join(seed, STORAGE_ROOT, TAG), "utf8")).toBe("sha256:aaaa");
    expect(await hasRepositories(dest)).toBe(true);
  });

  it("takes the first candidate with repositories, skipping itself and empty ones; an empty dest dir is filled", async () => {
    const parent = tmp();
    const empty = join(parent, "aaa-empty");
    mkdirSync(empty);
    const seed = seedStorage(parent);
    const dest = join(parent, "status");
    mkdirSync(dest);
    expect(await seedRegistryStorage(dest, [dest, empty, seed])).toBe(seed);
    expect(readFileSync(join(dest, STORAGE_ROOT, TAG), "utf8")).toBe("sha256:aaaa");
  });

  it("leaves a storage with content alone, and does nothing without a seed", async () => {
    const parent = tmp();
    const seed = seedStorage(parent);
    const dest = join(parent, "run");
    const mine = put(dest, TAG, "sha256:mine");
    expect(await seedRegistryStorage(dest, [seed])).toBeUndefined();
    expect(readFileSync(mine, "utf8")).toBe("sha256:mine");
    const fresh = join(parent, "fresh");
    expect(await seedRegistryStorage(fresh, [join(parent, "none")])).toBeUndefined();
    expect(existsSync(fresh)).toBe(false);
  });
});

describe("seedRegistryStorage after a crashed seeding", () => {
  it("removes the staging dirs a dead seeding of the same dest left, and seeds", async () => {
    const parent = tmp();
    const seed = seedStorage(parent);
    const dest = join(parent, "run");
    mkdirSync(join(parent, "run.seeding-999999", "docker"), { recursive: true });
    expect(await seedRegistryStorage(dest, [seed])).toBe(seed);
    expect(existsSync(join(parent, "run.seeding-999999"))).toBe(false);
    expect(await hasRepositories(dest)).toBe(true);
  });
});
