// Hot-path reads: on SQLite, cached prepared statements on the read connection; on MariaDB, knex.
import type { DocTypeBinding } from '../registry/registry';
import type { Site } from '../site';
import { loadDoc, readDocOn, type DocData } from './store';

/** Reads one committed document with its child rows, outside any transaction; undefined when it does not exist. */
export async function readDoc(
  site: Site,
  binding: DocTypeBinding,
  name: string,
): Promise<DocData | undefined> {
  const { readConnection } = site.db;
  if (!readConnection || binding.meta.issingle) return loadDoc(site.db.knex, binding, site.registry, name);
  return readDocOn(readConnection(), binding, site.registry, name);
}
