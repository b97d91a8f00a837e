// A receiver's lane in this process (receiver-lane.ts). A run whose worker stops (SIGTERM's shutdown hook, or a job
// whose lease was lost) starts no more attempts, records those under way as they end, and gives the rows it did not
// start back, due now, for the next look of any process, instead of sending them during the shutdown (the process may
// exit before recording them, and they would be sent twice) or leaving them claimed for ten minutes. A run whose rows
// find their receiver's lane open hands them over and ends; the lane's own run sends, records or gives them back.
import type { JobRun } from '../../runtime/jobs/job-queue';
import { deliverLogRows } from '../../runtime/webhooks/deliver';
import { runDeliveryJob } from '../../runtime/webhooks/dispatcher';
import { ReceiverPools } from '../../runtime/webhooks/receiver-pools';
import { createTestSite, type TestSite } from '../helpers/test-site';
import { createTodo, createWebhook, logRows, startReceiver, waitFor, type Receiver } from './receiver';

jest.setTimeout(60_000);

let t: TestSite;
let receiver: Receiver;
beforeAll(async () => {
  // No job worker: the rows wait, claimed, for the runs this test starts itself.
  t = await createTestSite({
    site: { webhook_allowed_hosts: ['127.0.0.1'], webhook_retry_schedule: [600], job_worker: false },
  });
  receiver = await startReceiver(0, ['hang']);
  expect((await createWebhook(t, { name: 'stopping', request_url: receiver.url, timeout: 2 })).status).toBe(
    201,
  );
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

/** Creates `n` ToDos; returns the names of their (first) log rows. */
async function queuedRows(n: number, label: string): Promise<string[]> {
  const docs: string[] = [];
  for (let i = 0; i < n; i++) docs.push(await createTodo(t, { description: `${label} ${i}` }));
  const rows = (await logRows(t)).filter((r) => docs.includes(String(r.reference_document)));
  expect(rows).toHaveLength(n);
  return rows.map((r) => String(r.name));
}

const nowText = () => new Date().toISOString().slice(0, 19).replace('T', ' ');

test('a run told to stop records the attempts under way and gives the others back, due now', async () => {
  const names = await queuedRows(24, 'stop mid-way');
  const pools = new ReceiverPools();
  let stopping = false;
  const run = deliverLogRows(t.site, names, pools, undefined, { stopping: () => stopping });
  // The first 8 attempts (one receiver's lane, 8 at a time) have reached the receiver, which holds them.
  await waitFor(() => receiver.requests.length >= 8, 10_000, 'the first attempts');
  stopping = true;
  const counts = await run;
  await pools.close();

  expect(counts).toEqual({ skipped: 0, Failed: 8, deferred: 16 });
  expect(receiver.requests).toHaveLength(8);
  const rows = await t.site.db.knex('tabWebhook Request Log').whereIn('name', names).select();
  expect(rows.filter((r) => r.status === 'Failed')).toHaveLength(8);
  const queued = rows.filter((r) => r.status === 'Queued');
  expect(queued).toHaveLength(16);
  // MariaDB reads a Datetime with its fraction ('.000000'): compare the seconds.
  for (const row of queued) expect(String(row.next_retry).slice(0, 19) <= nowText()).toBe(true);
});

test("a delivery job hands its worker's stop to the run", async () => {
  const before = receiver.requests.length;
  const names = await queuedRows(3, 'stopped job');
  const run = {
    site: t.site,
    payload: { logs: names },
    items: { stopping: () => true },
  } as unknown as JobRun;
  expect(await runDeliveryJob(run)).toEqual({ skipped: 0, deferred: 3 });
  expect(receiver.requests).toHaveLength(before);
});

test("a run hands its rows to the receiver's open lane, which gives them back with its own when it stops", async () => {
  const before = receiver.requests.length;
  const first = await queuedRows(10, 'lane owner');
  const second = await queuedRows(6, 'handed');
  const pools = new ReceiverPools();
  let stopping = false;
  let ownerDone = false;
  const owner = deliverLogRows(t.site, first, pools, undefined, { stopping: () => stopping }).finally(
    () => (ownerDone = true),
  );
  await waitFor(() => receiver.requests.length >= before + 8, 10_000, "the owner's first attempts");
  // The receiver's lane is open (8 attempts hang in it): the second run hands its rows over and ends at once.
  expect(await deliverLogRows(t.site, second, pools)).toEqual({ skipped: 0, handed: 6 });
  expect(ownerDone).toBe(false);
  stopping = true;
  expect(await owner).toEqual({ skipped: 0, Failed: 8, deferred: 8 });
  await pools.close();
  expect(receiver.requests).toHaveLength(before + 8);
  const rows = await t.site.db
    .knex('tabWebhook Request Log')
    .whereIn('name', [...first, ...second])
    .select('status');
  expect(rows.filter((r) => r.status === 'Queued')).toHaveLength(8);
});

test('a send that throws ends its lane and the run with its error, not an unhandled rejection', async () => {
  const names = await queuedRows(3, 'bad headers');
  // Stored headers that are not JSON: the attempt of that row throws (a bug, not a receiver's fault).
  await t.site.db.knex('tabWebhook Request Log').where({ name: names[1] }).update({ headers: '{not json' });
  const unhandled: unknown[] = [];
  const onUnhandled = (err: unknown) => unhandled.push(err);
  process.on('unhandledRejection', onUnhandled);
  const pools = new ReceiverPools();
  try {
    await expect(deliverLogRows(t.site, names, pools)).rejects.toThrow(SyntaxError);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(unhandled).toEqual([]);
  } finally {
    process.off('unhandledRejection', onUnhandled);
    await pools.close();
  }
});
