// The column layout shared by exports, the import template and the importer (Frappe's Data Import template): the
// document's own fields by fieldname (`name` first), then each Table field's as `<table>.<field>`. A document takes one
// line, plus one more per child row past the first of its longest table; continuation lines leave the document's own
// cells empty.
import { DataError } from '../errors/errors';
import { FIELD_TYPE_INFO, isTableType, storesValue, type ValueKind } from '../meta/field-types';
import type { DocTypeMeta } from '../meta/types';
import type { QueryAccess } from '../query/reader-access';
import type { DocTypeBinding } from '../registry/registry';
import type { Site } from '../site';

/** One column: its header key, the Table field it belongs to (child columns), the field and its value kind. */
export interface TemplateColumn {
  key: string;
  table?: string;
  field: string;
  value: ValueKind;
}

/** A Table field of the layout and the child DocType it holds. */
export interface TemplateTable {
  tableField: string;
  child: DocTypeBinding;
}

/** The columns of a DocType's template, in order, and the Table fields among them. */
export interface TemplateLayout {
  binding: DocTypeBinding;
  columns: TemplateColumn[];
  tables: TemplateTable[];
}

/** The most columns a layout may have (a header wider than this is refused). */
export const MAX_COLUMNS = 1000;

const valueOf = (meta: DocTypeMeta, field: string): ValueKind => {
  const f = meta.fields.find((x) => x.fieldname === field);
  return f
    ? FIELD_TYPE_INFO[f.fieldtype].value
    : field === 'idx' || field === 'docstatus'
      ? 'integer'
      : 'string';
};

/** A data field a template may carry: it stores a value and is not a Password. */
function carried(meta: DocTypeMeta, fieldname: string): boolean {
  const f = meta.fields.find((x) => x.fieldname === fieldname);
  return f !== undefined && storesValue(f.fieldtype) && f.fieldtype !== 'Password';
}

/** The Table field of `binding` named `tableField` with its child DocType, or undefined. */
function tableOf(site: Site, binding: DocTypeBinding, tableField: string): TemplateTable | undefined {
  const f = binding.fieldMap.get(tableField);
  if (!f || !isTableType(f.fieldtype) || !f.options) return undefined;
  const child = site.registry.get(f.options);
  return child ? { tableField, child } : undefined;
}

/** Every column of the DocType the reader may read: `name`, its own data fields, then its tables' fields. */
export function defaultColumnKeys(site: Site, binding: DocTypeBinding, access: QueryAccess): string[] {
  const { meta } = binding;
  const keys = ['name'];
  const tables: string[] = [];
  for (const f of meta.fields) {
    if (!access.canReadField(meta, f.fieldname)) continue;
    if (carried(meta, f.fieldname)) keys.push(f.fieldname);
    else if (isTableType(f.fieldtype)) {
      const table = tableOf(site, binding, f.fieldname);
      if (!table) continue;
      // Each child row's name (Frappe's "ID (<table>)" column): an update import of the file matches its rows with the
      // stored ones, which keep what the file leaves out (fields the exporter could not read); an insert ignores it.
      tables.push(`${f.fieldname}.name`);
      for (const c of table.child.meta.fields)
        if (carried(table.child.meta, c.fieldname) && access.canReadField(table.child.meta, c.fieldname))
          tables.push(`${f.fieldname}.${c.fieldname}`);
    }
  }
  return [...keys, ...tables];
}

/**
 * The layout of the columns `keys` (`field` or `<table>.<field>`), each checked against the metadata: an unknown column
 * is a 400 naming it. Readability is left to the query (exports) and the document path (imports).
 */
export function layoutOf(site: Site, binding: DocTypeBinding, keys: readonly string[]): TemplateLayout {
  if (keys.length === 0) throw new DataError('fields: no columns');
  if (keys.length > MAX_COLUMNS) throw new DataError(`fields: more than ${MAX_COLUMNS} columns`);
  const columns: TemplateColumn[] = [];
  const tables = new Map<string, TemplateTable>();
  const seen = new Set<string>();
  for (const key of keys) {
    if (seen.has(key)) throw new DataError(`column ${clipKey(key)} appears twice`);
    seen.add(key);
    const dot = key.indexOf('.');
    if (dot < 0) {
      if (key !== 'name' && !carried(binding.meta, key))
        throw new DataError(`column ${clipKey(key)} is not a field of ${binding.meta.name}`);
      columns.push({ key, field: key, value: valueOf(binding.meta, key) });
      continue;
    }
    const tableField = key.slice(0, dot);
    const field = key.slice(dot + 1);
    const table = tables.get(tableField) ?? tableOf(site, binding, tableField);
    if (!table || !(field === 'name' || carried(table.child.meta, field)))
      throw new DataError(`column ${clipKey(key)} is not a child table field of ${binding.meta.name}`);
    tables.set(tableField, table);
    columns.push({ key, table: tableField, field, value: valueOf(table.child.meta, field) });
  }
  return { binding, columns, tables: [...tables.values()] };
}

/** A column name as an error message may quote it. */
export function clipKey(key: string): string {
  return JSON.stringify(key.length > 80 ? `${key.slice(0, 80)}…` : key);
}
