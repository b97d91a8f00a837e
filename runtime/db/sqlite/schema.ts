// SQLite's schema DDL for migrate.ts: catalogue reads from sqlite_master, CREATE TABLE statements run in one `exec`,
// and the whole sync in one transaction (SQLite DDL is transactional).
import type BetterSqlite3 from 'better-sqlite3';
import type { Knex } from 'knex';
import type { SchemaDialect } from '../backend';

/** The schema DDL of SQLite. */
export const SQLITE_SCHEMA: SchemaDialect = {
  async tables(knex) {
    const rows = await knex('sqlite_master').select({ name: 'name' }).where({ type: 'table' });
    return new Set((rows as { name: string }[]).map((r) => r.name));
  },

  async indexes(knex, table) {
    const rows = await knex('sqlite_master')
      .select({ name: 'name' })
      .where({ type: 'index', tbl_name: table });
    return new Set((rows as { name: string }[]).map((r) => r.name));
  },

  tableOptions() {
    // SQLite text is UTF-8 whatever the table says.
  },

  sequenceKey(table, column) {
    // A rowid alias (INTEGER PRIMARY KEY: the next id is the largest plus one), without AUTOINCREMENT, whose
    // sqlite_sequence row would be one more write per insert (the event log is written with every document).
    table.specificType(column, 'integer').primary();
  },

  /**
   * The statements knex builds run in one `exec` on the connection: knex prepares each statement, and a DDL statement
   * prepared on its own costs about a third more (thousands of them for large sets).
   */
  async createTables(knex: Knex, builders: Knex.SchemaBuilder[]) {
    const statements = builders.flatMap((b) => b.toSQL() as { sql: string; bindings: readonly unknown[] }[]);
    // Column defaults are written into the SQL text on SQLite; a statement with bindings could not run through exec.
    if (statements.some((s) => s.bindings.length)) throw new Error('a CREATE TABLE statement has bindings');
    const connection = (await knex.client.acquireConnection()) as BetterSqlite3.Database;
    try {
      connection.exec(statements.map((s) => s.sql).join(';\n'));
    } finally {
      await knex.client.releaseConnection(connection);
    }
  },

  /** One transaction instead of one commit per statement (thousands for large sets). */
  async applySync(knex, _doctypes, sync) {
    await knex.transaction((trx) => sync(trx));
  },
};
