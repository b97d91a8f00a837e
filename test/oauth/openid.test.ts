// OpenID Connect: discovery, the JWKS, ID tokens (RS256, verified against the JWKS), userinfo and its refusals.
import { forgetBearerTokens } from '../../runtime/auth/bearer-tokens';
import { SYSTEM_TABLES } from '../../runtime/db/migrate';
import { jose as loadJose } from '../../runtime/oauth/jose';

const jose = loadJose();
import { login, type LoggedIn } from '../auth/auth-helpers';
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
let session: LoggedIn;
const USER = 'erin@example.com';
const CB = 'https://app.example/cb';
const PROFILE = '/api/method/frappe.integrations.oauth2.openid_profile';

beforeAll(async () => {
  t = await createTestSite({ site: { host_name: 'https://id.example.com/' } });
  await createUser(t, USER, ['System Manager'], 'erin-password-1');
  app = await registerClient(t, {
    client_type: 'Public',
    grant_type: 'Authorization Code',
    redirect_uris: CB,
    scopes: 'openid\nall',
    skip_authorization: 1,
  });
  session = await login(t, USER, 'erin-password-1');
});
afterAll(() => t.close());

async function signIn(scope: string, nonce?: string) {
  const pkce = pkcePair();
  const res = await t.http
    .get(AUTHORIZE_PATH)
    .query({
      client_id: app.clientId,
      response_type: 'code',
      scope,
      code_challenge: pkce.challenge,
      code_challenge_method: 'S256',
      ...(nonce ? { nonce } : {}),
    })
    .set('Cookie', session.cookie);
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

async function keySet(): Promise<ReturnType<typeof jose.createLocalJWKSet>> {
  const res = await t.http.get('/.well-known/jwks.json');
  return jose.createLocalJWKSet(res.body as Parameters<typeof jose.createLocalJWKSet>[0]);
}

test('discovery names every endpoint under the issuer from host_name', async () => {
  const res = await t.http.get('/.well-known/openid-configuration');
  expect(res.status).toBe(200);
  const m = '/api/method/frappe.integrations.oauth2';
  expect(res.body).toMatchObject({
    issuer: 'https://id.example.com',
    authorization_endpoint: `https://id.example.com${m}.authorize`,
    token_endpoint: `https://id.example.com${m}.get_token`,
    userinfo_endpoint: `https://id.example.com${m}.openid_profile`,
    revocation_endpoint: `https://id.example.com${m}.revoke_token`,
    introspection_endpoint: `https://id.example.com${m}.introspect_token`,
    jwks_uri: 'https://id.example.com/.well-known/jwks.json',
    id_token_signing_alg_values_supported: ['RS256'],
    code_challenge_methods_supported: ['S256'],
  });
});

test('the signing key is made with the site: it is stored before any OpenID request, and the JWKS publishes it', async () => {
  const fresh = await createTestSite();
  try {
    const rows = (await fresh.site.db.knex(SYSTEM_TABLES.oauthKeys).select('kid')) as { kid: string }[];
    expect(rows).toHaveLength(1);
    const res = await fresh.http.get('/.well-known/jwks.json');
    expect(res.body.keys.map((k: { kid: string }) => k.kid)).toEqual([rows[0]!.kid]);
  } finally {
    await fresh.close();
  }
});

test('the JWKS publishes the public RSA key only, and it stays the same across requests', async () => {
  const a = await t.http.get('/.well-known/jwks.json');
  const b = await t.http.get('/.well-known/jwks.json');
  expect(a.status).toBe(200);
  expect(a.body).toEqual(b.body);
  expect(a.body.keys).toHaveLength(1);
  const key = a.body.keys[0];
  expect(key).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', kid: expect.any(String) });
  for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(key[secret]).toBeUndefined();
});

test('openid scope: an RS256 ID token with sub, email, name, roles, nonce and at_hash, verified by the JWKS', async () => {
  const tokens = await signIn('openid all', 'n-0S6_WzA2Mj');
  expect(tokens.id_token).toEqual(expect.any(String));
  const header = jose.decodeProtectedHeader(tokens.id_token);
  expect(header.alg).toBe('RS256');
  const { payload } = await jose.jwtVerify(tokens.id_token, await keySet(), {
    issuer: 'https://id.example.com',
    audience: app.clientId,
    algorithms: ['RS256'],
  });
  expect(payload).toMatchObject({
    sub: USER,
    email: USER,
    name: 'erin',
    roles: ['System Manager'],
    nonce: 'n-0S6_WzA2Mj',
    at_hash: expect.any(String),
  });
  // A refresh brings a new ID token for the same user (no nonce: none was asked for).
  const refreshed = await tokenRequest(t, {
    grant_type: 'refresh_token',
    refresh_token: tokens.refresh_token,
    client_id: app.clientId,
  });
  const again = await jose.jwtVerify(refreshed.body.id_token, await keySet(), { audience: app.clientId });
  expect(again.payload.sub).toBe(USER);
  expect(again.payload.nonce).toBeUndefined();
});

test('without the openid scope there is no ID token', async () => {
  const tokens = await signIn('all');
  expect(tokens.id_token).toBeUndefined();
});

test('an ID token signed with another key, or alg none, does not verify against the JWKS', async () => {
  const tokens = await signIn('openid');
  const [h, p] = tokens.id_token.split('.');
  const none = `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${p}.`;
  await expect(jose.jwtVerify(none, await keySet())).rejects.toThrow();
  const tampered = `${h}.${Buffer.from(JSON.stringify({ sub: 'Administrator' })).toString('base64url')}.${tokens.id_token.split('.')[2]}`;
  await expect(jose.jwtVerify(tampered, await keySet())).rejects.toThrow();
});

test('userinfo (openid_profile): the claims to a bearer with openid; refused without a bearer or the scope', async () => {
  const tokens = await signIn('openid');
  const res = await t.http.get(PROFILE).set('Authorization', `Bearer ${tokens.access_token}`);
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ sub: USER, email: USER, name: 'erin', roles: ['System Manager'] });
  const post = await t.http.post(PROFILE).set('Authorization', `Bearer ${tokens.access_token}`);
  expect(post.body.sub).toBe(USER);
  const guest = await t.http.get(PROFILE);
  expect(guest.status).toBe(401);
  expect(guest.headers['www-authenticate']).toContain('Bearer');
  const cookie = await t.http.get(PROFILE).set('Cookie', session.cookie);
  expect(cookie.status).toBe(401);
  const narrow = await signIn('all');
  // `all` holds every scope, as everywhere else; a token with neither is refused.
  expect((await t.http.get(PROFILE).set('Authorization', `Bearer ${narrow.access_token}`)).status).toBe(200);
  await t.site.db.knex('tabOAuth Bearer Token').where('user', USER).update({ scopes: 'probe' });
  forgetBearerTokens(); // as a write through the API would
  const none = await t.http.get(PROFILE).set('Authorization', `Bearer ${tokens.access_token}`);
  expect(none.status).toBe(403);
  expect(none.headers['www-authenticate']).toContain('insufficient_scope');
});
