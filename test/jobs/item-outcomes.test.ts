// A job item's outcome is recorded once (runtime/jobs/job-runner.ts): an outcome written with the item's own write
// stands, and a later failure outcome for the same item (a second worker that ran it too) is ignored, never an error
// that would fail the job. Runs on SQLite (prepared statement) and MariaDB (knex) alike.
import { inWriteTransaction } from '../../runtime/db/write-transaction';
import { registerJobKind } from '../../runtime/jobs/job-queue';
import { runClaimedJob } from '../../runtime/jobs/job-runner';
import { createTestSite, type TestSite } from '../helpers/test-site';

const KIND = 'test-item-outcomes';

registerJobKind(KIND, async (run) => {
  await inWriteTransaction(run.site.db, (q) => run.items.recordIn(q, 0, { ok: 'written' }));
  await run.items.record(0, { ok: false, by: 'second worker' });
  await run.items.record(1, { ok: false, by: 'first' });
  await run.items.record(1, { ok: false, by: 'again' });
  await run.items.record(2, { ok: false, by: 'only' });
  return Object.fromEntries(await run.items.all());
});

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite();
});
afterAll(() => t.close());

test('the first outcome of an item stands; later ones are ignored without failing the job', async () => {
  const job = { id: 'item-outcomes-1', kind: KIND, user: 'Administrator', payload: null };
  const result = await runClaimedJob(t.site, job, () => false);
  expect(result).toEqual({
    0: { ok: 'written' },
    1: { ok: false, by: 'first' },
    2: { ok: false, by: 'only' },
  });
});
