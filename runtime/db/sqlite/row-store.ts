// The SQLite row store: cached better-sqlite3 prepared statements, on the read connection for committed data and on
// the connection of the write transaction for everything inside one (so they commit and roll back with it).
import type BetterSqlite3 from 'better-sqlite3';
import type { Knex } from 'knex';
import { EVENT_COLUMNS, SYSTEM_TABLES, type EventRecord } from '../system-tables';
import { deferRow } from './group-commit';
import { type DocData, type LinkTarget, type Queryable, type RowStore } from '../row-store';
import type { SqliteDatabase } from './backend';
import { countOnReader, selectOnReader, type SqliteReaders } from './list-reads';
import {
  insertRow,
  insertRowOnce,
  insertRows,
  prepared,
  quoteIdent,
  sqliteConnection,
  sqliteValue,
  updateRows,
} from './statements';
import type { DocTypeMeta } from '../../meta/types';
import type { CompiledSlot, RowSet, SelectSource } from '../compiled-query';
import type { DocTypeBinding, Registry } from '../../registry/registry';
import { childRowChanges } from '../child-row-changes';
import { fieldLists, tableFields } from '../../registry/field-lists';
import {
  CHILD_STANDARD,
  decodeRow,
  documentColumns,
  writeError,
  fullColumns,
  linkTargetOf,
  linkTargetRead,
  loadSingle,
  nextSeriesValueWithKnex,
  PARENT_STANDARD,
  rowValues,
} from '../document-rows';
import { encodeValue } from '../stored-values';

/** Documents on SQLite; see RowStore. */
/** The event log's INSERT: its head and row tuple (values in EVENT_COLUMNS order). */
const EVENT_INSERT = {
  head: `insert into ${quoteIdent(SYSTEM_TABLES.events)} (${EVENT_COLUMNS.map(quoteIdent).join(', ')}) values `,
  tuple: `(${EVENT_COLUMNS.map(() => '?').join(', ')})`,
};

export class SqliteRowStore implements RowStore {
  private readonly readConnection: () => BetterSqlite3.Database;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly registry: Registry,
  ) {
    this.readConnection = db.readConnection;
  }

  async read(binding: DocTypeBinding, name: string): Promise<DocData | undefined> {
    if (binding.meta.issingle) return loadSingle(this.db.knex, binding, this.registry);
    return readDocOn(this.readConnection(), binding, this.registry, name);
  }

  async load(trx: Queryable, binding: DocTypeBinding, name: string): Promise<DocData | undefined> {
    // SQLite's write transaction already excludes every other writer: nothing to lock.
    if (binding.meta.issingle) return loadSingle(trx, binding, this.registry);
    const conn = await sqliteConnection(trx);
    return readDocOn(conn ?? this.readConnection(), binding, this.registry, name);
  }

  async insert(trx: Knex, binding: DocTypeBinding, data: DocData): Promise<void> {
    const { meta } = binding;
    const conn = await writeConnection(trx);
    try {
      insertFullRow(conn, meta, data, PARENT_STANDARD);
    } catch (err) {
      throw writeError(this.db, meta, data, err);
    }
    for (const { field, child } of tableFields(meta, this.registry)) {
      for (const row of (data[field.fieldname] as DocData[] | undefined) ?? [])
        insertFullRow(conn, child.meta, row, CHILD_STANDARD);
    }
  }

  async update(trx: Knex, binding: DocTypeBinding, data: DocData, previous: DocData): Promise<void> {
    const { meta } = binding;
    const conn = await writeConnection(trx);
    const name = String(data.name);
    try {
      updateFullRow(conn, meta, data);
    } catch (err) {
      throw writeError(this.db, meta, data, err);
    }
    for (const { field, child } of tableFields(meta, this.registry)) {
      const rows = data[field.fieldname] as DocData[] | undefined;
      if (rows === undefined) continue;
      const { before, removed } = childRowChanges(previous[field.fieldname] as DocData[] | undefined, rows);
      for (const rowName of removed)
        prepared(conn, `DELETE FROM ${quoteIdent(child.meta.tableName)} WHERE name = ? AND parent = ?`).run(
          rowName,
          name,
        );
      for (const row of rows) {
        if (before.has(String(row.name))) updateFullRow(conn, child.meta, row, name);
        else insertFullRow(conn, child.meta, row, CHILD_STANDARD);
      }
    }
  }

  async delete(trx: Knex, binding: DocTypeBinding, name: string): Promise<void> {
    const conn = await writeConnection(trx);
    for (const { child } of tableFields(binding.meta, this.registry))
      prepared(
        conn,
        `DELETE FROM ${quoteIdent(child.meta.tableName)} WHERE parent = ? AND parenttype = ?`,
      ).run(name, binding.meta.name);
    prepared(conn, `DELETE FROM ${quoteIdent(binding.meta.tableName)} WHERE name = ?`).run(name);
  }

  async linkTarget(
    trx: Queryable,
    binding: DocTypeBinding,
    name: string,
    columns: readonly string[] = [],
  ): Promise<LinkTarget | undefined> {
    const conn = (await sqliteConnection(trx)) ?? this.readConnection();
    const { meta } = binding;
    const row = prepared(conn, linkTargetRead(meta, columns, quoteIdent)).get(name) as
      Record<string, unknown> | undefined;
    return row && linkTargetOf(meta, row, columns);
  }

  async takenByOther(
    trx: Queryable,
    binding: DocTypeBinding,
    fieldname: string,
    value: unknown,
    name: string,
  ): Promise<boolean> {
    const conn = (await sqliteConnection(trx)) ?? this.readConnection();
    const sql = `SELECT 1 FROM ${quoteIdent(binding.meta.tableName)} WHERE ${quoteIdent(fieldname)} = ? AND name <> ?`;
    return prepared(conn, sql).get(sqliteValue(value), name) !== undefined;
  }

  async insertRows(trx: Knex, table: string, rows: readonly Record<string, unknown>[]): Promise<void> {
    insertRows(await writeConnection(trx), table, rows);
  }

  /** Held for the group commit's INSERT of the batch's events (deferRow); through insertRows elsewhere. */
  insertEvent(trx: Knex, event: EventRecord): Promise<void> | undefined {
    const values = EVENT_COLUMNS.map((column) => event[column]);
    if (deferRow(trx, EVENT_INSERT.head, EVENT_INSERT.tuple, values)) return undefined;
    return this.insertRows(trx, SYSTEM_TABLES.events, [{ ...event }]);
  }

  async insertRowOnce(
    trx: Knex,
    table: string,
    row: Record<string, unknown>,
    key: readonly string[],
  ): Promise<void> {
    insertRowOnce(await writeConnection(trx), table, row, key);
  }

  /**
   * One UPDATE ... RETURNING through a cached prepared statement: the knex UPDATE + SELECT cost ~190 us per number
   * against ~10 us (5,000 numbers in one transaction, load average 16 on 2 cores), more than the rest of a bulk item's
   * document path.
   */
  async nextSeriesValue(trx: Knex, key: string): Promise<number> {
    const conn = await sqliteConnection(trx);
    if (!conn) return nextSeriesValueWithKnex(trx, key);
    const table = quoteIdent(SYSTEM_TABLES.series);
    const row = prepared(
      conn,
      `UPDATE ${table} SET current = current + 1 WHERE name = ? RETURNING current`,
    ).get(key) as { current: number } | undefined;
    if (row) return Number(row.current);
    prepared(conn, `INSERT INTO ${table} (name, current) VALUES (?, 1)`).run(key);
    return 1;
  }

  select(source: SelectSource, slot: CompiledSlot, limitMs: number): Promise<RowSet> {
    return selectOnReader(this.readers(), source, slot, limitMs);
  }

  count(build: () => Knex.QueryBuilder, slot: CompiledSlot, limitMs: number): Promise<number> {
    return countOnReader(this.readers(), build, slot, limitMs);
  }

  /** The turn's read connection and the reader threads. */
  private readers(): SqliteReaders {
    const reader = this.readConnection();
    const limits = this.db.resultCache;
    return {
      reader,
      ...(this.db.readerPool ? { pool: this.db.readerPool } : {}),
      ...(limits ? { limits } : {}),
    };
  }
}

