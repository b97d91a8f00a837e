// One write transaction on the site's database. On SQLite it is a savepoint in the turn's group commit (group-commit.ts):
// knex.transaction() builds a new knex instance for every transaction, and a commit per request costs more than the
// insert it wraps. On MariaDB it is a share of a batch's transaction on the write pool (mysql-group-commit.ts), or
// without a write pool BEGIN ... COMMIT on a pooled connection with a knex bound to it (mysql-transaction.ts).
import type { Knex } from 'knex';
import type { Database } from './connect';
import { GroupCommit } from './sqlite/group-commit';
import { GROUP_COMMIT_LANES, MysqlGroupCommit } from './mysql/group-commit';
import { inMysqlTransaction } from './mysql/transaction';
import type { WriteBatch } from './mysql/savepoint-batch';

const groups = new WeakMap<Knex, GroupCommit>();
const mysqlGroups = new WeakMap<Knex, MysqlGroupCommit>();

/**
 * Runs `work` in one transaction: committed when it resolves (on SQLite together with the other writes of the same
 * turn, on MariaDB with those that queued meanwhile; the promise settles after the commit), rolled back when it throws. `work` gets the knex to run its queries
 * with; any other query on an SQLite database waits until the commit. With a `batch` (MariaDB bulk items), `work` runs
 * in a savepoint of the batch's transaction and settles after the batch commits. On MariaDB only `grouped` works (new
 * documents' inserts) share transactions: works that lock existing rows would wait on each other's batches, and a
 * deadlock would roll back the works of a whole batch.
 */
export function inWriteTransaction<T>(
  db: Database,
  work: (q: Knex) => Promise<T>,
  batch?: WriteBatch,
  grouped = false,
): Promise<T> {
  if (batch) return batch.run(work);
  if (db.dialect !== 'sqlite') {
    if (!db.writeKnex || !grouped) return inMysqlTransaction(db, work);
    return mysqlGroupCommit(db).run(work);
  }
  let group = groups.get(db.knex);
  if (!group) groups.set(db.knex, (group = new GroupCommit(db.knex)));
  return group.run(work);
}

/**
 * The group commit of a MariaDB database's write pool (which must exist), made on first use with `lanes` lanes (tests
 * ask for one before any grouped write, so that which works share a batch does not depend on timing).
 */
export function mysqlGroupCommit(db: Database, lanes = GROUP_COMMIT_LANES): MysqlGroupCommit {
  const writeKnex = db.writeKnex as Knex;
  let group = mysqlGroups.get(writeKnex);
  if (!group) mysqlGroups.set(writeKnex, (group = new MysqlGroupCommit(writeKnex, db.statementMs, lanes)));
  return group;
}
