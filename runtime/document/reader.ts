// Hot-path reads of committed documents, through the site's row store (row-store.ts).
import type { DocTypeBinding } from '../registry/registry';
import type { Site } from '../site';
import type { DocData } from './store';

/** Reads one committed document with its child rows, outside any transaction; undefined when it does not exist. */
export async function readDoc(
  site: Site,
  binding: DocTypeBinding,
  name: string,
): Promise<DocData | undefined> {
  return site.rows.read(binding, name);
}
