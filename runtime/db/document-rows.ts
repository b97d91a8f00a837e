// What every backend's row store shares: documents as rows and back, child rows through knex, Single DocTypes in
// `tabSingles`, series numbers through knex, the errors of a refused row. The row stores themselves implement
// row-store.ts, one per backend folder (runtime/db/<backend>/row-store.ts).
import type { Knex } from 'knex';
import { SYSTEM_TABLES } from './migrate';
import type { Database } from './backend';
import type { DocData, LinkTarget, Queryable } from './row-store';
import { DataError, DuplicateEntryError } from '../errors/errors';
import { isTableType, storesValue } from '../meta/field-types';
import { CHILD_FIELDS, STANDARD_FIELDS, type DocTypeMeta } from '../meta/types';
import type { DocTypeBinding, Registry } from '../registry/registry';
import { defaultValue } from './field-defaults';
import { fieldLists, tableFields } from '../registry/field-lists';
import { decodeValue, encodeValue, formatDatetime } from './stored-values';
import { indexName } from './table-columns';

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

/**
 * The text of the Link check's read of one row of `meta` (RowStore.linkTarget): its name, its docstatus and `columns`
 * (fetch_from's), by name; `quote` is the backend's identifier quoting.
 */
export function linkTargetRead(
  meta: DocTypeMeta,
  columns: readonly string[],
  quote: (name: string) => string,
): string {
  const more = columns.map((c) => `, ${quote(c)}`).join('');
  return `select name, docstatus${more} from ${quote(meta.tableName)} where name = ?`;
}

/** The LinkTarget of a row read by linkTargetRead (by column name): `values` holds the `columns`, decoded. */
export function linkTargetOf(
  meta: DocTypeMeta,
  row: Record<string, unknown>,
  columns: readonly string[],
): LinkTarget {
  const found = { name: String(row.name), docstatus: Number(row.docstatus) };
  return columns.length ? { ...found, values: decodeRow(meta, row) } : found;
}

/** The standard columns of a document's own row. */
export const PARENT_STANDARD = STANDARD_FIELDS;
/** The standard columns of a child row. */
export const CHILD_STANDARD = [...STANDARD_FIELDS, ...CHILD_FIELDS] as const;

/** Full-row column lists per DocType and standard columns, built once. */
const columnLists = new WeakMap<DocTypeMeta, Map<readonly string[], readonly string[]>>();

/** The columns of a full row of `meta`: the `standard` ones, then every stored field (built once per pair). */
export function fullColumns(meta: DocTypeMeta, standard: readonly string[]): readonly string[] {
  let byStandard = columnLists.get(meta);
  if (!byStandard) columnLists.set(meta, (byStandard = new Map()));
  let columns = byStandard.get(standard);
  if (!columns)
    byStandard.set(standard, (columns = [...standard, ...fieldLists(meta).stored.map((f) => f.fieldname)]));
  return columns;
}

/**
 * The columns a stored row of `meta` is read with: its standard columns, then every stored field. A column the DocType
 * no longer declares (a removed or renamed field: its data stays until `svc migrate --drop-removed`) is never read, so
 * no answer holds it.
 */
export function documentColumns(meta: DocTypeMeta): readonly string[] {
  return fullColumns(meta, meta.istable ? CHILD_STANDARD : PARENT_STANDARD);
}

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
      .select(documentColumns(child.meta))
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

const singleFields = new WeakMap<DocTypeMeta, ReadonlySet<string>>();

/** The `tabSingles` field names a Single's document is read from: the standard ones and its stored fields. */
function singleFieldNames(meta: DocTypeMeta): ReadonlySet<string> {
  let names = singleFields.get(meta);
  if (!names) {
    names = new Set([...PARENT_STANDARD, ...fieldLists(meta).stored.map((f) => f.fieldname)]);
    singleFields.set(meta, names);
  }
  return names;
}

/**
 * Loads a Single DocType's values from `tabSingles`, and (given the registry) its child rows, whose parent is the
 * DocType's name as in Frappe. `forUpdate`: its rows are locked until the transaction ends (a save's check of
 * `modified`, as Frappe's).
 */
