// API Request Log: with log_api_requests on, one row per API request (path, method, user, status, duration, ip),
// written after the response, never holding credentials; readable by System Manager only.
import { flushRequestLog } from '../../runtime/middleware/request-log';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { login, setSettings } from './auth-helpers';

let t: TestSite;
let userToken: string;
const USER = 'logged-user@example.com';
const PASSWORD = 'logged-password-1';
beforeAll(async () => {
  t = await createTestSite();
  userToken = await createUser(t, USER, ['System Manager'], PASSWORD);
});
afterAll(async () => {
  await flushRequestLog(t.site);
  await t.close();
});

async function logRows(): Promise<Record<string, unknown>[]> {
  await flushRequestLog(t.site);
  return (await t.site.db.knex('tabAPI Request Log').select('*').orderBy('creation')) as Record<
    string,
    unknown
  >[];
}
async function clearLog(): Promise<void> {
  await flushRequestLog(t.site);
  await t.site.db.knex('tabAPI Request Log').delete();
}

test('with log_api_requests off nothing is logged', async () => {
  await setSettings(t, { log_api_requests: 0 });
  await clearLog();
  await t.http.get('/api/resource/ToDo').set('Authorization', t.adminToken).expect(200);
  expect(await logRows()).toEqual([]);
});

describe('with log_api_requests on', () => {
  beforeAll(() => setSettings(t, { log_api_requests: 1 }));
  afterAll(() => setSettings(t, { log_api_requests: 0 }));
  beforeEach(clearLog);

  test('each API request writes one row with path, method, user, status, duration and ip', async () => {
    await t.http.get('/api/v2/document/ToDo').set('Authorization', userToken).expect(200);
    await t.http.get('/api/resource/ToDo/does-not-exist').set('Authorization', userToken).expect(404);
    const rows = await logRows();
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({
      path: '/api/v2/document/ToDo',
      method: 'GET',
      user: USER,
      status: 200,
      ip: '127.0.0.1',
    });
    expect(rows[1]).toMatchObject({ path: '/api/resource/ToDo/does-not-exist', status: 404, user: USER });
    expect(Number(rows[0]!.duration)).toBeGreaterThanOrEqual(0);
  });

  test('refused requests are logged too, as Guest with their status', async () => {
    await t.http.get('/api/resource/ToDo').set('Authorization', 'token bad:worse').expect(401);
    const rows = await logRows();
    expect(rows).toEqual([
      expect.objectContaining({ path: '/api/resource/ToDo', user: 'Guest', status: 401 }),
    ]);
  });

  test('requests outside /api are not logged', async () => {
    await t.http.get('/not-api').expect(404);
    expect(await logRows()).toEqual([]);
  });

  test('no password, secret, token, session id or CSRF token is ever stored', async () => {
    const s = await login(t, USER, PASSWORD);
    const [key, secret] = userToken.slice('token '.length).split(':') as [string, string];
    await t.http.post('/api/method/login').send({ usr: USER, pwd: 'Wr0ng-Password-Secret' });
    await t.http
      .get('/api/resource/ToDo')
      .query({ api_secret: 'query-secret-value', pwd: 'query-password' })
      .set('Authorization', userToken);
    await t.http
      .get('/api/resource/ToDo')
      .set('Authorization', `Basic ${Buffer.from(`${key}:${secret}`).toString('base64')}`);
    await t.http
      .post('/api/resource/ToDo')
      .set('Cookie', s.cookie)
      .set('X-Svc-CSRF-Token', s.csrf)
      .send({ description: 'x', csrf_token: s.csrf });
    await t.http.get('/api/resource/ToDo').set('Authorization', 'Bearer bearer-token-value-123');
    const rows = await logRows();
    expect(rows.length).toBe(6);
    const text = JSON.stringify(rows);
    for (const secretText of [
      PASSWORD,
      'Wr0ng-Password-Secret',
      secret,
      'query-secret-value',
      'query-password',
      s.sid,
      s.csrf,
      'bearer-token-value-123',
    ]) {
      expect(text).not.toContain(secretText);
    }
  });

  test('the response does not wait for the log write', async () => {
    await t.http.get('/api/method/ping').expect(200);
    // Nothing is written until the batch is flushed (timer or size), i.e. after the response was sent.
    expect(await t.site.db.knex('tabAPI Request Log').count({ n: '*' }).first()).toEqual({ n: 0 });
    expect(await logRows()).toHaveLength(1);
  });

  test('hundreds of requests are all logged, in batches', async () => {
    for (let i = 0; i < 250; i++) await t.http.get('/api/method/ping');
    expect(await logRows()).toHaveLength(250);
  });
});

describe('reading the log', () => {
  beforeAll(async () => {
    await setSettings(t, { log_api_requests: 1 });
    await t.http.get('/api/method/ping');
    await flushRequestLog(t.site);
    await setSettings(t, { log_api_requests: 0 });
  });

  test('a System Manager can read it', async () => {
    const res = await t.http.get('/api/resource/API Request Log').set('Authorization', userToken);
    expect(res.status).toBe(200);
    expect(res.body.data.length).toBeGreaterThan(0);
  });

  test('a user without System Manager cannot', async () => {
    const plain = await createUser(t, 'plain-reader@example.com', []);
    const res = await t.http.get('/api/resource/API Request Log').set('Authorization', plain);
    expect([403, 404]).toContain(res.status);
    expect(res.body.data).toBeUndefined();
  });
});
