// OAuth authorization code grant: sign-in, consent (CSRF-protected POST), PKCE S256, and every hostile input refused.
import { tokenDigest } from '../../runtime/auth/bearer-tokens';
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
let app: RegisteredClient; // public, PKCE
let web: RegisteredClient; // confidential
let trusted: RegisteredClient; // skip_authorization
let session: LoggedIn;
const USER = 'alice@example.com';
const PASSWORD = 'alice-password-1';
const APP_CB = 'https://app.example/cb';
const WEB_CB = 'https://web.example/oauth/callback';
const CODES = 'tabOAuth Authorization Code';
const TOKENS = 'tabOAuth Bearer Token';

beforeAll(async () => {
  t = await createTestSite();
  await createUser(t, USER, ['System Manager'], PASSWORD);
  app = await registerClient(t, {
    app_name: 'Mobile <App>',
    client_type: 'Public',
    grant_type: 'Authorization Code',
    redirect_uris: `${APP_CB}\ncom.example.app:/oauth`,
    scopes: 'all\nopenid',
  });
  web = await registerClient(t, {
    app_name: 'Web App',
    grant_type: 'Authorization Code',
    redirect_uris: WEB_CB,
    scopes: 'openid',
  });
  trusted = await registerClient(t, {
    app_name: 'Trusted',
    client_type: 'Public',
    grant_type: 'Authorization Code',
    redirect_uris: APP_CB,
    scopes: 'all',
    skip_authorization: 1,
  });
  session = await login(t, USER, PASSWORD);
});
afterAll(() => t.close());

/** The authorize query of the public app with a fresh PKCE pair (overrides replace or, as undefined, remove). */
function appQuery(challenge: string, extra: Record<string, string | undefined> = {}): Record<string, string> {
  const query: Record<string, string | undefined> = {
    client_id: app.clientId,
    redirect_uri: APP_CB,
    response_type: 'code',
    scope: 'all openid',
    state: 'st-123',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...extra,
  };
  return Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined)) as Record<
    string,
    string
  >;
}

/** Approves the consent form as the signed-in user: the 303's Location. */
async function approve(query: Record<string, string>, who: LoggedIn = session) {
  return t.http
    .post(AUTHORIZE_PATH)
    .type('form')
    .set('Cookie', who.cookie)
    .send({ ...query, csrf_token: who.csrf, allowed: 'true' });
}

/** Runs authorize + consent for the public app; the code and verifier. */
async function appCode(extra: Record<string, string | undefined> = {}) {
  const pkce = pkcePair();
  const res = await approve(appQuery(pkce.challenge, extra));
  expect(res.status).toBe(303);
  const code = locationParams(res).get('code');
  if (!code) throw new Error(`no code: ${res.headers.location}`);
  return { code, verifier: pkce.verifier };
}

function exchange(code: string, verifier: string | undefined, extra: Record<string, string> = {}) {
  return tokenRequest(t, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: APP_CB,
    client_id: app.clientId,
    ...(verifier === undefined ? {} : { code_verifier: verifier }),
    ...extra,
  });
}

function loggedUser(accessToken: string) {
  return t.http.get('/api/method/frappe.auth.get_logged_user').set('Authorization', `Bearer ${accessToken}`);
}

