// The migration lock of a SQLite database: the write lock of a file of its own beside it (`<database>-migrate-lock`, an
// empty SQLite database), held for a whole migration run by a connection of its own. The database's own write lock
// cannot be it: the run writes through the database's connections (patches through the document path, each in its own
// transaction), which that lock would shut out. The operating system releases it when the process dies.
import { setTimeout as sleep } from 'node:timers/promises';
import BetterSqlite3 from 'better-sqlite3';

/** How long a migration waits for another process's run, in ms. */
const LOCK_WAIT_MS = 10 * 60_000;
/** How often a waiting process tries again, in ms (each try returns at once: the event loop never blocks). */
const RETRY_MS = 50;

const isBusy = (err: unknown) => (err as { code?: unknown }).code === 'SQLITE_BUSY';

/** The lock file of the SQLite database `file`. */
export function migrationLockFile(file: string): string {
  return `${file}-migrate-lock`;
}

/** Runs `work` holding the lock of `lockFile`; waits up to LOCK_WAIT_MS for another holder. */
export async function withMigrationLock<T>(lockFile: string, work: () => Promise<T>): Promise<T> {
  const lock = new BetterSqlite3(lockFile);
  try {
    lock.pragma('busy_timeout = 0');
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (;;) {
      try {
        lock.exec('BEGIN EXCLUSIVE');
        break;
      } catch (err) {
        if (!isBusy(err)) throw err;
        if (Date.now() > deadline)
          throw new Error(`another process has held the migration lock for ${LOCK_WAIT_MS / 1000} s`);
        await sleep(RETRY_MS);
      }
    }
    try {
      return await work();
    } finally {
      lock.exec('ROLLBACK');
    }
  } finally {
    lock.close();
  }
}
