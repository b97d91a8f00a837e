// /api/health and /api/ready: route rows answering load balancers without credentials (outages: test/faults).
import { createTestSite, type TestSite } from '../helpers/test-site';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite();
});
afterAll(() => t.close());

test('GET /api/health is 200 {status: ok} without credentials', async () => {
  const res = await t.http.get('/api/health');
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ status: 'ok', uptime_s: expect.any(Number) });
});

test('GET /api/ready is 200 with the database up (no Redis configured: not named)', async () => {
  const res = await t.http.get('/api/ready');
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ status: 'ready', database: 'up', migrations: 'done' });
});

test('the probes answer GET only: POST is 405 with Allow', async () => {
  for (const path of ['/api/health', '/api/ready']) {
    const res = await t.http.post(path);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toContain('GET');
  }
});
