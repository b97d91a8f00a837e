// Durability on BullMQ (issue 14): a `svc worker` child killed with a real `kill -9` mid-job leaves its job locked;
// once the lock runs out BullMQ hands the job out again ("stalled"), another worker resumes it after the items that
// have an outcome, and every item ends with exactly one outcome: none applied twice, none skipped. The takeover comes
// within about one lease of the kill (a stalled check every tenth of the lease) and is logged (issue #36 item 13).
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { captureLog } from '../helpers/captured-log';
import { DB_KIND, createTestSite, createUser } from '../helpers/test-site';
import { expectEachOnce, itemRows, jobEnd, startSvc, until, type SvcChild } from './svc-child';
import { jobQueueOf } from '../../runtime/jobs/job-queue';

jest.setTimeout(240_000);

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const N = DB_KIND === 'sqlite' ? 4000 : 600;
const LEASE_S = 3;

let child: SvcChild | undefined;
afterAll(() => {
  if (child && child.proc.exitCode === null && child.proc.signalCode === null) child.proc.kill('SIGKILL');
  child?.cleanup();
});

test('kill -9 of a svc worker mid-job: the job is handed out again and every item has exactly one outcome', async () => {
  const prefix = `svc-test-${process.pid}-${randomBytes(4).toString('hex')}`;
  const site = { job_backend: 'bullmq' as const, job_queue_prefix: prefix, job_lease_seconds: LEASE_S };
  const t = await createTestSite({
    redisUrl: REDIS_URL,
    site: { ...site, job_worker: false, bulk_operation_async_threshold: 5 },
  });
  try {
    const u = await createUser(t, 'crash-bull@jobs.test', []);
    const docs = Array.from({ length: N }, (_, i) => ({ description: `bcrash-${i}` }));
    const res = await t.http.post('/api/v2/document/ToDo/bulk_insert').set('Authorization', u).send({ docs });
    expect(res.status).toBe(202);
    const id: string = res.body.data.job_id;

    child = startSvc(t, ['worker'], site, { REDIS_URL });
    await until(async () => (await itemRows(t, id)) > 50, 120_000);
    child.proc.kill('SIGKILL');
    await child.exited;
    const atKill = await itemRows(t, id);
    expect(atKill).toBeLessThan(N);
    const running = (await t.http.get(`/api/v2/job/${id}`).set('Authorization', u)).body.data;
    expect([running.status, running.progress]).toEqual(['running', { done: atKill, total: N }]);

    // This process's worker: BullMQ's stalled check hands it the dead worker's job once the lock has run out.
    const log = captureLog('warn');
    try {
      jobQueueOf(t.site)?.start();
      await until(async () => log.lines.some((l) => l.event === 'job_taken_over' && l.job === id), 60_000);
    } finally {
      log.restore();
    }
    const takenOver = log.lines.find((l) => l.event === 'job_taken_over') as { time: string };
    const killedAt = (await child.exited).at;
    // The lock runs out at most one lease after the kill; the next stalled check comes a tenth of a lease later
    // (checking once a lease took up to three leases). One more second for a loaded machine.
    expect(Date.parse(takenOver.time) - killedAt).toBeLessThan(LEASE_S * 1100 + 1000);
    await expectEachOnce(t, await jobEnd(t, id, u), 'bcrash-', N);
  } finally {
    await t.close();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  }
});
