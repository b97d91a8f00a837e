// Lock waits as the database shows them, for tests that make a deadlock on purpose and need one transaction to wait
// first (PostgreSQL's check finds the first waiter), however slow a loaded machine is to send its statement.
import type { Knex } from 'knex';
import { DB_KIND } from './test-site';

/** The id of `q`'s connection (its backend's pid on PostgreSQL); MariaDB and PostgreSQL only. */
export async function connectionOf(q: Knex): Promise<number> {
  if (DB_KIND === 'mysql') {
    const [rows] = (await q.raw('select connection_id() as id')) as [{ id: number }[]];
    return Number(rows[0]!.id);
  }
  return Number(((await q.raw('select pg_backend_pid() as id')) as { rows: { id: number }[] }).rows[0]!.id);
}

/** Resolves once connection `id` waits for a row lock, as `knex` (another connection) sees it; at most 10 s. */
export async function waitingForLock(knex: Knex, id: number): Promise<void> {
  const waiting = async () =>
    (DB_KIND === 'mysql'
      ? await knex('information_schema.innodb_trx')
          .where({ trx_mysql_thread_id: id, trx_state: 'LOCK WAIT' })
          .count({ n: '*' })
          .first()
      : await knex('pg_stat_activity').where({ pid: id, wait_event_type: 'Lock' }).count({ n: '*' }).first()
    )?.n;
  for (const end = Date.now() + 10_000; Number(await waiting()) === 0;) {
    if (Date.now() > end) throw new Error(`connection ${id} never waited for the lock`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
