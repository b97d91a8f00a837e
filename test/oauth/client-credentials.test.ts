// OAuth client credentials: the token endpoint issues hashed OAuth Bearer Token rows the bearer middleware accepts.
import { tokenDigest } from '../../runtime/auth/bearer-tokens';
import { countRows } from '../auth/auth-helpers';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { registerClient, tokenRequest, type RegisteredClient } from './oauth-helpers';

let t: TestSite;
let client: RegisteredClient;
const USER = 'machine@example.com';
const TOKENS = 'tabOAuth Bearer Token';

beforeAll(async () => {
  t = await createTestSite({ site: { oauth_access_token_lifetime: 120 } });
  await createUser(t, USER, ['System Manager']);
  client = await registerClient(t, {
    grant_type: 'Client Credentials',
    user: USER,
    scopes: 'all\nopenid\nprobe',
  });
});
afterAll(() => t.close());

test('the client secret is shown once, in the create answer, and stored only as a digest', async () => {
  expect(client.secret).toMatch(/^[0-9a-f]{48}$/);
  expect(client.clientId).toBe(client.name);
  const res = await t.http
    .get(`/api/resource/OAuth Client/${client.name}`)
    .set('Authorization', t.adminToken);
  expect(res.body.data.client_secret).toMatch(/^sha256:[0-9a-f]{64}$/);
  expect(JSON.stringify(res.body)).not.toContain(client.secret);
});

test('client_secret_basic: a token for the client user, within the lifetime from site config', async () => {
  const res = await tokenRequest(
    t,
    { grant_type: 'client_credentials' },
    { id: client.clientId, secret: client.secret },
  );
  expect(res.status).toBe(200);
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.body).toEqual({
    access_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    token_type: 'Bearer',
    expires_in: expect.any(Number),
    scope: 'all openid probe',
  });
  // The library counts down from the expiry it set: 120 s, or 119 when a second boundary passed meanwhile.
  expect(res.body.expires_in).toBeGreaterThanOrEqual(118);
  expect(res.body.expires_in).toBeLessThanOrEqual(120);
  const me = await t.http
    .get('/api/method/frappe.auth.get_logged_user')
    .set('Authorization', `Bearer ${res.body.access_token}`);
  expect(me.body.message).toBe(USER);
  // The row holds the digest, never the token.
  const rows = await t.site.db.knex(TOKENS).where('client', client.name);
  expect(JSON.stringify(rows)).not.toContain(res.body.access_token);
  const row = rows.find(
    (r: { access_token: string }) => r.access_token === tokenDigest(res.body.access_token),
  );
  expect(row).toMatchObject({ user: USER, status: 'Active', scopes: 'all openid probe' });
});

test('client_secret_post and the v2 path; a requested scope list narrows the token', async () => {
  const res = await tokenRequest(
    t,
    {
      grant_type: 'client_credentials',
      client_id: client.clientId,
      client_secret: client.secret,
      scope: 'probe',
    },
    undefined,
    '/api/v2/method/frappe.integrations.oauth2.get_token',
  );
  expect(res.status).toBe(200);
  expect(res.body.scope).toBe('probe');
  // A token without `all` is refused by endpoints that need it.
  const list = await t.http.get('/api/resource/ToDo').set('Authorization', `Bearer ${res.body.access_token}`);
  expect(list.status).toBe(403);
});

test('a session cookie does not need a CSRF token at the token endpoint, and does not change whose token it is', async () => {
  const login = await t.http
    .post('/api/method/login')
    .send({ usr: 'Administrator', pwd: 'admin-test-password' });
  const sid = String(login.headers['set-cookie']).match(/sid=([^;]+)/)?.[1];
  const res = await t.http
    .post('/api/method/frappe.integrations.oauth2.get_token')
    .set('Cookie', `sid=${sid}`)
    .type('form')
    .send({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.secret });
  expect(res.status).toBe(200);
  const me = await t.http
    .get('/api/method/frappe.auth.get_logged_user')
    .set('Authorization', `Bearer ${res.body.access_token}`);
  expect(me.body.message).toBe(USER);
});

