// Which SQLite reads may be slow, decided from SQLite's own query plan (EXPLAIN QUERY PLAN, once per SQL text), and the
// time limit of list and count reads on both databases (site config max_query_time).
import type BetterSqlite3 from 'better-sqlite3';
import type { Knex } from 'knex';
import { QueryTimeoutError } from '../errors/errors';

/** Offsets past this many rows are read in a reader thread whatever the plan (SQLite steps over every skipped row). */
export const DEEP_OFFSET = 1000;

const plans = new WeakMap<BetterSqlite3.Database, Map<string, boolean>>();
const MAX_PLANS = 2000;

/**
 * Whether the plan lines of a SELECT say it may read much of a table: a SCAN (of the table or a whole index) is, unless
 * the SELECT has a LIMIT and no WHERE and needs no sort (the default list: the sort_field's index read in order, stopped
 * after a page); any temporary B-tree (a sort or grouping of everything matched) after a SCAN is. A SEARCH reads an
 * index range and is taken as bounded. `counting`: the read is a COUNT, which visits every row it matches.
 */
export function planIsSlow(details: readonly string[], sql: string, counting: boolean): boolean {
  const scans = details.filter((d) => /^SCAN /.test(d) && !/^SCAN CONSTANT ROW/.test(d));
  if (!scans.length) return false;
  if (counting) return true;
  const limited = /\blimit \?/i.test(sql);
  const filtered = /\bwhere\b/i.test(sql) || /\bgroup by\b/i.test(sql);
  const sorts = details.some((d) => d.includes('TEMP B-TREE'));
  return !limited || filtered || sorts || scans.some((d) => !/ USING (COVERING )?INDEX /.test(d));
}

/**
 * Whether a read of `sql` (bound to `bindings`) may be slow, by its plan on `conn` (cached per SQL text: the plan of a
 * text does not depend on the values bound) and by a deep OFFSET. `aggregate`: the SELECT computes aggregates.
 */
export function mayBeSlow(
  conn: BetterSqlite3.Database,
  sql: string,
  bindings: readonly unknown[],
  kind: 'rows' | 'aggregate' | 'count',
): boolean {
  if (kind === 'aggregate') return true;
  if (/ offset \?$/i.test(sql)) {
    const offset = Number(bindings[bindings.length - 1]);
    if (!(offset <= DEEP_OFFSET)) return true;
  }
  let cache = plans.get(conn);
  if (!cache) plans.set(conn, (cache = new Map()));
  let slow = cache.get(sql);
  if (slow === undefined) {
    const rows = conn.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...bindings) as { detail: string }[];
    slow = planIsSlow(
      rows.map((r) => r.detail),
      sql,
      kind === 'count',
    );
    if (cache.size >= MAX_PLANS) cache.delete(cache.keys().next().value as string);
    cache.set(sql, slow);
  }
  return slow;
}

/** The default of site config max_query_time (ms). */
export const DEFAULT_MAX_QUERY_TIME = 5000;

/** The time limit of a read, from site config max_query_time (ms; a missing or invalid value is the default). */
export function queryTimeLimit(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0
    ? Math.min(Math.ceil(value), 2_147_483_647)
    : DEFAULT_MAX_QUERY_TIME;
}

const flavours = new WeakMap<Knex, Promise<'mariadb' | 'mysql'>>();

/** MariaDB or MySQL, asked once per connection pool. */
export function flavour(knex: Knex): Promise<'mariadb' | 'mysql'> {
  let known = flavours.get(knex);
  if (!known) {
    known = knex
      .raw('select version() as v')
      .then(([rows]: [{ v: string }[]]) => (/mariadb/i.test(String(rows[0]?.v)) ? 'mariadb' : 'mysql'));
    known.catch(() => flavours.delete(knex));
    flavours.set(knex, known);
  }
  return known;
}

/** MariaDB's (1969, which mysql2 gives no code) and MySQL's (3024) errors for a statement stopped by its time limit. */
const TIMEOUT_ERRNOS = new Set([1969, 3024]);

/** Whether `err` is the server's error for a statement stopped at its time limit. */
export function isTimeLimitError(err: unknown): boolean {
  return TIMEOUT_ERRNOS.has(Number((err as { errno?: unknown } | undefined)?.errno));
}

/** The time-limited text of a compiled SELECT, kept with it per limit (built once, not per run). */
const limitedTexts = new WeakMap<object, { flavour: string; limitMs: number; sql: string }>();

/**
 * A SELECT with a server-side time limit: `SET STATEMENT max_statement_time=… FOR` on MariaDB, the MAX_EXECUTION_TIME
 * hint on MySQL. The server stops the statement at the limit and the connection stays usable.
 */
export function limitedSelect(kind: 'mariadb' | 'mysql', compiled: { sql: string }, limitMs: number): string {
  const known = limitedTexts.get(compiled);
  if (known && known.limitMs === limitMs && known.flavour === kind) return known.sql;
  const sql =
    kind === 'mariadb'
      ? `SET STATEMENT max_statement_time=${(limitMs / 1000).toFixed(3)} FOR ${compiled.sql}`
      : compiled.sql.replace(/^select /i, `select /*+ MAX_EXECUTION_TIME(${Math.ceil(limitMs)}) */ `);
  limitedTexts.set(compiled, { flavour: kind, limitMs, sql });
  return sql;
}

/** The error of a read cancelled at its time limit. */
export function queryTimeout(limitMs: number): QueryTimeoutError {
  return new QueryTimeoutError(
    `The query took longer than max_query_time (${limitMs} ms) and was cancelled: narrow its filters, filter on an indexed field, or page with cursor instead of start`,
  );
}
