// A write the change counter does not see, for the tests that prove a result is remembered (the control of freshness
// tests): on MariaDB an UPDATE on a connection the service does not own (the service bumps the counter from its own
// connections); on PostgreSQL an UPDATE with the change triggers off for its transaction (session_replication_role
// `replica` fires no ordinary trigger; the test role is a superuser).
import knexFactory from 'knex';
import { DB_KIND } from './test-site';

/** Whether the suite's database keeps a change counter (remembered lists, counts and documents). */
export const HAS_CHANGE_COUNTER = DB_KIND === 'mysql' || DB_KIND === 'postgres';

/** Sets `values` on the row `name` of `table` (on the database of `url`) without moving its change version. */
export async function unbumpedUpdate(
  url: string,
  table: string,
  name: string,
  values: Record<string, unknown>,
): Promise<void> {
  const postgres = DB_KIND === 'postgres';
  const outsider = knexFactory({ client: postgres ? 'pg' : 'mysql2', connection: url });
  try {
    if (!postgres) {
      await outsider(table).where('name', name).update(values);
      return;
    }
    await outsider.transaction(async (trx) => {
      await trx.raw('set local session_replication_role = replica');
      await trx(table).where('name', name).update(values);
    });
  } finally {
    await outsider.destroy();
  }
}
