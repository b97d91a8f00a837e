// What a user may see of a DocType in list-shaped queries: which fields, and which rows (a filter tree ANDed to
// every query). The permission engine decides it here; whoever runs a query hands it to the query engine
// (query/reader-access.ts), with `accessTo` for the DocTypes a query reaches through Links.
import type { DocTypeMeta, Right } from '../meta/types';
import { and, cond, type FilterNode } from '../query/filter-tree';
import type { AccessTo, QueryAccess } from '../query/reader-access';
import type { Site, SessionUser } from '../site';
import { ADMINISTRATOR } from '../site';
import { assertDocTypePermission } from './doctype-permission';
import { rightsFor } from './doctype-rights';
import { canReadField } from './field-levels';
import { collectListRestrictions } from './list-restrictions';
import { loadUserPermissions } from './user-permissions';

/** Administrator's access: every field but Password fields, every row. */
const ADMIN_ACCESS: QueryAccess = {
  canReadField: (meta, fieldname) =>
    meta.fields.find((f) => f.fieldname === fieldname)?.fieldtype !== 'Password',
};

/**
 * Decides the access of `user` to `meta` for `right` (default `read`): throws 401/403 when the user may not use the
 * DocType at all, otherwise returns the fields the user may read and the rows the user may reach: the owner's own
 * rows under an if_owner right, the user's User Permissions, and the list restriction providers (the controller's
 * `permissionQuery`, the Permission Query server scripts: runtime/features.ts), all ANDed.
 */
export async function queryAccess(
  site: Site,
  user: SessionUser,
  meta: DocTypeMeta,
  right: Right = 'read',
): Promise<QueryAccess> {
  assertDocTypePermission(user, meta, right);
  if (user.name === ADMINISTRATOR) return ADMIN_ACCESS;
  const rights = rightsFor(user, meta);
  const parts: FilterNode[] = [];
  if (rights.doc.get(right) === 'owner') parts.push(cond('owner', '=', user.name));
  const fromUserPermissions = (await loadUserPermissions(site, user.name)).restriction(meta);
  if (fromUserPermissions) parts.push(fromUserPermissions);
  const binding = site.registry.get(meta.name);
  if (binding) await collectListRestrictions(site, user, binding, parts);
  const access: QueryAccess = { canReadField: (m, fieldname) => canReadField(rights, m, fieldname) };
  if (parts.length) access.restriction = parts.length === 1 ? (parts[0] as FilterNode) : and(...parts);
  return access;
}

/** `user`'s read access to any DocType, for the Link targets a query reaches (queryAccess with `read`). */
export function readAccessTo(site: Site, user: SessionUser): AccessTo {
  return (meta) => queryAccess(site, user, meta, 'read');
}
