// A frozen server (or a network that drops packets) never answers, and PostgreSQL's own statement_timeout runs on that
// server: it cannot end the wait. Here the client does: a statement on a pooled connection that has no answer a little
// after db_statement_timeout fails with QUERY_READ_TIMEOUT (503), and its connection is closed at once (node-postgres'
// public `end` destroys the socket of a client with a query still active), so knex's pool, seeing it ended, never hands
// it out again. Statements of a knex transaction (the migration, key regeneration) and the migration
// lock's wait run as long as they take, as on MariaDB (mysql/limited-client.ts).
import { within } from '../within';

/** How long after the server's own statement_timeout the client stops waiting for an answer. */
export const READ_TIMEOUT_SLACK_MS = 500;

/** The code of the error a statement without an answer fails with (errors.ts answers it with 503). */
export const READ_TIMEOUT_CODE = 'QUERY_READ_TIMEOUT';

/** A connection, as far as it is closed here (node-postgres' public `end`). */
interface Endable {
  end(): Promise<void>;
}

/** The client-side limit of each pooled connection (ms), set when the pool makes it. */
const limits = new WeakMap<object, number>();

/** Statements on `conn` get an answer within `ms` or fail (set once, when the pool makes the connection). */
export function limitConnection(conn: object, ms: number): void {
  limits.set(conn, ms);
}

/**
 * `query` (a statement sent on `conn`), or QUERY_READ_TIMEOUT when it has no answer within `ms` (by default the
 * connection's limit; none for a connection made without one); `conn` is then closed.
 */
export function answeredWithin<T>(conn: object, query: Promise<T>, ms = limits.get(conn)): Promise<T> {
  if (ms === undefined) return query;
  return within(query, ms, () => {
    (conn as Endable).end().catch(() => undefined);
    return Object.assign(new Error(`The database did not answer within ${ms} ms`), {
      code: READ_TIMEOUT_CODE,
    });
  });
}
