// Hot-path reads of committed documents, through the site's row store (db/row-store.ts), remembered on MariaDB and PostgreSQL while
// their tables are unchanged (result-cache.ts: a change stamp read after the request asked, shared by a turn's requests).
import { documentCacheOf } from './result-cache';
import type { DocTypeBinding } from '../registry/registry';
import type { Site } from '../site';
import type { DocData } from '../db/row-store';

/**
 * Reads one committed document with its child rows, outside any transaction; undefined when it does not exist. The
 * answer is the caller's own (a copy when remembered), unless `shared`: then it may be the remembered document itself,
 * which the caller must not change (it answers a copy, as serializeDoc makes). Permissions are the caller's to apply.
 */
export async function readDoc(
  site: Site,
  binding: DocTypeBinding,
  name: string,
  shared = false,
): Promise<DocData | undefined> {
  const cache = binding.meta.issingle ? undefined : documentCacheOf(site);
  if (!cache) return site.rows.read(binding, name);
  return cache.document(binding, site.registry, name, () => site.rows.read(binding, name), shared);
}
