// GET /api/metrics: the Prometheus exposition, closed to the world (401 Guest, 403 without a metrics role), open to
// Administrator and the roles of site config metrics_roles; requests are counted by route family, verb and status.
import { createTestSite, createUser, DB_KIND, type TestSite } from '../helpers/test-site';

let t: TestSite;
let manager: string;
let plain: string;
beforeAll(async () => {
  t = await createTestSite();
  manager = await createUser(t, 'metrics-manager@example.com', ['System Manager']);
  plain = await createUser(t, 'metrics-plain@example.com', ['All']);
});
afterAll(() => t.close());

/** The value of one sample line (`name{labels} value`), 0 when absent. */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

const scrape = async (auth = t.adminToken) => {
  const res = await t.http.get('/api/metrics').set('Authorization', auth);
  expect(res.status).toBe(200);
  return res.text;
};

test('a Guest gets 401 and a user without a metrics role 403, without any metric', async () => {
  const guest = await t.http.get('/api/metrics');
  expect(guest.status).toBe(401);
  expect(guest.text).not.toContain('svc_http');
  const user = await t.http.get('/api/metrics').set('Authorization', plain);
  expect(user.status).toBe(403);
  expect(user.body.exc_type).toBe('PermissionError');
  expect(user.text).not.toContain('svc_http');
});

test('Administrator and a System Manager read the exposition text', async () => {
  const res = await t.http.get('/api/metrics').set('Authorization', manager);
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
  for (const name of [
    'svc_http_requests_total',
    'svc_http_request_duration_seconds_bucket',
    'svc_db_pool_connections',
    'svc_db_up 1',
    'svc_jobs',
    'process_cpu_user_seconds_total',
    'nodejs_eventloop_lag_seconds',
  ])
    expect(res.text).toContain(name);
});

test('requests are counted by route family, verb and status, and timed', async () => {
  const ok = 'svc_http_requests_total{route="get",method="GET",status="200"}';
  const missing = 'svc_http_requests_total{route="get",method="GET",status="404"}';
  const unrouted = 'svc_http_requests_total{route="none",method="GET",status="404"}';
  const created = 'svc_http_requests_total{route="create",method="POST",status="201"}';
  const timed = 'svc_http_request_duration_seconds_count{route="get",method="GET"}';
  const before = await scrape();
  const note = await t.http
    .post('/api/resource/Note')
    .set('Authorization', t.adminToken)
    .send({ title: 'counted' });
  expect(note.status).toBe(201);
  for (let i = 0; i < 3; i++)
    expect(
      (await t.http.get(`/api/resource/Note/${note.body.data.name}`).set('Authorization', t.adminToken))
        .status,
    ).toBe(200);
  expect(
    (await t.http.get('/api/resource/Note/no-such-note').set('Authorization', t.adminToken)).status,
  ).toBe(404);
  expect((await t.http.get('/api/no-such-family')).status).toBe(404);
  const after = await scrape();
  expect(sample(after, ok) - sample(before, ok)).toBe(3);
  expect(sample(after, missing) - sample(before, missing)).toBe(1);
  expect(sample(after, unrouted) - sample(before, unrouted)).toBe(1);
  expect(sample(after, created) - sample(before, created)).toBe(1);
  expect(sample(after, timed) - sample(before, timed)).toBe(4);
  // The scrape itself is counted too, as the metrics family.
  expect(sample(after, 'svc_http_requests_total{route="metrics",method="GET",status="200"}')).toBeGreaterThan(
    0,
  );
});

test('metrics_roles names who reads: a role of the site, or Guest for everyone', async () => {
  const open = await createTestSite({ site: { metrics_roles: ['Guest'] } });
  try {
    const res = await open.http.get('/api/metrics');
    expect(res.status).toBe(200);
    expect(res.text).toContain('svc_db_up 1');
  } finally {
    await open.close();
  }
  const closed = await createTestSite({ site: { metrics_roles: [] } });
  try {
    const manager2 = await createUser(closed, 'm2@example.com', ['System Manager']);
    expect((await closed.http.get('/api/metrics').set('Authorization', manager2)).status).toBe(403);
    expect((await closed.http.get('/api/metrics').set('Authorization', closed.adminToken)).status).toBe(200);
  } finally {
    await closed.close();
  }
});

test('on MariaDB and PostgreSQL the change counter reads are counted; on SQLite there is no such metric', async () => {
  const reads = 'svc_change_stamp_reads';
  const before = await scrape();
  if (DB_KIND === 'sqlite') {
    expect(before).not.toContain(reads);
    return;
  }
  // A list remembers its page against the change counter: each request asks for a read.
  for (let i = 0; i < 2; i++)
    expect((await t.http.get('/api/resource/Note').set('Authorization', t.adminToken)).status).toBe(200);
  expect(sample(await scrape(), reads) - sample(before, reads)).toBeGreaterThanOrEqual(2);
});
