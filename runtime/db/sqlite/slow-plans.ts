// Which SQLite reads may be slow, decided from SQLite's own query plan (EXPLAIN QUERY PLAN, once per SQL text): those
// run in a reader thread (reader-pool.ts), the others on the event loop's read connection.
import type BetterSqlite3 from 'better-sqlite3';

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
