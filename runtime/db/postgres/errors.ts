// node-postgres' errors the core treats alike on every backend: a database unavailable or too busy (503), a deadlock's
// victim (503, run again), a duplicate key (409) and a value too long for its column (400). PostgreSQL reports SQLSTATE
// codes; the driver reports a dropped connection by message.
import type { DriverErrors } from '../backend';
import { READ_TIMEOUT_CODE } from './read-timeout';

/** SQLSTATE codes of a server gone, restarting or overloaded. */
const UNAVAILABLE_CODES = new Set([
  // lock_timeout (db_busy_timeout) passed, statement_timeout (db_statement_timeout) passed
  '55P03',
  '57014',
  // shutting down, crash shutdown, starting up, too many connections, out of resources
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '53000',
  '53100',
  '53200',
  // read-only transaction (a standby, or a primary being demoted)
  '25006',
  // no answer from the server within the client's limit (read-timeout.ts)
  READ_TIMEOUT_CODE,
]);

/** Class 08: connection exceptions. */
const CONNECTION_CLASS = /^08/;

/** node-postgres' errors without a code for a connection that closed under the request (statements.ts puts the SQL first). */
const CLOSED_MESSAGES =
  /(^| - )Connection terminated|Client has encountered a connection error and is not queryable|(^| - )Client was closed and is not queryable|timeout exceeded when trying to connect/;

/** The errors of node-postgres. */
export const POSTGRES_ERRORS: DriverErrors = {
  unavailableReason({ code, message }) {
    if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || CONNECTION_CLASS.test(code))) return code;
    if (typeof message === 'string' && CLOSED_MESSAGES.test(message)) return 'CONNECTION_CLOSED';
    return undefined;
  },
  // Deadlock detected, serialization failure: the transaction (or, under a savepoint, its part since) was rolled back.
  isDeadlock({ code }) {
    return code === '40P01' || code === '40001';
  },
  isDuplicateKey({ code }) {
    return code === '23505';
  },
  duplicateKeyName({ constraint }) {
    return typeof constraint === 'string' ? constraint : undefined;
  },
  // string_data_right_truncation names the type, not the column.
  tooLongColumn({ code }) {
    return code === '22001' ? '' : undefined;
  },
};

/** PostgreSQL's code for a statement cancelled at statement_timeout (list reads: max_query_time). */
export const QUERY_CANCELED = '57014';
