// A delivery run's time budget: a lane starts no attempt once the run has lasted its budget, or once RUN_BUDGET_MS has
// passed since its rows were claimed (a job that waited for a worker), and gives the rows it did not start back (Queued,
// due now) instead of holding them past their claim, when another process would send them again.
import { RUN_BUDGET_MS, deliverLogRows } from '../../runtime/webhooks/deliver';
import { dispatchDue } from '../../runtime/webhooks/dispatcher';
import { ReceiverPools } from '../../runtime/webhooks/receiver-pools';
import { LEASE_MS, datetimeAt } from '../../runtime/webhooks/request-log';
import { MAX_TIMEOUT_S } from '../../runtime/webhooks/send-request';
import { createTestSite, type TestSite } from '../helpers/test-site';
import { createTodo, createWebhook, logRows, startReceiver, type Receiver } from './receiver';

jest.setTimeout(60_000);

let t: TestSite;
let receiver: Receiver;
beforeAll(async () => {
  // No job worker: the rows wait, claimed, for the run this test starts itself.
  t = await createTestSite({ site: { webhook_allowed_hosts: ['127.0.0.1'], job_worker: false } });
  receiver = await startReceiver(0, ['hang']);
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

test("the default budget and the longest timeout end inside the rows' claim", () => {
  expect(RUN_BUDGET_MS + MAX_TIMEOUT_S * 1000).toBeLessThan(LEASE_MS);
});

test('a run past its budget starts no attempt and gives the rows it did not start back, due now', async () => {
  expect((await createWebhook(t, { name: 'budget', request_url: receiver.url, timeout: 1 })).status).toBe(
    201,
  );
  for (let i = 0; i < 20; i++) await createTodo(t, { description: `budget ${i}` });
  const names = (await logRows(t)).map((r) => String(r.name));
  expect(names).toHaveLength(20);
  const pools = new ReceiverPools();
  const dueAt: number[] = [];
  const started = Date.now();
  const counts = await deliverLogRows(t.site, names, pools, (at) => dueAt.push(at), { budgetMs: 700 });
  const took = Date.now() - started;
  await pools.close();

  // The first 8 (PARALLEL) started before 700 ms (the rows and webhooks are read first) and ended by their 1 s timeout,
  // past the budget: nothing started after.
  expect(counts).toEqual({ skipped: 0, Failed: 8, deferred: 12 });
  expect(took).toBeLessThan(2900);
  expect(receiver.requests).toHaveLength(8);
  expect(new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size).toBe(8);
  const rows = await t.site.db.knex('tabWebhook Request Log').whereIn('name', names).select();
  const failed = rows.filter((r) => r.status === 'Failed');
  expect(failed.map((r) => r.error)).toEqual(Array(8).fill('No answer within 1 s'));
  const queued = rows.filter((r) => r.status === 'Queued');
  expect(queued).toHaveLength(12);
  const nowText = new Date().toISOString().slice(0, 19).replace('T', ' ');
  // MariaDB reads a Datetime with its fraction ('.000000'): compare the seconds.
  for (const row of queued) expect(String(row.next_retry).slice(0, 19) <= nowText).toBe(true);
  expect(Math.min(...dueAt)).toBeLessThanOrEqual(Date.now());

  // Released: the dispatcher's next look claims exactly those 12 (the 8 retries are due in 300 s).
  expect((await dispatchDue(t.site)).sort()).toEqual(queued.map((r) => String(r.name)).sort());
});

test('a run of rows claimed long ago has only what is left of the budget since their claim', async () => {
  const late = await startReceiver(0, ['hang']);
  expect((await createWebhook(t, { name: 'claimed', request_url: late.url, timeout: 4 })).status).toBe(201);
  for (let i = 0; i < 20; i++) await createTodo(t, { description: `claimed ${i}` });
  const names = (await logRows(t)).filter((r) => r.webhook === 'claimed').map((r) => String(r.name));
  expect(names).toHaveLength(20);
  // Claimed RUN_BUDGET_MS less 1.5 s ago (the job waited that long for a worker): 1.5-2.5 s of budget left (the claim
  // is stored to the second, rounded up).
  await t.site.db
    .knex('tabWebhook Request Log')
    .whereIn('name', names)
    .update({ next_retry: datetimeAt(Date.now() - (RUN_BUDGET_MS - 1500) + LEASE_MS) });
  const pools = new ReceiverPools();
  const counts = await deliverLogRows(t.site, names, pools);
  await pools.close();
  await late.close();

  // The first 8 started at once and hung for their 4 s timeout, past what was left; the other 12 were given back.
  expect(counts).toEqual({ skipped: 0, Failed: 8, deferred: 12 });
  expect(late.requests).toHaveLength(8);
});
