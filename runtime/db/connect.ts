// Opens the database: knex for SQLite (better-sqlite3, WAL) or MariaDB/MySQL (mysql2), from DATABASE_URL.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import knexFactory, { type Knex } from 'knex';
import { createReadSnapshots } from './read-snapshot';
import { FALLBACK_AUTOCHECKPOINT_PAGES, startWalCheckpointer } from './wal-checkpointer';

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
  close(): Promise<void>;
}

function sqliteFile(url: string): string {
  const file = url.replace(/^sqlite:(\/\/)?/, '');
  if (!file || file === ':memory:')
    throw new Error(
      'DATABASE_URL must name a SQLite file (in-memory databases cannot be shared by two connections)',
    );
  return file;
}

function tuneSqlite(db: BetterSqlite3.Database): void {
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  // Checkpoints run in the worker of wal-checkpointer.ts; a connection of the event loop only steps in past this.
  db.pragma(`wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT_PAGES}`);
}

/** Opens the database named by `url` (`sqlite:<path>` or `mysql://user:pass@host:port/db`). */
export function connect(url: string): Database {
  if (url.startsWith('mysql://') || url.startsWith('mariadb://')) {
    const knex = knexFactory({
      client: 'mysql2',
      connection: {
        uri: url.replace(/^mariadb:/, 'mysql:'),
        dateStrings: true,
        decimalNumbers: true,
        supportBigNumbers: true,
        charset: 'utf8mb4',
        timezone: 'Z',
      } as Knex.MySql2ConnectionConfig,
      pool: { min: 0, max: 10 },
      // An error's message carries the SQL with `?`, never the bound values (session tokens, passwords, user input).
      compileSqlOnError: false,
    });
    return { knex, dialect: 'mysql', close: () => knex.destroy() };
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
    pool: {
      afterCreate: (conn: BetterSqlite3.Database, done: (err: Error | null, conn: unknown) => void) => {
        tuneSqlite(conn);
        writer = conn;
        done(null, conn);
      },
    },
  });
  const reader = new BetterSqlite3(file);
  tuneSqlite(reader);
  const checkpointer = startWalCheckpointer(file);
  return {
    knex,
    dialect: 'sqlite',
    readConnection: createReadSnapshots(reader, () => (writer?.open ? writer : undefined)),
    close: async () => {
      await checkpointer.stop();
      reader.close();
      await knex.destroy();
    },
  };
}
