// The change versions of PostgreSQL's DocType tables: a statement trigger on each table bumps its row in `__Change`
// in the writing transaction, so a version moves exactly when a write to the table commits (what changeVersion reads,
// e.g. the Server Script cache across processes). Each backend process bumps a shard of its own (its pid modulo
// CHANGE_SHARDS), so concurrent writers of one table rarely wait on each other's counter row.
import type { Knex } from 'knex';
import type { DocTypeMeta } from '../../meta/types';
import { quoteIdent } from './statements';

/** The table of change versions: one row per DocType table and shard. */
export const CHANGE_TABLE = '__Change';

/** Counter rows per table. */
const CHANGE_SHARDS = 16;

/** The trigger function every DocType table's trigger calls. */
const BUMP_FUNCTION = 'svc_bump_change';

/** Change rows per INSERT (three bindings each). */
const ROWS_PER_INSERT = 300;

/** Creates the change table and the trigger function when missing. */
async function ensureChangeTable(knex: Knex): Promise<void> {
  await knex.raw(
    `create table if not exists ${quoteIdent(CHANGE_TABLE)} (tab varchar(160) not null, shard integer not null, version bigint not null default 0, primary key (tab, shard))`,
  );
  await knex.raw(
    `create or replace function ${BUMP_FUNCTION}() returns trigger language plpgsql as $$ begin update ${quoteIdent(CHANGE_TABLE)} set version = version + 1 where tab = TG_TABLE_NAME and shard = pg_backend_pid() % ${CHANGE_SHARDS}; return null; end $$`,
  );
}

/**
 * The change rows (at 0) and the trigger of every DocType table that lacks them. Writes only ever update the rows, so a
 * bump never inserts; a table without rows is one no remembered result may depend on.
 */
export async function ensureChangeRows(knex: Knex, doctypes: readonly DocTypeMeta[]): Promise<void> {
  await ensureChangeTable(knex);
  const known = new Set(((await knex(CHANGE_TABLE).distinct('tab')) as { tab: string }[]).map((r) => r.tab));
  const rows: { tab: string; shard: number; version: number }[] = [];
  for (const meta of doctypes) {
    if (meta.issingle || meta.isVirtual || known.has(meta.tableName)) continue;
    for (let shard = 0; shard < CHANGE_SHARDS; shard++) rows.push({ tab: meta.tableName, shard, version: 0 });
    await knex.raw(
      `create or replace trigger svc_change after insert or update or delete or truncate on ${quoteIdent(meta.tableName)} for each statement execute function ${BUMP_FUNCTION}()`,
    );
  }
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT)
    await knex(CHANGE_TABLE)
      .insert(rows.slice(i, i + ROWS_PER_INSERT))
      .onConflict(['tab', 'shard'])
      .ignore();
}

/** The change version of `table` as `q` sees it (a transaction: its snapshot). */
export async function readChangeVersion(q: Knex, table: string): Promise<string> {
  const result = (await q.raw(`select sum(version) as v from ${quoteIdent(CHANGE_TABLE)} where tab = ?`, [
    table,
  ])) as { rows: { v: unknown }[] };
  return `counter:${String(result.rows[0]?.v ?? '')}`;
}
