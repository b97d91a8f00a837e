// Persistence of documents: rows of `tab<DocType>`, child rows, and Single DocTypes in `tabSingles`.
import type BetterSqlite3 from 'better-sqlite3';
import type { Knex } from 'knex';
import type { Database } from '../db/connect';
import { SYSTEM_TABLES } from '../db/migrate';
import {
  insertRow,
  prepared,
  quoteIdent,
  sqliteConnection,
  sqliteValue,
  updateRows,
} from '../db/sqlite-statements';
import { DuplicateEntryError } from '../errors/errors';
import { isTableType, storesValue } from '../meta/field-types';
import { CHILD_FIELDS, STANDARD_FIELDS, type DocTypeMeta } from '../meta/types';
import type { DocTypeBinding, Registry } from '../registry/registry';
import { defaultValue } from './checks';
import { fieldLists, tableFields } from './field-lists';
import { decodeValue, encodeValue, formatDatetime } from './values';

/** A stored document as plain data: standard fields, field values, and child rows under their Table fields. */
export type DocData = Record<string, unknown>;

/** Either the knex instance or an open transaction. */
export type Queryable = Knex | Knex.Transaction;

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

const PARENT_STANDARD = STANDARD_FIELDS;
const CHILD_STANDARD = [...STANDARD_FIELDS, ...CHILD_FIELDS] as const;

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

/** Reads one document (not a Single) with its child rows through cached prepared statements on an SQLite connection. */
export function readDocOn(
  conn: BetterSqlite3.Database,
  binding: DocTypeBinding,
  registry: Registry,
  name: string,
): DocData | undefined {
  const { meta } = binding;
  const row = prepared(conn, `SELECT * FROM ${quoteIdent(meta.tableName)} WHERE name = ?`).get(name) as
    Record<string, unknown> | undefined;
  if (!row) return undefined;
  const data = decodeRow(meta, row);
  for (const { field, child } of tableFields(meta, registry)) {
    const rows = prepared(
      conn,
      `SELECT * FROM ${quoteIdent(child.meta.tableName)} WHERE parent = ? AND parenttype = ? AND parentfield = ? ORDER BY idx`,
    ).all(name, meta.name, field.fieldname) as Record<string, unknown>[];
    data[field.fieldname] = rows.map((r) => {
      const rowData = decodeRow(child.meta, r);
      rowData.doctype = child.meta.name;
      return rowData;
    });
  }
  return data;
}

/**
 * Loads one document with its child rows; undefined when it does not exist. `forUpdate` locks the row (MariaDB;
 * SQLite's write transaction already excludes every other writer). Inside an SQLite transaction the reads are
 * prepared statements on its connection.
 */
