// mysql2's errors the core treats alike on every backend: a database unavailable or too busy (503), a deadlock's victim
// (503, run again), a duplicate key (409) and a value too long for its column (400).
import type { DriverErrors } from '../backend';

/** Codes of a server gone, frozen or overloaded. */
const UNAVAILABLE_CODES = new Set([
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
]);

/** mysql2's errors without a code for a connection that closed under the request. */
const CLOSED_MESSAGES = /Can't add new command when connection is in closed state|^Connection lost/;

/** The errors of mysql2 (MariaDB and MySQL). */
export const MYSQL_ERRORS: DriverErrors = {
  unavailableReason({ code, message }) {
    if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return code;
    if (typeof message === 'string' && CLOSED_MESSAGES.test(message)) return 'CONNECTION_CLOSED';
    return undefined;
  },
  // "Deadlock found when trying to get lock; try restarting transaction": InnoDB rolled the whole transaction back.
  isDeadlock({ code, errno }) {
    return code === 'ER_LOCK_DEADLOCK' || errno === 1213;
  },
  isDuplicateKey({ code, errno }) {
    return code === 'ER_DUP_ENTRY' || errno === 1062;
  },
  // "Duplicate entry '5' for key 'idx_tabWidget_code'" (MySQL 8 prefixes the table: 'tabWidget.idx_tabWidget_code').
  duplicateKeyName({ sqlMessage }) {
    const key = typeof sqlMessage === 'string' ? /for key '([^']+)'$/.exec(sqlMessage)?.[1] : undefined;
    return key?.slice(key.lastIndexOf('.') + 1);
  },
  // "Data too long for column 'notes' at row 1" (strict mode; a TEXT column holds 65,535 bytes). A value whose cut
  // falls inside a character is "Incorrect string value: '\xF0...' for column `db`.`tabWidget`.`notes` at row 1"
  // instead: with utf8mb4 tables and connections, only a cut makes a string incorrect.
  tooLongColumn({ code, errno, sqlMessage }) {
    const message = typeof sqlMessage === 'string' ? sqlMessage : '';
    if (code === 'ER_DATA_TOO_LONG' || errno === 1406) return /for column '([^']+)'/.exec(message)?.[1] ?? '';
    if (
      (code === 'ER_TRUNCATED_WRONG_VALUE_FOR_FIELD' || errno === 1366) &&
      message.startsWith('Incorrect string value')
    )
      return /for column (?:`[^`]*`\.)*`([^`]+)`/.exec(message)?.[1] ?? '';
    return undefined;
  },
};
