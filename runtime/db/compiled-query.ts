// A list query compiled once and run many times: knex's SQL and bindings, the slot a cached plan keeps them in (with
// what the row store learnt of them), and the rows as value lists. The row stores run these (db/<backend>/row-store.ts);
// query/run-query.ts hands them over within the site's limits.
import type { Knex } from 'knex';

/** What a compiled query's remembered result is found by: its SQL and bindings, and the tables it reads. */
export interface RememberedQuery {
  key: string;
  tables: string[];
}

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

/** Where a compiled query is kept between runs of the same plan (what the row store learnt of it, for its next run). */
export interface CompiledSlot {
  compiled?: CompiledQuery;
  /** The result columns in order. */
  columns?: string[];
  /** The compiled SELECT is packed (one JSON array per row). */
  packed?: boolean;
  /** The compiled query's key among the results the row store remembers itself. */
  key?: string;
  /** The query may be slow (by its plan) and runs off the event loop. */
  slow?: boolean;
  /** The key and tables of its remembered result, null when it may not be remembered (query/result-cache.ts). */
  remembered?: RememberedQuery | null;
}

/** Result rows as value lists, with the column names in select order. */
export interface RowSet {
  columns: string[];
  rows: unknown[][];
  /** Set when the rows are remembered: what readers derive from them once (by a key of theirs), dropped with them. */
  derived?: Map<object, unknown>;
}

/** How to build a SELECT: plain, or packed into one JSON array per row when `packedColumns` names its columns. */
export interface SelectSource {
  build(packed: boolean): Knex.QueryBuilder;
  packedColumns?: string[];
}
