// The server-side time limit of MariaDB/MySQL list and count reads (site config max_query_time): the SELECT text that
// carries it, and the server's error when it stops a statement.
import type { Knex } from 'knex';

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
