// A write that waits on another connection's lock past db_busy_timeout is 503 ServiceUnavailableError with
// Retry-After (SQLite: busy_timeout; MariaDB: innodb_lock_wait_timeout), not a 500, nothing is written, and the
// database is not reported down.
import BetterSqlite3 from 'better-sqlite3';
import knexFactory, { type Knex } from 'knex';
import { DB_KIND, createTestSite, type TestSite } from '../helpers/test-site';

let t: TestSite;
let todo: string;
beforeAll(async () => {
  t = await createTestSite({ site: { db_busy_timeout: 300 } });
  todo = (
    await t.http.post('/api/resource/ToDo').set('Authorization', t.adminToken).send({ description: 'locked' })
  ).body.data.name;
});
afterAll(() => t.close());

/** Holds a write lock on the ToDo row (MariaDB, PostgreSQL) or the whole database (SQLite) from another connection. */
async function holdLock(): Promise<() => Promise<void>> {
  if (DB_KIND === 'sqlite') {
    const file = (t.site.config.databaseUrl as string).replace(/^sqlite:/, '');
    const other = new BetterSqlite3(file);
    other.exec('BEGIN IMMEDIATE');
    return async () => {
      other.exec('ROLLBACK');
      other.close();
    };
  }
  const client = DB_KIND === 'postgres' ? 'pg' : 'mysql2';
  const other: Knex = knexFactory({ client, connection: t.site.config.databaseUrl });
  const trx = await other.transaction();
  await trx('tabToDo').where({ name: todo }).forUpdate().first();
  return async () => {
    await trx.rollback();
    await other.destroy();
  };
}

test('a write blocked past db_busy_timeout is 503 with Retry-After and changes nothing; it passes once the lock is gone', async () => {
  const release = await holdLock();
  try {
    const started = Date.now();
    const res = await t.http
      .put(`/api/resource/ToDo/${todo}`)
      .set('Authorization', t.adminToken)
      .send({ description: 'changed under a lock' });
    expect(res.status).toBe(503);
    expect(res.body.exc_type).toBe('ServiceUnavailableError');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    // MariaDB counts its lock wait in whole seconds (at least 1).
    expect(Date.now() - started).toBeLessThan(DB_KIND === 'sqlite' ? 3000 : 4000);
    // A lock held elsewhere is no outage: the database's health (svc_db_up, /api/ready) stays up.
    expect(t.site.db.health.state.up).toBe(true);
  } finally {
    await release();
  }
  expect((await t.site.db.knex('tabToDo').where({ name: todo }).first()).description).toBe('locked');
  const after = await t.http
    .put(`/api/resource/ToDo/${todo}`)
    .set('Authorization', t.adminToken)
    .send({ description: 'changed' });
  expect(after.status).toBe(200);
});
