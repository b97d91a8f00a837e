// Write transactions on PostgreSQL without knex.transaction(): that copies every property of the knex instance onto a
// new transactor per transaction before any SQL. Here a pooled node-postgres connection gets a knex bound to it once,
// for as long as it lives, and a transaction is BEGIN, the work's statements on that connection (the row store's
// prepared statements and the work's knex queries), then COMMIT or ROLLBACK. Each statement keeps the session's
// statement_timeout (db_statement_timeout); the wait for a connection is knex's acquire timeout.
import type { Knex } from 'knex';
import { heldConnectionKnex } from '../held-connection';
import type { PostgresClientClass } from './client';
import { answeredWithin } from './read-timeout';
import type { PgConnection } from './statements';

/** The knex bound to one pooled connection, usable while a work holds the connection. */
export interface BoundConnection {
  knex: Knex;
  /** True while a work runs: queries of its knex are refused at any other time. */
  active: boolean;
}

const bound = new WeakMap<PgConnection, BoundConnection>();

/** Built once per connection: a knex whose queries run on `conn` (in its open transaction) while a work holds it. */
export function boundConnection(knex: Knex, conn: PgConnection): BoundConnection {
  const known = bound.get(conn);
  if (known) return known;
  const state = { active: false };
  // The row store runs its statements on this connection too while the work holds it (statements.ts pgConnection).
  // The site knex's client class (client.ts): every statement here gets the connection's client-side limit.
  const made: BoundConnection = Object.assign(state, {
    knex: heldConnectionKnex(knex.client.constructor as PostgresClientClass, conn, state, {
      compileSqlOnError: false,
    }),
  });
  bound.set(conn, made);
  return made;
}

/** Sends a transaction command (BEGIN, COMMIT, ROLLBACK); resolves with its command tag. */
export async function command(conn: PgConnection, sql: string): Promise<string> {
  const result = await answeredWithin(conn, conn.query(sql));
  return result.command;
}

/** The error of a COMMIT that answered ROLLBACK: a statement failed, so the transaction was rolled back whole. */
export function rolledBackError(): Error {
  return Object.assign(
    new Error('The transaction was rolled back at COMMIT (a statement in it had failed)'),
    {
      code: '40000',
    },
  );
}

/**
 * Runs `work` in one transaction on a pooled connection: BEGIN, the work, COMMIT when it resolves and ROLLBACK when it
 * throws (the work's error is what the caller sees). A connection whose ROLLBACK or COMMIT fails is closed, so the
 * pool never hands out one with a transaction open.
 */
export async function inPostgresTransaction<T>(knex: Knex, work: (q: Knex) => Promise<T>): Promise<T> {
  const client = knex.client as Knex.Client;
  const conn = (await client.acquireConnection()) as PgConnection;
  const connection = boundConnection(knex, conn);
  let broken = false;
  try {
    await command(conn, 'BEGIN');
    connection.active = true;
    let result: T;
    try {
      result = await work(connection.knex);
    } catch (err) {
      connection.active = false;
      await command(conn, 'ROLLBACK').catch(() => (broken = true));
      throw err;
    }
    connection.active = false;
    let tag: string;
    try {
      tag = await command(conn, 'COMMIT');
    } catch (err) {
      // Whether the commit happened is unknown: the connection is not reused.
      broken = true;
      throw err;
    }
    if (tag === 'ROLLBACK') throw rolledBackError();
    return result;
  } finally {
    connection.active = false;
    await releaseOrClose(client, conn, broken);
  }
}

/** Gives `conn` back to the pool, or, when `broken`, closes it first (the pool then drops it). */
export async function releaseOrClose(
  client: Knex.Client,
  conn: PgConnection,
  broken: boolean,
): Promise<void> {
  if (broken) await (conn as PgConnection & { end(): Promise<void> }).end().catch(() => undefined);
  await client.releaseConnection(conn);
}
