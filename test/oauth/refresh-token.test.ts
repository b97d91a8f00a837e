// OAuth refresh tokens: rotated on every use; presenting a rotated one revokes its whole family; bound to the client.
import { countRows, login, type LoggedIn } from '../auth/auth-helpers';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import {
  AUTHORIZE_PATH,
  locationParams,
  pkcePair,
  registerClient,
  tokenRequest,
  type RegisteredClient,
} from './oauth-helpers';

let t: TestSite;
let app: RegisteredClient;
let web: RegisteredClient;
let session: LoggedIn;
const USER = 'bob@example.com';
const CB = 'https://app.example/cb';
const TOKENS = 'tabOAuth Bearer Token';

beforeAll(async () => {
  t = await createTestSite({ site: { oauth_refresh_token_lifetime: 3600 } });
  await createUser(t, USER, ['System Manager'], 'bob-password-1');
  app = await registerClient(t, {
    client_type: 'Public',
    grant_type: 'Authorization Code',
    redirect_uris: CB,
    scopes: 'all\nopenid',
  });
  web = await registerClient(t, {
    grant_type: 'Authorization Code',
    redirect_uris: CB,
    scopes: 'all\nopenid',
    skip_authorization: 1,
  });
  session = await login(t, USER, 'bob-password-1');
});
afterAll(() => t.close());

/** Signs the app in (consent + code + PKCE): its first tokens. */
async function signIn(): Promise<{ access_token: string; refresh_token: string }> {
  const pkce = pkcePair();
  const res = await t.http.post(AUTHORIZE_PATH).type('form').set('Cookie', session.cookie).send({
    client_id: app.clientId,
    redirect_uri: CB,
    response_type: 'code',
    code_challenge: pkce.challenge,
    code_challenge_method: 'S256',
    csrf_token: session.csrf,
    allowed: 'true',
  });
  const tokens = await tokenRequest(t, {
    grant_type: 'authorization_code',
    code: locationParams(res).get('code') as string,
    redirect_uri: CB,
    client_id: app.clientId,
    code_verifier: pkce.verifier,
  });
  expect(tokens.status).toBe(200);
  return tokens.body;
}

function refresh(token: string, extra: Record<string, string> = {}) {
  return tokenRequest(t, {
    grant_type: 'refresh_token',
    refresh_token: token,
    client_id: app.clientId,
    ...extra,
  });
}

function loggedUser(accessToken: string) {
  return t.http.get('/api/method/frappe.auth.get_logged_user').set('Authorization', `Bearer ${accessToken}`);
}

test('a refresh gives a new access and refresh token; the old pair stops working', async () => {
  const first = await signIn();
  const res = await refresh(first.refresh_token);
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ token_type: 'Bearer', scope: 'all openid' });
  expect(res.body.refresh_token).not.toBe(first.refresh_token);
  expect(res.body.access_token).not.toBe(first.access_token);
  expect((await loggedUser(res.body.access_token)).body.message).toBe(USER);
  expect((await loggedUser(first.access_token)).status).toBe(401);
});

test('a narrower scope may be asked for on refresh, a wider one is invalid_scope', async () => {
  const first = await signIn();
  const narrow = await refresh(first.refresh_token, { scope: 'openid' });
  expect([narrow.status, narrow.body.scope]).toEqual([200, 'openid']);
  const wider = await refresh(narrow.body.refresh_token, { scope: 'openid all' });
  expect([wider.status, wider.body.error]).toEqual([400, 'invalid_scope']);
});

