// PostgreSQL's statements for patches (db/patch-statements.ts): ALTER TABLE … RENAME COLUMN / DROP COLUMN and
// ALTER TABLE … RENAME TO. Indexes and the change trigger follow a renamed column or table (the next schema sync gives a
// renamed table its change rows).
import type { Knex } from 'knex';
import type { PatchStatements } from '../patch-statements';
import { quoteIdent } from './statements';

/** Savepoints made by `step`, for their names. */
let steps = 0;

/** The patch statements of PostgreSQL. */
export const POSTGRES_PATCH_STATEMENTS: PatchStatements = {
  async renameColumn(knex, table, from, to) {
    await knex.raw(`ALTER TABLE ${quoteIdent(table)} RENAME COLUMN ${quoteIdent(from)} TO ${quoteIdent(to)}`);
  },

  async dropColumn(knex, table, column) {
    await knex.raw(`ALTER TABLE ${quoteIdent(table)} DROP COLUMN ${quoteIdent(column)}`);
  },

  async renameTable(knex, from, to) {
    await knex.raw(`ALTER TABLE ${quoteIdent(from)} RENAME TO ${quoteIdent(to)}`);
    // The primary key's index keeps its name (`<table>_pkey`, knex's); a table later made under the old name needs it.
    await knex.raw(
      `ALTER INDEX IF EXISTS ${quoteIdent(`${from}_pkey`)} RENAME TO ${quoteIdent(`${to}_pkey`)}`,
    );
  },

  async run(knex, sql, bindings) {
    // node-postgres through knex: a result whose `rows` is empty for a statement that returns none.
    const result = (await knex.raw(sql, [...bindings] as Knex.RawBinding[])) as { rows?: unknown };
    return Array.isArray(result.rows) ? (result.rows as Record<string, unknown>[]) : [];
  },

  async step(knex, work) {
    // A failed statement ends PostgreSQL's transaction: each step runs in a savepoint of its own (numbered, so that
    // steps a patch runs at once roll back to their own).
    const savepoint = quoteIdent(`svc_patch_step_${++steps}`);
    await knex.raw(`SAVEPOINT ${savepoint}`);
    let result;
    try {
      result = await work();
    } catch (err) {
      await knex.raw(`ROLLBACK TO SAVEPOINT ${savepoint}`);
      throw err;
    }
    await knex.raw(`RELEASE SAVEPOINT ${savepoint}`);
    return result;
  },
};
