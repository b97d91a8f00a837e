// What a user may see of a DocType in list-shaped queries: which fields, and which rows (a filter tree ANDed to
// every query). The query engine asks this module; the permission engine decides the answer.
import type { DocTypeMeta, Right } from '../meta/types';
import type { FilterNode } from '../query/filter-tree';
import type { Site, SessionUser } from '../site';
import { assertDocTypePermission } from './doctype-permission';

/** The access a user has to one DocType for one right. */
export interface QueryAccess {
  /** True when the user may read (see, filter, sort and group by) the field of `meta` (the DocType or a child DocType). */
  canReadField(meta: DocTypeMeta, fieldname: string): boolean;
  /** Rows outside this tree are invisible to the user (if_owner, User Permissions, controller restrictions); undefined: no restriction. */
  restriction?: FilterNode;
}

const ALL_FIELDS: QueryAccess = { canReadField: () => true };

/**
 * Decides the access of `user` to `meta` for `right` (default `read`): throws 401/403 when the user may not use the
 * DocType at all, otherwise returns the fields and rows the user may reach.
 * Interim: DocType-level rule only; the permission engine adds permlevels and row restrictions.
 */
export async function queryAccess(_site: Site, user: SessionUser, meta: DocTypeMeta, right: Right = 'read'): Promise<QueryAccess> {
  assertDocTypePermission(user, meta, right);
  return ALL_FIELDS;
}
