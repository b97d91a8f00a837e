// A delivery run's time budget: a lane starts no attempt once the run has lasted its budget, and gives the rows it did
// not start back (Queued, due now) instead of holding them past their claim, when another process would send them again.
import { RUN_BUDGET_MS, deliverLogRows } from '../../runtime/webhooks/deliver';
import { dispatchDue } from '../../runtime/webhooks/dispatcher';
import { ReceiverPools } from '../../runtime/webhooks/receiver-pools';
import { LEASE_MS } from '../../runtime/webhooks/request-log';
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
  const counts = await deliverLogRows(t.site, names, pools, (at) => dueAt.push(at), { budgetMs: 300 });
  const took = Date.now() - started;
  await pools.close();

  // The first 8 (PARALLEL) started before 300 ms and ended by their 1 s timeout; nothing started after.
  expect(counts).toEqual({ skipped: 0, Failed: 8, deferred: 12 });
  expect(took).toBeLessThan(2500);
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
