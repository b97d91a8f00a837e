// The verified-key fast path of token auth: a cached, recently verified key answers without a hash, but never for a
// different secret, a regenerated secret, a disabled user or a request that also carries a cookie.
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';

let t: TestSite;
let key: string;
let secret: string;
const USER = 'cached-key-user@example.com';
beforeAll(async () => {
  t = await createTestSite();
  const token = await createUser(t, USER, ['System Manager']);
  [key, secret] = token.slice('token '.length).split(':') as [string, string];
});
afterAll(() => t.close());

const whoAmI = (authorization: string) =>
  t.http.get('/api/method/frappe.auth.get_logged_user').set('Authorization', authorization);
/** A secret of the same length that differs in its last character. */
const near = (s: string) => s.slice(0, -1) + (s.endsWith('a') ? 'b' : 'a');

test('a verified key keeps authenticating, and a secret differing in one character is refused', async () => {
  expect((await whoAmI(`token ${key}:${secret}`)).body.message).toBe(USER);
  expect((await whoAmI(`token ${key}:${secret}`)).body.message).toBe(USER);
  const wrong = await whoAmI(`token ${key}:${near(secret)}`);
  expect(wrong.status).toBe(401);
  expect(wrong.body.exc_type).toBe('AuthenticationError');
  expect((await whoAmI(`token ${key}:${secret}`)).status).toBe(200);
});

test('regenerating the keys refuses the old secret at once', async () => {
  expect((await whoAmI(`token ${key}:${secret}`)).status).toBe(200);
  const res = await t.http
    .post('/api/method/frappe.core.doctype.user.user.generate_keys')
    .set('Authorization', t.adminToken)
    .send({ user: USER });
  expect(res.status).toBe(200);
  const fresh = res.body.message as { api_key: string; api_secret: string };
  expect(fresh.api_key).toBe(key);
  expect((await whoAmI(`token ${key}:${secret}`)).status).toBe(401);
  expect((await whoAmI(`token ${key}:${fresh.api_secret}`)).body.message).toBe(USER);
  secret = fresh.api_secret;
});

test('disabling the user refuses its cached key at once', async () => {
  expect((await whoAmI(`token ${key}:${secret}`)).status).toBe(200);
  const off = await t.http
    .put(`/api/resource/User/${USER}`)
    .set('Authorization', t.adminToken)
    .send({ enabled: 0 });
  expect(off.status).toBe(200);
  expect((await whoAmI(`token ${key}:${secret}`)).status).toBe(401);
  await t.http.put(`/api/resource/User/${USER}`).set('Authorization', t.adminToken).send({ enabled: 1 });
  expect((await whoAmI(`token ${key}:${secret}`)).status).toBe(200);
});

test('a cached key with a session cookie of another user is still a conflict (401)', async () => {
  const login = await t.http
    .post('/api/method/login')
    .send({ usr: 'Administrator', pwd: 'admin-test-password' });
  const sid = /sid=([^;]+)/.exec(String(login.headers['set-cookie']))?.[1];
  expect(sid).toBeTruthy();
  expect((await whoAmI(`token ${key}:${secret}`)).status).toBe(200);
  const both = await whoAmI(`token ${key}:${secret}`).set('Cookie', `sid=${sid}`);
  expect(both.status).toBe(401);
});
