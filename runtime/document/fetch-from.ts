// Frappe's fetch_from on the server (BaseDocument.get_invalid_links, set_fetch_from_value): with each Link or Dynamic
// Link it checks, a save copies into every field whose fetch_from is `<that link>.<source>` the linked document's
// `source`. The values come with the Link check's own read of the linked row (RowStore.linkTarget's `columns`): no
// query of its own, and none at all for a DocType without fetch_from fields. Frappe fetches with ignore_permissions and
// so does this: the Link check already tells the writer the document exists, and what it fetches is what the DocType's
// author chose to copy.
import type { DocData } from '../db/row-store';
import { storesValue, type FieldType } from '../meta/field-types';
import { STANDARD_FIELD_TYPES, isStandardColumn } from '../meta/types';
import type { FetchedField } from '../registry/field-lists';
import type { DocTypeBinding } from '../registry/registry';
import { fetchedValue } from './fetched-value';

/** Columns every Link check reads anyway. */
const ALWAYS_READ: ReadonlySet<string> = new Set(['name', 'docstatus']);

/** Empty as Frappe's `not value` counts it: not set, null, '' or 0. */
const isEmpty = (value: unknown) =>
  value === undefined || value === null || value === '' || value === 0 || value === false;

/**
 * The fields of `fetches` this save sets, as Frappe's get_invalid_links picks them: a fetch_if_empty field only while
 * empty; in a document (or child row) already stored and now submitted (`submitted`), only the allow_on_submit ones.
 */
export function fieldsToFetch(
  fetches: readonly FetchedField[],
  data: DocData,
  submitted: boolean,
): FetchedField[] {
  return fetches.filter(
    ({ field }) =>
      (!field.fetchIfEmpty || isEmpty(data[field.fieldname])) && (!submitted || field.allowOnSubmit),
  );
}

/** The type of `target`'s column `source`; undefined when it has none (the generator warned: nothing is fetched). */
function sourceType(target: DocTypeBinding, source: string): FieldType | undefined {
  const field = target.fieldMap.get(source);
  if (field) return storesValue(field.fieldtype) ? field.fieldtype : undefined;
  return isStandardColumn(target.meta, source)
    ? STANDARD_FIELD_TYPES[source as keyof typeof STANDARD_FIELD_TYPES]
    : undefined;
}

/** The columns of `target` the Link check reads for `fields`: each source once, none it lacks, no name or docstatus. */
export function fetchColumns(target: DocTypeBinding, fields: readonly FetchedField[]): string[] {
  const columns = new Set<string>();
  for (const { source } of fields)
    if (!ALWAYS_READ.has(source) && sourceType(target, source)) columns.add(source);
  return [...columns];
}

/**
 * Sets each of `fields` in `data` to what the linked document of `target` holds (`values`: its row as read), in the
 * form the field stores (fetchedValue: 400 naming the field when it cannot hold it). `where` prefixes a child row's
 * messages.
 */
export function setFetchedValues(
  data: DocData,
  fields: readonly FetchedField[],
  target: DocTypeBinding,
  values: DocData,
  where: string,
): void {
  for (const { field, source } of fields) {
    const type = sourceType(target, source);
    if (type) data[field.fieldname] = fetchedValue(field, type, values[source], where);
  }
}
