// Opens the database: knex for SQLite (better-sqlite3, WAL) or MariaDB/MySQL (mysql2), from DATABASE_URL.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import knexFactory, { type Knex } from 'knex';
import { logger } from '../log/logger';
import { DatabaseHealth } from './health';
import { createReadSnapshots } from './sqlite/read-snapshot';
import { ReaderPool } from './sqlite/reader-pool';
import { TableChanges, type WatchedConnection } from './mysql/table-changes';
import type { ResultCacheLimits } from '../query/result-cache';
import { FALLBACK_AUTOCHECKPOINT_PAGES, startWalCheckpointer } from './sqlite/wal-checkpointer';

/** The two database kinds the service runs on. */
export type Dialect = 'sqlite' | 'mysql';

/** An open database. */
export interface Database {
  knex: Knex;
  dialect: Dialect;
  /**
   * SQLite only: a separate read connection for prepared-statement reads on the hot path, inside the read snapshot
   * this event-loop turn's reads share (see read-snapshot.ts).
   */
  readConnection?: () => BetterSqlite3.Database;
  /** SQLite only: reader threads for reads that may be slow (see reader-pool.ts). */
  readerPool?: ReaderPool;
  /**
   * MariaDB/MySQL: the pool of write transactions (inWriteTransaction), whose connections run with autocommit off.
   * Only mysql-transaction.ts takes its connections, and always ends what they did with COMMIT or ROLLBACK.
   */
  writeKnex?: Knex;
  /** MariaDB/MySQL: db_statement_timeout (ms), for statements run without knex (mysql-statements.ts). */
  statementMs?: number;
  /** MariaDB/MySQL: the change counter every write bumps (see table-changes.ts). */
  changes?: TableChanges;
  /** How many list results may be remembered (site config result_cache_*; set when the site opens). */
  resultCache?: ResultCacheLimits;
  /** Outages as requests meet them: one log line per change, /api/ready's answer. */
  health: DatabaseHealth;
  close(): Promise<void>;
}

/** How long the database may keep a request waiting (site config db_*_timeout, ms). */
export interface DatabaseTimeouts {
  statementMs: number;
  acquireMs: number;
  busyMs: number;
  /** SQLite: reader threads at most (site config reader_threads; 0: none, every read on the event loop). */
  readerThreads?: number;
  /** SQLite, Linux: the reader threads' nice value (site config reader_nice, default 19; 0 leaves the process's). */
  readerNice?: number;
  /** SQLite: each connection's page cache, in KiB (site config sqlite_cache_kb; default better-sqlite3's 16000). */
  sqliteCacheKb?: number;
}

/** The defaults of the site config keys. */
export const DEFAULT_TIMEOUTS: DatabaseTimeouts = { statementMs: 8000, acquireMs: 5000, busyMs: 5000 };

/** mysql2 prepared statements per MariaDB connection (10 per pool). */
const MAX_PREPARED_STATEMENTS = 200;

/** knex's own messages (a stack for each failed pool acquire) go to the debug log: outages log through health. */
const KNEX_LOG = {
  warn: (message: unknown) => logger().debug({ knex: String(message) }, 'knex warning'),
  error: (message: unknown) => logger().debug({ knex: String(message) }, 'knex error'),
  deprecate: (message: unknown) => logger().debug({ knex: String(message) }, 'knex deprecation'),
  debug: () => undefined,
};

/** mysql2's connection as knex hands it to `_query`. */
interface MysqlConnection {
  destroy(): void;
}

/**
 * Every MariaDB statement gets mysql2's `timeout` (db_statement_timeout); a statement past it destroys its
 * connection (mysql2 would leave the late answer queued on it), so the pool opens a fresh one and a frozen server
 * costs each request at most the timeout.
 */
function limitStatements(knex: Knex, statementMs: number): void {
  const client = knex.client as {
    _query: (
      connection: MysqlConnection,
      obj: { sql?: string; options?: object } | string,
    ) => Promise<unknown>;
  };
  const query = client._query.bind(client);
  client._query = async (connection, obj) => {
    if (obj && typeof obj === 'object') obj.options = { timeout: statementMs, ...obj.options };
    try {
      return await query(connection, obj);
    } catch (err) {
      if ((err as { code?: string }).code === 'PROTOCOL_SEQUENCE_TIMEOUT') connection.destroy();
      throw err;
    }
  };
}

