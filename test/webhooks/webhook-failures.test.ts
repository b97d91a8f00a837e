// Deliveries that fail: a receiver that never answers (timeout), one that is down (retried until Exhausted), and one
// that redirects to an address the policy refuses (not followed: the other address gets nothing).
import { createTestSite, type TestSite } from '../helpers/test-site';
import { createTodo, createWebhook, logRows, startReceiver, waitFor, type Receiver } from './receiver';

jest.setTimeout(30_000);

const BASE = 41520 + (process.env.TEST_MYSQL_URL ? 10 : 0);

let t: TestSite;
const receivers: Receiver[] = [];

beforeEach(async () => {
  t = await createTestSite({
    site: { webhook_allowed_hosts: ['127.0.0.1'], webhook_retry_schedule: [0.2, 0.2], job_poll_ms: 50 },
  });
});

afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
  await t.close();
});

it('gives up on a receiver that never answers after the timeout, retrying on the schedule', async () => {
  const receiver = await startReceiver(0, ['hang']);
  receivers.push(receiver);
  expect((await createWebhook(t, { name: 'slow', request_url: receiver.url, timeout: 1 })).status).toBe(201);
  const started = Date.now();
  await createTodo(t);
  await waitFor(async () => (await logRows(t)).some((r) => r.status === 'Exhausted'), 15_000, 'Exhausted');
  const rows = await logRows(t);
  expect(rows.map((r) => [r.status, Number(r.attempts)])).toEqual([
    ['Failed', 1],
    ['Failed', 2],
    ['Exhausted', 3],
  ]);
  expect(rows[0]?.error).toBe('No answer within 1 s');
  expect(receiver.requests).toHaveLength(3);
  expect(Date.now() - started).toBeGreaterThanOrEqual(3000);
});

it('retries a receiver that is down until Exhausted, then nothing more', async () => {
  expect(
    (await createWebhook(t, { name: 'down', request_url: `http://127.0.0.1:${BASE + 1}/hook` })).status,
  ).toBe(201);
  await createTodo(t);
  await waitFor(async () => (await logRows(t)).some((r) => r.status === 'Exhausted'), 15_000, 'Exhausted');
  await new Promise((r) => setTimeout(r, 1500));
  const rows = await logRows(t);
  expect(rows.map((r) => r.status)).toEqual(['Failed', 'Failed', 'Exhausted']);
  expect(String(rows[0]?.error)).toMatch(/ECONNREFUSED/);
  expect(rows[2]?.next_retry).toBeNull();
  expect(new Set(rows.map((r) => r.message_id)).size).toBe(1);
});

it('does not follow a redirect to a refused address', async () => {
  const target = await startReceiver(0, [200], '127.0.0.3');
  receivers.push(target);
  const redirecting = await startReceiver(0, [{ status: 302, headers: { location: target.url } }]);
  receivers.push(redirecting);
  expect((await createWebhook(t, { name: 'redirect', request_url: redirecting.url })).status).toBe(201);
  await createTodo(t);
  await waitFor(async () => (await logRows(t)).some((r) => r.status === 'Exhausted'), 15_000, 'Exhausted');
  const rows = await logRows(t);
  expect(String(rows[0]?.error)).toBe(`HTTP 302: redirect to ${target.url} not followed`);
  expect(redirecting.requests).toHaveLength(3);
  expect(target.requests).toHaveLength(0);
});

it('ends a delivery whose webhook was deleted as Exhausted at once', async () => {
  const receiver = await startReceiver(0, ['hang']);
  receivers.push(receiver);
  expect((await createWebhook(t, { name: 'gone', request_url: receiver.url, timeout: 1 })).status).toBe(201);
  await createTodo(t);
  await waitFor(() => receiver.requests.length >= 1, 5000, 'the first attempt');
  expect((await t.http.delete('/api/resource/Webhook/gone').set('Authorization', t.adminToken)).status).toBe(
    202,
  );
  await waitFor(async () => (await logRows(t)).some((r) => r.status === 'Exhausted'), 15_000, 'Exhausted');
  const rows = await logRows(t);
  expect(rows.map((r) => r.status)).toEqual(['Failed', 'Exhausted']);
  expect(rows[1]?.error).toBe('Webhook gone no longer exists');
  expect(receiver.requests).toHaveLength(1);
});

it("a receiver that hangs delays neither another receiver's deliveries nor their records", async () => {
  const hanging = await startReceiver(0, ['hang']);
  const healthy = await startReceiver(0, [200]);
  receivers.push(hanging, healthy);
  expect((await createWebhook(t, { name: 'h-hang', request_url: hanging.url, timeout: 4 })).status).toBe(201);
  expect((await createWebhook(t, { name: 'h-ok', request_url: healthy.url })).status).toBe(201);
  // Enough at once that the hanging receiver's attempts fill a batch's PARALLEL (8) several times over.
  const started = Date.now();
  await Promise.all(Array.from({ length: 24 }, (_, i) => createTodo(t, { description: `burst ${i}` })));
  await waitFor(() => healthy.requests.length === 24, 3000, "the healthy receiver's 24 deliveries");
  const okRecorded = async () =>
    (await logRows(t)).filter((r) => r.webhook === 'h-ok' && r.status === 'Success').length === 24;
  await waitFor(okRecorded, 3500 - (Date.now() - started), 'their Success rows, before the 4 s timeout');
  expect(hanging.requests.length).toBeGreaterThan(0);
});

