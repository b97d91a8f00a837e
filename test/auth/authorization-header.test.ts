// The Authorization header: token and Basic keys, strict parsing, fail closed, constant-time secrets, cookie conflicts.
import { secretMatches, digestSecret } from '../../runtime/auth/passwords';
import { parseAuthorization } from '../../runtime/middleware/authenticate';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { countRows, login } from './auth-helpers';

let t: TestSite;
let userToken: string;
let key: string;
let secret: string;
const USER = 'header-user@example.com';
const PASSWORD = 'header-password-1';
beforeAll(async () => {
  t = await createTestSite();
  userToken = await createUser(t, USER, ['System Manager'], PASSWORD);
  [key, secret] = userToken.slice('token '.length).split(':') as [string, string];
});
afterAll(() => t.close());

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
const whoAmI = (authorization: string) =>
  t.http.get('/api/method/frappe.auth.get_logged_user').set('Authorization', authorization);

test("token key:secret authenticates as the key's user", async () => {
  const res = await whoAmI(`token ${key}:${secret}`);
  expect(res.status).toBe(200);
  expect(res.body.message).toBe(USER);
});

test("Basic base64(key:secret) authenticates as the key's user", async () => {
  const res = await whoAmI(`Basic ${b64(`${key}:${secret}`)}`);
  expect(res.status).toBe(200);
  expect(res.body.message).toBe(USER);
});

test('the scheme is case-insensitive (Token, BASIC)', async () => {
  expect((await whoAmI(`Token ${key}:${secret}`)).status).toBe(200);
  expect((await whoAmI(`BASIC ${b64(`${key}:${secret}`)}`)).status).toBe(200);
});

const malformed: [string, () => string][] = [
  ['Basic without a colon', () => `Basic ${b64('onlykey')}`],
  ['Basic alone', () => 'Basic'],
  ['Basic with a trailing space', () => 'Basic '],
  ['Basic not base64', () => 'Basic !!!not-base64!!!'],
  ['Basic with bad padding', () => 'Basic abc'],
  ['token a b', () => 'token a b'],
  ['token key:', () => `token ${key}:`],
  ['token :secret', () => `token :${secret}`],
  ['token key:secret:extra', () => `token ${key}:${secret}:extra`],
  ['token with two spaces', () => `token  ${key}:${secret}`],
  ['token alone', () => 'token'],
  ['token with a newline-like tab', () => `token\t${key}:${secret}`],
  ['an unknown scheme', () => `Digest ${key}:${secret}`],
  ['Bearer alone', () => 'Bearer'],
  ['Bearer with spaces in the token', () => 'Bearer a b'],
  ['Bearer with an overlong token', () => `Bearer ${'a'.repeat(600)}`],
  ['SQL in the key', () => `token ' OR 1=1 --:${secret}`],
  ['an overlong key', () => `token ${'k'.repeat(200)}:${secret}`],
  ['a non-ASCII key', () => `Basic ${b64(`ключ:${secret}`)}`],
];

test.each(malformed)('%s → 401 InvalidAuthorizationToken, never Guest', async (_label, header) => {
  for (const path of [
    '/api/method/frappe.auth.get_logged_user',
    '/api/method/ping',
    '/api/v2/document/ToDo',
  ]) {
    const res = await t.http.get(path).set('Authorization', header());
    expect([path, res.status, res.body.exc_type]).toEqual([path, 401, 'InvalidAuthorizationToken']);
  }
});

const wrong: [string, () => string][] = [
  [
    'a valid key with a wrong secret',
    () => `token ${key}:${secret.slice(0, -1)}${secret.endsWith('0') ? '1' : '0'}`,
  ],
  ["a valid key with another user's secret", () => `token ${key}:${t.adminToken.split(':')[1]}`],
  ['an unknown key', () => `token 0123456789abcde:${secret}`],
  ['Basic with a wrong secret', () => `Basic ${b64(`${key}:wrong`)}`],
];

test.each(wrong)('%s → 401 AuthenticationError', async (_label, header) => {
  const res = await whoAmI(header());
  expect(res.status).toBe(401);
  expect(res.body.exc_type).toBe('AuthenticationError');
});

test('a refused header changes nothing, even on a guest-callable path', async () => {
  const before = await countRows(t, 'tabToDo');
  const res = await t.http
    .post('/api/resource/ToDo')
    .set('Authorization', `token ${key}:nope`)
    .send({ description: 'x' });
  expect(res.status).toBe(401);
  expect(await countRows(t, 'tabToDo')).toBe(before);
});

