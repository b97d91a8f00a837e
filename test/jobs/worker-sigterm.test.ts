// Graceful stop (issue 14): SIGTERM to a real child process running a bulk job lets the job finish its current items
// and puts it back in the queue (through the onShutdown hooks), the process exits 0 within shutdown_timeout, and
// another worker resumes the job at once (the lease is long: only a graceful hand-back makes it resumable this fast);
// every item ends with exactly one outcome. On the embedded backend under `svc serve`, and on BullMQ under
// `svc worker` (the machine's Redis, a queue prefix of its own).
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { DB_KIND, createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { expectEachOnce, itemRows, jobEnd, startSvc, until, type SvcChild } from './svc-child';
import { jobQueueOf } from '../../runtime/jobs/job-queue';

jest.setTimeout(240_000);

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
// Another port for the MariaDB run, so the two suites can run at the same time.
const PORT = DB_KIND === 'mysql' ? 4715 : 4714;
// MariaDB runs a job's items one transaction after another: fewer items.
const N = DB_KIND === 'sqlite' ? 4000 : 600;
const SHUTDOWN_MS = 8000;
// A lease far longer than the test waits: a job left 'running' by the stopped process would not be taken over.
const LONG_LEASE_S = 600;

let child: SvcChild | undefined;
afterEach(() => {
  if (child && child.proc.exitCode === null && child.proc.signalCode === null) child.proc.kill('SIGKILL');
  child?.cleanup();
  child = undefined;
});

/** Queues a bulk insert of N ToDos as `auth`; returns the job id. */
async function queueInsert(t: TestSite, auth: string, prefix: string): Promise<string> {
  const docs = Array.from({ length: N }, (_, i) => ({ description: `${prefix}${i}` }));
  const res = await t.http
    .post('/api/v2/document/ToDo/bulk_insert')
    .set('Authorization', auth)
    .send({ docs });
  expect(res.status).toBe(202);
  return res.body.data.job_id;
}

/** Waits until the child has run some items, sends SIGTERM, and checks it exits 0 within the shutdown timeout. */
async function terminateMidJob(t: TestSite, c: SvcChild, id: string): Promise<number> {
  await until(async () => (await itemRows(t, id)) > 50, 120_000);
  const sent = Date.now();
  c.proc.kill('SIGTERM');
  const end = await c.exited;
  expect(end.code).toBe(0);
  expect(end.at - sent).toBeLessThan(SHUTDOWN_MS);
  return itemRows(t, id);
}

test('embedded, svc serve: SIGTERM mid-job re-queues the job; it resumes at once elsewhere, each item once', async () => {
  const t = await createTestSite({
    site: {
      job_worker: false,
      bulk_operation_async_threshold: 5,
      job_lease_seconds: LONG_LEASE_S,
      job_poll_ms: 50,
    },
  });
  try {
    const u = await createUser(t, 'sigterm@jobs.test', []);
    const id = await queueInsert(t, u, 'term-e-');
    child = startSvc(
      t,
      ['serve'],
      { job_poll_ms: 50, job_lease_seconds: LONG_LEASE_S, shutdown_timeout: SHUTDOWN_MS },
      { PORT: String(PORT), HOST: '127.0.0.1' },
    );
    const atStop = await terminateMidJob(t, child, id);
    expect(atStop).toBeLessThan(N);
    const row = (await t.site.db.knex('__Job').where({ name: id }).first()) as Record<string, unknown>;
    expect([row.status, row.worker]).toEqual(['queued', null]);
    const queued = (await t.http.get(`/api/v2/job/${id}`).set('Authorization', u)).body.data;
    expect([queued.status, queued.progress]).toEqual(['queued', { done: atStop, total: N }]);

    jobQueueOf(t.site)?.start();
    await expectEachOnce(t, await jobEnd(t, id, u), 'term-e-', N);
  } finally {
    await t.close();
  }
});

test('BullMQ, svc worker: SIGTERM mid-job moves the job back to waiting; another worker finishes it, each item once', async () => {
  const prefix = `svc-test-${process.pid}-${randomBytes(4).toString('hex')}`;
  const site = {
    job_backend: 'bullmq' as const,
    job_queue_prefix: prefix,
    job_lease_seconds: LONG_LEASE_S,
  };
  const t = await createTestSite({
    redisUrl: REDIS_URL,
    site: { ...site, job_worker: false, bulk_operation_async_threshold: 5 },
  });
  try {
    const u = await createUser(t, 'sigterm-bull@jobs.test', []);
    const id = await queueInsert(t, u, 'term-b-');
    child = startSvc(t, ['worker'], { ...site, shutdown_timeout: SHUTDOWN_MS }, { REDIS_URL });
    const atStop = await terminateMidJob(t, child, id);
    expect(atStop).toBeLessThan(N);
    const queued = (await t.http.get(`/api/v2/job/${id}`).set('Authorization', u)).body.data;
    expect([queued.status, queued.progress]).toEqual(['queued', { done: atStop, total: N }]);

    jobQueueOf(t.site)?.start();
    await expectEachOnce(t, await jobEnd(t, id, u), 'term-b-', N);
  } finally {
    await t.close();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  }
});