it("a receiver that hangs holds one job's worker place, not every job's its rows reach", async () => {
  // job_concurrency 2 (the default). Three waves of saves, each its own delivery job (one per 50 ms of commits), each
  // with a row for both receivers: the first job opens the hanging receiver's lane and waits on it; the next two hand
  // their hanging rows to that lane and end, so the third job's healthy row does not wait for a place.
  const hanging = await startReceiver(0, ['hang']);
  const healthy = await startReceiver(0, [200]);
  receivers.push(hanging, healthy);
  expect((await createWebhook(t, { name: 'w-hang', request_url: hanging.url, timeout: 8 })).status).toBe(201);
  expect((await createWebhook(t, { name: 'w-ok', request_url: healthy.url })).status).toBe(201);
  const started = Date.now();
  for (let wave = 0; wave < 3; wave++) {
    await createTodo(t, { description: `wave ${wave}` });
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  await waitFor(
    () => healthy.requests.length === 3,
    3500 - (Date.now() - started),
    'the third wave, before 4 s',
  );
  // The handed rows were sent (by the first job's lane) and are recorded when their timeout ends.
  await waitFor(() => hanging.requests.length === 3, 3000, "the hanging receiver's three attempts");
  await waitFor(
    async () =>
      (await logRows(t)).filter((r) => r.webhook === 'w-hang' && r.status === 'Failed').length === 3,
    15_000,
    'the three Failed rows',
  );
});

it('records the rows a receiver answered at once while a slow row to the same host still waits', async () => {
  const receiver = await startReceiver(0, (path) => (path === '/slow' ? 'hang' : 200));
  receivers.push(receiver);
  const origin = new URL(receiver.url).origin;
  for (const name of ['l-slow', 'l-fast-1', 'l-fast-2'])
    expect(
      (
        await createWebhook(t, {
          name,
          request_url: `${origin}/${name === 'l-slow' ? 'slow' : 'fast'}`,
          timeout: 1,
        })
      ).status,
    ).toBe(201);
  // One create: its three rows go in one job, and in one lane (one host and port).
  await createTodo(t);
  const statuses = async () => new Map((await logRows(t)).map((r) => [String(r.webhook), String(r.status)]));
  await waitFor(
    async () => {
      const now = await statuses();
      return now.get('l-fast-1') === 'Success' && now.get('l-fast-2') === 'Success';
    },
    5000,
    'the fast rows recorded',
  );
  // Read while the job still runs: the slow attempt has not timed out yet, and its row is unrecorded.
  expect((await logRows(t)).map((r) => [r.webhook, r.status]).sort()).toEqual([
    ['l-fast-1', 'Success'],
    ['l-fast-2', 'Success'],
    ['l-slow', 'Queued'],
  ]);
  expect(receiver.requests.map((r) => r.url).sort()).toEqual(['/fast', '/fast', '/slow']);
  const slowFailed = async () =>
    (await logRows(t)).some((r) => r.webhook === 'l-slow' && r.status === 'Failed');
  await waitFor(slowFailed, 5000, 'the slow row Failed');
});

/** The first retry 1.5 s after a failure: time for a change of the webhook to land before it. */
function slowRetries(): void {
  (t.site.config.site as { webhook_retry_schedule: number[] }).webhook_retry_schedule = [1.5, 1.5];
}

const updateWebhook = (name: string, body: object) =>
  t.http.put(`/api/resource/Webhook/${name}`).set('Authorization', t.adminToken).send(body);

it('sends no retry once its webhook is disabled: the row ends Exhausted', async () => {
  slowRetries();
  const receiver = await startReceiver(0, [500]);
  receivers.push(receiver);
  expect((await createWebhook(t, { name: 'off', request_url: receiver.url })).status).toBe(201);
  await createTodo(t);
  await waitFor(
    async () => (await logRows(t)).some((r) => r.status === 'Failed'),
    5000,
    'the failed attempt',
  );
  expect((await updateWebhook('off', { enabled: 0 })).status).toBe(200);
  await waitFor(async () => (await logRows(t)).some((r) => r.status === 'Exhausted'), 10_000, 'Exhausted');
  await new Promise((r) => setTimeout(r, 1000));
  const rows = await logRows(t);
  expect(rows.map((r) => r.status)).toEqual(['Failed', 'Exhausted']);
  expect(rows[1]?.error).toBe('Webhook off is disabled');
  expect(receiver.requests).toHaveLength(1);
});

it("sends a retry to the webhook's URL as it is now", async () => {
  slowRetries();
  const old = await startReceiver(0, [500]);
  const fixed = await startReceiver(0, [200]);
  receivers.push(old, fixed);
  expect((await createWebhook(t, { name: 'moved', request_url: old.url })).status).toBe(201);
  await createTodo(t);
  await waitFor(
    async () => (await logRows(t)).some((r) => r.status === 'Failed'),
    5000,
    'the failed attempt',
  );
  expect((await updateWebhook('moved', { request_url: fixed.url })).status).toBe(200);
  await waitFor(async () => (await logRows(t)).some((r) => r.status === 'Success'), 10_000, 'Success');
  const rows = await logRows(t);
  expect(rows.map((r) => [r.status, r.url])).toEqual([
    ['Failed', old.url],
    ['Success', fixed.url],
  ]);
  expect([old.requests.length, fixed.requests.length]).toEqual([1, 1]);
  expect(fixed.requests[0]?.body).toBe(old.requests[0]?.body);
});

it.each(['Expect', 'Upgrade', 'Keep-Alive', 'TE', 'Trailer', 'Proxy-Authorization'])(
  'refuses a webhook setting the connection header %s at save (undici refuses to send them)',
  async (key) => {
    const res = await createWebhook(t, {
      name: `hop-${key}`,
      request_url: 'http://127.0.0.1:9/hook',
      webhook_headers: [{ key, value: 'x' }],
    });
    expect(res.status).toBe(400);
    expect(res.body.exception).toContain(`Header ${key} is about the connection`);
    expect(await t.site.db.knex('tabWebhook').where({ name: `hop-${key}` })).toEqual([]);
  },
);
