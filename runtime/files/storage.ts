// The file storage interface: where the bytes of File documents live. The local disk backend is local-storage.ts; an
// object-storage backend implements the same calls and nothing else changes.
import type { Readable } from 'node:stream';

/** Where one stored file lives: its area (public or private) and its stored name (a sanitised base name). */
export interface StorageKey {
  isPrivate: boolean;
  name: string;
}

/** Size and modification time of a stored file. */
export interface StoredStat {
  size: number;
  mtime: Date;
}

/** An inclusive byte range of a stored file. */
export interface ByteRange {
  start: number;
  end: number;
}

/** What the database says of stored content, asked by a sweep (each answer aligned with what it was given). */
export interface StoredReferences {
  /** For each key: whether a File row's URL names it. */
  named(keys: readonly StorageKey[]): Promise<boolean[]>;
  /** For each content hash (SHA-256 hex): whether a File row holds it. */
  held(contentHashes: readonly string[]): Promise<boolean[]>;
}

/** What a sweep removed. */
export interface SweepResult {
  /** Stored names no File row named. */
  names: number;
  /** Copies of content (blobs) no File row held and no name used. */
  blobs: number;
  /** Temporary files (uploads, names set aside) left by a process that died. */
  temporary: number;
}

/** The storage backend of a site's files. */
export interface FileStorage {
  /**
   * Stores the finished temporary file `source`, whose SHA-256 (hex) is `contentHash`, under `key`. True when `key`
   * now holds these bytes (stored now, or already holding the same content, as when another process stored it a
   * moment ago); false, and nothing changed, when `key` holds other bytes. `source` is left for the caller to remove.
   * Identical content is kept once however many keys hold it, also when several processes share the store.
   */
  put(key: StorageKey, source: string, contentHash: string): Promise<boolean>;
  /** A stream of the file's bytes (or of `range`), with its stat; undefined when it does not exist. */
  get(key: StorageKey, range?: ByteRange): Promise<{ stream: Readable; stat: StoredStat } | undefined>;
  /** Size and mtime, or undefined when the file does not exist. */
  stat(key: StorageKey): Promise<StoredStat | undefined>;
  /** True when a file is stored under `key`. */
  exists(key: StorageKey): Promise<boolean>;
  /**
   * Removes the file under `key` (a missing file is not an error); its bytes go once no key holds them. `inUse`, asked
   * after the name is gone, says whether a File (of this or another process) has named it meanwhile: then the file is
   * put back, so a deletion never takes bytes from a File that another process just shared.
   */
  delete(key: StorageKey, options?: { contentHash?: string; inUse?: () => Promise<boolean> }): Promise<void>;
  /**
   * Removes what no File row accounts for and what has not changed for `graceMs`: stored names no File names, content
   * no File holds and no name uses, temporary files. An upload in flight stores its bytes before its File row commits:
   * its files changed within the grace period and stay.
   */
  sweep(graceMs: number, references: StoredReferences): Promise<SweepResult>;
  /** A folder for temporary upload files on the same file system as the store (so `put` can link, not copy). */
  tempDir(): string;
}
