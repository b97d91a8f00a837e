// Request ids: a sane X-Request-Id is kept, anything else replaced by a UUID; the id is echoed on every answer
// (errors too) and carried by every log line of the request (the access line and a server error's line).
import request from 'supertest';
import { createApp } from '../../runtime/app';
import { captureLog, type CapturedLog } from '../helpers/captured-log';
import { createTestSite, type TestSite } from '../helpers/test-site';

let t: TestSite;
let http: ReturnType<typeof request>;
let log: CapturedLog;
beforeAll(async () => {
  t = await createTestSite({ site: { access_log: true } });
  // The default server-error report (the test site's app swallows it).
  http = request(createApp(t.site).callback());
});
beforeEach(() => (log = captureLog()));
afterEach(() => log.restore());
afterAll(() => t.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test.each([
  ['a UUID', '0f8fa2d4-7c51-4f0e-9d0a-1b2c3d4e5f60'],
  ['a W3C trace id', '4bf92f3577b34da6a3ce929d0e0e4736'],
  ['an AWS trace id', 'Root=1-67891233-abcdef012345678912345678'],
  ['128 characters', 'a'.repeat(128)],
])('%s in X-Request-Id is kept, echoed and logged', async (_l, id) => {
  const res = await http.get('/api/health').set('X-Request-Id', id);
  expect(res.status).toBe(200);
  expect(res.headers['x-request-id']).toBe(id);
  const lines = log.lines.filter((l) => l.event === 'request');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({
    req_id: id,
    method: 'GET',
    path: '/api/health',
    status: 200,
    user: 'Guest',
  });
});

test('without X-Request-Id each request gets its own UUID', async () => {
  const a = await http.get('/api/health');
  const b = await http.get('/api/health');
  expect(a.headers['x-request-id']).toMatch(UUID);
  expect(b.headers['x-request-id']).toMatch(UUID);
  expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
  expect(log.lines.map((l) => l.req_id)).toEqual([a.headers['x-request-id'], b.headers['x-request-id']]);
});

test.each([
  ['129 characters', 'b'.repeat(129)],
  ['spaces', 'id with spaces'],
  ['a forged log field', '","level":60,"msg":"forged'],
  ['JSON', '{"req_id":"x"}'],
  ['angle brackets', '<script>alert(1)</script>'],
  ['a tab', 'id\twith-tab'],
  ['latin-1 bytes', 'caf\u00e9'],
  ['empty', ''],
])('%s in X-Request-Id is replaced by a UUID and logged nowhere', async (_l, id) => {
  const res = await http.get('/api/health').set('X-Request-Id', id);
  expect(res.status).toBe(200);
  expect(res.headers['x-request-id']).toMatch(UUID);
  expect(log.lines).toHaveLength(1);
  expect(log.lines[0]!.req_id).toBe(res.headers['x-request-id']);
  if (id) expect(JSON.stringify(log.lines)).not.toContain(id);
});

test('an error answer carries the id too (404, 405, 401)', async () => {
  for (const [method, path] of [
    ['get', '/api/nothing-here'],
    ['delete', '/api/health'],
    ['get', '/api/resource/Note'],
  ] as const) {
    const res = await http[method](path).set('X-Request-Id', `err-${method}`);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.headers['x-request-id']).toBe(`err-${method}`);
  }
  expect(log.lines.map((l) => [l.req_id, l.status])).toEqual([
    ['err-get', 404],
    ['err-delete', 405],
    ['err-get', 401],
  ]);
});

test("a server error's line and the access line carry the request's id, and no bound value", async () => {
  await t.site.db.knex.schema.renameTable('tabNote', 'tabNote_gone');
  let res;
  try {
    res = await http
      .get('/api/resource/Note')
      .query({ filters: JSON.stringify([['title', '=', 'BOUND-VALUE-93']]) })
      .set('Authorization', t.adminToken)
      .set('X-Request-Id', 'trace-500');
  } finally {
    await t.site.db.knex.schema.renameTable('tabNote_gone', 'tabNote');
  }
  expect(res.status).toBe(500);
  expect(res.headers['x-request-id']).toBe('trace-500');
  const error = log.lines.find((l) => l.event === 'server_error');
  expect(error).toMatchObject({ req_id: 'trace-500', level: 50, method: 'GET', path: '/api/resource/Note' });
  expect(String(error!.err)).toMatch(/tabNote/);
  expect(log.lines.find((l) => l.event === 'request')).toMatchObject({
    req_id: 'trace-500',
    status: 500,
    user: 'Administrator',
  });
  expect(log.lines.every((l) => l.req_id === 'trace-500')).toBe(true);
  expect(JSON.stringify(log.lines)).not.toContain('BOUND-VALUE-93');
});

test('with access_log off (the default) a request logs no line, and still gets its id', async () => {
  const quiet = await createTestSite();
  // Opening the site logs what its first migration created; the request itself logs nothing.
  log.lines.length = 0;
  try {
    const res = await request(createApp(quiet.site).callback()).get('/api/health');
    expect(res.headers['x-request-id']).toMatch(UUID);
    expect(log.lines).toEqual([]);
  } finally {
    await quiet.close();
  }
});
