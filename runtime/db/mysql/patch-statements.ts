// MariaDB/MySQL's statements for patches (db/patch-statements.ts): ALTER TABLE … RENAME COLUMN (MariaDB 10.5+, MySQL
// 8.0+) and DROP COLUMN, RENAME TABLE. Each DDL statement commits on its own.
import type { Knex } from 'knex';
import type { PatchStatements } from '../patch-statements';
import { quoteIdent } from './statements';

/** The patch statements of MariaDB/MySQL. */
export const MYSQL_PATCH_STATEMENTS: PatchStatements = {
  async renameColumn(knex, table, from, to) {
    await knex.raw(`ALTER TABLE ${quoteIdent(table)} RENAME COLUMN ${quoteIdent(from)} TO ${quoteIdent(to)}`);
  },

  async dropColumn(knex, table, column) {
    await knex.raw(`ALTER TABLE ${quoteIdent(table)} DROP COLUMN ${quoteIdent(column)}`);
  },

  async renameTable(knex, from, to) {
    await knex.raw(`RENAME TABLE ${quoteIdent(from)} TO ${quoteIdent(to)}`);
  },

  async run(knex, sql, bindings) {
    // mysql2 through knex: [rows, fields] for a statement that reads, [result header, undefined] otherwise.
    const [rows] = (await knex.raw(sql, [...bindings] as Knex.RawBinding[])) as [unknown, unknown];
    return Array.isArray(rows) ? (rows as Record<string, unknown>[]) : [];
  },

  // A failed statement undoes itself and leaves the transaction open (a savepoint would not survive a patch's DDL, which
  // commits).
  step: (_knex, work) => work(),
};
