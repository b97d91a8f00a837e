// Runs built list queries on the site's row store (each backend runs them its own way: runtime/db/<backend>/), within
// the site's max_query_time, through the remembered results where the backend has them, and on a read replica when
// the site has one fresh enough (replica-reads.ts). The SQL is knex's
// compilation of a checked plan, made once per cached plan and kept in the plan's slot.
import type { Knex } from 'knex';
import { queryTimeLimit } from '../db/query-time';
import type { Site } from '../site';
import type { CompiledSlot, RowSet, SelectSource } from '../db/compiled-query';
import type { Reading } from './change-stamps';
import { replicaCount, replicaReadsOf, replicaSelect } from './replica-reads';
import { resultCacheOf } from './result-cache';

/** Runs a list SELECT on the site's row store, within the site's max_query_time. */
export function runSelect(site: Site, source: SelectSource, slot: CompiledSlot = {}): Promise<RowSet> {
  const limitMs = queryTimeLimit(site.config?.site?.max_query_time);
  const primary = () => site.rows.select(source, slot, limitMs);
  const replicas = replicaReadsOf(site);
  const run = replicas
    ? (reading?: Reading) => replicaSelect(replicas, source, slot, limitMs, primary, reading)
    : primary;
  const cache = resultCacheOf(site);
  return cache ? cache.select(source, slot, run) : run();
}

/** Runs a COUNT query on the site's row store, within the site's max_query_time, and returns the number. */
export function runCount(
  site: Site,
  build: () => Knex.QueryBuilder,
  slot: CompiledSlot = {},
): Promise<number> {
  const limitMs = queryTimeLimit(site.config?.site?.max_query_time);
  const primary = () => site.rows.count(build, slot, limitMs);
  const replicas = replicaReadsOf(site);
  const run = replicas
    ? (reading?: Reading) => replicaCount(replicas, build, slot, limitMs, primary, reading)
    : primary;
  const cache = resultCacheOf(site);
  return cache ? cache.count(build, slot, run) : run();
}