describe('sign-in and consent', () => {
  test('a signed-out browser is sent to the sign-in page, which returns to the request', async () => {
    const query = appQuery(pkcePair().challenge);
    const res = await t.http.get(AUTHORIZE_PATH).query(query);
    expect(res.status).toBe(302);
    const target = new URL(String(res.headers.location), 'http://svc.invalid');
    expect(target.pathname).toBe('/login');
    const back = target.searchParams.get('redirect-to') as string;
    expect(back.startsWith(`${AUTHORIZE_PATH}?`)).toBe(true);
    const page = await t.http.get(`/login?redirect-to=${encodeURIComponent(back)}`);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.text).toContain('name="redirect-to"');
    const wrong = await t.http
      .post('/login')
      .type('form')
      .send({ usr: USER, pwd: 'wrong-password', 'redirect-to': back });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.location).toBeUndefined();
    expect(wrong.text).toContain('Invalid login credentials');
    const signIn = await t.http
      .post('/login')
      .type('form')
      .send({ usr: USER, pwd: PASSWORD, 'redirect-to': back });
    expect(signIn.status).toBe(303);
    expect(signIn.headers.location).toBe(back);
    const sid = String(signIn.headers['set-cookie']).match(/sid=([^;]+)/)?.[1];
    const consent = await t.http.get(back).set('Cookie', `sid=${sid}`);
    expect(consent.status).toBe(200);
    expect(consent.text).toContain('Allow access?');
  });

  test('the consent page names the client (escaped) and its scopes, posts with the CSRF token, issues nothing', async () => {
    const before = await countRows(t, CODES);
    const res = await t.http
      .get(AUTHORIZE_PATH)
      .query(appQuery(pkcePair().challenge))
      .set('Cookie', session.cookie);
    expect(res.status).toBe(200);
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(res.text).toContain('Mobile &#60;App&#62;');
    expect(res.text).not.toContain('Mobile <App>');
    expect(res.text).toContain('<code>all</code>');
    expect(res.text).toContain('<code>openid</code>');
    expect(res.text).toContain(`name="csrf_token" value="${session.csrf}"`);
    expect(res.text).toContain('name="state" value="st-123"');
    expect(await countRows(t, CODES)).toBe(before);
  });

  test('approval redirects with a code and the state echoed; the row holds the digest and the S256 challenge', async () => {
    const pkce = pkcePair();
    const res = await approve(appQuery(pkce.challenge));
    expect(res.status).toBe(303);
    const location = new URL(String(res.headers.location));
    expect(`${location.origin}${location.pathname}`).toBe(APP_CB);
    expect(location.searchParams.get('state')).toBe('st-123');
    const code = location.searchParams.get('code') as string;
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const row = await t.site.db.knex(CODES).where('authorization_code', tokenDigest(code)).first();
    expect(row).toMatchObject({
      client: app.name,
      user: USER,
      validity: 'Valid',
      code_challenge: pkce.challenge,
      code_challenge_method: 's256',
      redirect_uri_bound_to_authorization_code: APP_CB,
    });
    expect(JSON.stringify(await t.site.db.knex(CODES))).not.toContain(code);
  });

  test("approval without the CSRF token, or with another session's, is refused and issues no code", async () => {
    const other = await login(t, USER, PASSWORD);
    const before = await countRows(t, CODES);
    const query = appQuery(pkcePair().challenge);
    const missing = await t.http
      .post(AUTHORIZE_PATH)
      .type('form')
      .set('Cookie', session.cookie)
      .send({ ...query, allowed: 'true' });
    expect(missing.status).toBe(400);
    expect(missing.body.exc_type).toBe('CSRFTokenError');
    const foreign = await t.http
      .post(AUTHORIZE_PATH)
      .type('form')
      .set('Cookie', session.cookie)
      .send({ ...query, allowed: 'true', csrf_token: other.csrf });
    expect(foreign.status).toBe(400);
    expect(await countRows(t, CODES)).toBe(before);
  });

  test('denial goes back as access_denied with the state; a Guest POST or an API key cannot consent', async () => {
    const query = appQuery(pkcePair().challenge);
    const before = await countRows(t, CODES);
    const denied = await t.http
      .post(AUTHORIZE_PATH)
      .type('form')
      .set('Cookie', session.cookie)
      .send({ ...query, csrf_token: session.csrf, allowed: 'false' });
    expect(denied.status).toBe(303);
    expect(locationParams(denied).get('error')).toBe('access_denied');
    expect(locationParams(denied).get('state')).toBe('st-123');
    const guest = await t.http
      .post(AUTHORIZE_PATH)
      .type('form')
      .send({ ...query, allowed: 'true' });
    expect(guest.status).toBe(401);
    const key = await t.http.get(AUTHORIZE_PATH).query(query).set('Authorization', t.adminToken);
    expect(key.status).toBe(401);
    expect(await countRows(t, CODES)).toBe(before);
  });

  test('a skip_authorization client goes straight back with a code', async () => {
    const pkce = pkcePair();
    const res = await t.http
      .get(AUTHORIZE_PATH)
      .query({
        client_id: trusted.clientId,
        response_type: 'code',
        code_challenge: pkce.challenge,
        code_challenge_method: 'S256',
      })
      .set('Cookie', session.cookie);
    expect(res.status).toBe(302);
    expect(String(res.headers.location).startsWith(`${APP_CB}?code=`)).toBe(true);
    expect(locationParams(res).get('state')).toBeNull();
  });
});

