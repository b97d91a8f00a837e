// End to end with a real OpenID client library: the site serves on a real port, and openid-client (ESM, so in its own
// Node process: test/oauth/oidc-e2e-client.mjs) discovers it, signs a user in through the sign-in and consent pages
// with code + PKCE, checks the ID token, calls the API with the bearer, refreshes, revokes, and uses client credentials.
import { execFile } from 'node:child_process';
import type { Server } from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import { DB_KIND, createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { registerClient, type RegisteredClient } from './oauth-helpers';

// Ports of their own (4740-4749), another for the MariaDB run so the two suites can run at once.
const PORT = DB_KIND === 'mysql' ? 4742 : 4741;
const ISSUER = `http://127.0.0.1:${PORT}`;
const REDIRECT_URI = 'http://127.0.0.1:1/callback';
const USER = 'dana@example.com';
const PASSWORD = 'dana-password-1';
jest.setTimeout(120_000);

let t: TestSite;
let server: Server;
let app: RegisteredClient;
let machine: RegisteredClient;

beforeAll(async () => {
  t = await createTestSite();
  await createUser(t, USER, ['System Manager'], PASSWORD);
  await t.http
    .put(`/api/resource/User/${USER}`)
    .set('Authorization', t.adminToken)
    .send({ first_name: 'Dana', last_name: 'Scully' });
  app = await registerClient(t, {
    app_name: 'E2E App',
    client_type: 'Public',
    grant_type: 'Authorization Code',
    redirect_uris: REDIRECT_URI,
    scopes: 'openid\nall',
  });
  machine = await registerClient(t, {
    app_name: 'E2E Machine',
    grant_type: 'Client Credentials',
    user: USER,
    scopes: 'all',
  });
  server = await new Promise<Server>((resolve) => {
    const s = t.app.listen(PORT, '127.0.0.1', () => resolve(s));
  });
});
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await t.close();
});

test('openid-client: discovery, sign-in, consent, code + PKCE, ID token, API call, refresh, revoke, client credentials', async () => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [path.join(__dirname, 'oidc-e2e-client.mjs')],
    {
      env: {
        ...process.env,
        ISSUER,
        REDIRECT_URI,
        APP_ID: app.clientId,
        CC_ID: machine.clientId,
        CC_SECRET: machine.secret,
        USER_NAME: USER,
        USER_PASSWORD: PASSWORD,
      },
      timeout: 90_000,
    },
  );
  const seen = JSON.parse(stdout);
  expect(seen).toMatchObject({
    issuer: ISSUER,
    authorizeStatus: 302,
    signInPath: '/login',
    signInStatus: 303,
    consentStatus: 200,
    approveStatus: 303,
    signatureVerified: true,
    apiCall: { status: 200, user: USER },
    userinfo: { sub: USER, email: USER, name: 'Dana Scully', roles: ['System Manager'] },
    refreshedScope: 'openid all',
    refreshedIdTokenSub: USER,
    afterRefresh: { fresh: { status: 200, user: USER }, old: { status: 401 } },
    afterRevoke: { status: 401 },
    clientCredentials: {
      scope: 'all',
      hasIdToken: false,
      apiCall: { status: 200, user: USER },
      introspection: { active: true, client_id: machine.clientId, username: USER },
    },
  });
  expect(seen.claims).toMatchObject({
    iss: ISSUER,
    sub: USER,
    aud: app.clientId,
    email: USER,
    name: 'Dana Scully',
    roles: ['System Manager'],
  });
  expect(seen.claims.nonce).toEqual(expect.any(String));
  expect(seen.claims.exp - seen.claims.iat).toBe(3600);
});
