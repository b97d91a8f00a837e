// knex's mysql2 client with a time limit on each statement: mysql2's `timeout`, db_statement_timeout or what is left of
// the call the statement belongs to (deadline.ts). A statement past it destroys its connection (mysql2 would leave the
// late answer queued on it), so the pool opens a fresh one and a frozen server costs each request at most the limit.
// It overrides knex's public `query` (Knex.Client), which runs one statement on a connection.
import type { Knex } from 'knex';
import { knexDialect } from '../knex-dialect';
import { statementLimit } from './deadline';
import type { MysqlConnection } from './statements';

/** A statement as knex hands it to `query`: its text, or an object whose `options` go to mysql2. */
type KnexStatement = { sql?: string; options?: object } | string;

/** The knex client of limitedClient's class. */
export interface LimitedClient extends Knex.Client {
  /** Whether this client's statements get the limit. */
  limitsStatements(): boolean;
}

/** knex's client class extended by limitedClient. */
export type LimitedClientClass = Pick<typeof Knex.Client, keyof typeof Knex.Client> &
  (new (config: Knex.Config) => LimitedClient);

/** The class of the site's and the write pool's knex client, with `statementMs` (db_statement_timeout). */
export function limitedClient(statementMs: number): LimitedClientClass {
  return class LimitedMysqlClient extends knexDialect('mysql2') {
    /**
     * Whether this client's statements get the limit: the pool's do; those of a knex transaction (migration patches,
     * key regeneration) run as long as they take. Held connections override it (held-connection.ts).
     */
    limitsStatements(): boolean {
      return (this as { transacting?: unknown }).transacting !== true;
    }

    override query(connection: MysqlConnection, obj: KnexStatement): Promise<unknown> {
      if (!this.limitsStatements()) return super.query(connection, obj) as Promise<unknown>;
      if (obj && typeof obj === 'object')
        obj.options = { timeout: statementLimit(connection, statementMs), ...obj.options };
      return (super.query(connection, obj) as Promise<unknown>).catch((err: unknown) => {
        if ((err as { code?: string } | null)?.code === 'PROTOCOL_SEQUENCE_TIMEOUT') connection.destroy();
        throw err;
      });
    }
  };
}
