// The MariaDB/MySQL backend (knex over mysql2): a read pool, a write pool whose sessions run with autocommit off (its
// transactions and group commit), and the change counter every write bumps (table-changes.ts).
import knexFactory, { type Knex } from 'knex';
import { logger } from '../../log/logger';
import type { Backend, Database, DatabaseOptions, DatabaseTimeouts } from '../backend';
import { DatabaseHealth } from '../health';
import { KNEX_LOG } from '../knex-log';
import { changeCounter } from './change-counter';
import { MYSQL_ERRORS } from './errors';
import { GROUP_COMMIT_LANES } from '../batch-lanes';
import { MysqlGroupCommit } from './group-commit';
import { mysqlReplicaPositions } from './replica-positions';
import { MysqlRowStore } from './row-store';
import { SavepointBatch } from '../savepoint-batch';
import { MYSQL_SCHEMA } from './schema';
import { MYSQL_PATCH_STATEMENTS } from './patch-statements';
import { CHANGE_TABLE, TableChanges, type WatchedConnection } from './table-changes';
import { setDeadline } from './deadline';
import { heldConnection, inMysqlTransaction } from './transaction';
import { limitedClient } from './limited-client';

/** An open MariaDB/MySQL database: the core's Database and what this folder's modules use besides. */
export interface MysqlDatabase extends Database {
  /**
   * The pool of write transactions, whose connections run with autocommit off. Only transaction.ts and
   * group-commit.ts take its connections, and always end what they did with COMMIT or ROLLBACK.
   */
  writeKnex: Knex;
  /** db_statement_timeout (ms), for statements run without knex (statements.ts). */
  statementMs: number;
  /** The change counter every write bumps (see table-changes.ts). */
  tableChanges: TableChanges;
  /**
   * The group commit of the write pool, made on first use with `lanes` lanes (tests ask for one before any grouped
   * write, so that which works share a batch does not depend on timing).
   */
  groupCommit(lanes?: number): MysqlGroupCommit;
}

/** How many bulk items share one transaction, each in its own savepoint (db/savepoint-batch.ts). */
const BULK_WINDOW = 50;

/** mysql2 prepared statements per MariaDB connection (10 per pool). */
const MAX_PREPARED_STATEMENTS = 200;

/**
 * A knex over mysql2 for `url`: at most 10 connections, each with innodb_lock_wait_timeout from db_busy_timeout and,
 * for `writes`, autocommit off (every statement runs in a transaction that only COMMIT or ROLLBACK ends).
 */
function mysqlKnex(url: string, timeouts: DatabaseTimeouts, writes: boolean, changes: TableChanges): Knex {
  const lockWaitS = Math.max(1, Math.ceil(timeouts.busyMs / 1000));
  const session = `SET SESSION innodb_lock_wait_timeout = ${lockWaitS}${writes ? ', autocommit = 0' : ''}`;
  return knexFactory({
    // Every statement within db_statement_timeout (limited-client.ts).
    client: limitedClient(timeouts.statementMs),
    connection: {
      uri: url.replace(/^mariadb:/, 'mysql:'),
      dateStrings: true,
      decimalNumbers: true,
      supportBigNumbers: true,
      charset: 'utf8mb4',
      timezone: 'Z',
      connectTimeout: timeouts.acquireMs,
      // Prepared statements kept per connection (mysql2 closes the least recently used past this): the server's
      // max_prepared_stmt_count (16382 by default) is shared by every connection of every process.
      maxPreparedStatements: MAX_PREPARED_STATEMENTS,
    } as Knex.MySql2ConnectionConfig,
    acquireConnectionTimeout: timeouts.acquireMs,
    log: KNEX_LOG,
    pool: {
      min: 0,
      max: 10,
      createTimeoutMillis: timeouts.acquireMs,
      afterCreate: (conn: WatchedConnection, done: (err: Error | null, conn: unknown) => void) => {
        changes.watch(conn, { autocommit: !writes });
        conn.query({ sql: session, timeout: timeouts.acquireMs }, (err: Error | null) => done(err, conn));
      },
    },
    // An error's message carries the SQL with `?`, never the bound values (session tokens, passwords, user input).
    compileSqlOnError: false,
  });
}

/** Opens the MariaDB/MySQL database of `url` (`mysql://user:pass@host:port/db`, or `mariadb://`). */
export function connectMysql(url: string, timeouts: DatabaseOptions): MysqlDatabase {
  const tableChanges = new TableChanges(timeouts.statementMs);
  const knex = mysqlKnex(url, timeouts, false, tableChanges);
  // Write transactions have connections of their own with autocommit off: the first statement of a work opens its
  // transaction, so a create is INSERT + COMMIT, not BEGIN + INSERT + COMMIT (transaction.ts).
  const writeKnex = mysqlKnex(url, timeouts, true, tableChanges);
  const health = new DatabaseHealth(() => knex.raw('select 1'), logger, MYSQL_ERRORS);
  let group: MysqlGroupCommit | undefined;
  const counter = changeCounter(knex, tableChanges, timeouts.statementMs);
  const db: MysqlDatabase = {
    knex,
    health,
    schema: MYSQL_SCHEMA,
    patchStatements: MYSQL_PATCH_STATEMENTS,
    errors: MYSQL_ERRORS,
    bulkWrites: {
      window: BULK_WINDOW,
      // Each item gets db_statement_timeout from its start (the held transaction's deadline runs from its call).
      openBatch: () =>
        new SavepointBatch(
          (work) => db.transaction(work, false),
          MYSQL_ERRORS,
          (q) => {
            const conn = heldConnection(q);
            if (conn) setDeadline(conn, Date.now() + timeouts.statementMs);
          },
        ),
    },
    writeKnex,
    statementMs: timeouts.statementMs,
    tableChanges,
    changeCounter: counter,
    replicaPositions: mysqlReplicaPositions(counter),
    groupCommit: (lanes = GROUP_COMMIT_LANES) =>
      (group ??= new MysqlGroupCommit(writeKnex, timeouts.statementMs, lanes)),
    openRowStore: (registry) => new MysqlRowStore(db, registry),
    // Only `grouped` works (new documents' inserts) share transactions: works that lock existing rows would wait on
    // each other's batches, and a deadlock would roll back the works of a whole batch.
    transaction: (work, grouped) => (grouped ? db.groupCommit().run(work) : inMysqlTransaction(db, work)),
    async changeVersion(q, table) {
      const [rows] = (await q.raw(`select sum(version) as v from \`${CHANGE_TABLE}\` where tab = ?`, [
        table,
      ])) as [{ v: unknown }[]];
      return `counter:${String(rows[0]?.v ?? '')}`;
    },
    close: async () => {
      health.stopProbe();
      await writeKnex.destroy();
      await knex.destroy();
    },
  };
  return db;
}

/** MariaDB or MySQL, for DATABASE_URL `mysql://…` or `mariadb://…`. */
export const MYSQL: Backend = { name: 'mysql', schemes: ['mysql://', 'mariadb://'], connect: connectMysql };