/** The connection of the write transaction `trx` (writes outside one are a programming error). */
async function writeConnection(trx: Knex): Promise<BetterSqlite3.Database> {
  const conn = await sqliteConnection(trx);
  if (!conn) throw new Error('SQLite rows are written inside a write transaction (inWriteTransaction)');
  return conn;
}

const selectLists = new WeakMap<DocTypeMeta, string>();

/** The quoted column list a document's row is read with (documentColumns: never a column the DocType dropped). */
function selectList(meta: DocTypeMeta): string {
  let list = selectLists.get(meta);
  if (list === undefined) selectLists.set(meta, (list = documentColumns(meta).map(quoteIdent).join(', ')));
  return list;
}

/** Reads one document (not a Single) with its child rows through cached prepared statements on `conn`. */
function readDocOn(
  conn: BetterSqlite3.Database,
  binding: DocTypeBinding,
  registry: Registry,
  name: string,
): DocData | undefined {
  const { meta } = binding;
  const row = prepared(
    conn,
    `SELECT ${selectList(meta)} FROM ${quoteIdent(meta.tableName)} WHERE name = ?`,
  ).get(name) as Record<string, unknown> | undefined;
  if (!row) return undefined;
  const data = decodeRow(meta, row);
  for (const { field, child } of tableFields(meta, registry)) {
    const rows = prepared(
      conn,
      `SELECT ${selectList(child.meta)} FROM ${quoteIdent(child.meta.tableName)} WHERE parent = ? AND parenttype = ? AND parentfield = ? ORDER BY idx`,
    ).all(name, meta.name, field.fieldname) as Record<string, unknown>[];
    data[field.fieldname] = rows.map((r) => {
      const rowData = decodeRow(child.meta, r);
      rowData.doctype = child.meta.name;
      return rowData;
    });
  }
  return data;
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
    const columns = fullColumns(meta, standard);
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
 * Inserts a row of `meta`. A full row (every column set, as the lifecycle writes them) binds straight from `data`
 * through one statement text per DocType; a row with unset columns leaves them to their defaults (insertRow).
 */
function insertFullRow(
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
    const columns = fullColumns(meta, standard).filter((c) => c !== 'name');
    const where = standard === CHILD_STANDARD ? 'name = ? AND parent = ?' : 'name = ?';
    return `update ${quoteIdent(meta.tableName)} set ${columns.map((c) => `${quoteIdent(c)} = ?`).join(', ')} where ${where}`;
  });
}

/**
 * Updates the stored row of `data` (a child row when `parent` is given): a full row binds straight from `data`
 * through one statement text per DocType; a row with unset columns leaves those as they are (updateRows).
 */
function updateFullRow(
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
