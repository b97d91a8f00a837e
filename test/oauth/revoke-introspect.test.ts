// RFC 7009 revocation and RFC 7662 introspection with client authentication; deleting a client revokes its grants.
import { countRows, login, type LoggedIn } from '../auth/auth-helpers';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import {
  AUTHORIZE_PATH,
  basic,
  locationParams,
  pkcePair,
  registerClient,
  tokenRequest,
  type RegisteredClient,
} from './oauth-helpers';

let t: TestSite;
let web: RegisteredClient; // confidential, skip_authorization
let app: RegisteredClient; // public
let other: RegisteredClient; // another confidential client
let session: LoggedIn;
const USER = 'carol@example.com';
const CB = 'https://web.example/cb';
const REVOKE = '/api/method/frappe.integrations.oauth2.revoke_token';
const INTROSPECT = '/api/method/frappe.integrations.oauth2.introspect_token';

beforeAll(async () => {
  t = await createTestSite();
  await createUser(t, USER, ['System Manager'], 'carol-password-1');
  const fields = {
    grant_type: 'Authorization Code',
    redirect_uris: CB,
    scopes: 'all\nopenid',
    skip_authorization: 1,
  };
  web = await registerClient(t, fields);
  other = await registerClient(t, fields);
  app = await registerClient(t, { ...fields, client_type: 'Public' });
  session = await login(t, USER, 'carol-password-1');
});
afterAll(() => t.close());

/** Signs `client` in (skip_authorization: straight to the code), its tokens. */
async function signIn(client: RegisteredClient): Promise<{ access_token: string; refresh_token: string }> {
  const pkce = pkcePair();
  const res = await t.http
    .get(AUTHORIZE_PATH)
    .query({
      client_id: client.clientId,
      response_type: 'code',
      code_challenge: pkce.challenge,
      code_challenge_method: 'S256',
    })
    .set('Cookie', session.cookie);
  const code = locationParams(res).get('code') as string;
  const form = { grant_type: 'authorization_code', code, redirect_uri: CB, code_verifier: pkce.verifier };
  const tokens = client.secret
    ? await tokenRequest(t, form, { id: client.clientId, secret: client.secret })
    : await tokenRequest(t, { ...form, client_id: client.clientId });
  expect(tokens.status).toBe(200);
  return tokens.body;
}

function post(path: string, form: Record<string, string>, client?: RegisteredClient) {
  const req = t.http.post(path).type('form');
  if (client) req.set('Authorization', basic(client.clientId, client.secret));
  return req.send(form);
}

function loggedUser(accessToken: string) {
  return t.http.get('/api/method/frappe.auth.get_logged_user').set('Authorization', `Bearer ${accessToken}`);
}

describe('introspection (RFC 7662)', () => {
  test('an active access token of the calling client: its claims', async () => {
    const tokens = await signIn(web);
    const res = await post(INTROSPECT, { token: tokens.access_token }, web);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      active: true,
      scope: 'all openid',
      client_id: web.clientId,
      username: USER,
      sub: USER,
      token_type: 'Bearer',
      exp: expect.any(Number),
      iat: expect.any(Number),
    });
    expect(res.body.exp - res.body.iat).toBeGreaterThanOrEqual(3599);
    const refresh = await post(
      INTROSPECT,
      { token: tokens.refresh_token, token_type_hint: 'refresh_token' },
      web,
    );
    expect(refresh.body).toMatchObject({ active: true, client_id: web.clientId });
    // client_secret_post works too.
    const posted = await post(INTROSPECT, {
      token: tokens.access_token,
      client_id: web.clientId,
      client_secret: web.secret,
    });
    expect(posted.body.active).toBe(true);
  });

  test("unknown, revoked, expired, or another client's token: {active: false}", async () => {
    const tokens = await signIn(web);
    expect((await post(INTROSPECT, { token: 'no-such-token' }, web)).body).toEqual({ active: false });
    expect((await post(INTROSPECT, { token: tokens.access_token }, other)).body).toEqual({ active: false });
    await t.site.db
      .knex('tabOAuth Bearer Token')
      .where('user', USER)
      .where('client', web.name)
      .update({ expiration_time: '2020-01-01 00:00:00' });
    expect((await post(INTROSPECT, { token: tokens.access_token }, web)).body).toEqual({ active: false });
    await post(REVOKE, { token: tokens.refresh_token }, web);
    expect((await post(INTROSPECT, { token: tokens.refresh_token }, web)).body).toEqual({ active: false });
  });

  test('introspection needs client authentication: none, a wrong secret, or a public client is 401 invalid_client', async () => {
    const tokens = await signIn(web);
    const none = await post(INTROSPECT, { token: tokens.access_token });
    expect([none.status, none.body.error]).toEqual([401, 'invalid_client']);
    const wrong = await post(INTROSPECT, { token: tokens.access_token }, { ...web, secret: 'x'.repeat(48) });
    expect([wrong.status, wrong.body.error]).toEqual([401, 'invalid_client']);
    expect(wrong.headers['www-authenticate']).toContain('Basic');
    const pub = await post(INTROSPECT, { token: tokens.access_token, client_id: app.clientId });
    expect([pub.status, pub.body.error]).toEqual([401, 'invalid_client']);
    const missing = await post(INTROSPECT, {}, web);
    expect([missing.status, missing.body.error]).toEqual([400, 'invalid_request']);
    const get = await t.http.get(`${INTROSPECT}?token=${tokens.access_token}`);
    expect(get.status).toBe(405);
  });
});

