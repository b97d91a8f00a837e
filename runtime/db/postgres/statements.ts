// PostgreSQL statements without the knex builder, for the row store's hot paths: SQL texts built once (per DocType and
// shape) and run as named prepared statements of node-postgres (parsed and planned once per connection, then only
// bound and executed; values travel apart from the text). Connections come from knex's pool (its acquire timeout and
// outage handling stay), or are the connection of the write transaction a call belongs to, so the statements commit and
// roll back with it.
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { ClientBase, QueryResult } from 'pg';
import { pgValue } from './client';
import { answeredWithin } from './read-timeout';

/** A node-postgres connection, as the row store uses it. */
export type PgConnection = ClientBase;

/** A PostgreSQL identifier, quoted. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** Statement names by text: a name is the text's hash, so every connection prepares a text under one name. */
const names = new Map<string, string>();

/** The prepared statement name of `text`. */
function statementName(text: string): string {
  let name = names.get(text);
  if (name === undefined) {
    if (names.size >= 10_000) names.clear();
    names.set(text, (name = `svc_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`));
  }
  return name;
}

/** Turns `?` placeholders (the row store's texts have no other `?`) into PostgreSQL's `$1`, `$2`, ... */
export function numbered(text: string): string {
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
}

/** How a prepared statement is sent: a connection's own `query`, past what wraps it. */
export type SendStatement = (config: {
  name: string;
  text: string;
  values: unknown[];
}) => Promise<QueryResult>;

/**
 * Runs the prepared statement `text` (with `$n` placeholders) with `values` on `conn`, through `query` when given (a
 * connection's own, past what wraps it).
 */
export async function execute<R extends Record<string, unknown> = Record<string, unknown>>(
  conn: PgConnection,
  text: string,
  values: readonly unknown[],
  query?: SendStatement,
): Promise<QueryResult<R>> {
  const config = { name: statementName(text), text, values: values.map(pgValue) };
  try {
    return await answeredWithin(
      conn,
      query ? (query(config) as Promise<QueryResult<R>>) : conn.query<R>(config),
    );
  } catch (err) {
    // As knex reports a failed query (compileSqlOnError false): the SQL with placeholders, never the bound values.
    if (err instanceof Error) err.message = `${text} - ${err.message}`;
    throw err;
  }
}

/**
 * The node-postgres connection of an open write transaction (what inWriteTransaction gives): undefined for the site's
 * knex (no transaction).
 */
export async function pgConnection(trx: Knex): Promise<PgConnection | undefined> {
  const client = trx.client as { transacting?: unknown; acquireConnection(): Promise<unknown> };
  if (client.transacting !== true) return undefined;
  return (await client.acquireConnection()) as PgConnection;
}

/** Runs `work` on a connection of knex's pool (reads of committed data: no transaction), released after. */
export async function onPooledConnection<T>(
  knex: Knex,
  work: (conn: PgConnection) => Promise<T>,
): Promise<T> {
  const client = knex.client as Knex.Client;
  const conn = (await client.acquireConnection()) as PgConnection;
  try {
    return await work(conn);
  } finally {
    await client.releaseConnection(conn);
  }
}
