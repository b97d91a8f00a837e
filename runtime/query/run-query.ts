// Runs built list queries on the site's row store (each backend runs them its own way: runtime/db/<backend>/), within
// the site's max_query_time and through the remembered results where the backend has them. The SQL is knex's
// compilation of a checked plan, made once per cached plan and kept in the plan's slot.
import type { Knex } from 'knex';
import { queryTimeLimit } from '../db/query-time';
import type { Site } from '../site';
import { resultCacheOf, type RememberedQuery } from './result-cache';

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
  /** The key and tables of its remembered result, null when it may not be remembered (result-cache.ts). */
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

/** Runs a list SELECT on the site's row store, within the site's max_query_time. */
export function runSelect(site: Site, source: SelectSource, slot: CompiledSlot = {}): Promise<RowSet> {
  const run = () => site.rows.select(source, slot, queryTimeLimit(site.config?.site?.max_query_time));
  const cache = resultCacheOf(site);
  return cache ? cache.select(source, slot, run) : run();
}

/** Runs a COUNT query on the site's row store, within the site's max_query_time, and returns the number. */
export function runCount(
  site: Site,
  build: () => Knex.QueryBuilder,
  slot: CompiledSlot = {},
): Promise<number> {
  const run = () => site.rows.count(build, slot, queryTimeLimit(site.config?.site?.max_query_time));
  const cache = resultCacheOf(site);
  return cache ? cache.count(build, slot, run) : run();
}
