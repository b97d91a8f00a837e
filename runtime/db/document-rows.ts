// What every backend's row store shares: documents as rows and back, child rows through knex, Single DocTypes in
// `tabSingles`, series numbers through knex, duplicate-key errors. The row stores themselves implement
// row-store.ts, one per backend folder (runtime/db/<backend>/row-store.ts).
import type { Knex } from 'knex';
import { SYSTEM_TABLES } from './migrate';
import type { Database } from './backend';
import type { DocData, Queryable } from './row-store';
import { DuplicateEntryError } from '../errors/errors';
import { isTableType, storesValue } from '../meta/field-types';
import { CHILD_FIELDS, STANDARD_FIELDS, type DocTypeMeta } from '../meta/types';
import type { DocTypeBinding, Registry } from '../registry/registry';
import { defaultValue } from './field-defaults';
import { fieldLists, tableFields } from '../registry/field-lists';
import { decodeValue, encodeValue, formatDatetime } from './stored-values';

const STANDARD_DATETIMES = ['creation', 'modified'] as const;

/** Turns a database row into document data (types and formats per field). */
export function decodeRow(meta: DocTypeMeta, row: Record<string, unknown>): DocData {
  // Object.assign, not a spread: properties added to a V8 spread copy later (doctype, child tables) cost microseconds each.
  const data: DocData = Object.assign({}, row);
  for (const key of STANDARD_DATETIMES)
    if (typeof data[key] === 'string') data[key] = formatDatetime(data[key] as string);
  if (data.docstatus !== undefined) data.docstatus = Number(data.docstatus);
  if (data.idx !== undefined) data.idx = Number(data.idx);
  for (const field of meta.fields) {
    if (field.fieldname in data) data[field.fieldname] = decodeValue(field, data[field.fieldname]);
  }
  return data;
}

/** Row values of a document for its own table (stored fields and standard columns only). */
export function rowValues(
  meta: DocTypeMeta,
  data: DocData,
  standard: readonly string[],
): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const key of standard) if (data[key] !== undefined) row[key] = data[key];
  for (const field of fieldLists(meta).stored) {
    if (data[field.fieldname] !== undefined) row[field.fieldname] = encodeValue(field, data[field.fieldname]);
  }
  return row;
}

/** The standard columns of a document's own row. */
export const PARENT_STANDARD = STANDARD_FIELDS;
/** The standard columns of a child row. */
export const CHILD_STANDARD = [...STANDARD_FIELDS, ...CHILD_FIELDS] as const;

/** Loads the child rows of one or more parents, grouped by parent then parentfield (one query per child DocType). */
export async function loadChildren(
  q: Queryable,
  meta: DocTypeMeta,
  registry: Registry,
  parents: string[],
): Promise<Map<string, Map<string, DocData[]>>> {
  const byParent = new Map<string, Map<string, DocData[]>>();
  if (parents.length === 0) return byParent;
  const seen = new Set<string>();
  for (const { child } of tableFields(meta, registry)) {
    if (seen.has(child.meta.name)) continue;
    seen.add(child.meta.name);
    const rows = await q(child.meta.tableName)
      .whereIn('parent', parents)
      .andWhere('parenttype', meta.name)
      .orderBy([{ column: 'parent' }, { column: 'idx' }]);
    for (const row of rows as Record<string, unknown>[]) {
      const data = decodeRow(child.meta, row);
      data.doctype = child.meta.name;
      const fields = byParent.get(String(row.parent)) ?? new Map<string, DocData[]>();
      const list = fields.get(String(row.parentfield)) ?? [];
      list.push(data);
      fields.set(String(row.parentfield), list);
      byParent.set(String(row.parent), fields);
    }
  }
  return byParent;
}

/** Loads a Single DocType's values from `tabSingles`. */
export async function loadSingle(q: Queryable, binding: DocTypeBinding): Promise<DocData> {
  const rows = (await q(SYSTEM_TABLES.singles).where('doctype', binding.meta.name)) as {
    field: string;
    value: string | null;
  }[];
  const data: DocData = { name: binding.meta.name, docstatus: 0, idx: 0 };
  for (const row of rows) data[row.field] = row.value;
  // Never saved: Frappe answers `frappe.new_doc`, i.e. the fields' static defaults (no session user here).
  if (rows.length === 0) {
    for (const field of binding.meta.fields) {
      const value =
        field.default === '__user' || field.default === 'user' ? undefined : defaultValue(field, '');
      if (value !== undefined && !isTableType(field.fieldtype)) data[field.fieldname] = value;
    }
  }
  for (const field of binding.meta.fields) {
    if (isTableType(field.fieldtype)) continue;
    data[field.fieldname] = field.fieldname in data ? decodeValue(field, data[field.fieldname]) : null;
  }
  for (const key of STANDARD_DATETIMES)
    if (typeof data[key] === 'string') data[key] = formatDatetime(data[key] as string);
  return data;
}

/** Writes a Single DocType's values (every stored field plus modified/modified_by). */
export async function writeSingle(q: Queryable, binding: DocTypeBinding, data: DocData): Promise<void> {
  const table = SYSTEM_TABLES.singles;
  const values: [string, unknown][] = [];
  for (const key of ['modified', 'modified_by', 'creation', 'owner'])
    if (data[key] !== undefined) values.push([key, data[key]]);
  for (const field of binding.meta.fields) {
    if (storesValue(field.fieldtype) && data[field.fieldname] !== undefined)
      values.push([field.fieldname, encodeValue(field, data[field.fieldname])]);
  }
  for (const [field, value] of values) {
    const stored = value === null || value === undefined ? null : String(value);
    const updated = await q(table).where({ doctype: binding.meta.name, field }).update({ value: stored });
    if (!updated) await q(table).insert({ doctype: binding.meta.name, field, value: stored });
  }
}

/** Takes the next number of a naming series through knex queries in `trx` (see RowStore.nextSeriesValue). */
export async function nextSeriesValueWithKnex(trx: Knex, key: string): Promise<number> {
  const table = SYSTEM_TABLES.series;
  const updated = await trx(table).where('name', key).increment('current', 1);
  if (!updated) {
    await trx(table).insert({ name: key, current: 1 });
    return 1;
  }
  const row = (await trx(table).where('name', key).first('current')) as { current: number | string };
  return Number(row.current);
}

/** True when the error of the database `db` is a primary-key or unique-index clash. */
export function isDuplicateKeyError(db: Pick<Database, 'errors'>, err: unknown): boolean {
  const e = err as { code?: unknown; errno?: unknown; nativeError?: unknown } | null | undefined;
  if (!e || typeof e !== 'object') return false;
  // objection wraps driver errors (UniqueViolationError on MariaDB); the driver's own error is `nativeError`.
  if (e.nativeError && isDuplicateKeyError(db, e.nativeError)) return true;
  return db.errors.isDuplicateKey(e);
}

/** The error to throw for a failed insert of a document's row: 409 DuplicateEntryError when the name is taken. */
export function insertError(
  db: Pick<Database, 'errors'>,
  meta: DocTypeMeta,
  name: unknown,
  err: unknown,
): unknown {
  if (!isDuplicateKeyError(db, err)) return err;
  return new DuplicateEntryError(`${meta.name} ${String(name)} already exists`, {
    cause: err,
    title: 'Duplicate Name',
  });
}
