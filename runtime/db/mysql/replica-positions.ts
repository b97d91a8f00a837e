// How fresh a MariaDB replica is: by the change counter (table-changes.ts), not by GTID. Every write bumps its tables'
// rows of `__Change` inside its own transaction, and a replica applies the primary's transactions whole and in commit
// order, so once a replica's version of every table a read reads is at least the primary's, read after the request
// asked, the replica holds every write to them acknowledged before. On a site that remembers results (query/
// result-cache.ts) the primary's versions are the change stamp the request read anyway, so a replica read costs the
// primary nothing more; per table, a replica behind on other tables still answers. A GTID position would cost the same
// read on each side, but covers every table at once and is compared per replication domain.
import type { Knex } from 'knex';
import type { ChangeCounter, Database, ReplicaPositions } from '../backend';

/** A position: the change version of each table read (a table missing has none). */
type Versions = ReadonlyMap<string, number>;

/** `SHOW SLAVE STATUS` as far as the lag is read from it. */
interface SlaveStatus {
  Slave_SQL_Running?: string;
  Seconds_Behind_Master?: number | null;
}

/** The replica lag MariaDB reports, or undefined while its replication is stopped (or it is not a replica). */
async function secondsBehind(knex: Knex): Promise<number | undefined> {
  const [rows] = (await knex.raw('SHOW SLAVE STATUS')) as [SlaveStatus[]];
  const status = rows[0];
  if (!status || status.Slave_SQL_Running !== 'Yes') return undefined;
  const seconds = status.Seconds_Behind_Master;
  return seconds === null || seconds === undefined ? undefined : Number(seconds);
}

/** The replica positions of a MariaDB primary whose change counter is `counter`. */
export function mysqlReplicaPositions(counter: ChangeCounter): ReplicaPositions<Versions> {
  return {
    perTable: true,
    primary: (tables) => counter.read(tables),
    fromChangeVersions: (versions) => versions,
    async replica(replica: Database, tables) {
      if (!replica.changeCounter) throw new Error('a MariaDB replica has a change counter');
      // No table asked: whether the replica answers at all.
      if (!tables.length) {
        await replica.knex.raw('select 1');
        return new Map();
      }
      return replica.changeCounter.read(tables);
    },
    covers(at, needed, tables) {
      for (const table of tables) {
        const want = needed.get(table);
        const have = at.get(table);
        if (want === undefined || have === undefined || have < want) return false;
      }
      return true;
    },
    merge(known, at) {
      if (!known) return at;
      const merged = new Map(known);
      for (const [table, version] of at)
        if (!(version <= (merged.get(table) ?? -1))) merged.set(table, version);
      return merged;
    },
    lagSeconds: (replica) => secondsBehind(replica.knex),
  };
}
