// Durability (issue 14, security.md 5.8): a worker killed with a real `kill -9` in the middle of a bulk job leaves the
// job resumable; another worker takes it over once its lease runs out and every item ends with exactly one outcome:
// none applied twice, none skipped.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { captureLog } from '../helpers/captured-log';
import { DB_KIND, createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { jobQueueOf } from '../../runtime/jobs/job-queue';

let t: TestSite;
let u1: string;
let child: ChildProcess | undefined;
beforeAll(async () => {
  t = await createTestSite({
    site: { job_worker: false, bulk_operation_async_threshold: 5, job_lease_seconds: 1, job_poll_ms: 50 },
  });
  u1 = await createUser(t, 'crash@jobs.test', []);
});
afterAll(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  await t.close();
});

const ROOT = path.resolve(__dirname, '../..');
// MariaDB runs a job's items one transaction after another (slower than SQLite's shared commits): fewer items.
const N = DB_KIND === 'sqlite' ? 4000 : 600;
const itemRows = async (job: string) =>
  Number(((await t.site.db.knex('__JobItem').where({ job }).count({ n: '*' }).first()) as { n: unknown }).n);
const until = async (check: () => Promise<boolean>, ms: number) => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
};

test('kill -9 of the worker mid-job: the job resumes elsewhere and every item has exactly one outcome', async () => {
  const docs = Array.from({ length: N }, (_, i) => ({ description: `crash-${i}` }));
  const res = await t.http.post('/api/v2/document/ToDo/bulk_insert').set('Authorization', u1).send({ docs });
  expect(res.status).toBe(202);
  const id: string = res.body.data.job_id;
  expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);

  // node itself with tsx's loader (not the tsx CLI, which runs the script in a grandchild the kill would miss).
  child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(__dirname, 'worker-child.ts'), t.site.config.databaseUrl],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = new Promise<void>((resolve) => child?.once('exit', () => resolve()));
  await until(async () => (await itemRows(id)) > 100, 60_000);
  child.kill('SIGKILL');
  await exited;
  const atKill = await itemRows(id);
  expect(atKill).toBeLessThan(N);
  const job = await t.http.get(`/api/v2/job/${id}`).set('Authorization', u1);
  expect(job.body.data.status).toBe('running');
  expect(job.body.data.progress).toEqual({ done: atKill, total: N });

  // This process's worker takes the job over once the dead worker's lease has run out, and says so in the log.
  const log = captureLog('warn');
  jobQueueOf(t.site)?.start();
  let status: any;
  await until(async () => {
    status = (await t.http.get(`/api/v2/job/${id}`).set('Authorization', u1)).body.data;
    return status.status === 'finished' || status.status === 'failed';
  }, 120_000);
  log.restore();
  expect(log.lines).toContainEqual(expect.objectContaining({ event: 'job_taken_over', job: id }));
  expect(status.status).toBe('finished');
  const r = status.result;
  expect([r.total, r.success_count, r.failure_count]).toEqual([N, N, 0]);
  expect(new Set(r.inserted).size).toBe(N);
  const rows = (await t.site.db
    .knex('tabToDo')
    .where('description', 'like', 'crash-%')
    .select('name', 'description')) as { name: string; description: string }[];
  expect(rows).toHaveLength(N);
  expect(new Set(rows.map((row) => row.description)).size).toBe(N);
  expect(new Set(rows.map((row) => row.name))).toEqual(new Set(r.inserted));
  expect(status.progress).toEqual({ done: N, total: N });
}, 240_000);
