// better-sqlite3's errors the core treats alike on every backend: a database unavailable or too busy (503) and a
// duplicate key (409).
import type { DriverErrors } from '../backend';

/** A lock held past busy_timeout (db_busy_timeout), disk full, read-only file, I/O failure: by code family. */
const UNAVAILABLE_FAMILIES = new Set([
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_FULL',
  'SQLITE_READONLY',
  'SQLITE_IOERR',
  'SQLITE_CANTOPEN',
]);

/** The errors of better-sqlite3. */
export const SQLITE_ERRORS: DriverErrors = {
  // Extended codes (`SQLITE_IOERR_WRITE`, `SQLITE_READONLY_DBMOVED`, `SQLITE_BUSY_SNAPSHOT`) count by their family.
  unavailableReason({ code }) {
    if (typeof code !== 'string') return undefined;
    const family = /^SQLITE_[A-Z]+/.exec(code)?.[0];
    return family && UNAVAILABLE_FAMILIES.has(family) ? code : undefined;
  },
  // One writer at a time: a lock SQLite cannot take is SQLITE_BUSY (unavailable), never a deadlock.
  isDeadlock() {
    return false;
  },
  isDuplicateKey({ code }) {
    return typeof code === 'string' && /^SQLITE_CONSTRAINT_(PRIMARYKEY|UNIQUE)$/.test(code);
  },
  // "UNIQUE constraint failed: tabWidget.code" (a one-column index): the column.
  duplicateKeyName({ message }) {
    return typeof message === 'string' ? /constraint failed: [^,]*\.([^.,]+)$/.exec(message)?.[1] : undefined;
  },
  // SQLite's columns hold any length (up to its 1 GB string limit, far past the body limit).
  tooLongColumn() {
    return undefined;
  },
};
