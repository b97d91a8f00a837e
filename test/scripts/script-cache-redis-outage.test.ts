// The compiled-script cache across processes during a Redis outage: two sites on one database share a private
// redis-server, which is stopped. A Server Script saved through A runs changed on B within CHECK_MS (B checks the
// database's version while its subscription is lost, as a process without REDIS_URL does); once Redis is back the
// subscription is live again, the check stops, and a change reaches B through the notice.
import request from 'supertest';
import { createApp } from '../../runtime/app';
import { closeSite, openSite } from '../../runtime/bootstrap';
import { siteRedis } from '../../runtime/redis/site-redis';
import { SITE_SCRIPTS } from '../../runtime/scripts/script-store';
import type { Site } from '../../runtime/site';
import { registry } from '../../generated';
import { HAVE_REDIS, PrivateRedis } from '../helpers/private-redis';
import { DB_KIND, createTestSite, type TestSite } from '../helpers/test-site';
import { BOUND_MS, until } from './script-polling';

// A port per database, so the three runs can go at once.
const PORT = { sqlite: 4860, mysql: 4861, postgres: 4862 }[DB_KIND];
const run = HAVE_REDIS ? describe : describe.skip;
jest.setTimeout(60_000);

/** Resolves once `check` is true; rejects after `ms`. */
async function waitFor(check: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

run('Server Script changes across processes while Redis is down (private redis-server)', () => {
  const server = new PrivateRedis(PORT);
  let t: TestSite;
  let a: Site;
  let b: Site;
  let httpA: ReturnType<typeof request>;
  let httpB: ReturnType<typeof request>;

  beforeAll(async () => {
    await server.start();
    t = await createTestSite();
    a = await openSite({ ...t.site.config, redisUrl: server.url }, registry);
    b = await openSite({ ...t.site.config, redisUrl: server.url }, registry);
    httpA = request(createApp(a, { onServerError: () => undefined }).callback());
    httpB = request(createApp(b, { onServerError: () => undefined }).callback());
  });
  afterAll(async () => {
    await closeSite(a);
    await closeSite(b);
    await t?.close();
    await server.stop();
  });

  const auth = () => ({ Authorization: t.adminToken });
  const readB = async () => (await httpB.get('/api/method/outage').set(auth())).body.message;
  const saveOnA = (version: string) =>
    httpA
      .put('/api/resource/Server Script/outage')
      .set(auth())
      .send({ script: `frappe.response.message = '${version}'` });

  test('saved through A while Redis is stopped: B runs it changed within the bound, and after Redis is back', async () => {
    const saved = await httpA.post('/api/resource/Server Script').set(auth()).send({
      name: 'outage',
      script_type: 'API',
      api_method: 'outage',
      script: "frappe.response.message = 'v1'",
    });
    expect(saved.status).toBe(201);
    // B's subscription is live (which drops what B read before), then B loads the scripts and keeps them.
    expect((await until(readB, 'v1')).last).toBe('v1');
    await waitFor(() => SITE_SCRIPTS.peek(b)?.subscription?.isLive === true, 10_000);
    expect(await readB()).toBe('v1');
    expect(SITE_SCRIPTS.peek(b)?.loaded?.api.get('outage')?.script).toContain('v1');

    await server.stop();
    await waitFor(() => siteRedis(b)?.breaker.isOpen === true, 10_000);
    expect((await saveOnA('v2')).status).toBe(200);
    const seen = await until(readB, 'v2');
    expect(seen.last).toBe('v2');
    expect(seen.ms).toBeLessThanOrEqual(BOUND_MS);

    await server.start();
    await waitFor(() => SITE_SCRIPTS.peek(b)?.subscription?.isLive === true, 15_000);
    // Live again: B reads the scripts again, still the saved ones, and stops checking the database.
    expect(await readB()).toBe('v2');
    expect(SITE_SCRIPTS.peek(b)?.timer).toBeUndefined();
    await waitFor(() => siteRedis(a)?.breaker.isOpen === false, 15_000);
    expect((await saveOnA('v3')).status).toBe(200);
    // The notice crosses Redis within a few milliseconds (well under CHECK_MS, so not the check).
    let last: unknown;
    for (let i = 0; i < 50 && last !== 'v3'; i++) {
      last = await readB();
      if (last !== 'v3') await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(last).toBe('v3');
  });
});
