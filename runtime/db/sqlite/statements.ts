// SQLite prepared statements, cached per connection and SQL text: the document store's writes (run on the connection of
// the knex transaction they belong to, so they commit and roll back with it) and the read connection's document reads
// and list queries. The SQL is built from DocType metadata with quoted identifiers or compiled by knex; values are bound.
import type BetterSqlite3 from 'better-sqlite3';
import type { Knex } from 'knex';

const statements = new WeakMap<BetterSqlite3.Database, Map<string, BetterSqlite3.Statement>>();

/**
 * The better-sqlite3 connection of an open SQLite transaction (a knex transaction or the knex inWriteTransaction
 * gives); undefined on other databases and outside a transaction, where the pool would hand out the connection for good.
 */
export async function sqliteConnection(trx: Knex): Promise<BetterSqlite3.Database | undefined> {
  const client = trx.client as {
    driverName?: unknown;
    transacting?: unknown;
    acquireConnection(): Promise<unknown>;
  };
  if (client.driverName !== 'better-sqlite3' || client.transacting !== true) return undefined;
  return (await client.acquireConnection()) as BetterSqlite3.Database;
}

/** Statements kept per connection; past this, the least recently prepared one is dropped. */
const MAX_STATEMENTS = 2000;

/**
 * A prepared statement for `sql` on `conn`, cached per connection (the write path, document reads and list queries).
 * The statement is shared by every caller of the same SQL text: a caller that needs raw or pluck mode sets it on each
 * use (list queries compiled by knex do), and the hand-written document reads use text knex never produces.
 */
export function prepared(conn: BetterSqlite3.Database, sql: string): BetterSqlite3.Statement {
  let cache = statements.get(conn);
  if (!cache) {
    cache = new Map();
    statements.set(conn, cache);
  }
  let statement = cache.get(sql);
  if (!statement) {
    if (cache.size >= MAX_STATEMENTS) cache.delete(cache.keys().next().value as string);
    statement = conn.prepare(sql);
    cache.set(sql, statement);
  }
  return statement;
}

/** A SQLite identifier, quoted. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** A value as better-sqlite3 binds it (as knex would: booleans as 0/1, dates as epoch ms). */
export function sqliteValue(value: unknown): unknown {
  if (value === undefined) return null;
  if (typeof value === 'boolean') return Number(value);
  if (value instanceof Date) return value.valueOf();
  return value;
}

/** Statement texts by table and column lists: building and hashing a fresh text per row costs more than binding it. */
const texts = new Map<string, string>();

/** The text cached under `key`, built on first use. */
function cachedText(key: string, build: () => string): string {
  let text = texts.get(key);
  if (text === undefined) {
    if (texts.size >= MAX_STATEMENTS) texts.delete(texts.keys().next().value as string);
    text = build();
    texts.set(key, text);
  }
  return text;
}

/** Appends the values of `columns` of `row` to `into`, as better-sqlite3 binds them. */
function boundValues(row: Record<string, unknown>, columns: readonly string[], into: unknown[]): unknown[] {
  for (const column of columns) into.push(sqliteValue(row[column]));
  return into;
}

/** Rows per multi-row INSERT of `insertRows`: at most three statement texts per table and column list. */
const CHUNK_SIZES = [100, 10, 1];

/**
 * Inserts rows that all have the first row's columns, up to 100 per statement: one statement run per chunk instead of
 * per row (batched writes such as the request log).
 */
export function insertRows(
  conn: BetterSqlite3.Database,
  table: string,
  rows: readonly Record<string, unknown>[],
): void {
  const first = rows[0];
  if (!first) return;
  const columns = Object.keys(first);
  const tuple = `(${columns.map(() => '?').join(', ')})`;
  let at = 0;
  for (const size of CHUNK_SIZES) {
    for (; rows.length - at >= size; at += size) {
      const sql = cachedText(
        `insert*${size}\u0000${table}\u0000${columns.join('\u0000')}`,
        () =>
          `insert into ${quoteIdent(table)} (${columns.map(quoteIdent).join(', ')}) values ${new Array(size).fill(tuple).join(', ')}`,
      );
      const values: unknown[] = [];
      for (let i = at; i < at + size; i++) boundValues(rows[i] as Record<string, unknown>, columns, values);
      prepared(conn, sql).run(values);
    }
  }
}

/** Inserts one row. */
export function insertRow(conn: BetterSqlite3.Database, table: string, row: Record<string, unknown>): void {
  insertRows(conn, table, [row]);
}

/** Inserts one row unless a row with the same `key` columns exists (ON CONFLICT DO NOTHING). */
export function insertRowOnce(
  conn: BetterSqlite3.Database,
  table: string,
  row: Record<string, unknown>,
  key: readonly string[],
): void {
  const columns = Object.keys(row);
  const sql = cachedText(
    `insert-once\u0000${table}\u0000${columns.join('\u0000')}\u0001${key.join('\u0000')}`,
    () =>
      `insert into ${quoteIdent(table)} (${columns.map(quoteIdent).join(', ')}) values (${columns.map(() => '?').join(', ')}) on conflict (${key.map(quoteIdent).join(', ')}) do nothing`,
  );
  prepared(conn, sql).run(boundValues(row, columns, []));
}

/** Updates the row(s) matching every `where` column; returns the number changed. */
export function updateRows(
  conn: BetterSqlite3.Database,
  table: string,
  changes: Record<string, unknown>,
  where: Record<string, unknown>,
): number {
  const set = Object.keys(changes);
  const keys = Object.keys(where);
  if (set.length === 0) return 0;
  const sql = cachedText(
    `update\u0000${table}\u0000${set.join('\u0000')}\u0001${keys.join('\u0000')}`,
    () =>
      `update ${quoteIdent(table)} set ${set.map((c) => `${quoteIdent(c)} = ?`).join(', ')} where ${keys.map((c) => `${quoteIdent(c)} = ?`).join(' and ')}`,
  );
  return prepared(conn, sql).run(boundValues(where, keys, boundValues(changes, set, []))).changes;
}
