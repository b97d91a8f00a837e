// The knex a write work is given: bound to the one pooled connection its transaction runs on, built once per
// connection (knex.transaction() builds a transactor per transaction instead). Used by each backend's write path.
import knexFactory, { type Knex } from 'knex';

/** Whether a work holds the connection now. */
export interface HeldState {
  active: boolean;
}

/**
 * A knex of client class `Base` whose queries run on `conn` while `state.active` (a work holds it) and are refused at
 * any other time, so a query left running after its work ended cannot land in another work's transaction. Nested knex
 * transactions (q.transaction(...)) become savepoints, as inside a knex transaction.
 */
export function heldConnectionKnex(
  Base: typeof Knex.Client,
  conn: unknown,
  state: HeldState,
  config: Omit<Knex.Config, 'client'> = {},
): Knex {
  class HeldConnectionClient extends Base {
    transacting = true;

    /**
     * A held work's statements always get the client's limit, on the clients that have one (MariaDB's limited-client,
     * PostgreSQL's client): its deadline or db_statement_timeout.
     */
    limitsStatements(): boolean {
      return true;
    }

    override acquireConnection(): Promise<unknown> {
      if (!state.active) return Promise.reject(new Error('Transaction query already complete'));
      return Promise.resolve(conn);
    }

    override releaseConnection(): Promise<void> {
      return Promise.resolve();
    }
  }
  return knexFactory({ ...config, client: HeldConnectionClient });
}
