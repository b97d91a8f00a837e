// Which database errors mean "the database is unavailable or too busy right now" (503 ServiceUnavailableError with
// Retry-After: the client may retry) rather than a bug (500): the system's and knex's here, each driver's in its
// backend folder (Database.errors). A deadlock's victim is told apart: the database is up, and the work may run again.
import { AppError, InternalServerError, ServiceUnavailableError } from '../errors/errors';
import type { Database, DriverErrors } from './backend';
import { BatchRolledBackError } from './write-transaction';

/** System codes of an unreachable database, whatever the driver. */
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
]);

/** `err` and the errors it wraps (`cause`), outermost first, as far as five deep. */
function* causeChain(
  err: unknown,
): Generator<{ code?: unknown; errno?: unknown; name?: unknown; message?: unknown }> {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current !== null && typeof current === 'object'; depth++) {
    yield current as { code?: unknown; errno?: unknown; name?: unknown; message?: unknown };
    current = (current as { cause?: unknown }).cause;
  }
}

/**
 * Reasons that mean the server is up but a wait ran out (a lock held by another transaction past db_busy_timeout, a
 * statement the server itself ended at its timeout): 503 like an outage, but no outage of the database's health.
 */
const BUSY_REASONS = new Set([
  '55P03',
  '57014',
  'ER_LOCK_WAIT_TIMEOUT',
  'ER_STATEMENT_TIMEOUT',
  'SQLITE_BUSY',
]);

/** True when an unavailable `reason` (unavailableReason) is a wait that ran out on a server that answers. */
export function isBusyReason(reason: string): boolean {
  return BUSY_REASONS.has(reason) || reason.startsWith('SQLITE_BUSY_');
}

/**
 * The reason (a code) when `err`, or an error it wraps (`cause`), means the database is unavailable; undefined for
 * any other error. `driver`: the site's backend, whose own codes count too.
 */
export function unavailableReason(err: unknown, driver?: DriverErrors): string | undefined {
  for (const e of causeChain(err)) {
    if (typeof e.code === 'string' && UNAVAILABLE_CODES.has(e.code)) return e.code;
    const reason = driver?.unavailableReason(e);
    if (reason) return reason;
    const message = typeof e.message === 'string' ? e.message : '';
    if (e.name === 'KnexTimeoutError' || message.startsWith('Knex: Timeout acquiring a connection'))
      return 'POOL_ACQUIRE_TIMEOUT';
  }
  return undefined;
}

/**
 * True when `err`, or an error it wraps (`cause`), means the database did not answer or cannot be reached (an outage):
 * unavailable, and not a wait that ran out on a server that answers (isBusyReason). The next statement would wait as long.
 */
export function isOutageError(err: unknown, driver?: DriverErrors): boolean {
  const reason = unavailableReason(err, driver);
  return reason !== undefined && !isBusyReason(reason);
}

/**
 * True when `err`, or an error it wraps (`cause`), is the victim of a deadlock by `driver`'s report
 * (DriverErrors.isDeadlock): its transaction was rolled back, and running it again may succeed.
 */
export function isDeadlockError(err: unknown, driver: DriverErrors): boolean {
  for (const e of causeChain(err)) if (driver.isDeadlock(e)) return true;
  return false;
}

/** What a deadlock's victim is answered (the request, or a bulk item): 503, retry. */
export function deadlockVictimError(cause?: unknown): ServiceUnavailableError {
  return new ServiceUnavailableError('The write conflicted with another and was rolled back; retry', {
    cause,
    headers: { 'Retry-After': '1' },
  });
}

/** Seconds a client is told to wait (Retry-After) while the database is unavailable. */
const DATABASE_RETRY_AFTER_S = 5;

/**
 * A database error that means "unavailable" becomes 503 with Retry-After, reported to the database's health (`db`:
 * the site's); any other error is returned as it is. The error handler and the socket handshake answer through it.
 */
export function asUnavailable(err: unknown, db: Database | undefined): unknown {
  if (err instanceof AppError && !(err instanceof InternalServerError)) return err;
  // Another write of the same group commit ended the transaction (a deadlock, say): this request's own write was
  // sound and undone, so the client retries; the database is not down, so its health is not told.
  if (err instanceof BatchRolledBackError)
    return new ServiceUnavailableError('The write was rolled back with others of its transaction; retry', {
      cause: err,
      headers: { 'Retry-After': '1' },
    });
  // The victim of a deadlock (the server rolled its transaction back): sound too, and the database is not down.
  if (db && isDeadlockError(err, db.errors)) return deadlockVictimError(err);
  const reason = unavailableReason(err, db?.errors);
  if (!reason) return err;
  // A lock or statement wait that ran out: the server answers, so its health is not told (no outage line, svc_db_up).
  if (isBusyReason(reason))
    return new ServiceUnavailableError('The database is busy; retry shortly', {
      cause: err,
      headers: { 'Retry-After': '1' },
    });
  db?.health.reportUnavailable(reason);
  return new ServiceUnavailableError('The database is unavailable or busy; retry shortly', {
    cause: err,
    headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_S) },
  });
}
