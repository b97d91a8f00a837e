// The SQLite backend (better-sqlite3, WAL): knex's single write connection with the turn's group commit, a read
// connection with per-turn read snapshots, reader threads for slow reads and a WAL checkpointer thread.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import knexFactory from 'knex';
import { logger } from '../../log/logger';
import type { Backend, Database, DatabaseOptions } from '../backend';
import { DatabaseHealth } from '../health';
import { KNEX_LOG } from '../knex-log';
import { SQLITE_ERRORS } from './errors';
import { GroupCommit } from './group-commit';
import { LOCK_SPIN_MS, lockWaitingClient } from './lock-wait';
import { createReadSnapshots } from './read-snapshot';
import { ReaderPool } from './reader-pool';
import { SqliteRowStore } from './row-store';
import { sqliteSchema } from './schema';
import { SQLITE_PATCH_STATEMENTS } from './patch-statements';
import { FALLBACK_AUTOCHECKPOINT_PAGES, startWalCheckpointer } from './wal-checkpointer';

/** An open SQLite database: the core's Database and what this folder's modules use besides. */
export interface SqliteDatabase extends Database {
  /**
   * A separate read connection for prepared-statement reads on the hot path, inside the read snapshot this event-loop
   * turn's reads share (see read-snapshot.ts).
   */
  readConnection: () => BetterSqlite3.Database;
  /** Reader threads for reads that may be slow (see reader-pool.ts); none with reader_threads 0. */
  readerPool?: ReaderPool;
}

/** How many bulk items are started at once (they queue into one group commit, each in its own savepoint). */
const BULK_WINDOW = 64;

function sqliteFile(url: string): string {
  const file = url.replace(/^sqlite:(\/\/)?/, '');
  if (!file || file === ':memory:')
    throw new Error(
      'DATABASE_URL must name a SQLite file (in-memory databases cannot be shared by two connections)',
    );
  return file;
}

/** `busyMs`: the connection's busy_timeout (the reader's db_busy_timeout; the writer's LOCK_SPIN_MS, see lock-wait.ts). */
function tuneSqlite(db: BetterSqlite3.Database, busyMs: number, cacheKb: number | undefined): void {
  db.pragma('journal_mode = WAL');
  if (cacheKb !== undefined) db.pragma(`cache_size = ${-Math.floor(cacheKb)}`);
  db.pragma('synchronous = NORMAL');
  db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyMs))}`);
  // Checkpoints run in the worker of wal-checkpointer.ts; a connection of the event loop only steps in past this.
  db.pragma(`wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT_PAGES}`);
}

/** `PRAGMA data_version` per read connection: it moves whenever another connection commits. */
const dataVersions = new WeakMap<BetterSqlite3.Database, BetterSqlite3.Statement>();

/**
 * Opens the SQLite database of `url` (`sqlite:<path>`). Site config: reader_threads (reader threads at most; 0: none,
 * every read on the event loop), reader_nice (Linux: their nice value, default 19; 0 leaves the process's),
 * sqlite_cache_kb (each connection's page cache, in KiB; default better-sqlite3's 16000).
 */
export function connectSqlite(url: string, options: DatabaseOptions): SqliteDatabase {
  const { busyMs, site } = options;
  const cacheKb = site?.sqlite_cache_kb;
  const file = path.resolve(sqliteFile(url));
  mkdirSync(path.dirname(file), { recursive: true });
  // knex keeps one connection for SQLite (pool max 1): every write of this process goes through it.
  let writer: BetterSqlite3.Database | undefined;
  const knex = knexFactory({
    client: lockWaitingClient(busyMs),
    connection: { filename: file },
    useNullAsDefault: true,
    compileSqlOnError: false,
    log: KNEX_LOG,
    pool: {
      afterCreate: (conn: BetterSqlite3.Database, done: (err: Error | null, conn: unknown) => void) => {
        tuneSqlite(conn, Math.min(busyMs, LOCK_SPIN_MS), cacheKb);
        // The writer keeps its savepoints' journal in memory. Each bulk item and imported document writes in a
        // savepoint of the turn's batch; past 64 KiB SQLite moved that journal to a temp file, one pwrite per page
        // after that: an import of 20,000 ToDos made 332,000 pwrite calls, 49,500 with this (its CPU time 14-23%
        // lower in four paired runs). Held in memory: the pages an open savepoint changed (a table rebuild's too).
        conn.pragma('temp_store = MEMORY');
        writer = conn;
        done(null, conn);
      },
    },
  });
  const reader = new BetterSqlite3(file);
  tuneSqlite(reader, busyMs, cacheKb);
  const health = new DatabaseHealth(() => knex.raw('select 1'), logger, SQLITE_ERRORS);
  const checkpointer = startWalCheckpointer(file, cacheKb);
  const threads = Math.floor(site?.reader_threads ?? 2);
  // reader_threads 0: every read on the event loop, as before reader threads existed.
  const readerPool =
    threads >= 1
      ? new ReaderPool({
          file,
          threads,
          busyMs,
          nice: site?.reader_nice ?? 19,
          cacheKb,
        })
      : undefined;
  const readConnection = createReadSnapshots(reader, () => (writer?.open ? writer : undefined));
  let group: GroupCommit | undefined;
  const db: SqliteDatabase = {
    knex,
    health,
    schema: sqliteSchema(file),
    patchStatements: SQLITE_PATCH_STATEMENTS,
    errors: SQLITE_ERRORS,
    bulkWrites: { window: BULK_WINDOW },
    readConnection,
    ...(readerPool ? { readerPool } : {}),
    openRowStore: (registry) => new SqliteRowStore(db, registry),
    // Every write of a turn shares the group commit, whatever it does: SQLite has one writer at a time anyway.
    transaction: (work) => (group ??= new GroupCommit(knex, busyMs)).run(work),
    async changeVersion() {
      const conn = readConnection();
      let statement = dataVersions.get(conn);
      if (!statement) dataVersions.set(conn, (statement = conn.prepare('PRAGMA data_version').pluck()));
      return `sqlite:${String(statement.get())}`;
    },
    close: async () => {
      health.stopProbe();
      await readerPool?.close();
      await checkpointer.stop();
      reader.close();
      await knex.destroy();
    },
  };
  return db;
}

/** SQLite, for DATABASE_URL `sqlite:<path>`. */
export const SQLITE: Backend = { name: 'sqlite', schemes: ['sqlite:'], connect: connectSqlite };
