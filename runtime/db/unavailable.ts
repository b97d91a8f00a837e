// Which database errors mean "the database is unavailable or too busy right now" (503 ServiceUnavailableError with
// Retry-After: the client may retry) rather than a bug (500).

/** Driver and system codes of an unreachable, restarting, frozen or overloaded database (mysql2, knex, better-sqlite3). */
const UNAVAILABLE_CODES = new Set([
  // network: refused, reset, timed out, unreachable
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  // mysql2: the server went away, a statement passed db_statement_timeout, the pool's connection closed
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'PROTOCOL_ENQUEUE_AFTER_FATAL_ERROR',
  'PROTOCOL_ENQUEUE_AFTER_QUIT',
  // MariaDB: lock wait past innodb_lock_wait_timeout (db_busy_timeout), shutting down, too many connections,
  // statement past max_statement_time, read-only
  'ER_LOCK_WAIT_TIMEOUT',
  'ER_SERVER_SHUTDOWN',
  'ER_CON_COUNT_ERROR',
  'ER_TOO_MANY_USER_CONNECTIONS',
  'ER_STATEMENT_TIMEOUT',
  'ER_QUERY_INTERRUPTED',
  'ER_OPTION_PREVENTS_STATEMENT',
  // SQLite: a lock held past busy_timeout (db_busy_timeout), disk full, read-only file, I/O failure
  'SQLITE_BUSY',
  'SQLITE_BUSY_SNAPSHOT',
  'SQLITE_BUSY_RECOVERY',
  'SQLITE_BUSY_TIMEOUT',
  'SQLITE_LOCKED',
  'SQLITE_FULL',
  'SQLITE_READONLY',
  'SQLITE_IOERR',
  'SQLITE_CANTOPEN',
]);

/** mysql2's errors without a code for a connection that closed under the request. */
const CLOSED_MESSAGES = /Can't add new command when connection is in closed state|^Connection lost/;

/**
 * The reason (a code) when `err`, or an error it wraps (`cause`), means the database is unavailable; undefined for
 * any other error. SQLite's extended codes (`SQLITE_IOERR_WRITE`, `SQLITE_READONLY_DBMOVED`) count by their family.
 */
export function unavailableReason(err: unknown): string | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current !== null && typeof current === 'object'; depth++) {
    const e = current as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown };
    if (typeof e.code === 'string') {
      if (UNAVAILABLE_CODES.has(e.code)) return e.code;
      const family = /^(SQLITE_[A-Z]+)_/.exec(e.code)?.[1];
      if (family && UNAVAILABLE_CODES.has(family)) return e.code;
    }
    const message = typeof e.message === 'string' ? e.message : '';
    if (e.name === 'KnexTimeoutError' || message.startsWith('Knex: Timeout acquiring a connection'))
      return 'POOL_ACQUIRE_TIMEOUT';
    if (CLOSED_MESSAGES.test(message)) return 'CONNECTION_CLOSED';
    current = e.cause;
  }
  return undefined;
}
