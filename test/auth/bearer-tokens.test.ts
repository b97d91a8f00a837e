// OAuth 2.0 bearer tokens: validated against OAuth Bearer Token rows; the request runs as the token's user; scopes.
import { randomBytes } from 'node:crypto';
import { tokenDigest } from '../../runtime/auth/bearer-tokens';
import { assertScopes } from '../../runtime/auth/scopes';
import { InsufficientScopeError } from '../../runtime/errors/errors';
import type { RequestState } from '../../runtime/http/state';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { countRows } from './auth-helpers';

let t: TestSite;
const USER = 'bearer-user@example.com';
beforeAll(async () => {
  t = await createTestSite();
  await createUser(t, USER, ['System Manager']);
});
afterAll(() => t.close());

const stamp = (offsetMs: number) =>
  new Date(Date.now() + offsetMs).toISOString().replace('T', ' ').slice(0, 19);

/** Inserts a token record directly (issuing tokens is a later issue) and returns the Authorization header. */
async function token(
  fields: { user?: string; scopes?: string; status?: string; expiresInMs?: number | null } = {},
): Promise<string> {
  const access = randomBytes(20).toString('hex');
  const now = stamp(0);
  await t.site.db.knex('tabOAuth Bearer Token').insert({
    name: tokenDigest(access),
    access_token: tokenDigest(access), // rows keep the token's digest
    user: fields.user ?? USER,
    scopes: fields.scopes ?? 'all openid',
    status: fields.status ?? 'Active',
    expiration_time: fields.expiresInMs === null ? null : stamp(fields.expiresInMs ?? 3_600_000),
    owner: 'Administrator',
    modified_by: 'Administrator',
    creation: now,
    modified: now,
    docstatus: 0,
    idx: 0,
  });
  return `Bearer ${access}`;
}

test('a valid token runs the request as its user', async () => {
  const res = await t.http.get('/api/method/frappe.auth.get_logged_user').set('Authorization', await token());
  expect(res.status).toBe(200);
  expect(res.body.message).toBe(USER);
});

test('a token without an expiration time is valid', async () => {
  expect(
    (await t.http.get('/api/resource/ToDo').set('Authorization', await token({ expiresInMs: null }))).status,
  ).toBe(200);
});

test('bearer writes need no CSRF token', async () => {
  const res = await t.http
    .post('/api/resource/ToDo')
    .set('Authorization', await token())
    .send({ description: 'by bearer' });
  expect(res.status).toBe(201);
  expect(res.body.data.owner).toBe(USER);
});

const invalid: [string, () => Promise<string>][] = [
  ['an expired token', () => token({ expiresInMs: -1_000 })],
  ['a revoked token', () => token({ status: 'Revoked' })],
  ['an unknown token', async () => `Bearer ${randomBytes(20).toString('hex')}`],
  [
    'an alg:none JWT',
    async () =>
      `Bearer ${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"sub":"Administrator"}').toString('base64url')}.`,
  ],
  [
    'a token of a disabled user',
    async () => {
      const email = `disabled-${randomBytes(3).toString('hex')}@example.com`;
      await createUser(t, email, ['System Manager']);
      await t.http
        .put(`/api/resource/User/${email}`)
        .set('Authorization', t.adminToken)
        .send({ enabled: 0 })
        .expect(200);
      return token({ user: email });
    },
  ],
];

