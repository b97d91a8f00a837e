// A site's file store (configured by FILES_PATH, `./data` by default) and the per-content lock that lets uploads of the
// same content in this process share one File URL (across processes, the store itself keeps the content once).
import type { Site } from '../site';
import { SitePlugin } from '../site';
import { LocalDiskStorage } from './local-storage';
import type { FileStorage } from './storage';

/** The site's storage backend. */
const STORAGE = new SitePlugin<FileStorage>(
  'file storage',
  (site) => new LocalDiskStorage(site.config.filesPath ?? './data'),
);

/** The storage backend of `site` (created on first use). */
export function siteStorage(site: Site): FileStorage {
  return STORAGE.of(site);
}

/** Replaces the storage backend of `site` (another backend, or a test double). */
export function setSiteStorage(site: Site, store: FileStorage): void {
  STORAGE.set(site, store);
}

const locks = new Map<string, Promise<void>>();

/**
 * Runs `work` while no other work holds `key` in this process (uploads and deletions of the same content take turns,
 * so 20 simultaneous uploads of one file store one copy, and a deletion never removes bytes a new row just shared).
 */
export async function withLock<T>(key: string, work: () => Promise<T>): Promise<T> {
  const previous = locks.get(key) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((resolve) => (release = resolve));
  const chained = previous.then(() => mine);
  locks.set(key, chained);
  await previous;
  try {
    return await work();
  } finally {
    release();
    if (locks.get(key) === chained) locks.delete(key);
  }
}
