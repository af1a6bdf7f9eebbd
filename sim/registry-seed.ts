// A new sim instance's registry storage starts as a copy of another instance's, so that `sim up` pushes only
// the images that differ instead of compressing every one again: on a cold machine each of the test suites'
// instances pushed ~0.7 GB, and the machine's dockerd, gzipping layers, was the bottleneck of the whole run.
// Blob files are content-addressed and written once (uploads land elsewhere and are moved in), so they are
// hard links; the repositories' link files (a tag is rewritten in place by the next push) are copies, so a
// tag moved on one instance never moves on another. Unfinished uploads are not copied. A link file copied
// while a sibling rewrites it (the filesystem driver truncates, then writes) may come out empty: the
// registry then fails that tag's HEAD, and pushImages pushes the image, which rewrites the link.
// Staging dirs a crashed seeding left (<dest>.seeding-<pid>) are removed by the next seeding of that dest.
import { existsSync } from "node:fs";
import { cp, link, mkdir, readdir, rename, rm, stat } from "node:fs/promises";
import { basename, dirname, join, relative, sep } from "node:path";

/** Where the storage's content sits under a registry's cache dir (its /var/lib/docker-registry). */
export const STORAGE_ROOT = join("docker", "registry", "v2");

/** True when `dir` holds a registry storage with at least one repository. */
export async function hasRepositories(dir: string): Promise<boolean> {
  try {
    return (await readdir(join(dir, STORAGE_ROOT, "repositories"))).length > 0;
  } catch {
    return false;
  }
}

/**
 * Fills the empty or missing cache dir `dest` from the first of `candidates` that holds repositories, built
 * beside it and renamed into place (a failed copy leaves no half storage). Returns the seed used, or
 * undefined when `dest` already has content or no candidate has any.
 */
export async function seedRegistryStorage(dest: string, candidates: readonly string[]): Promise<string | undefined> {
  if (existsSync(dest) && (await readdir(dest)).length > 0) return undefined;
  let seed: string | undefined;
  for (const c of candidates) {
    if (c !== dest && (await hasRepositories(c))) {
      seed = c;
      break;
    }
  }
  if (seed === undefined) return undefined;
  const staging = `${dest}.seeding-${process.pid}`;
  const parent = dirname(dest);
  for (const stale of (await readdir(parent).catch(() => [] as string[])).filter((d) => d.startsWith(`${basename(dest)}.seeding-`))) {
    await rm(join(parent, stale), { recursive: true, force: true });
  }
  try {
    const from = join(seed, STORAGE_ROOT);
    const to = join(staging, STORAGE_ROOT);
    await cp(join(from, "repositories"), join(to, "repositories"), {
      recursive: true,
      filter: (src) => !relative(from, src).split(sep).includes("_uploads"),
    });
    const blobs = join(from, "blobs");
    if (existsSync(blobs)) {
      for (const entry of await readdir(blobs, { recursive: true })) {
        const src = join(blobs, entry);
        if (!(await stat(src)).isFile()) continue;
        const target = join(to, "blobs", entry);
        await mkdir(dirname(target), { recursive: true });
        await link(src, target);
      }
    }
    await rm(dest, { recursive: true, force: true });
    await rename(staging, dest);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return seed;
}
