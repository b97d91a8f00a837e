// Listing a child DocType's rows with `parent=<DocType>` (Frappe's get_list `parent`): the rows are read through the
// parent, so the parent DocType's read right decides (Frappe's has_child_permission), and only rows the reader could
// reach through a parent document are listed.
import { PermissionError } from '../errors/errors';
import { isTableType } from '../meta/field-types';
import { and, cond, type FilterNode } from '../query/filter-tree';
import { clip } from '../query/tokenize';
import type { DocTypeBinding } from '../registry/registry';
import type { SessionUser, Site } from '../site';
import type { QueryAccess } from '../query/reader-access';
import { queryAccess } from './query-access';

/**
 * The Table fields of `parent` that hold rows of `child`: none when `parent` is missing or is itself a child table (rows
 * are only held by documents).
 */
export function tableFieldsHolding(parent: DocTypeBinding | undefined, child: DocTypeBinding): string[] {
  if (parent === undefined || parent.meta.istable) return [];
  return parent.meta.fields
    .filter((f) => f.options === child.meta.name && isTableType(f.fieldtype))
    .map((f) => f.fieldname);
}

/**
 * The parent DocType named by `parent` for listing `child`; 403 PermissionError unless it is a DocType of the site that
 * is not itself a child table and has a Table field of `child` (Frappe: "is not a valid parent DocType").
 */
export function parentFor(site: Site, child: DocTypeBinding, parent: unknown): DocTypeBinding {
  const binding = typeof parent === 'string' ? site.registry.get(parent) : undefined;
  if (tableFieldsHolding(binding, child).length === 0)
    throw new PermissionError(`${clip(parent)} is not a valid parent DocType for ${child.meta.name}`);
  return binding as DocTypeBinding;
}

/**
 * What `user` may see of `child`'s rows listed through `parent`: 401/403 without read on the parent DocType; else the
 * fields the parent's permlevels allow, and the rows whose parenttype is the parent, under one of its Table fields of
 * `child` the user may read, of a parent document inside the user's row restriction on the parent (if_owner, User
 * Permissions, permission queries).
 */
export async function childQueryAccess(
  site: Site,
  user: SessionUser,
  child: DocTypeBinding,
  parent: DocTypeBinding,
): Promise<QueryAccess> {
  const access = await queryAccess(site, user, parent.meta, 'read');
  const tables = tableFieldsHolding(parent, child).filter((f) => access.canReadField(parent.meta, f));
  if (tables.length === 0)
    throw new PermissionError(`No permission to read the ${child.meta.name} rows of ${parent.meta.name}`);
  const parts: FilterNode[] = [cond('parenttype', '=', parent.meta.name), cond('parentfield', 'in', tables)];
  if (access.restriction)
    parts.push({ kind: 'parent', doctype: parent.meta.name, restriction: access.restriction });
  return { canReadField: access.canReadField, restriction: and(...parts) };
}