describe('code exchange', () => {
  test('code + verifier: tokens for the user, the bearer accepted; the v2 path answers alike', async () => {
    const { code, verifier } = await appCode();
    const res = await exchange(code, verifier);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: expect.any(Number),
      refresh_token: expect.any(String),
      scope: 'all openid',
      id_token: expect.any(String),
    });
    expect((await loggedUser(res.body.access_token)).body.message).toBe(USER);
    const v2 = await appCode();
    const res2 = await tokenRequest(
      t,
      {
        grant_type: 'authorization_code',
        code: v2.code,
        redirect_uri: APP_CB,
        client_id: app.clientId,
        code_verifier: v2.verifier,
      },
      undefined,
      '/api/v2/method/frappe.integrations.oauth2.get_token',
    );
    expect(res2.status).toBe(200);
  });

  test('a confidential client exchanges its code with its secret (PKCE optional for it)', async () => {
    const res = await approve({
      client_id: web.clientId,
      redirect_uri: WEB_CB,
      response_type: 'code',
      scope: 'openid',
    });
    expect(res.status).toBe(303);
    const code = locationParams(res).get('code') as string;
    const noSecret = await tokenRequest(t, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: WEB_CB,
      client_id: web.clientId,
    });
    expect(noSecret.status).toBe(400);
    const ok = await tokenRequest(
      t,
      { grant_type: 'authorization_code', code, redirect_uri: WEB_CB },
      { id: web.clientId, secret: web.secret },
    );
    expect(ok.status).toBe(200);
    expect(ok.body.scope).toBe('openid');
  });
});