describe('refused with the RFC error, nothing issued', () => {
  const cases: [string, () => Promise<import('supertest').Response>, number, string][] = [
    [
      'a wrong secret (basic)',
      () =>
        tokenRequest(
          t,
          { grant_type: 'client_credentials' },
          { id: client.clientId, secret: 'x'.repeat(48) },
        ),
      401,
      'invalid_client',
    ],
    [
      'a wrong secret (post)',
      () =>
        tokenRequest(t, {
          grant_type: 'client_credentials',
          client_id: client.clientId,
          client_secret: 'nope',
        }),
      400,
      'invalid_client',
    ],
    [
      'an unknown client',
      () =>
        tokenRequest(
          t,
          { grant_type: 'client_credentials' },
          { id: 'no-such-client', secret: client.secret },
        ),
      401,
      'invalid_client',
    ],
    [
      'no client credentials',
      () => tokenRequest(t, { grant_type: 'client_credentials' }),
      400,
      'invalid_client',
    ],
    [
      'a scope the client lacks',
      () =>
        tokenRequest(
          t,
          { grant_type: 'client_credentials', scope: 'all admin' },
          { id: client.clientId, secret: client.secret },
        ),
      400,
      'invalid_scope',
    ],
    [
      'a grant the client is not registered for',
      () =>
        tokenRequest(
          t,
          { grant_type: 'password', username: USER, password: 'x' },
          { id: client.clientId, secret: client.secret },
        ),
      400,
      'unauthorized_client',
    ],
    [
      'an unknown grant type',
      () => tokenRequest(t, { grant_type: 'magic' }, { id: client.clientId, secret: client.secret }),
      400,
      'unsupported_grant_type',
    ],
    [
      'a JSON body',
      () =>
        t.http.post('/api/method/frappe.integrations.oauth2.get_token').send({
          grant_type: 'client_credentials',
          client_id: client.clientId,
          client_secret: client.secret,
        }),
      400,
      'invalid_request',
    ],
  ];
  test.each(cases)('%s', async (_label, send, status, error) => {
    const before = await countRows(t, TOKENS);
    const res = await send();
    expect([res.status, res.body.error]).toEqual([status, error]);
    expect(res.body.access_token).toBeUndefined();
    expect(await countRows(t, TOKENS)).toBe(before);
  });

  test('GET is 405', async () => {
    const res = await t.http.get('/api/method/frappe.integrations.oauth2.get_token');
    expect(res.status).toBe(405);
  });
});

test('a disabled client user gets no token', async () => {
  const email = 'machine-off@example.com';
  await createUser(t, email, ['System Manager']);
  const off = await registerClient(t, { grant_type: 'Client Credentials', user: email, scopes: 'all' });
  await t.http.put(`/api/resource/User/${email}`).set('Authorization', t.adminToken).send({ enabled: 0 });
  const before = await countRows(t, TOKENS);
  const res = await tokenRequest(
    t,
    { grant_type: 'client_credentials' },
    { id: off.clientId, secret: off.secret },
  );
  expect([res.status, res.body.error]).toEqual([400, 'invalid_grant']);
  expect(await countRows(t, TOKENS)).toBe(before);
});

describe('OAuth Client validation', () => {
  test.each([
    ['a client-credentials client without a user', { grant_type: 'Client Credentials', scopes: 'all' }],
    [
      'an authorization-code client without a redirect URI',
      { grant_type: 'Authorization Code', scopes: 'all' },
    ],
    [
      'a redirect URI with a fragment',
      { grant_type: 'Authorization Code', scopes: 'all', redirect_uris: 'https://app.example/cb#x' },
    ],
    ['a relative redirect URI', { grant_type: 'Authorization Code', scopes: 'all', redirect_uris: '/cb' }],
    [
      'a javascript: redirect URI',
      { grant_type: 'Authorization Code', scopes: 'all', redirect_uris: 'javascript:alert(1)' },
    ],
  ])('%s is refused', async (_label, fields) => {
    const before = await countRows(t, 'tabOAuth Client');
    const res = await t.http
      .post('/api/resource/OAuth Client')
      .set('Authorization', t.adminToken)
      .send({ app_name: 'Bad', ...fields });
    expect(res.status).toBe(400);
    expect(await countRows(t, 'tabOAuth Client')).toBe(before);
  });

  test('a public client keeps no secret', async () => {
    const pub = await registerClient(t, {
      grant_type: 'Authorization Code',
      client_type: 'Public',
      redirect_uris: 'http://127.0.0.1:4000/cb',
      client_secret: 'given-but-ignored-0000',
    });
    expect(pub.secret).toBe('');
  });
});
