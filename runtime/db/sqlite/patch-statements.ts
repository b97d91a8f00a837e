// SQLite's statements for patches (db/patch-statements.ts): ALTER TABLE … RENAME COLUMN / DROP COLUMN (SQLite 3.35+)
// and ALTER TABLE … RENAME TO. Each is one statement; SQLite rewrites the indexes that name a renamed column itself.
import type { Knex } from 'knex';
import type { PatchStatements } from '../patch-statements';
import { quoteIdent } from './statements';

/** The patch statements of SQLite. */
export const SQLITE_PATCH_STATEMENTS: PatchStatements = {
  async renameColumn(knex, table, from, to) {
    await knex.raw(`ALTER TABLE ${quoteIdent(table)} RENAME COLUMN ${quoteIdent(from)} TO ${quoteIdent(to)}`);
  },

  async dropColumn(knex, table, column) {
    await knex.raw(`ALTER TABLE ${quoteIdent(table)} DROP COLUMN ${quoteIdent(column)}`);
  },

  async renameTable(knex, from, to) {
    await knex.raw(`ALTER TABLE ${quoteIdent(from)} RENAME TO ${quoteIdent(to)}`);
  },

  async run(knex, sql, bindings) {
    // better-sqlite3 through knex: an array of rows for a statement that reads, a run result otherwise.
    const result: unknown = await knex.raw(sql, [...bindings] as Knex.RawBinding[]);
    return Array.isArray(result) ? (result as Record<string, unknown>[]) : [];
  },

  // A failed statement undoes itself and leaves the transaction open.
  step: (_knex, work) => work(),
};
