// One write transaction on the site's database, as its backend runs them (Database.transaction): on SQLite a savepoint
// in the turn's group commit (sqlite/group-commit.ts), on MariaDB a share of a batch's transaction on the write pool
// (mysql/group-commit.ts) or a transaction of its own on a connection of that pool (mysql/transaction.ts).
import type { Knex } from 'knex';
import type { Database, WriteBatch } from './backend';

/** Where a write transaction joins a batch (bulk items); defined with the backend interfaces. */
export type { WriteBatch } from './backend';

/** Thrown to the works of a batch that the database rolled back as a whole (a failed statement can end the transaction). */
export class BatchRolledBackError extends Error {
  constructor(cause: unknown) {
    super('The write transaction was rolled back', { cause });
  }
}

/**
 * Runs `work` in one transaction: committed when it resolves (with the other writes its backend commits together; the
 * promise settles after the commit), rolled back when it throws. `work` gets the knex to run its queries with. With a
 * `batch` (bulk items), `work` runs in a savepoint of the batch's transaction and settles after the batch commits.
 * `grouped`: the work only inserts new documents' rows, and may share a transaction with other works where its backend
 * groups only such works (MariaDB: works that lock existing rows would wait on each other's batches).
 */
export function inWriteTransaction<T>(
  db: Database,
  work: (q: Knex) => Promise<T>,
  batch?: WriteBatch,
  grouped = false,
): Promise<T> {
  if (batch) return batch.run(work);
  return db.transaction(work, grouped);
}
