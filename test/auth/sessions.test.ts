// Sessions: the sid cookie from login, idle expiry, logout (v1 and v2), unknown sids, deny_multiple_sessions.
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { cookieValue, login, setCookies, setSettings } from './auth-helpers';

let t: TestSite;
const USER = 'session-user@example.com';
const PASSWORD = 'session-password-1';
beforeAll(async () => {
  t = await createTestSite();
  await createUser(t, USER, ['System Manager'], PASSWORD);
});
afterAll(() => t.close());
afterEach(() => setSettings(t, { session_expiry: '170:00', deny_multiple_sessions: 0 }));

test("login answers Frappe's body plus the csrf_token, and sets an HttpOnly SameSite=Lax sid cookie", async () => {
  const res = await t.http.post('/api/method/login').send({ usr: USER, pwd: PASSWORD });
  expect(res.status).toBe(200);
  expect(res.body).toEqual({
    message: 'Logged In',
    home_page: '/app',
    full_name: expect.any(String),
    csrf_token: expect.stringMatching(/^[0-9a-f]{48}$/),
  });
  const sid = setCookies(res).find((c) => c.startsWith('sid='));
  expect(sid).toMatch(/httponly/i);
  expect(sid).toMatch(/samesite=lax/i);
  expect(sid).not.toMatch(/secure/i);
  expect(cookieValue(res, 'sid')).toMatch(/^[0-9a-f]{56}$/);
});

test('the session cookie authenticates later requests as the user', async () => {
  const s = await login(t, USER, PASSWORD);
  const res = await t.http.get('/api/method/frappe.auth.get_logged_user').set('Cookie', s.cookie);
  expect(res.status).toBe(200);
  expect(res.body.message).toBe(USER);
});

test('the session is stored server-side in tabSessions', async () => {
  const s = await login(t, USER, PASSWORD);
  const row = await t.site.db.knex('tabSessions').where('sid', s.sid).first('user');
  expect(row).toEqual({ user: USER });
});

test.each(['/api/method/logout', '/api/v2/method/logout'])(
  '%s ends the session and clears the cookies',
  async (path) => {
    const s = await login(t, USER, PASSWORD);
    const out = await t.http.post(path).set('Cookie', s.cookie).set('X-Svc-CSRF-Token', s.csrf);
    expect(out.status).toBe(200);
    expect(cookieValue(out, 'sid')).toBe('');
    expect(cookieValue(out, 'user_id')).toBe('');
    expect(await t.site.db.knex('tabSessions').where('sid', s.sid).first()).toBeUndefined();
    const after = await t.http.get('/api/method/frappe.auth.get_logged_user').set('Cookie', s.cookie);
    expect(after.status).toBe(401);
    expect(after.body.exc_type).toBe('AuthenticationError');
  },
);

test.each([
  ['an unknown sid', 'sid=' + 'ab'.repeat(28)],
  ['a malformed sid', "sid=' OR 1=1 --"],
  ['an overlong sid', 'sid=' + 'a'.repeat(5000)],
  ['the Guest sid', 'sid=Guest'],
])('%s is a Guest: a protected call gets 401', async (_label, cookie) => {
  const res = await t.http.get('/api/resource/ToDo').set('Cookie', cookie);
  expect(res.status).toBe(401);
  expect(res.body.exc_type).toBe('AuthenticationError');
});

test('a guest-callable method with an unknown sid still answers (as Guest)', async () => {
  const res = await t.http.get('/api/method/ping').set('Cookie', 'sid=' + 'cd'.repeat(28));
  expect(res.status).toBe(200);
  expect(res.body.message).toBe('pong');
});

test('a session idle longer than System Settings session_expiry is a Guest, and its row is removed', async () => {
  await setSettings(t, { session_expiry: '0:00:01' });
  const s = await login(t, USER, PASSWORD);
  expect((await t.http.get('/api/method/frappe.auth.get_logged_user').set('Cookie', s.cookie)).status).toBe(
    200,
  );
  await new Promise((r) => setTimeout(r, 1_300));
  const res = await t.http.get('/api/method/frappe.auth.get_logged_user').set('Cookie', s.cookie);
  expect(res.status).toBe(401);
  expect(await t.site.db.knex('tabSessions').where('sid', s.sid).first()).toBeUndefined();
});

test('the sid cookie lives as long as session_expiry', async () => {
  await setSettings(t, { session_expiry: '2:00' });
  const res = await t.http.post('/api/method/login').send({ usr: USER, pwd: PASSWORD });
  const expires = /expires=([^;]+)/i.exec(setCookies(res).find((c) => c.startsWith('sid=')) ?? '')?.[1];
  const seconds = (Date.parse(String(expires)) - Date.now()) / 1000;
  expect(seconds).toBeGreaterThan(7190);
  expect(seconds).toBeLessThanOrEqual(7201);
});

test('with deny_multiple_sessions only the newest session of a user works', async () => {
  await setSettings(t, { deny_multiple_sessions: 1 });
  const first = await login(t, USER, PASSWORD);
  const second = await login(t, USER, PASSWORD);
  expect(
    (await t.http.get('/api/method/frappe.auth.get_logged_user').set('Cookie', first.cookie)).status,
  ).toBe(401);
  expect(
    (await t.http.get('/api/method/frappe.auth.get_logged_user').set('Cookie', second.cookie)).status,
  ).toBe(200);
});

test('without deny_multiple_sessions two sessions of one user both work', async () => {
  const first = await login(t, USER, PASSWORD);
  const second = await login(t, USER, PASSWORD);
  expect(
    (await t.http.get('/api/method/frappe.auth.get_logged_user').set('Cookie', first.cookie)).status,
  ).toBe(200);
  expect(
    (await t.http.get('/api/method/frappe.auth.get_logged_user').set('Cookie', second.cookie)).status,
  ).toBe(200);
});

test("a disabled user's session is refused with 401", async () => {
  const email = 'soon-disabled@example.com';
  await createUser(t, email, ['System Manager'], PASSWORD);
  const s = await login(t, email, PASSWORD);
  const off = await t.http
    .put(`/api/resource/User/${email}`)
    .set('Authorization', t.adminToken)
    .send({ enabled: 0 });
  expect(off.status).toBe(200);
  expect((await t.http.get('/api/method/frappe.auth.get_logged_user').set('Cookie', s.cookie)).status).toBe(
    401,
  );
});
