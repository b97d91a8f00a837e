// Waiting for SQLite's write lock without blocking the event loop. better-sqlite3 runs SQLite's busy handler on the
// event loop thread: with busy_timeout at db_busy_timeout, a write behind another process's lock froze the process for
// the whole timeout, and the writes queued behind it each waited a timeout more (503 after 5, 10, 15 and 25 s, ping
// stalled meanwhile). The write connection now waits LOCK_SPIN_MS at most in SQLite; past that a call pauses on a
// timer (1 ms, doubling to MAX_PAUSE_MS) and tries again, until its deadline: db_busy_timeout after it was asked for.
import type BetterSqlite3 from 'better-sqlite3';
import type { Knex } from 'knex';
import { knexDialect } from '../knex-dialect';

/** The write connection's busy_timeout (ms): how long one attempt may hold the event loop. */
export const LOCK_SPIN_MS = 5;
/** The longest pause between two attempts (ms): a released lock is taken within about this. */
const MAX_PAUSE_MS = 40;

/** Whether `err` is SQLite's "database is locked" (SQLITE_BUSY and its extended codes). */
export function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/** The error of a write that waited `busyMs` for the lock: SQLITE_BUSY, which the core answers with 503. */
export function lockWaitError(busyMs: number): Error {
  return Object.assign(new Error(`database is locked: waited ${busyMs} ms (db_busy_timeout)`), {
    code: 'SQLITE_BUSY',
  });
}

/**
 * Runs `attempt` until it succeeds, fails with anything but SQLITE_BUSY, or `at` (ms since the epoch) has passed; between
 * two busy attempts it pauses on a timer, so the event loop answers other requests meanwhile.
 */
export async function untilLocked<T>(at: number, attempt: () => T | Promise<T>): Promise<T> {
  for (let pause = 1; ; pause = Math.min(pause * 2, MAX_PAUSE_MS)) {
    try {
      return await attempt();
    } catch (err) {
      const left = at - Date.now();
      if (!isBusy(err) || left <= 0) throw err;
      await new Promise((resume) => setTimeout(resume, Math.min(pause, left)));
    }
  }
}

/**
 * knex's better-sqlite3 client whose statements outside a transaction (sessions, OAuth rows, jobs) wait for the lock as
 * the group commit does: `untilLocked`, db_busy_timeout from the statement's start. A statement inside a transaction is
 * not tried again (its transaction may have to give way); it fails after LOCK_SPIN_MS, as the transaction's caller
 * expects of a lock. It overrides knex's public `query` (Knex.Client), which runs one statement on a connection.
 */
export function lockWaitingClient(busyMs: number): typeof Knex.Client {
  return class LockWaitingClient extends knexDialect('better-sqlite3') {
    override query(connection: BetterSqlite3.Database, obj: unknown): Promise<unknown> {
      if (connection.inTransaction) return super.query(connection, obj) as Promise<unknown>;
      return untilLocked(Date.now() + busyMs, () => super.query(connection, obj) as Promise<unknown>);
    }
  };
}
