// A real PostgreSQL deadlock (40P01) between two write transactions of the site: the server rolls one back whole, the
// other commits, and the one rolled back is answered 503 ServiceUnavailableError with Retry-After (the request was
// sound and may be sent again), as MariaDB answers a lock wait it gave up on. Nothing of the victim is kept.
import Koa from 'koa';
import type { Knex } from 'knex';
import request from 'supertest';
import { createErrorHandler } from '../../runtime/middleware/error-handler';
import { DB_KIND, createTestSite, type TestSite } from '../helpers/test-site';

const onPostgres = DB_KIND === 'postgres' ? describe : describe.skip;

onPostgres('PostgreSQL deadlock', () => {
  const table = 'tabPgd Scratch';
  let t: TestSite;
  beforeAll(async () => {
    t = await createTestSite({ site: { db_busy_timeout: 20_000 } });
    await t.site.db.knex.schema.dropTableIfExists(table);
    await t.site.db.knex.schema.createTable(table, (tb) => {
      tb.string('name', 40).primary();
      tb.integer('n');
    });
    await t.site.db.knex(table).insert([
      { name: 'a', n: 0 },
      { name: 'b', n: 0 },
    ]);
  });
  afterAll(() => t?.close());

  test('one of two crossed transactions is rolled back (40P01) and answered 503 with Retry-After; the other commits', async () => {
    let bothLocked!: () => void;
    let locked = 0;
    const gate = new Promise<void>((resolve) => (bothLocked = resolve));
    const crossed = (first: string, second: string) => async (q: Knex) => {
      await q(table).where({ name: first }).increment('n', 1);
      if (++locked === 2) bothLocked();
      await gate;
      await q(table).where({ name: second }).increment('n', 10);
    };
    const outcomes = await Promise.allSettled([
      t.site.db.transaction(crossed('a', 'b'), false),
      t.site.db.transaction(crossed('b', 'a'), false),
    ]);
    const failed = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(failed).toHaveLength(1);
    expect(failed[0]!.reason).toMatchObject({ code: '40P01' });
    // The survivor's two increments are kept, the victim's none: 11 in all.
    const rows = (await t.site.db.knex(table).orderBy('name').select('n')) as { n: number }[];
    expect(rows.reduce((sum, r) => sum + Number(r.n), 0)).toBe(11);

    const app = new Koa();
    const serverErrors: unknown[] = [];
    app.use(createErrorHandler({ developerMode: false, onServerError: (err) => serverErrors.push(err) }));
    app.use((ctx) => {
      // The site's driver errors decide what a database error means (the service's own app sets this per request).
      ctx.state.site = t.site;
      throw failed[0]!.reason;
    });
    const res = await request(app.callback()).put(`/api/v2/document/ToDo/x`).send({});
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBeDefined();
    expect(res.body.exc_type).toBe('ServiceUnavailableError');
    expect(JSON.stringify(res.body)).not.toMatch(/deadlock/i);
    expect(serverErrors).toEqual([]);
  });
});
