// Resume after kill -9 (issue 35): a worker killed with a real SIGKILL in the middle of an import leaves the job to
// another worker, which skips every document the Data Import Log holds: every line imported exactly once.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { jobQueueOf } from '../../runtime/jobs/job-queue';
import { DB_KIND, createTestSite, type TestSite } from '../helpers/test-site';
import { callImportMethod, newImport, uploadFile, waitForJob } from './import-helpers';

let t: TestSite;
let child: ChildProcess | undefined;
beforeAll(async () => {
  t = await createTestSite({ site: { job_worker: false, job_lease_seconds: 1, job_poll_ms: 50 } });
});
afterAll(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  await t.close();
});

const ROOT = path.resolve(__dirname, '../..');
const N = DB_KIND === 'mysql' ? 600 : 3000;
const logRows = async (name: string) =>
  Number(
    (
      (await t.site.db.knex('tabData Import Log').where({ data_import: name }).count({ n: '*' }).first()) as {
        n: unknown;
      }
    ).n,
  );
const until = async (check: () => Promise<boolean>, ms: number) => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
};

test('kill -9 of the worker mid-import: the job resumes and no line is imported twice', async () => {
  const csv = `description,priority\n${Array.from({ length: N }, (_, i) => `crash-${i},Low`).join('\n')}\n`;
  const name = await newImport(t, t.adminToken, 'ToDo', await uploadFile(t, t.adminToken, csv, 'crash.csv'));
  const start = await callImportMethod(t, t.adminToken, 'form_start_import', { data_import: name });
  expect(start.status).toBe(200);
  const id: string = start.body.data.job_id;

  // node itself with tsx's loader (not the tsx CLI, which runs the script in a grandchild the kill would miss).
  child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(__dirname, 'import-worker-child.ts'),
      t.site.config.databaseUrl,
      String(t.site.config.filesPath),
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = new Promise<void>((resolve) => child?.once('exit', () => resolve()));
  await until(async () => (await logRows(name)) > 50, 60_000);
  child.kill('SIGKILL');
  await exited;
  const atKill = await logRows(name);
  expect(atKill).toBeLessThan(N);
  const during = (await t.http.get(`/api/v2/job/${id}`).set('Authorization', t.adminToken)).body.data;
  expect(during.status).toBe('running');
  expect(during.progress).toEqual({ done: atKill, total: N });
  // The log rows are the job's item outcomes: no __JobItem row besides them.
  expect(await t.site.db.knex('__JobItem').where({ job: id }).first()).toBeUndefined();

  jobQueueOf(t.site)?.start();
  const job = await waitForJob(t, t.adminToken, id, 180_000);
  expect(job.status).toBe('finished');
  expect(job.result).toEqual({ total: N, success_count: N, failure_count: 0 });
  const descriptions = (await t.site.db
    .knex('tabToDo')
    .where('description', 'like', 'crash-%')
    .pluck('description')) as string[];
  expect(descriptions).toHaveLength(N);
  expect(new Set(descriptions).size).toBe(N);
  const logs = await t.site.db
    .knex('tabData Import Log')
    .where({ data_import: name })
    .select('log_index', 'docname', 'success');
  expect(logs).toHaveLength(N);
  expect(new Set(logs.map((l: any) => Number(l.log_index))).size).toBe(N);
  expect(logs.every((l: any) => Number(l.success) === 1)).toBe(true);
  expect((await t.site.db.knex('tabData Import').where({ name }).first()).status).toBe('Success');
}, 240_000);