function sqliteFile(url: string): string {
  const file = url.replace(/^sqlite:(\/\/)?/, '');
  if (!file || file === ':memory:')
    throw new Error(
      'DATABASE_URL must name a SQLite file (in-memory databases cannot be shared by two connections)',
    );
  return file;
}

function tuneSqlite(db: BetterSqlite3.Database, busyMs: number, cacheKb: number | undefined): void {
  db.pragma('journal_mode = WAL');
  if (cacheKb !== undefined) db.pragma(`cache_size = ${-Math.floor(cacheKb)}`);
  db.pragma('synchronous = NORMAL');
  db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyMs))}`);
  // Checkpoints run in the worker of wal-checkpointer.ts; a connection of the event loop only steps in past this.
  db.pragma(`wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT_PAGES}`);
}

/**
 * A knex over mysql2 for `url`: at most 10 connections, each with innodb_lock_wait_timeout from db_busy_timeout and,
 * for `writes`, autocommit off (every statement runs in a transaction that only COMMIT or ROLLBACK ends).
 */
function mysqlKnex(url: string, timeouts: DatabaseTimeouts, writes: boolean, changes: TableChanges): Knex {
  const lockWaitS = Math.max(1, Math.ceil(timeouts.busyMs / 1000));
  const session = `SET SESSION innodb_lock_wait_timeout = ${lockWaitS}${writes ? ', autocommit = 0' : ''}`;
  const knex = knexFactory({
    client: 'mysql2',
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
  limitStatements(knex, timeouts.statementMs);
  return knex;
}

/** Opens the database named by `url` (`sqlite:<path>` or `mysql://user:pass@host:port/db`). */
export function connect(url: string, timeouts: DatabaseTimeouts = DEFAULT_TIMEOUTS): Database {
  if (url.startsWith('mysql://') || url.startsWith('mariadb://')) {
    const changes = new TableChanges(timeouts.statementMs);
    const knex = mysqlKnex(url, timeouts, false, changes);
    // Write transactions have connections of their own with autocommit off: the first statement of a work opens its
    // transaction, so a create is INSERT + COMMIT, not BEGIN + INSERT + COMMIT (mysql-transaction.ts).
    const writeKnex = mysqlKnex(url, timeouts, true, changes);
    const health = new DatabaseHealth(() => knex.raw('select 1'), logger);
    return {
      knex,
      dialect: 'mysql',
      writeKnex,
      statementMs: timeouts.statementMs,
      changes,
      health,
      close: async () => {
        health.stopProbe();
        await writeKnex.destroy();
        await knex.destroy();
      },
    };
  }
  if (!url.startsWith('sqlite:'))
    throw new Error(`unsupported DATABASE_URL ${url}: use sqlite:<path> or mysql://...`);
  const file = path.resolve(sqliteFile(url));
  mkdirSync(path.dirname(file), { recursive: true });
  // knex keeps one connection for SQLite (pool max 1): every write of this process goes through it.
  let writer: BetterSqlite3.Database | undefined;
  const knex = knexFactory({
    client: 'better-sqlite3',
    connection: { filename: file },
    useNullAsDefault: true,
    compileSqlOnError: false,
    log: KNEX_LOG,
    pool: {
      afterCreate: (conn: BetterSqlite3.Database, done: (err: Error | null, conn: unknown) => void) => {
        tuneSqlite(conn, timeouts.busyMs, timeouts.sqliteCacheKb);
        writer = conn;
        done(null, conn);
      },
    },
  });
  const reader = new BetterSqlite3(file);
  tuneSqlite(reader, timeouts.busyMs, timeouts.sqliteCacheKb);
  const health = new DatabaseHealth(() => knex.raw('select 1'), logger);
  const checkpointer = startWalCheckpointer(file, timeouts.sqliteCacheKb);
  const threads = Math.floor(timeouts.readerThreads ?? 2);
  // reader_threads 0: every read on the event loop, as before reader threads existed.
  const readerPool =
    threads >= 1
      ? new ReaderPool({
          file,
          threads,
          busyMs: timeouts.busyMs,
          nice: timeouts.readerNice ?? 19,
          cacheKb: timeouts.sqliteCacheKb,
        })
      : undefined;
  return {
    knex,
    dialect: 'sqlite',
    readConnection: createReadSnapshots(reader, () => (writer?.open ? writer : undefined)),
    readerPool,
    health,
    close: async () => {
      health.stopProbe();
      await readerPool?.close();
      await checkpointer.stop();
      reader.close();
      await knex.destroy();
    },
  };
}
