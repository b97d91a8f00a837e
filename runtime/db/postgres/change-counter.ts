// The change counter of a PostgreSQL database (change-table.ts's triggers bump it in every write's transaction), as the
// core reads it: the versions of a set of tables in one small named prepared statement on a pooled connection.
import type { Knex } from 'knex';
import type { ChangeCounter } from '../backend';
import { CHANGE_TABLE } from './change-table';
import { execute, numbered, onPooledConnection, quoteIdent } from './statements';
import type { TableChanges } from './table-changes';

/** One text for any set of tables (an array parameter), so each connection prepares it once. */
const VERSIONS = numbered(
  `select tab, sum(version) as v from ${quoteIdent(CHANGE_TABLE)} where tab = any(?::text[]) group by tab`,
);

/** The change counter of the database of `knex`, whose commits `changes` reports. */
export function changeCounter(knex: Knex, changes: TableChanges): ChangeCounter {
  return {
    onCommit(listener) {
      changes.committed = listener;
    },
    async read(tables) {
      // The connection's statement_timeout (db_statement_timeout) bounds the read; knex's acquire timeout the wait.
      const { rows } = await onPooledConnection(knex, (conn) =>
        execute<{ tab: string; v: unknown }>(conn, VERSIONS, [tables]),
      );
      const versions = new Map<string, number>();
      for (const r of rows) versions.set(r.tab, Number(r.v));
      return versions;
    },
  };
}
