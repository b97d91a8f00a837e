// The local disk backend: public files under <root>/files, private ones under <root>/private/files, uploads in <root>/tmp.
import { createReadStream, mkdirSync } from 'node:fs';
import { link, rm, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { ByteRange, FileStorage, StorageKey, StoredStat } from './storage';
import { isSafeStoredName } from './file-names';

/** Files on the local disk below `root` (the site folder, `./data` by default). */
export class LocalDiskStorage implements FileStorage {
  private readonly publicDir: string;
  private readonly privateDir: string;
  private readonly tmpDir: string;

  constructor(root: string) {
    this.publicDir = path.resolve(root, 'files');
    this.privateDir = path.resolve(root, 'private', 'files');
    this.tmpDir = path.resolve(root, 'tmp', 'uploads');
    for (const dir of [this.publicDir, this.privateDir, this.tmpDir]) mkdirSync(dir, { recursive: true });
  }

  /** The path of `key`; a name that is not a plain base name never reaches the file system. */
  private pathOf(key: StorageKey): string {
    if (!isSafeStoredName(key.name)) throw new Error(`unsafe stored file name ${JSON.stringify(key.name)}`);
    return path.join(key.isPrivate ? this.privateDir : this.publicDir, key.name);
  }

  async put(key: StorageKey, source: string): Promise<boolean> {
    try {
      // link() never replaces an existing file: a taken name fails with EEXIST, atomically.
      await link(source, this.pathOf(key));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    }
    await unlink(source);
    return true;
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
    try {
      const s = await stat(this.pathOf(key));
      return s.isFile() ? { size: s.size, mtime: s.mtime } : undefined;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async exists(key: StorageKey): Promise<boolean> {
    return (await this.stat(key)) !== undefined;
  }

  async delete(key: StorageKey): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  tempDir(): string {
    return this.tmpDir;
  }
}
