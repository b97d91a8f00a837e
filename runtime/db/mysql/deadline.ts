// One deadline per database call instead of one timeout per statement: a write transaction (its wait for a lane or a
// connection, its statements, its COMMIT, a rerun alone) and a pooled read (its wait for a connection and its
// statements) each end db_statement_timeout after they were asked for. A frozen server used to hold a create for the
// pool wait plus each statement's timeout in turn (6-8 s with every timeout at 2 s); now it answers 503 at the deadline.
import type { MysqlConnection } from './statements';

/** When the call now running on a connection must end (ms since the epoch), while one runs. */
const deadlines = new WeakMap<object, number>();

/** The error of a call past its deadline: mysql2's code for its own query timeout, which the core answers with 503. */
export function deadlineError(ms: number): Error {
  return Object.assign(new Error(`The database did not answer within ${ms} ms`), {
    code: 'PROTOCOL_SEQUENCE_TIMEOUT',
  });
}

/** Statements on `conn` end by `at` until `clearDeadline`. */
export function setDeadline(conn: MysqlConnection, at: number): void {
  deadlines.set(conn, at);
}

/** Statements on `conn` get their own timeout again. */
export function clearDeadline(conn: MysqlConnection): void {
  deadlines.delete(conn);
}

/** The time a statement on `conn` may take: `statementMs`, or less when the call it belongs to ends sooner (>= 1). */
export function statementLimit(conn: object, statementMs: number): number {
  const at = deadlines.get(conn);
  return at === undefined ? statementMs : Math.max(1, Math.min(statementMs, at - Date.now()));
}
