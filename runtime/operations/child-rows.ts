// A child table's row by name, as Frappe's has_child_permission: read with its parent document's read permission, and
// changed, added or removed by saving the parent (with its write permission), so the parent's hooks, checks, events and
// versions run as for any save of it. This file finds the row and its parent; document-operations.ts reads, child-row-writes.ts saves.
import type { Caller } from '../document/caller';
import type { DocData, Queryable } from '../db/row-store';
import { DataError, DoesNotExistError, PermissionError } from '../errors/errors';
import type { Right } from '../meta/types';
import { tableFieldsHolding } from '../permissions/child-access';
import { hasDocTypePermission, refusal } from '../permissions/doctype-permission';
import { clip } from '../query/tokenize';
import type { DocTypeBinding } from '../registry/registry';

/** Where a row lives: its parent document and the parent's Table field that holds it. */
export interface RowPlace {
  parent: DocTypeBinding;
  parentName: string;
  parentfield: string;
}

/**
 * 401/403 unless the caller has `right` on some DocType whose documents hold rows of `child`: checked before the row is
 * looked up, so a user who could reach no such row is not told which names exist.
 */
export function assertSomeParentRight(caller: Caller, child: DocTypeBinding, right: Right): void {
  const parents = caller.site.registry.all().filter((parent) => tableFieldsHolding(parent, child).length > 0);
  if (!parents.some((parent) => hasDocTypePermission(caller.user, parent.meta, right)))
    throw refusal(caller.user, `No permission to ${right} the ${child.meta.name} rows of any document`);
}

/** Where the stored row `name` of `child` lives, as `q` sees it: 404 when there is no such row of a parent here. */
export async function placeOf(
  caller: Caller,
  child: DocTypeBinding,
  name: string,
  q: Queryable,
): Promise<RowPlace> {
  const row = (await q(child.meta.tableName)
    .where('name', name)
    .first('parent', 'parenttype', 'parentfield')) as Record<string, unknown> | undefined;
  const parent = row ? caller.site.registry.get(String(row.parenttype)) : undefined;
  if (!row || !parent || !tableFieldsHolding(parent, child).includes(String(row.parentfield)))
    throw new DoesNotExistError(`${child.meta.name} ${clip(name)} not found`);
  return { parent, parentName: String(row.parent), parentfield: String(row.parentfield) };
}

/**
 * Where a new row goes, from its body's `parenttype` and `parent` (Frappe's frappe.client.insert of a child) and
 * `parentfield`, which may be left out when the parent DocType has one Table field of `child`. 400 otherwise.
 */
export function placeForNew(caller: Caller, child: DocTypeBinding, body: DocData): RowPlace {
  const { parent: parentName, parenttype, parentfield } = body;
  if (typeof parenttype !== 'string' || typeof parentName !== 'string' || parentName === '')
    throw new DataError(
      `A new ${child.meta.name} row needs parenttype and parent: the document it is added to`,
    );
  const parent = caller.site.registry.get(parenttype);
  const fields = tableFieldsHolding(parent, child);
  if (fields.length === 0) throw new DataError(`${clip(parenttype)} has no table of ${child.meta.name} rows`);
  const field = parentfield ?? (fields.length === 1 ? fields[0] : undefined);
  if (typeof field !== 'string' || !fields.includes(field))
    throw new DataError(`parentfield must be one of ${fields.join(', ')}`);
  // A Single's rows are under its one document, named as the DocType.
  if ((parent as DocTypeBinding).meta.issingle && parentName !== parenttype)
    throw new DoesNotExistError(`${parenttype} ${clip(parentName)} not found`);
  return { parent: parent as DocTypeBinding, parentName, parentfield: field };
}

/** The rows of a parent document's data under `place`'s field; 403 when the caller was not given that field. */
export function rowsAt(doc: DocData, place: RowPlace, child: DocTypeBinding): DocData[] {
  const rows = doc[place.parentfield];
  if (!Array.isArray(rows))
    throw new PermissionError(
      `No permission to read the ${child.meta.name} rows of ${place.parent.meta.name} ${place.parentName}`,
    );
  return rows as DocData[];
}

/** The row `name` among `rows`; 404 when it is not there. */
export function rowNamed(rows: DocData[], name: string, child: DocTypeBinding): DocData {
  const row = rows.find((r) => r.name === name);
  if (!row) throw new DoesNotExistError(`${child.meta.name} ${clip(name)} not found`);
  return row;
}
