// Which database errors mean "the database is unavailable or too busy right now" (503 ServiceUnavailableError with
// Retry-After: the client may retry) rather than a bug (500): the system's and knex's here, each driver's in its
// backend folder (Database.errors). A deadlock's victim is told apart: the database is up, and the work may run again.
import type { DriverErrors } from './backend';

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

/**
 * The reason (a code) when `err`, or an error it wraps (`cause`), means the database is unavailable; undefined for
 * any other error. `driver`: the site's backend, whose own codes count too.
 */
export function unavailableReason(err: unknown, driver?: DriverErrors): string | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current !== null && typeof current === 'object'; depth++) {
    const e = current as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown };
    if (typeof e.code === 'string' && UNAVAILABLE_CODES.has(e.code)) return e.code;
    const reason = driver?.unavailableReason(e);
    if (reason) return reason;
    const message = typeof e.message === 'string' ? e.message : '';
    if (e.name === 'KnexTimeoutError' || message.startsWith('Knex: Timeout acquiring a connection'))
      return 'POOL_ACQUIRE_TIMEOUT';
    current = e.cause;
  }
  return undefined;
}

/**
 * True when `err`, or an error it wraps (`cause`), is the victim of a deadlock by `driver`'s report
 * (DriverErrors.isDeadlock): its transaction was rolled back, and running it again may succeed.
 */
export function isDeadlockError(err: unknown, driver: DriverErrors): boolean {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current !== null && typeof current === 'object'; depth++) {
    const e = current as { code?: unknown; errno?: unknown; cause?: unknown };
    if (driver.isDeadlock(e)) return true;
    current = e.cause;
  }
  return false;
}
