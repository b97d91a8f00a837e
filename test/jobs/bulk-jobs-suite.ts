// The shared tests of bulk requests above the async threshold (SPEC 4.2, 8; CONTRACT 6), run on each job backend
// (bulk-jobs.test.ts: embedded; bulk-jobs-bullmq.test.ts: BullMQ on Redis): 202 with a job id, the job runs as the
// requester with the requester's permissions at run time, its status at GET /api/v2/job/{job_id} for the requester
// and System Managers only (404 for anyone else), and finished jobs are removed after the retention time.
import type { SiteConfig } from '../../runtime/config/config';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { asyncThreshold } from '../../runtime/jobs/threshold';
import { jobQueueOf } from '../../runtime/jobs/job-queue';

/** What a test site needs for one backend; called once per site (each BullMQ site gets a queue prefix of its own). */
export type BackendOptions = () => { site: Partial<SiteConfig>; redisUrl?: string };

/** Declares the suite for one backend. */
export function bulkJobSuite(backend: BackendOptions): void {
  let t: TestSite;
  let u1: string;
  let u2: string;
  let sm: string;
  beforeAll(async () => {
    const b = backend();
    t = await createTestSite({
      redisUrl: b.redisUrl,
      site: {
        ...b.site,
        bulk_operation_async_threshold: { ToDo: 3, '*': 5 },
        job_poll_ms: 50,
        job_lease_seconds: 5,
      },
    });
    u1 = await createUser(t, 'u1@jobs.test', []);
    u2 = await createUser(t, 'u2@jobs.test', []);
    sm = await createUser(t, 'sm@jobs.test', ['System Manager']);
  });
  afterAll(() => t.close());

  const post = (path: string, auth: string, body: unknown) =>
    t.http
      .post(path)
      .set('Authorization', auth)
      .send(body as object);
  const todos = async (auth: string, n: number, prefix: string): Promise<string[]> => {
    const res = await post('/api/v2/document/ToDo/bulk_insert', auth, {
      docs: Array.from({ length: n }, (_, i) => ({ description: `${prefix}${i}` })),
    });
    if (res.status === 200) return res.body.data.inserted;
    return (await finished(res.body.data.job_id, auth)).result.inserted;
  };
  const status = async (id: string, auth: string) =>
    t.http.get(`/api/v2/job/${id}`).set('Authorization', auth);
  async function finished(id: string, auth: string): Promise<any> {
    const end = Date.now() + 30_000;
    for (;;) {
      const res = await status(id, auth);
      expect(res.status).toBe(200);
      if (res.body.data.status === 'finished' || res.body.data.status === 'failed') return res.body.data;
      if (Date.now() > end) throw new Error(`job ${id} still ${res.body.data.status}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  describe('the threshold', () => {
    test('config: an integer, a map with `*`, junk as 0, default 20', () => {
      expect(asyncThreshold({ bulk_operation_async_threshold: 7 }, 'ToDo')).toBe(7);
      expect(asyncThreshold({ bulk_operation_async_threshold: { ToDo: 2, '*': 9 } }, 'ToDo')).toBe(2);
      expect(asyncThreshold({ bulk_operation_async_threshold: { ToDo: 2, '*': 9 } }, 'Note')).toBe(9);
      expect(asyncThreshold({ bulk_operation_async_threshold: { ToDo: 2, '*': 9 } })).toBe(9);
      expect(asyncThreshold({ bulk_operation_async_threshold: { ToDo: 2 } }, 'Note')).toBe(20);
      expect(asyncThreshold({ bulk_operation_async_threshold: 'x' as unknown as number }, 'ToDo')).toBe(0);
      expect(asyncThreshold({ bulk_operation_async_threshold: { __proto__: 1 } as never }, 'ToDo')).toBe(20);
    });

    test('per DocType: N items run now (200), N+1 are queued (202 with a UUID job id)', async () => {
      const names = await todos(u1, 3, 'edge-');
      const at = await post('/api/v2/document/ToDo/bulk_update', u1, {
        docs: names.map((name) => ({ name, status: 'Closed' })),
      });
      expect(at.status).toBe(200);
      const above = await post('/api/v2/document/ToDo/bulk_delete', u1, { names: [...names, 'no-such'] });
      expect(above.status).toBe(202);
      expect(Object.keys(above.body.data)).toEqual(['job_id']);
      expect(above.body.data.job_id).toMatch(
        /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
      const job = await finished(above.body.data.job_id, u1);
      expect(job.status).toBe('finished');
      expect(job.result).toEqual({
        deleted: names,
        failed: [
          { name: 'no-such', doctype: 'ToDo', error: 'DoesNotExistError', message: 'ToDo no-such not found' },
        ],
        total: 4,
        success_count: 3,
        failure_count: 1,
      });
      expect(job.progress).toEqual({ done: 4, total: 4 });
      expect(job.error).toBeNull();
    });

    test('`*` for other DocTypes and for the cross-DocType endpoints: 5 run now, 6 are queued', async () => {
      const items = (n: number) =>
        Array.from({ length: n }, (_, i) => ({ doctype: 'ToDo', name: `nope-${i}` }));
      expect((await post('/api/v2/method/bulk_delete', u1, { docs: items(5) })).status).toBe(200);
      expect((await post('/api/v2/method/bulk_delete', u1, { docs: items(6) })).status).toBe(202);
      expect((await post('/api/v2/method/bulk_update', u1, { docs: items(5) })).status).toBe(200);
      expect((await post('/api/v2/method/bulk_update', u1, { docs: items(6) })).status).toBe(202);
      const widgets = (n: number) => Array.from({ length: n }, () => ({ title: 'w', status: 'Active' }));
      expect((await post('/api/v2/document/Note/bulk_insert', u1, { docs: widgets(5) })).status).toBe(200);
      expect((await post('/api/v2/document/Note/bulk_insert', u1, { docs: widgets(6) })).status).toBe(202);
    });

    test('a malformed request is 400 however long it is; the item checks still run inside the job', async () => {
      expect((await post('/api/v2/document/ToDo/bulk_update', u1, { docs: 'x'.repeat(100) })).status).toBe(
        400,
      );
      const res = await post('/api/v2/document/ToDo/bulk_update', u1, {
        docs: [1, 'x', null, { name: { $ne: 1 } }, { description: 'no name' }],
      });
      expect(res.status).toBe(202);
      const job = await finished(res.body.data.job_id, u1);
      expect([job.result.total, job.result.failure_count, job.result.success_count]).toEqual([5, 5, 0]);
    });
  });

  describe('inside a job', () => {
    test('the requester’s permissions apply per item: other users’ documents fail, nothing of theirs changes', async () => {
      const mine = await todos(u1, 2, 'perm-mine-');
      const theirs = await todos(u2, 2, 'perm-theirs-');
      const res = await post('/api/v2/document/ToDo/bulk_update', u1, {
        docs: [...mine, ...theirs].map((name) => ({ name, description: 'by u1' })),
      });
      expect(res.status).toBe(202);
      const job = await finished(res.body.data.job_id, u1);
      expect([job.status, job.error]).toEqual(['finished', null]);
      expect(job.result.updated).toEqual(mine);
      expect(job.result.failed.map((f: any) => [f.name, f.error])).toEqual(
        theirs.map((name) => [name, 'PermissionError']),
      );
      const rows = await t.site.db.knex('tabToDo').whereIn('name', theirs).select('description');
      expect(rows.map((r: any) => r.description).sort()).toEqual(['perm-theirs-0', 'perm-theirs-1']);
    });

    test('a user disabled before the job runs: the job fails cleanly and changes nothing', async () => {
      const u3 = await createUser(t, 'u3@jobs.test', []);
      const names = await todos(u3, 3, 'disabled-');
      await jobQueueOf(t.site)?.stop();
      try {
        const res = await post('/api/v2/document/ToDo/bulk_update', u3, {
          docs: [...names, ...names].map((name) => ({ name, description: 'after disable' })),
        });
        expect(res.status).toBe(202);
        const off = await t.http
          .put('/api/resource/User/u3@jobs.test')
          .set('Authorization', t.adminToken)
          .send({ enabled: 0 });
        expect(off.status).toBe(200);
        jobQueueOf(t.site)?.start();
        const job = await finished(res.body.data.job_id, sm);
        expect(job.status).toBe('failed');
        expect(job.error).toMatch(/AuthenticationError: User u3@jobs.test is disabled/);
        expect(job.result).toBeNull();
        const rows = await t.site.db.knex('tabToDo').whereIn('name', names).select('description');
        expect(rows.every((r: any) => r.description.startsWith('disabled-'))).toBe(true);
      } finally {
        jobQueueOf(t.site)?.start();
      }
    });
  });

  describe('metrics', () => {
    test('svc_jobs on /api/metrics counts the jobs of this backend by status', async () => {
      const scrape = async () => {
        const res = await t.http.get('/api/metrics').set('Authorization', t.adminToken);
        expect(res.status).toBe(200);
        const line = (status: string) =>
          (res.text as string).split('\n').find((l) => l.startsWith(`svc_jobs{status="${status}"} `));
        return (status: string) => Number(line(status)?.split(' ')[1] ?? 'NaN');
      };
      const before = await scrape();
      const queued = await post('/api/v2/document/ToDo/bulk_insert', u1, {
        docs: Array.from({ length: 4 }, (_, i) => ({ description: `metric-${i}` })),
      });
      expect(queued.status).toBe(202);
      expect((await finished(queued.body.data.job_id, u1)).status).toBe('finished');
      const after = await scrape();
      for (const status of ['queued', 'running', 'finished', 'failed']) expect(after(status)).not.toBeNaN();
      expect(after('finished')).toBeGreaterThanOrEqual(
        (Number.isNaN(before('finished')) ? 0 : before('finished')) + 1,
      );
    });
  });

  describe('GET /api/v2/job/{job_id}', () => {
    let id: string;
    beforeAll(async () => {
      const res = await post('/api/v2/document/ToDo/bulk_insert', u1, {
        docs: Array.from({ length: 4 }, (_, i) => ({ description: `status-${i}` })),
      });
      id = res.body.data.job_id;
      await finished(id, u1);
    });

    test('the requester and a System Manager see the job; another user, an unknown id and a bad id are 404', async () => {
      expect((await status(id, u1)).body.data).toMatchObject({ job_id: id, status: 'finished' });
      expect((await status(id, sm)).body.data).toMatchObject({ job_id: id, status: 'finished' });
      expect((await status(id, t.adminToken)).status).toBe(200);
      for (const [jobId, auth] of [
        [id, u2],
        ['00000000-0000-4000-8000-000000000000', u1],
        ["x' or '1'='1", u1],
        ['%00', u1],
      ] as const) {
        const res = await status(encodeURIComponent(jobId), auth);
        expect([res.status, res.body.exc_type]).toEqual([404, 'DoesNotExistError']);
      }
    });

    test('Guest is 401; other verbs are 405', async () => {
      expect((await t.http.get(`/api/v2/job/${id}`)).status).toBe(401);
      expect((await t.http.delete(`/api/v2/job/${id}`).set('Authorization', u1)).status).toBe(405);
    });
  });

  test('finished jobs are deleted after job_retention_seconds', async () => {
    const b = backend();
    const short = await createTestSite({
      redisUrl: b.redisUrl,
      site: { ...b.site, bulk_operation_async_threshold: 1, job_poll_ms: 50, job_retention_seconds: 1 },
    });
    try {
      const res = await short.http
        .post('/api/v2/document/ToDo/bulk_insert')
        .set('Authorization', short.adminToken)
        .send({ docs: [{ description: 'r1' }, { description: 'r2' }] });
      expect(res.status).toBe(202);
      const id = res.body.data.job_id;
      const get = () => short.http.get(`/api/v2/job/${id}`).set('Authorization', short.adminToken);
      const end = Date.now() + 20_000;
      let seen = false;
      for (;;) {
        const r = await get();
        if (r.status === 200 && r.body.data.status === 'finished') seen = true;
        if (r.status === 404 && seen) break;
        if (Date.now() > end) throw new Error('not removed');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(await short.site.db.knex('__JobItem').where({ job: id }).first()).toBeUndefined();
    } finally {
      await short.close();
    }
  });
}
