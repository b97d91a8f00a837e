// Document-level permission: the DocType right (if_owner rows reach only the user's own documents), the user's
// User Permissions and the controller's hasPermission hook, decided for one stored (or about to be stored) document.
import type { Caller } from '../document/caller';
import type { DocData, Queryable } from '../db/row-store';
import type { Right } from '../meta/types';
import type { DocTypeBinding } from '../registry/registry';
import { ADMINISTRATOR, type SessionUser, type Site } from '../site';
import { controllerAllows } from './controller-permission';
import { refusal } from './doctype-permission';
import { rightsFor } from './doctype-rights';
import { loadUserPermissions } from './user-permissions';

/** True when `user` may exercise `right` on the document `doc` of `binding` (`q`: the open transaction, if any). */
export async function hasDocumentPermission(
  site: Site,
  user: SessionUser,
  binding: DocTypeBinding,
  doc: Readonly<DocData>,
  right: Right,
  q?: Queryable,
): Promise<boolean> {
  if (user.name === ADMINISTRATOR) return true;
  const reach = rightsFor(user, binding.meta).doc.get(right);
  if (!reach || (reach === 'owner' && doc.owner !== user.name)) return false;
  const perms = await loadUserPermissions(site, user.name, q);
  if (!perms.allowsDoc(binding.meta, site.registry, doc as DocData)) return false;
  return controllerAllows(binding, doc, right, user);
}

/**
 * Throws unless the caller may exercise `right` on `doc`: 401 for a Guest, 403 otherwise. The document exists here;
 * a DocType the user may not use at all was refused with the same 403 before the lookup (see the README's status rule).
 * Inside a transaction pass it as `q`: on SQLite a query beside the open transaction would wait on it forever.
 */
export async function assertDocumentPermission(
  caller: Caller,
  binding: DocTypeBinding,
  doc: Readonly<DocData>,
  right: Right,
  q?: Queryable,
): Promise<void> {
  if (await hasDocumentPermission(caller.site, caller.user, binding, doc, right, q)) return;
  throw refusal(
    caller.user,
    `No permission to ${right} ${binding.meta.name} ${String(doc.name ?? '').slice(0, 140)}`.trim(),
  );
}