test.each(invalid)('%s → 401 with WWW-Authenticate invalid_token, nothing changed', async (_label, make) => {
  const header = await make();
  const before = await countRows(t, 'tabToDo');
  for (const send of [
    () => t.http.get('/api/resource/ToDo').set('Authorization', header),
    () => t.http.post('/api/v2/document/ToDo').set('Authorization', header).send({ description: 'x' }),
    () => t.http.get('/api/method/ping').set('Authorization', header),
  ]) {
    const res = await send();
    expect(res.status).toBe(401);
    expect(res.body.exc_type).toBe('AuthenticationError');
    expect(res.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
  }
  expect(await countRows(t, 'tabToDo')).toBe(before);
});

test('revoking a token through the API stops it at once', async () => {
  const header = await token();
  expect((await t.http.get('/api/resource/ToDo').set('Authorization', header)).status).toBe(200);
  const name = tokenDigest(header.slice('Bearer '.length)); // the row is named by the token's digest
  await t.http
    .put(`/api/resource/OAuth Bearer Token/${name}`)
    .set('Authorization', t.adminToken)
    .send({ status: 'Revoked' })
    .expect(200);
  expect((await t.http.get('/api/resource/ToDo').set('Authorization', header)).status).toBe(401);
});

test('a token that expires while cached stops working', async () => {
  // The expiry is stored to the second (cut off): 1.5-2.5 s from now, room for a loaded machine's first request; it has
  // passed by the second request 2.7 s later, well inside the 5 s the first one keeps the token cached.
  const header = await token({ expiresInMs: 2_500 });
  expect((await t.http.get('/api/resource/ToDo').set('Authorization', header)).status).toBe(200);
  await new Promise((r) => setTimeout(r, 2_700));
  expect((await t.http.get('/api/resource/ToDo').set('Authorization', header)).status).toBe(401);
});

describe('a token answered from the cache (no database read)', () => {
  test('keeps its scopes: an openid-only token is refused the resources every time', async () => {
    const header = await token({ scopes: 'openid' });
    for (let i = 0; i < 3; i++)
      expect((await t.http.get('/api/resource/ToDo').set('Authorization', header)).status).toBe(403);
  });

  test('is refused at once when its user is disabled', async () => {
    const email = `cached-bearer-${randomBytes(3).toString('hex')}@example.com`;
    await createUser(t, email, ['System Manager']);
    const header = await token({ user: email });
    expect(
      (await t.http.get('/api/method/frappe.auth.get_logged_user').set('Authorization', header)).body.message,
    ).toBe(email);
    await t.http
      .put(`/api/resource/User/${email}`)
      .set('Authorization', t.adminToken)
      .send({ enabled: 0 })
      .expect(200);
    expect(
      (await t.http.get('/api/method/frappe.auth.get_logged_user').set('Authorization', header)).status,
    ).toBe(401);
  });

  test('with a session cookie of another user is a conflict (401)', async () => {
    const header = await token();
    expect(
      (await t.http.get('/api/method/frappe.auth.get_logged_user').set('Authorization', header)).status,
    ).toBe(200);
    const login = await t.http
      .post('/api/method/login')
      .send({ usr: 'Administrator', pwd: 'admin-test-password' });
    const sid = /sid=([^;]+)/.exec(String(login.headers['set-cookie']))?.[1];
    expect(sid).toBeTruthy();
    const both = await t.http
      .get('/api/method/frappe.auth.get_logged_user')
      .set('Authorization', header)
      .set('Cookie', `sid=${sid}`);
    expect(both.status).toBe(401);
  });
});

describe('scopes', () => {
  test.each([
    ['GET /api/resource/ToDo', (h: string) => t.http.get('/api/resource/ToDo').set('Authorization', h)],
    ['GET /api/v2/document/ToDo', (h: string) => t.http.get('/api/v2/document/ToDo').set('Authorization', h)],
    [
      'GET /api/v2/doctype/ToDo/count',
      (h: string) => t.http.get('/api/v2/doctype/ToDo/count').set('Authorization', h),
    ],
    [
      'POST /api/resource/ToDo',
      (h: string) => t.http.post('/api/resource/ToDo').set('Authorization', h).send({ description: 'x' }),
    ],
  ])('a token scoped only to openid calling %s → 403 insufficient_scope', async (_label, send) => {
    const before = await countRows(t, 'tabToDo');
    const res = await send(await token({ scopes: 'openid' }));
    expect(res.status).toBe(403);
    expect(res.body.exc_type).toBe('InsufficientScopeError');
    expect(res.headers['www-authenticate']).toMatch(/^Bearer error="insufficient_scope"/);
    expect(await countRows(t, 'tabToDo')).toBe(before);
  });

  test.each(['/api/method/frappe.auth.get_logged_user', '/api/v2/method/frappe.auth.get_logged_user'])(
    'methods require the all scope by default: %s with an openid-only token → 403',
    async (path) => {
      const res = await t.http.get(path).set('Authorization', await token({ scopes: 'openid' }));
      expect(res.status).toBe(403);
      expect(res.body.exc_type).toBe('InsufficientScopeError');
      expect((await t.http.get(path).set('Authorization', await token({ scopes: 'all' }))).status).toBe(200);
    },
  );

  test('a token with the all scope reaches the resource endpoints', async () => {
    expect(
      (await t.http.get('/api/v2/document/ToDo').set('Authorization', await token({ scopes: 'openid all' })))
        .status,
    ).toBe(200);
  });

  const state = (auth: RequestState['auth'], scopes?: string[]) =>
    ({ auth, ...(scopes ? { scopes } : {}) }) as RequestState;

  test('assertScopes: all covers everything; named scopes must all be held', () => {
    expect(() => assertScopes(state('bearer', ['all']), ['files', 'reports'])).not.toThrow();
    expect(() => assertScopes(state('bearer', ['files', 'reports']), ['files'])).not.toThrow();
    expect(() => assertScopes(state('bearer', ['files']), ['files', 'reports'])).toThrow(
      InsufficientScopeError,
    );
    expect(() => assertScopes(state('bearer', []), ['all'])).toThrow(InsufficientScopeError);
    expect(() => assertScopes(state('bearer', ['openid']))).toThrow(InsufficientScopeError);
  });

  test('assertScopes is a no-op for other authentication methods', () => {
    for (const auth of ['guest', 'session', 'token', 'hook'] as const)
      expect(() => assertScopes(state(auth), ['anything'])).not.toThrow();
  });
});
