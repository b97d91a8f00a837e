// Who may read a stored file: System Manager and Administrator, the File's owner, anyone who may read the document it
// is attached to; a public file anyone. Decided per File row, and for a URL by any row that names it.
import type { DocData, Queryable } from '../db/row-store';
import { hasDocumentPermission } from '../permissions/document-permission';
import { ADMINISTRATOR, type SessionUser, type Site } from '../site';

/** The File columns the access rules read. */
export const FILE_ACCESS_COLUMNS = [
  'name',
  'owner',
  'file_url',
  'is_private',
  'content_hash',
  'file_size',
  'file_type',
  'attached_to_doctype',
  'attached_to_name',
] as const;

/** True when `user` sees every file (Administrator, System Manager). */
export function seesAllFiles(user: SessionUser): boolean {
  return user.name === ADMINISTRATOR || user.roles.has('System Manager');
}

/** True when `user` may read the file of the File row `file` (`q`: the open transaction, if any). */
export async function mayReadFile(
  site: Site,
  user: SessionUser,
  file: DocData,
  q?: Queryable,
): Promise<boolean> {
  if (seesAllFiles(user) || !Number(file.is_private)) return true;
  if (user.name !== 'Guest' && file.owner === user.name) return true;
  const doctype = typeof file.attached_to_doctype === 'string' ? file.attached_to_doctype : '';
  const name = typeof file.attached_to_name === 'string' ? file.attached_to_name : '';
  const binding = doctype && name ? site.registry.get(doctype) : undefined;
  if (!binding || binding.meta.istable || binding.meta.isVirtual) return false;
  const docName = binding.meta.issingle ? binding.meta.name : name;
  const doc = q ? await site.rows.load(q, binding, docName) : await site.rows.read(binding, docName);
  return doc !== undefined && (await hasDocumentPermission(site, user, binding, doc, 'read', q));
}

/** The File rows naming `url` (at most 100). */
export async function filesWithUrl(site: Site, url: string, q?: Queryable): Promise<DocData[]> {
  return (await (q ?? site.db.knex)('tabFile')
    .where('file_url', url)
    .orderBy('creation')
    .limit(100)
    .select(...FILE_ACCESS_COLUMNS)) as DocData[];
}

/** The first File row naming `url` that `user` may read, or undefined (none exists, or none is readable). */
export async function readableFileWithUrl(
  site: Site,
  user: SessionUser,
  url: string,
  q?: Queryable,
): Promise<DocData | undefined> {
  for (const row of await filesWithUrl(site, url, q)) if (await mayReadFile(site, user, row, q)) return row;
  return undefined;
}