export async function loadSingle(
  q: Queryable,
  binding: DocTypeBinding,
  registry?: Registry,
  { forUpdate = false } = {},
): Promise<DocData> {
  const query = q(SYSTEM_TABLES.singles).where('doctype', binding.meta.name);
  const rows = (await (forUpdate ? query.forUpdate() : query)) as {
    field: string;
    value: string | null;
  }[];
  const data: DocData = { name: binding.meta.name, docstatus: 0, idx: 0 };
  // Only the fields the DocType declares: rows of a removed field stay in tabSingles but are never answered.
  const declared = singleFieldNames(binding.meta);
  for (const row of rows) if (declared.has(row.field)) data[row.field] = row.value;
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
  if (registry) {
    const children = (await loadChildren(q, binding.meta, registry, [binding.meta.name])).get(
      binding.meta.name,
    );
    for (const { field } of tableFields(binding.meta, registry))
      data[field.fieldname] = children?.get(field.fieldname) ?? [];
  }
  return data;
}

/** Writes a Single DocType's values (every stored field plus modified/modified_by). */
export async function writeSingle(
  q: Queryable,
  binding: DocTypeBinding,
  data: DocData,
  registry: Registry,
): Promise<void> {
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
  // Its child rows, replaced whole (a table the data does not carry is left as it is).
  for (const { field, child } of tableFields(binding.meta, registry)) {
    const rows = data[field.fieldname] as DocData[] | undefined;
    if (rows === undefined) continue;
    await q(child.meta.tableName)
      .where({ parent: binding.meta.name, parenttype: binding.meta.name, parentfield: field.fieldname })
      .delete();
    for (const row of rows) await q(child.meta.tableName).insert(rowValues(child.meta, row, CHILD_STANDARD));
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

/** The driver's error under objection's wrapping (UniqueViolationError on MariaDB holds it as `nativeError`). */
function driverError(err: unknown): Record<string, unknown> | undefined {
  if (!err || typeof err !== 'object') return undefined;
  const nativeError = (err as { nativeError?: unknown }).nativeError;
  return nativeError && typeof nativeError === 'object'
    ? driverError(nativeError)
    : (err as Record<string, unknown>);
}

/** True when the error of the database `db` is a primary-key or unique-index clash. */
export function isDuplicateKeyError(db: Pick<Database, 'errors'>, err: unknown): boolean {
  const e = driverError(err);
  return e !== undefined && db.errors.isDuplicateKey(e);
}

/**
 * The error to throw for a failed write of a document's row (`data`, as written): 409 DuplicateEntryError naming the
 * unique field the database refused (a write racing another to one value: both checked before either committed), or
 * the name when it is the name that is taken; 400 DataError for a value too long for its column (MariaDB's TEXT holds
 * 65,535 bytes); any other error as it is.
 */
export function writeError(
  db: Pick<Database, 'errors'>,
  meta: DocTypeMeta,
  data: DocData,
  err: unknown,
): unknown {
  const e = driverError(err);
  if (!e) return err;
  const column = db.errors.tooLongColumn(e);
  if (column !== undefined) {
    const field = meta.fields.find((f) => f.fieldname === column);
    const what = field ? `${field.label} (${field.fieldname})` : column ? column : 'A value';
    return new DataError(`${what} of ${meta.name} is too long for its database column`, {
      cause: err,
      title: 'Value too big',
    });
  }
  if (!db.errors.isDuplicateKey(e)) return err;
  const key = db.errors.duplicateKeyName(e);
  const { unique, uniqueEmpty } = fieldLists(meta);
  const i = unique.findIndex((f) => key === f.fieldname || key === indexName(meta.tableName, f.fieldname));
  const field = unique[i];
  if (field) {
    const value = data[field.fieldname] === undefined ? uniqueEmpty[i] : data[field.fieldname];
    return new DuplicateEntryError(`${field.label} must be unique: ${String(value)} is already used`, {
      cause: err,
      title: 'Duplicate Entry',
    });
  }
  return new DuplicateEntryError(`${meta.name} ${String(data.name)} already exists`, {
    cause: err,
    title: 'Duplicate Name',
  });
}
