// The BullMQ backend when its Redis fails, with a private redis-server (append-only file synced on every write):
// while Redis is down a bulk request above the threshold is 503 with Retry-After, at once, changing nothing, and the
// job status is 503 too; Redis killed (kill -9) in the middle of a job and started again: the job still finishes, and
// every item has exactly one outcome.
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { HAVE_REDIS, PrivateRedis } from '../helpers/private-redis';
import { DB_KIND, createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { expectEachOnce, itemRows, jobEnd, until } from '../jobs/svc-child';

// Another port for the MariaDB run, so the two suites can run at the same time.
const PORT = DB_KIND === 'mysql' ? 4711 : 4710;
const N = DB_KIND === 'sqlite' ? 3000 : 400;
const run = HAVE_REDIS ? describe : describe.skip;
jest.setTimeout(180_000);

run('BullMQ with a failing Redis (private redis-server)', () => {
  const dir = path.resolve(__dirname, '../tmp', `bullmq-redis-${process.pid}`);
  let server: PrivateRedis;
  let t: TestSite;
  let u: string;

  beforeAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    server = new PrivateRedis(PORT, dir);
    await server.start();
    t = await createTestSite({
      redisUrl: server.url,
      site: {
        job_backend: 'bullmq',
        job_worker: true,
        job_lease_seconds: 2,
        bulk_operation_async_threshold: 2,
      },
    });
    u = await createUser(t, 'bull-fault@jobs.test', []);
  });
  afterAll(async () => {
    await t?.close();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const insert = (docs: object[]) =>
    t.http.post('/api/v2/document/ToDo/bulk_insert').set('Authorization', u).send({ docs });

  test('Redis down: a queued request is 503 with Retry-After within the wait bound, and nothing is written', async () => {
    await server.kill();
    try {
      const before = Number(
        ((await t.site.db.knex('tabToDo').count({ n: '*' }).first()) as { n: unknown }).n,
      );
      const started = Date.now();
      const res = await insert([
        { description: 'down-0' },
        { description: 'down-1' },
        { description: 'down-2' },
      ]);
      expect([res.status, res.body.exc_type]).toEqual([503, 'ServiceUnavailableError']);
      expect(res.headers['retry-after']).toBe('2');
      expect(Date.now() - started).toBeLessThan(5000);
      const status = await t.http
        .get('/api/v2/job/00000000-0000-4000-8000-000000000000')
        .set('Authorization', u);
      expect(status.status).toBe(503);
      // Below the threshold nothing needs Redis: the request runs now.
      expect((await insert([{ description: 'down-small' }])).status).toBe(200);
      const after = Number(((await t.site.db.knex('tabToDo').count({ n: '*' }).first()) as { n: unknown }).n);
      expect(after).toBe(before + 1);
    } finally {
      await server.start();
    }
  });

  test('Redis killed mid-job and started again: the job finishes, every item exactly once', async () => {
    // The breaker lets a trial call through every second once Redis is back.
    let res: Awaited<ReturnType<typeof insert>> | undefined;
    const docs = Array.from({ length: N }, (_, i) => ({ description: `rkill-${i}` }));
    await until(async () => {
      res = await insert(docs);
      return res.status === 202;
    }, 30_000);
    const id: string = res?.body.data.job_id;
    await until(async () => (await itemRows(t, id)) > 50, 60_000);
    await server.kill();
    const atKill = await itemRows(t, id);
    expect(atKill).toBeLessThan(N);
    await new Promise((r) => setTimeout(r, 1500));
    await server.start();
    await expectEachOnce(t, await jobEnd(t, id, u, 150_000), 'rkill-', N);
    // The request refused while Redis was down was never enqueued later, when Redis came back.
    expect(
      await t.site.db.knex('tabToDo').where('description', 'like', 'down-%').pluck('description'),
    ).toEqual(['down-small']);
  });
});
