// The Link check before the validate hooks, as Frappe's _validate_links runs before its before_validate / validate /
// before_save methods: those hooks see the links as stored and the values their fetch_from copies (fetch-from.ts). A
// Link a hook or a validateSave handler changes is checked again after them (so no hook stores a link to nothing, as
// Frappe's could); where none changed, the first check stands and a hook's own value in a fetched field is kept.
import type { Queryable, DocData, RowStore } from '../db/row-store';
import type { DocTypeMeta } from '../meta/types';
import { fieldLists, tableFields } from '../registry/field-lists';
import type { DocTypeBinding, Registry } from '../registry/registry';
import { checkLinks, type LinkCheckOptions } from './checks';
import type { Document } from './document';
import { normalizeValue } from './values';

/** Whether a document of `meta` has a Link or Dynamic Link of its own or in a child table. */
export function hasLinks(meta: DocTypeMeta, registry: Registry): boolean {
  return (
    fieldLists(meta).links.length > 0 ||
    tableFields(meta, registry).some(({ child }) => fieldLists(child.meta).links.length > 0)
  );
}

/**
 * The Link and Dynamic Link values of `data` and its child rows (a Dynamic Link's DocType is a Link to DocType, so
 * among them), with each table's row count.
 */
export function linkValues(meta: DocTypeMeta, registry: Registry, data: DocData): unknown[] {
  const values: unknown[] = [];
  const add = (of: DocTypeMeta, row: DocData) => {
    for (const field of fieldLists(of).links) values.push(row[field.fieldname]);
  };
  add(meta, data);
  for (const { field, child } of tableFields(meta, registry)) {
    if (!fieldLists(child.meta).links.length) continue;
    const rows = (data[field.fieldname] as DocData[] | undefined) ?? [];
    values.push(rows.length);
    for (const row of rows) add(child.meta, row);
  }
  return values;
}

/** Whether two linkValues differ (an unset value and null alike). */
export function linksMoved(before: readonly unknown[], after: readonly unknown[]): boolean {
  if (before.length !== after.length) return true;
  for (let i = 0; i < before.length; i++) if ((before[i] ?? null) !== (after[i] ?? null)) return true;
  return false;
}

/** Normalises the Link values of `row` in place (the check compares them as stored). */
function normalizeLinks(meta: DocTypeMeta, row: DocData): void {
  for (const field of fieldLists(meta).links)
    if (field.fieldname in row) row[field.fieldname] = normalizeValue(field, row[field.fieldname]);
}

/**
 * Checks the Links of `doc` as the client and the earlier hooks left it (checkLinks), on the document itself: the hooks
 * after it see the links as stored and the fetched values. Returns the link values checked, for the look after them.
 */
export async function checkLinksFirst(
  rows: RowStore,
  q: Queryable,
  binding: DocTypeBinding,
  registry: Registry,
  doc: Document,
  options: LinkCheckOptions,
): Promise<unknown[]> {
  const { meta } = binding;
  const data = doc as DocData;
  normalizeLinks(meta, data);
  for (const { field, child } of tableFields(meta, registry))
    for (const row of (data[field.fieldname] as DocData[] | undefined) ?? []) normalizeLinks(child.meta, row);
  await checkLinks(rows, q, binding, registry, data, options);
  return linkValues(meta, registry, data);
}
