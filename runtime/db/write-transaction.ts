// One write transaction on the site's database. knex.transaction() builds a new knex instance for every transaction,
// which on SQLite costs more than the insert it wraps; there the transaction instead holds knex's single pooled
// connection (so no other query, in a transaction or not, runs on it meanwhile) and runs BEGIN IMMEDIATE, COMMIT and
// ROLLBACK as statements prepared once, and queries inside go through one long-lived knex bound to that connection.
// On MariaDB it is a knex transaction.
import type BetterSqlite3 from 'better-sqlite3';
import knexFactory, { type Knex } from 'knex';
import type { Database } from './connect';

/** The knex bound to one SQLite connection, its transaction statements, and whether a transaction holding it is open. */
interface BoundKnex {
  knex: Knex;
  begin: BetterSqlite3.Statement;
  commit: BetterSqlite3.Statement;
  rollback: BetterSqlite3.Statement;
  open: boolean;
}

const bound = new WeakMap<BetterSqlite3.Database, BoundKnex>();

/** Built once per connection: a knex whose queries run on `conn`, refused unless a transaction holds it. */
function boundKnex(knex: Knex, conn: BetterSqlite3.Database): BoundKnex {
  const known = bound.get(conn);
  if (known) return known;
  const entry: { knex?: Knex; open: boolean } = { open: false };
  const Base = knex.client.constructor as typeof Knex.Client;
  class HeldConnectionClient extends Base {
    // Nested knex transactions (trx.transaction(...)) become savepoints, as inside a knex transaction.
    transacting = true;

    override acquireConnection(): Promise<BetterSqlite3.Database> {
      // A query left running after its transaction ended must not land in the next one.
      if (!entry.open) return Promise.reject(new Error('Transaction query already complete'));
      return Promise.resolve(conn);
    }

    override releaseConnection(): Promise<void> {
      return Promise.resolve();
    }
  }
  const { useNullAsDefault } = knex.client.config as Knex.Config;
  const made: BoundKnex = Object.assign(entry, {
    knex: knexFactory({ client: HeldConnectionClient, useNullAsDefault: useNullAsDefault ?? true }),
    begin: conn.prepare('BEGIN IMMEDIATE'),
    commit: conn.prepare('COMMIT'),
    rollback: conn.prepare('ROLLBACK'),
  });
  bound.set(conn, made);
  return made;
}

/**
 * Runs `work` in one transaction: committed when it resolves, rolled back when it throws. `work` gets the knex to run
 * its queries with; any other query on an SQLite database waits until the transaction ends.
 */
export async function inWriteTransaction<T>(db: Database, work: (q: Knex) => Promise<T>): Promise<T> {
  if (db.dialect !== 'sqlite') return db.knex.transaction((trx) => work(trx));
  const client = db.knex.client as Knex.Client;
  const conn = (await client.acquireConnection()) as BetterSqlite3.Database;
  try {
    const entry = boundKnex(db.knex, conn);
    entry.begin.run();
    entry.open = true;
    try {
      const result = await work(entry.knex);
      entry.commit.run();
      return result;
    } finally {
      entry.open = false;
      if (conn.inTransaction) entry.rollback.run();
    }
  } finally {
    await client.releaseConnection(conn);
  }
}
