// MariaDB/MySQL's schema DDL for migrate.ts: catalogue reads from information_schema, utf8mb4 tables, each DDL statement
// on its own (MariaDB commits each implicitly), and the change counter's rows of every DocType table.
import type { Knex } from 'knex';
import type { DocTypeMeta } from '../../meta/types';
import type { SchemaDialect } from '../backend';
import { CHANGE_SHARDS, CHANGE_TABLE } from './table-changes';

/** Change rows per INSERT (three bindings each). */
const CHANGE_ROWS_PER_INSERT = 300;

/**
 * The change versions of every DocType table (CHANGE_SHARDS rows each), created at 0 when missing. Writes only ever
 * update them, so a bump takes no gap lock; a table without rows is one a remembered result may not depend on.
 */
async function ensureChangeRows(knex: Knex, doctypes: readonly DocTypeMeta[]): Promise<void> {
  if (!(await knex.schema.hasTable(CHANGE_TABLE)))
    await knex.schema.createTable(CHANGE_TABLE, (t) => {
      t.string('tab', 160).notNullable();
      t.integer('shard').notNullable();
      t.bigInteger('version').notNullable().defaultTo(0);
      t.primary(['tab', 'shard']);
    });
  const known = new Set(((await knex(CHANGE_TABLE).distinct('tab')) as { tab: string }[]).map((r) => r.tab));
  const rows: { tab: string; shard: number; version: number }[] = [];
  for (const meta of doctypes) {
    if (meta.issingle || meta.isVirtual || known.has(meta.tableName)) continue;
    for (let shard = 0; shard < CHANGE_SHARDS; shard++) rows.push({ tab: meta.tableName, shard, version: 0 });
  }
  for (let i = 0; i < rows.length; i += CHANGE_ROWS_PER_INSERT)
    await knex(CHANGE_TABLE)
      .insert(rows.slice(i, i + CHANGE_ROWS_PER_INSERT))
      .onConflict(['tab', 'shard'])
      .ignore();
}

/** The schema DDL of MariaDB/MySQL. */
export const MYSQL_SCHEMA: SchemaDialect = {
  async tables(knex) {
    const rows = await knex('information_schema.tables')
      .select({ name: 'table_name' })
      .where('table_schema', knex.raw('database()'));
    return new Set((rows as { name: string }[]).map((r) => r.name));
  },

  async indexes(knex, table) {
    const rows = await knex('information_schema.statistics')
      .select({ name: 'index_name' })
      .where('table_name', table)
      .andWhere('table_schema', knex.raw('database()'));
    return new Set((rows as { name: string }[]).map((r) => r.name));
  },

  tableOptions(table) {
    table.charset('utf8mb4');
  },

  sequenceKey(table, column) {
    table.bigIncrements(column);
  },

  async createTables(_knex, builders) {
    for (const builder of builders) await builder;
  },

  /** MariaDB commits each DDL statement implicitly, so the statements run as they are; then the change rows. */
  async applySync(knex, doctypes, sync) {
    await sync(knex);
    await ensureChangeRows(knex, doctypes);
  },
};
