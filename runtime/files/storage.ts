// The file storage interface: where the bytes of File documents live. The local disk backend is local-storage.ts; an
// object-storage backend implements the same four calls and nothing else changes.
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

/** The storage backend of a site's files. */
export interface FileStorage {
  /** Moves the finished temporary file `source` to `key`; false (and `source` untouched) when `key` is taken. */
  put(key: StorageKey, source: string): Promise<boolean>;
  /** A stream of the file's bytes (or of `range`), with its stat; undefined when it does not exist. */
  get(key: StorageKey, range?: ByteRange): Promise<{ stream: Readable; stat: StoredStat } | undefined>;
  /** Size and mtime, or undefined when the file does not exist. */
  stat(key: StorageKey): Promise<StoredStat | undefined>;
  /** True when a file is stored under `key`. */
  exists(key: StorageKey): Promise<boolean>;
  /** Removes the file; a missing file is not an error. */
  delete(key: StorageKey): Promise<void>;
  /** A folder for temporary upload files on the same file system as the store (so `put` can link, not copy). */
  tempDir(): string;
}
