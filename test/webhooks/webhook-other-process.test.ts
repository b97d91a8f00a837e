// A Webhook written through one process counts on another: with REDIS_URL within milliseconds (the notice drops its
// index), without it within CHECK_MS (an index older than that is read again before it is used).
// Here the processes are sites opened on one database, each with its own app. No job worker runs: what a webhook fired
// is its log row (and the URL in it), so nothing is sent to the URL.
import request from 'supertest';
import { createApp } from '../../runtime/app';
import { closeSite, openSite } from '../../runtime/bootstrap';
import type { Site } from '../../runtime/site';
import { subscriptionOf } from '../../runtime/redis/change-broadcast';
import { CHECK_MS, WEBHOOK_NOTICES } from '../../runtime/webhooks/webhook-index';
import { createTestSite, type TestSite } from '../helpers/test-site';
import { waitFor } from './receiver';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/11';
const FIRST = 'http://127.0.0.1:4800/hook?v=1';
const SECOND = 'http://127.0.0.1:4800/hook?v=2';
jest.setTimeout(60_000);

type Http = ReturnType<typeof request>;

let t: TestSite;
const opened: Site[] = [];

/** Another process on the test site's database (with Redis when `redisUrl` is given). */
async function open(redisUrl?: string): Promise<{ site: Site; http: Http }> {
  const site = await openSite({ ...t.site.config, ...(redisUrl ? { redisUrl } : {}) }, t.site.registry);
  opened.push(site);
  return {
    site,
    http: request(createApp(site, { authHooks: [], onServerError: () => undefined }).callback()),
  };
}

beforeAll(async () => {
  t = await createTestSite({ site: { webhook_allowed_hosts: ['127.0.0.1'], job_worker: false } });
});

afterAll(async () => {
  for (const site of opened) await closeSite(site);
  await t.close();
});

/** Inserts a ToDo through `http`; returns its name. */
async function insertTodo(http: Http): Promise<string> {
  const res = await http
    .post('/api/resource/ToDo')
    .set('Authorization', t.adminToken)
    .send({ description: 'through another process' });
  expect(res.status).toBe(201);
  return String(res.body.data.name);
}

/** The URLs webhook `name` was fired with for ToDo `todo` (its log rows). */
async function firedUrls(name: string, todo: string): Promise<string[]> {
  const rows = (await t.site.db
    .knex('tabWebhook Request Log')
    .where({ webhook: name, reference_document: todo })
    .select('url')) as { url: string }[];
  return rows.map((r) => r.url);
}

/** Inserts through `b` until webhook `name` fires there (b has read it, however it learnt of it); returns its URLs. */
async function firing(b: Http, name: string): Promise<string[]> {
  let urls: string[] = [];
  await waitFor(async () => (urls = await firedUrls(name, await insertTodo(b))).length > 0, 5000, name);
  return urls;
}

function createWebhook(http: Http, name: string, url: string) {
  return http
    .post('/api/resource/Webhook')
    .set('Authorization', t.adminToken)
    .send({ name, webhook_doctype: 'ToDo', webhook_docevent: 'after_insert', request_url: url });
}

function updateWebhook(http: Http, name: string, body: Record<string, unknown>) {
  return http.put(`/api/resource/Webhook/${name}`).set('Authorization', t.adminToken).send(body);
}

/**
 * The URLs `name` fired with for `b`'s inserts, inserting until they are `expected` or `within` ms have passed (then
 * the last insert's). The change travels to b on its own (a Redis notice, or b's next check of its index): b may serve
 * an insert before it arrives, so "the very next insert" would be a race; `within` bounds how late it may be.
 */
async function firedWithin(b: Http, name: string, expected: string[], within: number): Promise<string[]> {
  const end = Date.now() + within;
  let urls = await firedUrls(name, await insertTodo(b));
  while (JSON.stringify(urls) !== JSON.stringify(expected) && Date.now() < end) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    urls = await firedUrls(name, await insertTodo(b));
  }
  return urls;
}

/** The three changes, made through `a` and seen by `b`'s inserts within `within` ms. */
function describeChanges(processes: () => { a: Http; b: Http }, within: number): void {
  it('an edited URL is the one used', async () => {
    const { a, b } = processes();
    const name = `edited-${Date.now()}`;
    expect((await createWebhook(a, name, FIRST)).status).toBe(201);
    expect(await firing(b, name)).toEqual([FIRST]);
    expect((await updateWebhook(a, name, { request_url: SECOND })).status).toBe(200);
    expect(await firedWithin(b, name, [SECOND], within)).toEqual([SECOND]);
  });

  it('a disabled webhook fires no more', async () => {
    const { a, b } = processes();
    const name = `disabled-${Date.now()}`;
    expect((await createWebhook(a, name, FIRST)).status).toBe(201);
    expect(await firing(b, name)).toEqual([FIRST]);
    expect((await updateWebhook(a, name, { enabled: 0 })).status).toBe(200);
    expect(await firedWithin(b, name, [], within)).toEqual([]);
  });

  it('a created webhook fires', async () => {
    const { a, b } = processes();
    const name = `created-${Date.now()}`;
    await insertTodo(b); // b's index is loaded, without the webhook
    expect((await createWebhook(a, name, FIRST)).status).toBe(201);
    expect(await firedWithin(b, name, [FIRST], within)).toEqual([FIRST]);
  });
}

describe('with REDIS_URL: at the next insert', () => {
  let a: Http;
  let b: Http;
  beforeAll(async () => {
    a = (await open(REDIS_URL)).http;
    const other = await open(REDIS_URL);
    b = other.http;
    // b loads its index (and subscribes) at its first insert; the notices reach it once the subscription is live.
    // (Without a subscription there is nothing to wait for, and the tests below say what is missing.)
    await insertTodo(b);
    const subscribed = () => subscriptionOf(WEBHOOK_NOTICES, other.site)?.isLive !== false;
    await waitFor(subscribed, 10_000, 'the subscription');
  });
  // Well under CHECK_MS: what reaches b this soon is the notice, not b's own check.
  describeChanges(() => ({ a, b }), CHECK_MS / 4);
});

describe('without REDIS_URL: within CHECK_MS', () => {
  let a: Http;
  let b: Http;
  beforeAll(async () => {
    a = (await open()).http;
    b = (await open()).http;
  });
  describeChanges(() => ({ a, b }), CHECK_MS + 500);
});
