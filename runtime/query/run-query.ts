// Runs built list queries on the site's row store (each backend runs them its own way: runtime/db/<backend>/), within
// the site's max_query_time and through the remembered results where the backend has them. The SQL is knex's
// compilation of a checked plan, made once per cached plan and kept in the plan's slot.
import type { Knex } from 'knex';
import { queryTimeLimit } from '../db/query-time';
import type { Site } from '../site';
import type { CompiledSlot, RowSet, SelectSource } from '../db/compiled-query';
import { resultCacheOf } from './result-cache';

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
