// The PostgreSQL backend (knex over node-postgres `pg`, client.ts): one pool whose sessions carry the statement and
// lock timeouts from their start-up packet, transactions through knex, the change versions kept by triggers
// (change-table.ts) and read as the change counter (change-counter.ts; table-changes.ts tells this process what each
// commit wrote), and the row store's named prepared statements (row-store.ts).
import knexFactory, { type Knex } from 'knex';
import { logger } from '../../log/logger';
import type { Backend, Database, DatabaseOptions } from '../backend';
import { DatabaseHealth } from '../health';
import { KNEX_LOG } from '../knex-log';
import { SavepointBatch } from '../savepoint-batch';
import { changeCounter } from './change-counter';
import { readChangeVersion } from './change-table';
import { PG_TYPES, postgresClient } from './client';
import { READ_TIMEOUT_SLACK_MS, limitConnection } from './read-timeout';
import { POSTGRES_ERRORS } from './errors';
import { PostgresGroupCommit } from './group-commit';
import { POSTGRES_PATCH_STATEMENTS } from './patch-statements';
import { postgresReplicaPositions } from './replica-positions';
import { PostgresRowStore } from './row-store';
import { POSTGRES_SCHEMA } from './schema';
import { TableChanges, type WatchedConnection } from './table-changes';
import { inPostgresTransaction } from './transaction';

/** An open PostgreSQL database: the core's Database. */
export type PostgresDatabase = Database;

/**
 * How many bulk items share one transaction, each in its own savepoint (db/savepoint-batch.ts): under 64, the
 * subtransactions a PostgreSQL backend keeps in shared memory before every snapshot must look them up on disk.
 */
const BULK_WINDOW = 50;

/** Connections per process at most. */
const POOL_MAX = 10;

/**
 * A knex over node-postgres for `url`: at most POOL_MAX connections, each with statement_timeout (db_statement_timeout)
 * and lock_timeout (db_busy_timeout) set at connect, no extra round trip, and a client-side limit a little past
 * statement_timeout for a server that stopped answering (read-timeout.ts).
 */
function postgresKnex(url: string, options: DatabaseOptions, changes: TableChanges): Knex {
  return knexFactory({
    client: postgresClient(),
    connection: {
      connectionString: url.replace(/^postgresql:/, 'postgres:'),
      types: PG_TYPES,
      statement_timeout: options.statementMs,
      lock_timeout: options.busyMs,
      connectionTimeoutMillis: options.acquireMs,
      application_name: 'doctype-service',
    } as Knex.PgConnectionConfig,
    acquireConnectionTimeout: options.acquireMs,
    log: KNEX_LOG,
    pool: {
      min: 0,
      max: POOL_MAX,
      createTimeoutMillis: options.acquireMs,
      afterCreate: (conn: WatchedConnection, done: (err: Error | null, conn: unknown) => void) => {
        changes.watch(conn);
        limitConnection(conn, options.statementMs + READ_TIMEOUT_SLACK_MS);
        done(null, conn);
      },
    },
    // An error's message carries the SQL with `?`, never the bound values (session tokens, passwords, user input).
    compileSqlOnError: false,
  });
}

/** Opens the PostgreSQL database of `url` (`postgres://user:pass@host:port/db`, or `postgresql://`). */
export function connectPostgres(url: string, options: DatabaseOptions): PostgresDatabase {
  const tableChanges = new TableChanges();
  const knex = postgresKnex(url, options, tableChanges);
  let group: PostgresGroupCommit | undefined;
  const health = new DatabaseHealth(() => knex.raw('select 1'), logger, POSTGRES_ERRORS);
  const db: PostgresDatabase = {
    knex,
    health,
    schema: POSTGRES_SCHEMA,
    patchStatements: POSTGRES_PATCH_STATEMENTS,
    errors: POSTGRES_ERRORS,
    bulkWrites: {
      window: BULK_WINDOW,
      openBatch: () => new SavepointBatch((work) => db.transaction(work, false), POSTGRES_ERRORS),
    },
    openRowStore: (registry) => new PostgresRowStore(db, registry),
    // Only `grouped` works (new documents' inserts) share transactions (group-commit.ts): works that lock existing rows
    // would wait on each other's batches. Every other write is a transaction of its own on a bound connection.
    transaction: (work, grouped) =>
      grouped
        ? (group ??= new PostgresGroupCommit(knex, options.statementMs)).run(work)
        : inPostgresTransaction(knex, work),
    changeVersion: (q, table) => readChangeVersion(q, table),
    replicaPositions: postgresReplicaPositions(knex),
    changeCounter: changeCounter(knex, tableChanges),
    close: async () => {
      health.stopProbe();
      await knex.destroy();
    },
  };
  return db;
}

/** PostgreSQL, for DATABASE_URL `postgres://…` or `postgresql://…`. */
export const POSTGRES: Backend = {
  name: 'postgres',
  schemes: ['postgres://', 'postgresql://'],
  connect: connectPostgres,
};
