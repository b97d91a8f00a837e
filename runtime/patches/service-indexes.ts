// The indexes this service gave a table's columns (db/migrate.ts names them idx_<table>_<column>), dropped before a
// patch renames or drops what they cover: the schema sync, told to look at the DocType again, creates them under the
// new names where the DocType still asks for them, instead of leaving an index named after what no longer exists.
import type { Knex } from 'knex';
import type { Database } from '../db/backend';
import { SYSTEM_TABLES, indexName } from '../db/migrate';

/** Drops the service's indexes on `columns` of `table` (those that exist). */
export async function dropServiceIndexes(
  db: Database,
  knex: Knex,
  table: string,
  columns: Iterable<string>,
): Promise<void> {
  const existing = await db.schema.indexes(knex, table);
  for (const column of columns) {
    const name = indexName(table, column);
    if (existing.has(name)) await knex.schema.alterTable(table, (t) => t.dropIndex([], name));
  }
}

/** The columns of `table`. */
export async function tableColumns(knex: Knex, table: string): Promise<Set<string>> {
  return new Set(Object.keys(await knex(table).columnInfo()));
}

/** Makes the next schema sync look at `doctype`'s table again (its indexes under their new names) by forgetting its hash. */
export async function resyncDocType(knex: Knex, doctype: string): Promise<void> {
  await knex(SYSTEM_TABLES.schema).where({ doctype }).delete();
}