test('a session cookie of one user plus a token of another → 401, never the cookie user', async () => {
  const s = await login(t, USER, PASSWORD);
  const res = await t.http
    .get('/api/method/frappe.auth.get_logged_user')
    .set('Cookie', s.cookie)
    .set('Authorization', t.adminToken);
  expect(res.status).toBe(401);
  expect(res.body.exc_type).toBe('AuthenticationError');
});

test('a session cookie plus a token of the same user is that user (and token auth needs no CSRF)', async () => {
  const s = await login(t, USER, PASSWORD);
  const res = await t.http
    .post('/api/method/frappe.auth.get_logged_user')
    .set('Cookie', s.cookie)
    .set('Authorization', userToken);
  expect(res.status).toBe(200);
  expect(res.body.message).toBe(USER);
});

test("a disabled user's key → 401", async () => {
  const email = 'disabled-key@example.com';
  const token = await createUser(t, email, ['System Manager']);
  expect((await whoAmI(token)).status).toBe(200);
  await t.http
    .put(`/api/resource/User/${email}`)
    .set('Authorization', t.adminToken)
    .send({ enabled: 0 })
    .expect(200);
  const res = await whoAmI(token);
  expect(res.status).toBe(401);
});

test('regenerating keys invalidates the old secret at once', async () => {
  const email = 'rotated@example.com';
  const token = await createUser(t, email, ['System Manager']);
  const res = await t.http
    .post('/api/method/frappe.core.doctype.user.user.generate_keys')
    .set('Authorization', t.adminToken)
    .send({ user: email });
  expect(res.status).toBe(200);
  expect((await whoAmI(token)).status).toBe(401);
  expect((await whoAmI(`token ${res.body.message.api_key}:${res.body.message.api_secret}`)).status).toBe(200);
});

test('parseAuthorization accepts exactly the three schemes', () => {
  expect(parseAuthorization('token abc:def')).toEqual({ kind: 'key', key: 'abc', secret: 'def' });
  expect(parseAuthorization(`Basic ${b64('abc:def')}`)).toEqual({ kind: 'key', key: 'abc', secret: 'def' });
  expect(parseAuthorization('Bearer xyz.123')).toEqual({ kind: 'bearer', token: 'xyz.123' });
  expect(() => parseAuthorization('Negotiate abc')).toThrow('Unsupported authorization scheme');
});

test('secrets are compared as fixed-length digests in constant time', () => {
  const stored = digestSecret('s3cret-value-15');
  expect(secretMatches('s3cret-value-15', stored)).toBe(true);
  expect(secretMatches('s3cret-value-16', stored)).toBe(false);
  expect(secretMatches('', stored)).toBe(false);
  expect(secretMatches('x'.repeat(10_000), stored)).toBe(false);
  // A stored value of another length never matches (and never throws from timingSafeEqual).
  expect(secretMatches('s3cret-value-15', Buffer.alloc(5))).toBe(false);
});

test('wrong secrets sharing a correct prefix take no longer than unrelated ones (median, interleaved)', async () => {
  const nearMiss = `${secret.slice(0, 14)}${secret.endsWith('0') ? '1' : '0'}`;
  const time = async (candidate: string) => {
    const started = process.hrtime.bigint();
    await whoAmI(`token ${key}:${candidate}`);
    return Number(process.hrtime.bigint() - started);
  };
  const prefixed: number[] = [];
  const unrelated: number[] = [];
  // Interleaved, so load from other processes slows both series alike.
  for (let i = 0; i < 80; i++) {
    prefixed.push(await time(nearMiss));
    unrelated.push(await time('zzzzzzzzzzzzzzz'));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number;
  expect(median(prefixed) / median(unrelated)).toBeLessThan(2);
  expect(median(unrelated) / median(prefixed)).toBeLessThan(2);
});

test('an oversized Authorization header is refused before any work (431 from the HTTP parser)', async () => {
  const res = await t.http
    .get('/api/resource/ToDo')
    .set('Authorization', `token ${'k'.repeat(20_000)}:${secret}`);
  expect([400, 431]).toContain(res.status);
});

test("200 extra headers with a valid token still authenticate only the token's user", async () => {
  const req = t.http.get('/api/method/frappe.auth.get_logged_user').set('Authorization', userToken);
  for (let i = 0; i < 200; i++) req.set(`X-Filler-${i}`, 'x');
  const res = await req;
  expect(res.status).toBe(200);
  expect(res.body.message).toBe(USER);
});