describe('hostile inputs: refused with the RFC error code, nothing issued', () => {
  test('a redirect URI that differs in any character is refused at authorize, with no redirect', async () => {
    const before = await countRows(t, CODES);
    const variants = [
      `${APP_CB}/`,
      'https://app.example/CB',
      'https://APP.example/cb',
      `${APP_CB}?x=1`,
      `${APP_CB}#frag`,
      'http://app.example/cb',
      'https://app.example:443/cb',
      'https://app.example/cb/../cb',
      'https://evil.example/cb',
      'https://app.example.evil.example/cb',
      'javascript:alert(1)',
    ];
    for (const redirect_uri of variants) {
      const res = await t.http
        .get(AUTHORIZE_PATH)
        .query(appQuery(pkcePair().challenge, { redirect_uri }))
        .set('Cookie', session.cookie);
      expect([res.status, res.body.error, res.headers.location]).toEqual([400, 'invalid_request', undefined]);
      const posted = await approve(appQuery(pkcePair().challenge, { redirect_uri }));
      expect([posted.status, posted.headers.location]).toEqual([400, undefined]);
    }
    // An unknown client is refused the same way, never redirected.
    const unknown = await t.http
      .get(AUTHORIZE_PATH)
      .query(appQuery(pkcePair().challenge, { client_id: 'no-such-client' }))
      .set('Cookie', session.cookie);
    expect([unknown.status, unknown.body.error, unknown.headers.location]).toEqual([
      400,
      'invalid_client',
      undefined,
    ]);
    expect(await countRows(t, CODES)).toBe(before);
  });

  test('a redirect URI at the token endpoint that differs from the authorize request: invalid_grant', async () => {
    const { code, verifier } = await appCode();
    const before = await countRows(t, TOKENS);
    const res = await exchange(code, verifier, { redirect_uri: `${APP_CB}/` });
    expect([res.status, res.body.error]).toEqual([400, 'invalid_grant']);
    expect(await countRows(t, TOKENS)).toBe(before);
  });

  test('a code used twice is refused, and the tokens of its first use are revoked', async () => {
    const { code, verifier } = await appCode();
    const first = await exchange(code, verifier);
    expect(first.status).toBe(200);
    expect((await loggedUser(first.body.access_token)).status).toBe(200);
    const before = await countRows(t, TOKENS);
    const second = await exchange(code, verifier);
    expect([second.status, second.body.error]).toEqual([400, 'invalid_grant']);
    expect(await countRows(t, TOKENS)).toBe(before);
    const refused = await loggedUser(first.body.access_token);
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toContain('invalid_token');
    const refresh = await tokenRequest(t, {
      grant_type: 'refresh_token',
      refresh_token: first.body.refresh_token,
      client_id: app.clientId,
    });
    expect([refresh.status, refresh.body.error]).toEqual([400, 'invalid_grant']);
  });

  test('an expired code: invalid_grant', async () => {
    const { code, verifier } = await appCode();
    await t.site.db
      .knex(CODES)
      .where('authorization_code', tokenDigest(code))
      .update({ expiration_time: '2020-01-01 00:00:00' });
    const before = await countRows(t, TOKENS);
    const res = await exchange(code, verifier);
    expect([res.status, res.body.error]).toEqual([400, 'invalid_grant']);
    expect(await countRows(t, TOKENS)).toBe(before);
  });

  test('a PKCE verifier that does not match, or none: invalid_grant, and the code is spent', async () => {
    const before = await countRows(t, TOKENS);
    const wrong = await appCode();
    const res = await exchange(wrong.code, pkcePair().verifier);
    expect([res.status, res.body.error]).toEqual([400, 'invalid_grant']);
    // The right verifier no longer helps: a failed attempt spent the code (no guessing online).
    const retry = await exchange(wrong.code, wrong.verifier);
    expect([retry.status, retry.body.error]).toEqual([400, 'invalid_grant']);
    const none = await appCode();
    const missing = await tokenRequest(t, {
      grant_type: 'authorization_code',
      code: none.code,
      redirect_uri: APP_CB,
      client_id: app.clientId,
    });
    expect(missing.status).toBe(400);
    expect(['invalid_grant', 'invalid_client']).toContain(missing.body.error);
    expect(await countRows(t, TOKENS)).toBe(before);
  });

  test('a code presented by another client: invalid_grant, and the code is spent', async () => {
    const { code, verifier } = await appCode();
    const before = await countRows(t, TOKENS);
    const res = await tokenRequest(
      t,
      { grant_type: 'authorization_code', code, redirect_uri: APP_CB, code_verifier: verifier },
      { id: web.clientId, secret: web.secret },
    );
    expect([res.status, res.body.error]).toEqual([400, 'invalid_grant']);
    const asTrusted = await tokenRequest(t, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: APP_CB,
      client_id: trusted.clientId,
      code_verifier: verifier,
    });
    expect([asTrusted.status, asTrusted.body.error]).toEqual([400, 'invalid_grant']);
    expect(await countRows(t, TOKENS)).toBe(before);
    // The first presentation spent it (issue #36 item 16): its own client cannot exchange it afterwards either.
    const asOwner = await exchange(code, verifier);
    expect([asOwner.status, asOwner.body.error]).toEqual([400, 'invalid_grant']);
    expect(await countRows(t, TOKENS)).toBe(before);
  });

  test('a scope the client lacks: invalid_scope at the redirect URI, state echoed', async () => {
    const before = await countRows(t, CODES);
    const res = await t.http
      .get(AUTHORIZE_PATH)
      .query(appQuery(pkcePair().challenge, { scope: 'all admin' }))
      .set('Cookie', session.cookie);
    expect(res.status).toBe(302);
    expect(String(res.headers.location).startsWith(`${APP_CB}?`)).toBe(true);
    expect(locationParams(res).get('error')).toBe('invalid_scope');
    expect(locationParams(res).get('state')).toBe('st-123');
    const posted = await approve(appQuery(pkcePair().challenge, { scope: 'admin' }));
    expect(locationParams(posted).get('error')).toBe('invalid_scope');
    expect(await countRows(t, CODES)).toBe(before);
  });

  test('a public client without PKCE, with plain, or with a malformed challenge: invalid_request', async () => {
    const before = await countRows(t, CODES);
    const pkce = pkcePair();
    for (const extra of [
      { code_challenge: undefined, code_challenge_method: undefined },
      { code_challenge_method: 'plain', code_challenge: pkce.verifier },
      { code_challenge_method: undefined },
      { code_challenge: 'short' },
    ]) {
      const res = await approve(appQuery(pkce.challenge, extra));
      expect(res.status).toBe(303);
      expect(locationParams(res).get('error')).toBe('invalid_request');
      expect(locationParams(res).get('state')).toBe('st-123');
      expect(locationParams(res).get('code')).toBeNull();
    }
    expect(await countRows(t, CODES)).toBe(before);
  });

  test('a response type other than code, or a repeated parameter, is refused', async () => {
    const token = await approve(appQuery(pkcePair().challenge, { response_type: 'token' }));
    expect(locationParams(token).get('error')).toBe('unsupported_response_type');
    const repeated = await t.http
      .get(`${AUTHORIZE_PATH}?client_id=${app.clientId}&client_id=${web.clientId}&response_type=code`)
      .set('Cookie', session.cookie);
    expect([repeated.status, repeated.body.error]).toEqual([400, 'invalid_request']);
  });

  test('open redirects through the sign-in redirect-to are refused: the browser stays on this site', async () => {
    const hostile = [
      'https://evil.example/',
      '//evil.example/',
      '/\\evil.example/',
      '\\\\evil.example',
      'https:evil.example',
      'javascript:alert(1)',
      '/\tevil',
      ' /x',
    ];
    for (const target of hostile) {
      const page = await t.http.get(`/login?redirect-to=${encodeURIComponent(target)}`);
      expect(page.status).toBe(200);
      expect(page.text).not.toContain('name="redirect-to"');
      const res = await t.http
        .post('/login')
        .type('form')
        .send({ usr: USER, pwd: PASSWORD, 'redirect-to': target });
      const where = res.headers.location;
      if (where !== undefined) {
        expect(String(where).startsWith('/')).toBe(true);
        expect(String(where).startsWith('//')).toBe(false);
        expect(new URL(String(where), 'http://svc.invalid').origin).toBe('http://svc.invalid');
      } else {
        expect(res.status).toBe(200);
        expect(res.text).toContain('signed in as');
      }
    }
    // A signed-in browser is sent on at once, but only within the site.
    const inside = await t.http
      .get('/login?redirect-to=%2Fapi%2Fmethod%2Fping')
      .set('Cookie', session.cookie);
    expect([inside.status, inside.headers.location]).toEqual([302, '/api/method/ping']);
    const outside = await t.http.get('/login?redirect-to=%2F%2Fevil.example').set('Cookie', session.cookie);
    expect([outside.status, outside.headers.location]).toEqual([200, undefined]);
  });
});
