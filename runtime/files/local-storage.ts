// The local disk backend: public files under <root>/files, private ones under <root>/private/files, uploads in
// <root>/tmp. Content is stored once, by its SHA-256, as <root>/blobs/<hash>; every stored name is a hard link to that
// blob. The file system settles races between processes sharing the store: link() never replaces an existing file, so
// two processes storing the same content end with one blob (one copy of the bytes) whoever comes first.
import { createReadStream, mkdirSync, statSync } from 'node:fs';
import { link, rename, rm, stat, unlink } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type {
  ByteRange,
  FileStorage,
  StorageKey,
  StoredReferences,
  StoredStat,
  SweepResult,
} from './storage';
import { isSafeStoredName } from './file-names';
import { sweepLocalStore } from './local-sweep';

const HASH = /^[0-9a-f]{64}$/;

const code = (err: unknown) => (err as NodeJS.ErrnoException).code;

/** Files on the local disk below `root` (the site folder, `./data` by default). */
export class LocalDiskStorage implements FileStorage {
  /** The folders of public names, private names, blobs and temporary files (the sweep walks them). */
  readonly publicDir: string;
  readonly privateDir: string;
  readonly blobDir: string;
  readonly tmpDir: string;

  constructor(root: string) {
    this.publicDir = path.resolve(root, 'files');
    this.privateDir = path.resolve(root, 'private', 'files');
    this.blobDir = path.resolve(root, 'blobs');
    this.tmpDir = path.resolve(root, 'tmp', 'uploads');
    for (const dir of [this.publicDir, this.privateDir, this.blobDir, this.tmpDir])
      mkdirSync(dir, { recursive: true });
  }

  /** The path of `key`; a name that is not a plain base name never reaches the file system. */
  private pathOf(key: StorageKey): string {
    if (!isSafeStoredName(key.name)) throw new Error(`unsafe stored file name ${JSON.stringify(key.name)}`);
    return path.join(key.isPrivate ? this.privateDir : this.publicDir, key.name);
  }

  /** The blob of a content hash; anything but a SHA-256 hex never reaches the file system. */
  private blobOf(contentHash: string): string {
    if (!HASH.test(contentHash)) throw new Error('content hash must be a SHA-256 hex digest');
    return path.join(this.blobDir, contentHash);
  }

  async put(key: StorageKey, source: string, contentHash: string): Promise<boolean> {
    const blob = this.blobOf(contentHash);
    const target = this.pathOf(key);
    // A deletion may remove the blob between the two links: then the content is stored again (a few turns at most).
    for (let attempt = 0; attempt < 8; attempt++) {
      try {
        await link(source, blob);
      } catch (err) {
        if (code(err) !== 'EEXIST') throw err;
      }
      try {
        await link(blob, target);
        return true;
      } catch (err) {
        if (code(err) === 'ENOENT') continue;
        if (code(err) !== 'EEXIST') throw err;
        return await sameFile(target, blob);
      }
    }
    throw new Error('could not store the file: its content kept disappearing');
  }

  async get(
    key: StorageKey,
    range?: ByteRange,
  ): Promise<{ stream: ReturnType<typeof createReadStream>; stat: StoredStat } | undefined> {
    const found = await this.stat(key);
    if (!found) return undefined;
    const stream = createReadStream(this.pathOf(key), range ? { start: range.start, end: range.end } : {});
    return { stream, stat: found };
  }

  async stat(key: StorageKey): Promise<StoredStat | undefined> {
    // Synchronous on purpose: every file GET stats its file, and a stat of a local file costs about 2 us of CPU this
    // way against 20-30 us through the thread pool (fs.promises), which was the largest cost of serving a small file.
    const s = statSync(this.pathOf(key), { throwIfNoEntry: false });
    return s?.isFile() ? { size: s.size, mtime: s.mtime } : undefined;
  }

  async exists(key: StorageKey): Promise<boolean> {
    return (await this.stat(key)) !== undefined;
  }

  async delete(
    key: StorageKey,
    options: { contentHash?: string; inUse?: () => Promise<boolean> } = {},
  ): Promise<void> {
    const target = this.pathOf(key);
    // The name is moved aside (atomically), not removed, so it can be put back if a File named it meanwhile.
    const aside = path.join(this.tmpDir, `deleted-${process.pid}-${randomBytes(8).toString('hex')}`);
    try {
      await rename(target, aside);
    } catch (err) {
      if (code(err) === 'ENOENT') return;
      throw err;
    }
    if (options.inUse && (await options.inUse())) {
      try {
        await link(aside, target);
      } catch (err) {
        // EEXIST: the process that shared it has already stored it again.
        if (code(err) !== 'EEXIST') throw err;
      }
      await rm(aside, { force: true });
      return;
    }
    await rm(aside, { force: true });
    const blob =
      options.contentHash && HASH.test(options.contentHash) ? this.blobOf(options.contentHash) : '';
    if (!blob) return;
    try {
      // The blob alone holds the bytes now: no stored name uses them any more.
      if ((await stat(blob)).nlink <= 1) await unlink(blob);
    } catch (err) {
      if (code(err) !== 'ENOENT') throw err;
    }
  }

  sweep(graceMs: number, references: StoredReferences): Promise<SweepResult> {
    return sweepLocalStore(this, graceMs, references, (key, contentHash) =>
      this.delete(key, {
        ...(contentHash ? { contentHash } : {}),
        inUse: async () => (await references.named([key]))[0] === true,
      }),
    );
  }

  tempDir(): string {
    return this.tmpDir;
  }
}

/** True when the two paths are the same file (one inode). */
async function sameFile(a: string, b: string): Promise<boolean> {
  try {
    const [sa, sb] = await Promise.all([stat(a), stat(b)]);
    return sa.dev === sb.dev && sa.ino === sb.ino;
  } catch (err) {
    if (code(err) === 'ENOENT') return false;
    throw err;
  }
}
