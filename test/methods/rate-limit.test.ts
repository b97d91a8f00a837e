// Per-method rate limits: one bucket per canonical path and caller (v1, v2 and DocType/fn share it; case, trailing
// slashes and extra arguments cannot dodge it), IP for guests (X-Forwarded-For only from trusted proxies), 429 + Retry-After.
import request from 'supertest';
import { createApp } from '../../runtime/app';
import { closeSiteRedis } from '../../runtime/redis/site-redis';
import { closeRateLimits } from '../../runtime/methods/rate-limit';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
});
afterAll(async () => {
  await closeRateLimits(t.site);
  await t.close();
});

const tooMany = (res: { status: number; body: { exc_type?: string }; headers: Record<string, string> }) => {
  expect(res.status).toBe(429);
  expect(res.body.exc_type).toBe('TooManyRequestsError');
  expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60);
};

test('#12 every path variant of one function counts against one bucket', async () => {
  const token = await createUser(t, 'hammer@example.com', []);
  const variants = [
    '/api/method/widgets.widget.widget.limited',
    '/api/v2/method/Widget/limited/',
    `/api/v1/method/widgets.widget.widget.limited%2F?email=${Math.random()}`,
  ];
  for (const path of variants) {
    const res = await t.http
      .post(path)
      .set('Authorization', token)
      .send({ email: `${Math.random()}@x.com` });
    expect([path, res.status]).toEqual([path, 200]);
  }
  for (const path of [
    ...variants,
    '/api/v2/method/widgets.widget.widget.limited',
    '/api/v2/method/Widget/limited//',
  ]) {
    tooMany(
      await t.http
        .post(path)
        .set('Authorization', token)
        .send({ email: `${Math.random()}@x.com` }),
    );
  }
  // A case variant names no function at all: 404, the function does not run.
  expect(
    (await t.http.post('/api/method/Widgets.Widget.Widget.limited').set('Authorization', token)).status,
  ).toBe(404);
});

test('callers have separate buckets: another user is not limited by the first', async () => {
  const a = await createUser(t, 'bucket-a@example.com', []);
  const b = await createUser(t, 'bucket-b@example.com', []);
  for (let i = 0; i < 3; i++)
    expect((await t.http.get('/api/v2/method/Widget/limited').set('Authorization', a)).status).toBe(200);
  tooMany(await t.http.get('/api/v2/method/Widget/limited').set('Authorization', a));
  expect((await t.http.get('/api/v2/method/Widget/limited').set('Authorization', b)).status).toBe(200);
});

test('guests are counted by IP; X-Forwarded-For from an untrusted peer cannot rotate the bucket', async () => {
  for (let i = 0; i < 3; i++) {
    const res = await t.http.get('/api/v2/method/Widget/limited').set('X-Forwarded-For', `10.0.0.${i}`);
    expect(res.status).toBe(200);
  }
  tooMany(await t.http.get('/api/v2/method/Widget/limited').set('X-Forwarded-For', '10.9.9.9'));
  tooMany(await t.http.get('/api/method/widgets.widget.widget.limited'));
});

test('behind a trusted proxy, guests are counted by the forwarded client address', async () => {
  const proxied = await createTestSite({
    registry: await fixtureRegistry(),
    site: { trusted_proxies: ['127.0.0.1', '::1'] },
  });
  try {
    const from = (ip: string) => proxied.http.get('/api/v2/method/Widget/limited').set('X-Forwarded-For', ip);
    for (let i = 0; i < 3; i++) expect((await from('203.0.113.7')).status).toBe(200);
    tooMany(await from('203.0.113.7'));
    expect((await from('203.0.113.8')).status).toBe(200);
  } finally {
    await closeRateLimits(proxied.site);
    await proxied.close();
  }
});

test('a rate-limited document method: limit per caller, 429 with Retry-After', async () => {
  await t.http
    .post('/api/v2/document/Method Probe')
    .set('Authorization', t.adminToken)
    .send({ title: 'rl-probe' })
    .expect(201);
  const url = '/api/v2/document/Method Probe/rl-probe/method/limited_touch';
  expect((await t.http.post(url).set('Authorization', t.adminToken)).status).toBe(200);
  expect(
    (
      await t.http
        .post('/api/resource/Method Probe/rl-probe?run_method=limited_touch')
        .set('Authorization', t.adminToken)
    ).status,
  ).toBe(200);
  tooMany(await t.http.post(url).set('Authorization', t.adminToken));
  tooMany(
    await t.http
      .post('/api/v2/method/run_doc_method')
      .set('Authorization', t.adminToken)
      .send({ method: 'limited_touch', document: { doctype: 'Method Probe', title: 'rl-probe' } }),
  );
});

test('with REDIS_URL the counters live in Redis: shared by the processes of one site, apart from other sites', async () => {
  const site = await createTestSite({ registry: await fixtureRegistry() });
  const otherSite = await createTestSite({ registry: await fixtureRegistry() });
  // A second process of the same site: its own Site object and app over the same database and configuration.
  const secondProcess = { ...site.site };
  const secondHttp = request(createApp(secondProcess, { onServerError: () => undefined }).callback());
  const user = `redis-${process.pid}-${Date.now()}@example.com`;
  try {
    for (const s of [site, otherSite])
      s.site.config.redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
    const token = await createUser(site, user, []);
    const otherToken = await createUser(otherSite, user, []);
    for (let i = 0; i < 3; i++) {
      const http = i % 2 === 0 ? site.http : secondHttp;
      expect((await http.get('/api/v2/method/Widget/limited').set('Authorization', token)).status).toBe(200);
    }
    tooMany(await secondHttp.get('/api/v2/method/Widget/limited').set('Authorization', token));
    tooMany(await site.http.get('/api/v2/method/Widget/limited').set('Authorization', token));
    // The same user name on another site (another database) has a bucket of its own.
    expect(
      (await otherSite.http.get('/api/v2/method/Widget/limited').set('Authorization', otherToken)).status,
    ).toBe(200);
  } finally {
    for (const s of [site.site, secondProcess, otherSite.site]) await closeRateLimits(s);
    await closeSiteRedis(secondProcess);
    await site.close();
    await otherSite.close();
  }
});
