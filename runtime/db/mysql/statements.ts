// MariaDB/MySQL statements without the knex builder: SQL texts built once (per DocType and shape, or a list plan's knex
// compilation kept in its slot) and run with mysql2 `execute` (a server-side prepared statement, cached per connection
// by mysql2; values are bound in the binary protocol, never escaped into the text). Connections come from knex's pool
// (its acquire timeout, afterCreate session settings and outage handling stay), or are the connection of the write
// transaction a call belongs to, so the statements commit and roll back with it.
import type { Knex } from 'knex';
import { acquireBy } from '../acquire-by';
import { clearDeadline, deadlineError, setDeadline, statementLimit } from './deadline';

/** A mysql2 field (column definition) of a result, as far as the row stores read it. */
export interface MysqlField {
  name: string;
}

/** mysql2's core connection, as far as the row stores use it. */
export interface MysqlConnection {
  execute(
    options: { sql: string; values: unknown[]; rowsAsArray?: boolean },
    callback: (err: Error | null, result: unknown, fields: MysqlField[] | undefined) => void,
  ): unknown;
  query(
    options: { sql: string; rowsAsArray?: boolean },
    callback: (err: Error | null, result: unknown) => void,
  ): unknown;
  destroy(): void;
}

/**
 * The mysql2 connection of an open MariaDB transaction (what inWriteTransaction gives): undefined for the site's knex
 * (no transaction) and on SQLite.
 */
export async function mysqlConnection(trx: Knex): Promise<MysqlConnection | undefined> {
  const client = trx.client as {
    driverName?: unknown;
    transacting?: unknown;
    acquireConnection(): Promise<unknown>;
  };
  if (client.driverName !== 'mysql2' || client.transacting !== true) return undefined;
  return (await client.acquireConnection()) as MysqlConnection;
}

/** A MariaDB/MySQL identifier, quoted. */
export function quoteIdent(name: string): string {
  return `\`${name.replace(/`/g, '``')}\``;
}

/** A value as mysql2 `execute` binds it (as knex would: undefined as NULL, booleans as 0/1). */
export function mysqlValue(value: unknown): unknown {
  if (value === undefined) return null;
  if (typeof value === 'boolean') return Number(value);
  return value;
}

/**
 * Settles with `run`'s callback, or past `statementMs` (db_statement_timeout; less when the call the statement belongs
 * to ends sooner: deadline.ts) destroys the connection, as knex's queries do (mysql2 would leave the late answer queued
 * on it), and fails with PROTOCOL_SEQUENCE_TIMEOUT (503). The timer is ours, not mysql2's: mysql2's starts only once a
 * statement is prepared, and preparing waits on the server too.
 */
function limited<T>(
  conn: MysqlConnection,
  sql: string,
  statementMs: number,
  run: (done: (err: Error | null, value?: T) => void) => void,
): Promise<T> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(
      () => {
        settled = true;
        conn.destroy();
        reject(deadlineError(statementMs));
      },
      statementLimit(conn, statementMs),
    );
    run((err, value) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) {
        // As knex reports a failed query (compileSqlOnError false): the SQL with `?`, never the bound values.
        err.message = `${sql} - ${err.message}`;
        reject(err);
      } else resolve(value as T);
    });
  });
}

/** Runs `sql` with `values` as a prepared statement on `conn`, within `statementMs` (see `limited`). */
export function execute<T = unknown>(
  conn: MysqlConnection,
  sql: string,
  values: unknown[],
  statementMs: number,
  rowsAsArray = false,
): Promise<{ rows: T; fields: MysqlField[] | undefined }> {
  return limited(conn, sql, statementMs, (done) =>
    conn.execute({ sql, values, rowsAsArray }, (err, rows, fields) => done(err, { rows: rows as T, fields })),
  );
}

/** Runs a SELECT whose values are in its text (no bound values) in the text protocol, rows as arrays, within `statementMs`. */
export function select<T = unknown>(
  conn: MysqlConnection,
  sql: string,
  statementMs: number,
): Promise<{ rows: T }> {
  return limited(conn, sql, statementMs, (done) =>
    conn.query({ sql, rowsAsArray: true }, (err, rows) => done(err, { rows: rows as T })),
  );
}

/** Runs a statement without a result set (BEGIN, COMMIT, SAVEPOINT) in the text protocol, within `statementMs`. */
export function command(conn: MysqlConnection, sql: string, statementMs: number): Promise<void> {
  return limited(conn, sql, statementMs, (done) => conn.query({ sql }, (err) => done(err)));
}

/**
 * Runs `work` on a connection of knex's pool (reads of committed data: no transaction), released after. The wait for the
 * connection and `work`'s statements share one deadline, `callMs` (db_statement_timeout) after `since` (the call, or
 * when the requests it answers asked).
 */
export async function onPooledConnection<T>(
  knex: Knex,
  work: (conn: MysqlConnection) => Promise<T>,
  callMs: number,
  since = Date.now(),
): Promise<T> {
  const client = knex.client as Knex.Client;
  const at = since + callMs;
  const conn = await acquireBy(
    client.acquireConnection() as Promise<MysqlConnection>,
    at,
    () => deadlineError(callMs),
    (late) => client.releaseConnection(late),
  );
  setDeadline(conn, at);
  try {
    return await work(conn);
  } finally {
    clearDeadline(conn);
    await client.releaseConnection(conn);
  }
}

/**
 * The parts of a call to a mysql2 connection's `query` or `execute` that a wrapper reads: its SQL text (the first
 * argument, or its `sql`), and its callback, the last argument, at `last`.
 */
export function statementCall(args: unknown[]): { sql: unknown; callback: unknown; last: number } {
  const first = args[0];
  const last = args.length - 1;
  return {
    sql: typeof first === 'string' ? first : (first as { sql?: unknown } | null)?.sql,
    callback: args[last],
    last,
  };
}
