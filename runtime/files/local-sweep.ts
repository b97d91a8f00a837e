// The orphan sweep of the local disk store (local-storage.ts): stored names no File row names (a process died between
// storing an upload's bytes and committing its File), blobs no name links and no File row holds, and temporary files
// a dead process left. What changed within the grace period stays: every link and unlink of a blob changes its inode's
// ctime, which all its names share, so an upload in flight (bytes linked, row not yet committed) is never removed, nor
// content another upload just shared. A blob is set aside (renamed) before it goes, and put back when a name linked it
// meanwhile (another process's upload of the same bytes).
import type { Stats } from 'node:fs';
import { link, lstat, readdir, rename, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { isSafeStoredName } from './file-names';
import type { StorageKey, StoredReferences, SweepResult } from './storage';

/** The store's folders, as local-storage.ts lays them out. */
export interface LocalStoreDirs {
  publicDir: string;
  privateDir: string;
  blobDir: string;
  tmpDir: string;
}

/** Names or blobs asked about at once (one query each). */
const CHUNK = 500;

const HASH = /^[0-9a-f]{64}$/;

const code = (err: unknown) => (err as NodeJS.ErrnoException).code;

/** The files of `dir` with their stat (links not followed); none when the folder is missing. */
async function filesOf(dir: string): Promise<{ name: string; stat: Stats }[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if (code(err) === 'ENOENT') return [];
    throw err;
  }
  const found: { name: string; stat: Stats }[] = [];
  for (const name of names) {
    const stat = await lstat(path.join(dir, name)).catch(() => undefined);
    if (stat?.isFile()) found.push({ name, stat });
  }
  return found;
}

/** Runs `ask` over `items` in chunks; the items it answered false for. */
async function unaccounted<T>(
  items: readonly T[],
  ask: (chunk: readonly T[]) => Promise<boolean[]>,
): Promise<T[]> {
  const out: T[] = [];
  for (let at = 0; at < items.length; at += CHUNK) {
    const chunk = items.slice(at, at + CHUNK);
    const answers = await ask(chunk);
    chunk.forEach((item, i) => {
      if (!answers[i]) out.push(item);
    });
  }
  return out;
}

/**
 * Sweeps the store below `dirs`: see the file header. `deleteName` removes a stored name as the store's delete does
 * (set aside, put back when a File named it meanwhile) and its blob when no other name uses it.
 */
export async function sweepLocalStore(
  dirs: LocalStoreDirs,
  graceMs: number,
  references: StoredReferences,
  deleteName: (key: StorageKey, contentHash: string | undefined) => Promise<void>,
): Promise<SweepResult> {
  const cutoff = Date.now() - graceMs;
  const settled = (stat: Stats) => Math.max(stat.mtimeMs, stat.ctimeMs) < cutoff;
  const result: SweepResult = { names: 0, blobs: 0, temporary: 0 };
  // The blob of each inode, so that a name's blob goes with it when it was the last name.
  const blobOfInode = new Map<string, string>();
  for (const { name, stat } of await filesOf(dirs.blobDir))
    if (HASH.test(name)) blobOfInode.set(`${stat.dev}:${stat.ino}`, name);

  for (const isPrivate of [false, true]) {
    const dir = isPrivate ? dirs.privateDir : dirs.publicDir;
    const old = (await filesOf(dir)).filter((f) => isSafeStoredName(f.name) && settled(f.stat));
    const keys = old.map((f) => ({ key: { isPrivate, name: f.name }, stat: f.stat }));
    for (const { key, stat } of await unaccounted(keys, (chunk) =>
      references.named(chunk.map((k) => k.key)),
    )) {
      await deleteName(key, blobOfInode.get(`${stat.dev}:${stat.ino}`));
      result.names++;
    }
  }

  // Blobs no name links (link count 1) and no File row holds.
  const loose = (await filesOf(dirs.blobDir)).filter(
    (f) => HASH.test(f.name) && f.stat.nlink <= 1 && settled(f.stat),
  );
  for (const { name } of await unaccounted(loose, (chunk) => references.held(chunk.map((f) => f.name))))
    if (await removeBlob(dirs, path.join(dirs.blobDir, name), cutoff)) result.blobs++;

  for (const { name, stat } of await filesOf(dirs.tmpDir)) {
    if (!settled(stat)) continue;
    await rm(path.join(dirs.tmpDir, name), { force: true });
    result.temporary++;
  }
  return result;
}

/**
 * Removes the blob at `blob` unless a name linked it since it was listed: it is set aside first (atomically), and put
 * back when its inode changed since `cutoff` or has another link. True when it was removed.
 */
async function removeBlob(dirs: LocalStoreDirs, blob: string, cutoff: number): Promise<boolean> {
  const aside = path.join(dirs.tmpDir, `swept-${process.pid}-${randomBytes(8).toString('hex')}`);
  try {
    await rename(blob, aside);
  } catch (err) {
    if (code(err) === 'ENOENT') return false;
    throw err;
  }
  const stat = await lstat(aside);
  // The rename itself changes the ctime: a link made meanwhile shows as a second link.
  if (stat.nlink > 1 || stat.mtimeMs >= cutoff) {
    try {
      await link(aside, blob);
    } catch (err) {
      // EEXIST: an upload stored the same bytes again meanwhile; the names linking this copy keep it.
      if (code(err) !== 'EEXIST') throw err;
    }
    await rm(aside, { force: true });
    return false;
  }
  await rm(aside, { force: true });
  return true;
}
