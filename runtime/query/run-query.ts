// Runs built queries. On SQLite the compiled SELECT runs on the read connection as a cached prepared statement (outside
// any transaction, like document reads); on MariaDB through knex. The SQL is knex's compilation of a checked plan.
import type { Statement } from 'better-sqlite3';
import type { Knex } from 'knex';
import { prepared } from '../db/sqlite-statements';
import type { Site } from '../site';

/** A compiled query: SQL text from knex and its bound values. */
export interface CompiledQuery {
  sql: string;
  bindings: readonly unknown[];
}

/** Compiles a knex query once, for running it many times. */
export function compile(query: Knex.QueryBuilder): CompiledQuery {
  const { sql, bindings } = query.toSQL();
  return { sql, bindings };
}

/** Where a compiled query is kept between runs of the same plan. */
export interface CompiledSlot {
  compiled?: CompiledQuery;
  /** The result columns when the compiled SELECT is packed (one JSON array per row). */
  packed?: string[];
}

/** Result rows as value lists, with the column names in select order. */
export interface RowSet {
  columns: string[];
  rows: unknown[][];
}

/** How to build a SELECT: plain, or packed into one JSON array per row when `packedColumns` names its columns. */
export interface SelectSource {
  build(packed: boolean): Knex.QueryBuilder;
  packedColumns?: string[];
}

/**
 * Runs a SELECT; on SQLite the compilation is kept in `slot` for the next run, and rows come back as value lists
 * (better-sqlite3 builds an object per row several times slower than an array), or packed when the source allows.
 */
export async function runSelect(site: Site, source: SelectSource, slot: CompiledSlot = {}): Promise<RowSet> {
  const { reader } = site.db;
  if (!reader) {
    const objects = (await source.build(false)) as Record<string, unknown>[];
    const columns = objects[0] ? Object.keys(objects[0]) : [];
    return { columns, rows: objects.map((o) => columns.map((c) => o[c])) };
  }
  if (!slot.compiled) {
    slot.packed = source.packedColumns;
    slot.compiled = compile(source.build(slot.packed !== undefined));
  }
  const stmt = prepared(reader, slot.compiled.sql);
  if (slot.packed) return { columns: slot.packed, rows: (stmt.pluck(true).all(...slot.compiled.bindings) as string[]).map(parseRow) };
  let columns = columnNames.get(stmt);
  if (!columns) columnNames.set(stmt, (columns = stmt.columns().map((c) => c.name)));
  return { columns, rows: stmt.raw(true).all(...slot.compiled.bindings) as unknown[][] };
}

const parseRow = (text: string): unknown[] => JSON.parse(text) as unknown[];

/** Column names per prepared statement (better-sqlite3 builds them anew on every `columns()` call). */
const columnNames = new WeakMap<Statement, string[]>();

interface CountCache {
  version: unknown;
  counts: Map<string, number>;
  versionStatement: Statement;
}
const countCaches = new WeakMap<object, CountCache>();
const MAX_COUNTS = 1000;

/**
 * Runs a COUNT query and returns the number. On SQLite a count is remembered until the database changes: the read
 * connection's `PRAGMA data_version` moves whenever another connection (every write goes through knex's) commits, so
 * a remembered count is never stale. MariaDB counts every time.
 */
export async function runCount(site: Site, build: () => Knex.QueryBuilder, slot: CompiledSlot = {}): Promise<number> {
  const { reader } = site.db;
  if (!reader) {
    const [row] = (await build()) as { count: number | string }[];
    return Number(row?.count ?? 0);
  }
  let cache = countCaches.get(reader);
  if (!cache) countCaches.set(reader, (cache = { version: undefined, counts: new Map(), versionStatement: reader.prepare('PRAGMA data_version').pluck() }));
  const version = cache.versionStatement.get();
  if (version !== cache.version) {
    cache.counts.clear();
    cache.version = version;
  }
  slot.compiled ??= compile(build());
  const key = `${slot.compiled.sql}\u0000${JSON.stringify(slot.compiled.bindings)}`;
  let count = cache.counts.get(key);
  if (count === undefined) {
    count = Number(prepared(reader, slot.compiled.sql).pluck().get(...slot.compiled.bindings) ?? 0);
    if (cache.counts.size >= MAX_COUNTS) cache.counts.clear();
    cache.counts.set(key, count);
  }
  return count;
}
