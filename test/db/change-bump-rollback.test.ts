// MariaDB: the change counter's bump runs in the write's transaction before its COMMIT; a bump that fails (here a lock
// wait past db_busy_timeout on `__Change`) fails the write and leaves nothing committed, and the connection goes back
// to the pool clean (d2e389a's rollback).
import knexFactory, { type Knex } from 'knex';
import { CHANGE_TABLE } from '../../runtime/db/mysql/table-changes';
import { DB_KIND, createTestSite, type TestSite } from '../helpers/test-site';

const onMysql = DB_KIND === 'mysql' ? describe : describe.skip;

onMysql('MariaDB write transactions', () => {
  let t: TestSite;
  beforeAll(async () => {
    t = await createTestSite({ site: { db_busy_timeout: 300 } });
  });
  afterAll(() => t?.close());

  test('a bump blocked past db_busy_timeout fails the create (503) and the row is not committed', async () => {
    const other: Knex = knexFactory({ client: 'mysql2', connection: t.site.config.databaseUrl as string });
    const trx = await other.transaction();
    try {
      // Every shard's row of tabToDo: whichever connection the create gets, its bump waits past the lock timeout.
      await trx(CHANGE_TABLE).where({ tab: 'tabToDo' }).forUpdate().select('shard');
      const res = await t.http
        .post('/api/resource/ToDo')
        .set('Authorization', t.adminToken)
        .send({ description: 'bump blocked' });
      expect(res.status).toBe(503);
    } finally {
      await trx.rollback();
      await other.destroy();
    }
    expect(await t.site.db.knex('tabToDo').where({ description: 'bump blocked' }).select('name')).toEqual([]);
    // The connection went back to the pool with nothing open: the next create commits, with its bump.
    const before = await t.site.db.knex(CHANGE_TABLE).where({ tab: 'tabToDo' }).sum({ v: 'version' });
    const ok = await t.http
      .post('/api/resource/ToDo')
      .set('Authorization', t.adminToken)
      .send({ description: 'after the lock' });
    expect(ok.status).toBe(201);
    const after = await t.site.db.knex(CHANGE_TABLE).where({ tab: 'tabToDo' }).sum({ v: 'version' });
    expect(Number(after[0]!.v)).toBeGreaterThan(Number(before[0]!.v));
    expect(await t.site.db.knex('tabToDo').where({ description: 'bump blocked' }).select('name')).toEqual([]);
  });
});