export async function loadDoc(
  q: Queryable,
  binding: DocTypeBinding,
  registry: Registry,
  name: string,
  options: { forUpdate?: boolean; dialect?: Database['dialect'] } = {},
): Promise<DocData | undefined> {
  const { meta } = binding;
  if (meta.issingle) return loadSingle(q, binding);
  const conn = await sqliteConnection(q);
  if (conn) return readDocOn(conn, binding, registry, name);
  let query = q(meta.tableName).where('name', name).first();
  if (options.forUpdate && options.dialect === 'mysql') query = query.forUpdate();
  const row = (await query) as Record<string, unknown> | undefined;
  if (!row) return undefined;
  const data = decodeRow(meta, row);
  const children = (await loadChildren(q, meta, registry, [name])).get(name);
  for (const { field } of tableFields(meta, registry))
    data[field.fieldname] = children?.get(field.fieldname) ?? [];
  return data;
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

/** True when the database error is a primary-key or unique-index clash. */
export function isDuplicateKeyError(err: unknown): boolean {
  const e = err as { code?: unknown; errno?: unknown; nativeError?: unknown };
  // objection wraps driver errors (UniqueViolationError on MariaDB); the driver's own error is `nativeError`.
  if (e?.nativeError && isDuplicateKeyError(e.nativeError)) return true;
  return (
    e?.code === 'ER_DUP_ENTRY' ||
    e?.errno === 1062 ||
    (typeof e?.code === 'string' && /^SQLITE_CONSTRAINT_(PRIMARYKEY|UNIQUE)$/.test(e.code))
  );
}

/** Statement texts per DocType and standard-column list, built once (INSERT and UPDATE of full rows). */
const fullRowTexts = {
  insert: new WeakMap<DocTypeMeta, Map<readonly string[], string>>(),
  update: new WeakMap<DocTypeMeta, Map<readonly string[], string>>(),
};

function cachedRowText(
  kind: keyof typeof fullRowTexts,
  meta: DocTypeMeta,
  standard: readonly string[],
  build: () => string,
): string {
  let byStandard = fullRowTexts[kind].get(meta);
  if (!byStandard) fullRowTexts[kind].set(meta, (byStandard = new Map()));
  let sql = byStandard.get(standard);
  if (sql === undefined) byStandard.set(standard, (sql = build()));
  return sql;
}

/** The INSERT text of a full row of `meta`: the `standard` columns, then every stored field. */
function fullRowInsert(meta: DocTypeMeta, standard: readonly string[]): string {
  return cachedRowText('insert', meta, standard, () => {
    const columns = [...standard, ...fieldLists(meta).stored.map((f) => f.fieldname)];
    return `insert into ${quoteIdent(meta.tableName)} (${columns.map(quoteIdent).join(', ')}) values (${columns.map(() => '?').join(', ')})`;
  });
}

/** The bound values of a full row of `meta`: the `standard` columns but `skip`, then every stored field; undefined when one is unset. */
function fullRowValues(
  meta: DocTypeMeta,
  data: DocData,
  standard: readonly string[],
  skip?: string,
): unknown[] | undefined {
  const values: unknown[] = [];
  for (const key of standard) {
    if (data[key] === undefined) return undefined;
    if (key !== skip) values.push(sqliteValue(data[key]));
  }
  for (const field of fieldLists(meta).stored) {
    if (data[field.fieldname] === undefined) return undefined;
    values.push(sqliteValue(encodeValue(field, data[field.fieldname])));
  }
  return values;
}

/**
 * Inserts a row of `meta` on SQLite. A full row (every column set, as the lifecycle writes them) binds straight from
 * `data` through one statement text per DocType; a row with unset columns leaves them to their defaults (insertRow).
 */
function insertSqliteRow(
  conn: BetterSqlite3.Database,
  meta: DocTypeMeta,
  data: DocData,
  standard: readonly string[],
): void {
  const values = fullRowValues(meta, data, standard);
  if (values) prepared(conn, fullRowInsert(meta, standard)).run(values);
  else insertRow(conn, meta.tableName, rowValues(meta, data, standard));
}

/** The UPDATE text of a full row of `meta` by name (and parent, for child rows): every column but the name is set. */
function fullRowUpdate(meta: DocTypeMeta, standard: readonly string[]): string {
  return cachedRowText('update', meta, standard, () => {
    const columns = [
      ...standard.filter((c) => c !== 'name'),
      ...fieldLists(meta).stored.map((f) => f.fieldname),
    ];
    const where = standard === CHILD_STANDARD ? 'name = ? AND parent = ?' : 'name = ?';
    return `update ${quoteIdent(meta.tableName)} set ${columns.map((c) => `${quoteIdent(c)} = ?`).join(', ')} where ${where}`;
  });
}

/**
 * Updates the stored row of `data` (a child row when `parent` is given) on SQLite: a full row binds straight from
 * `data` through one statement text per DocType; a row with unset columns leaves those as they are (updateRows).
 */
function updateSqliteRow(
  conn: BetterSqlite3.Database,
  meta: DocTypeMeta,
  data: DocData,
  parent?: string,
): void {
  const standard = parent === undefined ? PARENT_STANDARD : CHILD_STANDARD;
  const values = fullRowValues(meta, data, standard, 'name');
  if (values) {
    values.push(String(data.name));
    if (parent !== undefined) values.push(parent);
    prepared(conn, fullRowUpdate(meta, standard)).run(values);
    return;
  }
  const { name, ...changes } = rowValues(meta, data, standard);
  updateRows(
    conn,
    meta.tableName,
    changes,
    parent === undefined ? { name: String(name) } : { name: String(name), parent },
  );
}

/** Inserts a document row and its child rows: prepared statements on SQLite, the objection models elsewhere. */
export async function insertDoc(
  trx: Knex,
  binding: DocTypeBinding,
  registry: Registry,
  data: DocData,
): Promise<void> {
  const { meta } = binding;
  const conn = await sqliteConnection(trx);
  try {
    if (conn) insertSqliteRow(conn, meta, data, PARENT_STANDARD);
    else await binding.model.query(trx).insert(rowValues(meta, data, PARENT_STANDARD));
  } catch (err) {
    if (isDuplicateKeyError(err))
      throw new DuplicateEntryError(`${meta.name} ${String(data.name)} already exists`, {
        cause: err,
        title: 'Duplicate Name',
      });
    throw err;
  }
  for (const { field, child } of tableFields(meta, registry)) {
    for (const row of (data[field.fieldname] as DocData[] | undefined) ?? []) {
      if (conn) insertSqliteRow(conn, child.meta, row, CHILD_STANDARD);
      else await child.model.query(trx).insert(rowValues(child.meta, row, CHILD_STANDARD));
    }
  }
}

/** Updates a document row and replaces its child rows: kept rows updated, new rows inserted, missing rows deleted (prepared statements on SQLite). */
export async function updateDoc(
  trx: Knex,
  binding: DocTypeBinding,
  registry: Registry,
  data: DocData,
  previous: DocData,
): Promise<void> {
  const { meta } = binding;
  const conn = await sqliteConnection(trx);
  const name = String(data.name);
  if (conn) {
    updateSqliteRow(conn, meta, data);
  } else {
    const changes = rowValues(meta, data, PARENT_STANDARD);
    delete changes.name;
    await binding.model.query(trx).patch(changes).where('name', name);
  }
  for (const { field, child } of tableFields(meta, registry)) {
    const rows = data[field.fieldname] as DocData[] | undefined;
    if (rows === undefined) continue;
    const before = new Set(
      ((previous[field.fieldname] as DocData[] | undefined) ?? []).map((r) => String(r.name)),
    );
    const kept = new Set(rows.map((r) => String(r.name)));
    const removed = [...before].filter((n) => !kept.has(n));
    if (conn) {
      for (const rowName of removed)
        prepared(conn, `DELETE FROM ${quoteIdent(child.meta.tableName)} WHERE name = ? AND parent = ?`).run(
          rowName,
          name,
        );
    } else if (removed.length) {
      await child.model.query(trx).delete().whereIn('name', removed).andWhere('parent', name);
    }
    for (const row of rows) {
      if (conn) {
        if (before.has(String(row.name))) updateSqliteRow(conn, child.meta, row, name);
        else insertSqliteRow(conn, child.meta, row, CHILD_STANDARD);
        continue;
      }
      const values = rowValues(child.meta, row, CHILD_STANDARD);
      if (before.has(String(row.name))) {
        const { name: rowName, ...rowChanges } = values;
        await child.model
          .query(trx)
          .patch(rowChanges)
          .where('name', String(rowName))
          .andWhere('parent', name);
      } else {
        await child.model.query(trx).insert(values);
      }
    }
  }
}

/** Deletes a document and its child rows: prepared statements on SQLite, the objection models elsewhere. */
export async function deleteDoc(
  trx: Knex,
  binding: DocTypeBinding,
  registry: Registry,
  name: string,
): Promise<void> {
  const conn = await sqliteConnection(trx);
  for (const { child } of tableFields(binding.meta, registry)) {
    if (conn)
      prepared(
        conn,
        `DELETE FROM ${quoteIdent(child.meta.tableName)} WHERE parent = ? AND parenttype = ?`,
      ).run(name, binding.meta.name);
    else
      await child.model.query(trx).delete().where('parent', name).andWhere('parenttype', binding.meta.name);
  }
  if (conn) prepared(conn, `DELETE FROM ${quoteIdent(binding.meta.tableName)} WHERE name = ?`).run(name);
  else await binding.model.query(trx).delete().where('name', name);
}
