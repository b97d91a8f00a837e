// The compiled-script cache across processes: with REDIS_URL, a Server Script saved through one process is what the
// next call on another process runs (the change is published; every process drops its cache).
import request from 'supertest';
import { createApp } from '../../runtime/app';
import { closeSite, openSite } from '../../runtime/bootstrap';
import type { Site } from '../../runtime/site';
import { registry } from '../../generated';
import { createTestSite, type TestSite } from '../helpers/test-site';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/15';

let t: TestSite;
let a: Site;
let b: Site;
beforeAll(async () => {
  t = await createTestSite();
  a = await openSite({ ...t.site.config, redisUrl: REDIS_URL }, registry);
  b = await openSite({ ...t.site.config, redisUrl: REDIS_URL }, registry);
});
afterAll(async () => {
  await closeSite(a);
  await closeSite(b);
  await t.close();
});

test('a script changed through process A runs changed on process B at its next call', async () => {
  const httpA = request(createApp(a, { onServerError: () => undefined }).callback());
  const httpB = request(createApp(b, { onServerError: () => undefined }).callback());
  const auth = { Authorization: t.adminToken };
  const saved = await httpA.post('/api/resource/Server Script').set(auth).send({
    name: 'shared',
    script_type: 'API',
    api_method: 'shared',
    script: "frappe.response.message = 'v1'",
  });
  expect(saved.status).toBe(201);
  // B loads the scripts (with the new one) and caches them.
  expect((await httpB.get('/api/method/shared').set(auth)).body.message).toBe('v1');
  const put = await httpA
    .put('/api/resource/Server Script/shared')
    .set(auth)
    .send({ script: "frappe.response.message = 'v2'" });
  expect(put.status).toBe(200);
  // The notice crosses Redis within a few milliseconds; B never serves v1 again once it has arrived.
  let seen = '';
  for (let i = 0; i < 50 && seen !== 'v2'; i++) {
    seen = (await httpB.get('/api/method/shared').set(auth)).body.message;
    if (seen !== 'v2') await new Promise((resolve) => setTimeout(resolve, 10));
  }
  expect(seen).toBe('v2');
});