describe('revocation (RFC 7009)', () => {
  test('revoking an access token: 200, the bearer refused at once', async () => {
    const tokens = await signIn(web);
    expect((await loggedUser(tokens.access_token)).status).toBe(200);
    const res = await post(REVOKE, { token: tokens.access_token, token_type_hint: 'access_token' }, web);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect((await loggedUser(tokens.access_token)).status).toBe(401);
  });

  test('revoking a refresh token takes the whole grant with it; a public client revokes by client_id', async () => {
    const first = await signIn(app);
    const rotated = await tokenRequest(t, {
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
      client_id: app.clientId,
    });
    expect(rotated.status).toBe(200);
    const res = await post(REVOKE, { token: rotated.body.refresh_token, client_id: app.clientId });
    expect(res.status).toBe(200);
    expect((await loggedUser(rotated.body.access_token)).status).toBe(401);
    const again = await tokenRequest(t, {
      grant_type: 'refresh_token',
      refresh_token: rotated.body.refresh_token,
      client_id: app.clientId,
    });
    expect([again.status, again.body.error]).toEqual([400, 'invalid_grant']);
  });

  test("an unknown token or another client's: 200 and nothing revoked; a failed client authentication: 401", async () => {
    const tokens = await signIn(web);
    expect((await post(REVOKE, { token: 'no-such-token' }, web)).status).toBe(200);
    expect((await post(REVOKE, { token: tokens.access_token }, other)).status).toBe(200);
    expect((await loggedUser(tokens.access_token)).status).toBe(200);
    const bad = await post(REVOKE, { token: tokens.access_token }, { ...web, secret: 'y'.repeat(48) });
    expect([bad.status, bad.body.error]).toEqual([401, 'invalid_client']);
    const anonymous = await post(REVOKE, { token: tokens.access_token });
    expect([anonymous.status, anonymous.body.error]).toEqual([401, 'invalid_client']);
    expect((await loggedUser(tokens.access_token)).status).toBe(200);
  });
});

test('deleting a client revokes its tokens and spends its codes at once; other clients keep theirs', async () => {
  const doomed = await registerClient(t, {
    grant_type: 'Authorization Code',
    redirect_uris: CB,
    scopes: 'all',
    skip_authorization: 1,
  });
  const tokens = await signIn(doomed);
  const kept = await signIn(web);
  const pkce = pkcePair();
  const pending = locationParams(
    await t.http
      .get(AUTHORIZE_PATH)
      .query({
        client_id: doomed.clientId,
        response_type: 'code',
        code_challenge: pkce.challenge,
        code_challenge_method: 'S256',
      })
      .set('Cookie', session.cookie),
  ).get('code') as string;
  expect((await loggedUser(tokens.access_token)).status).toBe(200); // now cached as valid
  const del = await t.http
    .delete(`/api/resource/OAuth Client/${doomed.name}`)
    .set('Authorization', t.adminToken);
  expect(del.status).toBe(202);
  expect((await loggedUser(tokens.access_token)).status).toBe(401);
  expect((await loggedUser(kept.access_token)).status).toBe(200);
  const active = await t.site.db
    .knex('tabOAuth Bearer Token')
    .where({ client: doomed.name, status: 'Active' });
  expect(active).toHaveLength(0);
  const codes = await t.site.db
    .knex('tabOAuth Authorization Code')
    .where({ client: doomed.name, validity: 'Valid' });
  expect(codes).toHaveLength(0);
  const before = await countRows(t, 'tabOAuth Bearer Token');
  const exchange = await tokenRequest(
    t,
    { grant_type: 'authorization_code', code: pending, redirect_uri: CB, code_verifier: pkce.verifier },
    { id: doomed.clientId, secret: doomed.secret },
  );
  expect(exchange.status).toBeGreaterThanOrEqual(400);
  expect(await countRows(t, 'tabOAuth Bearer Token')).toBe(before);
});
