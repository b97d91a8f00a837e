// One DocType's schema statements all or nothing, where DDL is transactional (SQLite, PostgreSQL): a savepoint of the
// sync's transaction, rolled back to when a statement fails, so the DocType is left as it was and the error goes on.
import type { Knex } from 'knex';

const SAVEPOINT = 'svc_migrate_doctype';

/** Runs `work` in a savepoint on `knex` (the sync's transaction): SchemaDialect.atomically of a transactional DDL. */
export async function inDdlSavepoint(knex: Knex, work: () => Promise<void>): Promise<void> {
  await knex.raw(`savepoint ${SAVEPOINT}`);
  try {
    await work();
  } catch (err) {
    await knex.raw(`rollback to savepoint ${SAVEPOINT}`);
    await knex.raw(`release savepoint ${SAVEPOINT}`);
    throw err;
  }
  await knex.raw(`release savepoint ${SAVEPOINT}`);
}
