// How fresh a PostgreSQL standby is: by WAL position. The primary's pg_current_wal_insert_lsn(), read after the request
// asked, is past the commit record of every transaction acknowledged before (whatever synchronous_commit says: an
// asynchronous commit is acknowledged once inserted, before it is written); a standby whose pg_last_wal_replay_lsn() has
// reached it has replayed those commits, and its queries see them. One number per side, whatever the tables, and no
// change counter needed. (WAL the primary inserts without flushing at once, such as a page pruned by a read, reaches the
// standby within wal_writer_delay; reads meanwhile go to the primary.)
import type { Knex } from 'knex';
import type { Database, ReplicaPositions } from '../backend';

/** A WAL position (`16/B374D848`) as one number; -1 for none. */
function lsn(text: unknown): bigint {
  const match = typeof text === 'string' ? /^([0-9A-F]+)\/([0-9A-F]+)$/i.exec(text) : null;
  if (!match) return -1n;
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

/** The one value `sql` selects (as `v`). */
async function value(knex: Knex, sql: string): Promise<unknown> {
  const result = (await knex.raw(sql)) as { rows: { v: unknown }[] };
  return result.rows[0]?.v;
}

/**
 * The standby's replay lag: 0 when it has replayed all it received, else the time since the last transaction it
 * replayed committed on the primary; undefined when it is not a standby.
 */
const LAG_SQL = `select case when not pg_is_in_recovery() then null
  when pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() then 0
  else extract(epoch from now() - pg_last_xact_replay_timestamp()) end as v`;

/** The replica positions of a PostgreSQL primary opened as `knex`. */
export function postgresReplicaPositions(knex: Knex): ReplicaPositions<bigint> {
  return {
    perTable: false,
    primary: async () => lsn(await value(knex, 'select pg_current_wal_insert_lsn()::text as v')),
    // Change versions (where a change counter keeps them) say nothing of the WAL.
    fromChangeVersions: () => undefined,
    // A server that is not in recovery answers null: it is no standby of this primary, and never covers a read.
    replica: async (replica: Database) =>
      lsn(await value(replica.knex, 'select pg_last_wal_replay_lsn()::text as v')),
    covers: (at, needed) => at >= 0n && at >= needed,
    merge: (known, at) => (known === undefined || at > known ? at : known),
    async lagSeconds(replica: Database) {
      const seconds = await value(replica.knex, LAG_SQL);
      return seconds === null || seconds === undefined ? undefined : Number(seconds);
    },
  };
}