test('reusing a rotated refresh token is refused and revokes the whole family', async () => {
  const first = await signIn();
  const second = (await refresh(first.refresh_token)).body;
  const third = (await refresh(second.refresh_token)).body;
  expect((await loggedUser(third.access_token)).status).toBe(200);
  const before = await countRows(t, TOKENS);
  const replay = await refresh(first.refresh_token);
  expect([replay.status, replay.body.error]).toEqual([400, 'invalid_grant']);
  expect(await countRows(t, TOKENS)).toBe(before);
  // The thief's copy and the holder's latest pair are both dead now.
  expect((await loggedUser(third.access_token)).status).toBe(401);
  const latest = await refresh(third.refresh_token);
  expect([latest.status, latest.body.error]).toEqual([400, 'invalid_grant']);
  // Another sign-in (another family) is untouched.
  const other = await signIn();
  expect((await loggedUser(other.access_token)).status).toBe(200);
});

test('two exchanges of one refresh token at once: at most one wins, the other is a reuse and revokes the family', async () => {
  for (let round = 0; round < 5; round++) {
    const first = await signIn();
    const results = await Promise.all([refresh(first.refresh_token), refresh(first.refresh_token)]);
    // The loser revokes the family; a winner still being issued then is withdrawn (400 too) or revoked right after.
    expect(results.filter((r) => r.status === 400)).not.toHaveLength(0);
    for (const won of results.filter((r) => r.status === 200))
      expect((await loggedUser(won.body.access_token)).status).toBe(401);
    for (const lost of results.filter((r) => r.status === 400)) expect(lost.body.error).toBe('invalid_grant');
  }
});

test("a refresh token of another client is invalid_grant; a confidential client's needs its secret", async () => {
  const first = await signIn();
  const before = await countRows(t, TOKENS);
  const stolen = await tokenRequest(
    t,
    { grant_type: 'refresh_token', refresh_token: first.refresh_token },
    { id: web.clientId, secret: web.secret },
  );
  expect([stolen.status, stolen.body.error]).toEqual([400, 'invalid_grant']);
  expect(await countRows(t, TOKENS)).toBe(before);
  // The holder's token still works: a refusal for the wrong client does not spend it.
  expect((await refresh(first.refresh_token)).status).toBe(200);

  const pkce = pkcePair();
  const code = locationParams(
    await t.http
      .get(AUTHORIZE_PATH)
      .query({
        client_id: web.clientId,
        response_type: 'code',
        code_challenge: pkce.challenge,
        code_challenge_method: 'S256',
      })
      .set('Cookie', session.cookie),
  ).get('code') as string;
  const tokens = await tokenRequest(
    t,
    { grant_type: 'authorization_code', code, redirect_uri: CB, code_verifier: pkce.verifier },
    { id: web.clientId, secret: web.secret },
  );
  expect(tokens.status).toBe(200);
  const bare = await tokenRequest(t, {
    grant_type: 'refresh_token',
    refresh_token: tokens.body.refresh_token,
    client_id: web.clientId,
  });
  expect([bare.status, bare.body.error]).toEqual([400, 'invalid_client']);
  const ok = await tokenRequest(
    t,
    { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token },
    { id: web.clientId, secret: web.secret },
  );
  expect(ok.status).toBe(200);
});

test('a refresh token past oauth_refresh_token_lifetime is invalid_grant; so is one whose user was disabled', async () => {
  const first = await signIn();
  await t.site.db
    .knex(TOKENS)
    .where('family', '!=', '')
    .whereNotNull('refresh_token')
    .where('status', 'Active')
    .where('user', USER)
    .update({ creation: '2020-01-01 00:00:00.000001' });
  const old = await refresh(first.refresh_token);
  expect([old.status, old.body.error]).toEqual([400, 'invalid_grant']);

  const fresh = await signIn();
  const disabled = await t.http
    .put(`/api/resource/User/${USER}`)
    .set('Authorization', t.adminToken)
    .send({ enabled: 0 });
  expect(disabled.status).toBe(200);
  const res = await refresh(fresh.refresh_token);
  expect([res.status, res.body.error]).toEqual([400, 'invalid_grant']);
  await t.http.put(`/api/resource/User/${USER}`).set('Authorization', t.adminToken).send({ enabled: 1 });
});
