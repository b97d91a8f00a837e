// Write transactions on MariaDB/MySQL without knex.transaction(): that copies every property of the knex instance onto
// a new transactor per transaction (~45 us of CPU per create, more in garbage) before any SQL. Here a pooled mysql2
// connection gets a knex bound to it once, for as long as it lives, and a transaction is the work's statements on that
// connection (the row store's prepared statements and the work's knex queries), then COMMIT or ROLLBACK. The
// connections are the write pool's (MysqlDatabase.writeKnex), whose sessions run with autocommit off: the work's first
// statement opens the transaction, so no BEGIN round trip.
import type { Knex } from 'knex';
import { heldConnectionKnex } from '../held-connection';
import type { MysqlDatabase } from './backend';
import { acquireBy } from '../acquire-by';
import { clearDeadline, deadlineError, setDeadline } from './deadline';
import type { LimitedClientClass } from './limited-client';
import { command, type MysqlConnection } from './statements';

/** The knex bound to one pooled connection, usable while a work holds the connection. */
export interface BoundConnection {
  knex: Knex;
  /** True while a work runs: queries of its knex are refused at any other time. */
  active: boolean;
}

const bound = new WeakMap<MysqlConnection, BoundConnection>();

/** The bound connections by their knex (what a work is given as its transaction). */
const byKnex = new WeakMap<Knex, { conn: MysqlConnection; state: BoundConnection }>();

/**
 * The connection of the write transaction `trx` while its work runs, found without a turn of the event loop (knex's
 * acquireConnection answers with a promise); undefined for any other knex (a nested knex transaction, the site's).
 */
export function heldConnection(trx: Knex): MysqlConnection | undefined {
  const held = byKnex.get(trx);
  return held?.state.active ? held.conn : undefined;
}

/** Built once per connection: a knex whose queries run on `conn` (in its open transaction) while a work holds it. */
export function boundConnection(knex: Knex, conn: MysqlConnection): BoundConnection {
  const known = bound.get(conn);
  if (known) return known;
  const state = { active: false };
  // The site knex's client class (limited-client.ts): every statement within what is left of the work's deadline.
  const made: BoundConnection = Object.assign(state, {
    knex: heldConnectionKnex(knex.client.constructor as LimitedClientClass, conn, state, {
      compileSqlOnError: false,
    }),
  });
  bound.set(conn, made);
  byKnex.set(made.knex, { conn, state: made });
  return made;
}

/**
 * Runs `work` in one transaction on a connection of the write pool: the work, COMMIT when it resolves and ROLLBACK when
 * it throws (the work's error is what the caller sees). A connection whose ROLLBACK or COMMIT fails is destroyed, so
 * the pool never hands out one with a transaction open. The wait for the connection, the work's statements and the
 * COMMIT share one deadline, db_statement_timeout after the call (deadline.ts).
 */
export async function inMysqlTransaction<T>(db: MysqlDatabase, work: (q: Knex) => Promise<T>): Promise<T> {
  const { statementMs, writeKnex: knex } = db;
  const client = knex.client as Knex.Client;
  const at = Date.now() + statementMs;
  const conn = await acquireBy(
    client.acquireConnection() as Promise<MysqlConnection>,
    at,
    () => deadlineError(statementMs),
    (late) => client.releaseConnection(late),
  );
  const connection = boundConnection(knex, conn);
  setDeadline(conn, at);
  try {
    connection.active = true;
    let result: T;
    try {
      result = await work(connection.knex);
    } catch (err) {
      connection.active = false;
      await command(conn, 'ROLLBACK', statementMs).catch(() => conn.destroy());
      throw err;
    }
    connection.active = false;
    try {
      await command(conn, 'COMMIT', statementMs);
    } catch (err) {
      // Whether the commit happened is unknown: the connection is not reused.
      conn.destroy();
      throw err;
    }
    return result;
  } finally {
    connection.active = false;
    clearDeadline(conn);
    await client.releaseConnection(conn);
  }
}
