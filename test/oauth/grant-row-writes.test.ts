// OAuth rows written through the API bind a user only its writer may act as (itself; Administrator: anyone), so a
// System Manager cannot reach Administrator through a client, a bearer token or an authorization code (issue #36).
import { randomBytes } from 'node:crypto';
import { tokenDigest } from '../../runtime/auth/bearer-tokens';
import { countRows } from '../auth/auth-helpers';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { registerClient, tokenRequest } from './oauth-helpers';

let t: TestSite;
const SM = 'grant-sm@example.com';
const OTHER = 'grant-other@example.com';
let smToken: string;
const CLIENTS = 'tabOAuth Client';
const TOKENS = 'tabOAuth Bearer Token';
const CODES = 'tabOAuth Authorization Code';
const CB = 'https://app.example/cb';

beforeAll(async () => {
  t = await createTestSite();
  smToken = await createUser(t, SM, ['System Manager']);
  await createUser(t, OTHER, ['System Manager']);
});
afterAll(() => t.close());

/** The user a bearer token authenticates as; undefined when it is refused (401). */
async function bearerUser(token: string): Promise<string | undefined> {
  const res = await t.http
    .get('/api/method/frappe.auth.get_logged_user')
    .set('Authorization', `Bearer ${token}`);
  if (res.status === 401) return undefined;
  expect(res.status).toBe(200);
  return res.body.message as string;
}

const plain = () => randomBytes(24).toString('base64url');
const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString().replace('T', ' ').slice(0, 19);

describe('OAuth Client acting as a user', () => {
  test('a System Manager cannot create a client-credentials client acting as Administrator', async () => {
    const before = await countRows(t, CLIENTS);
    for (const path of ['/api/resource/OAuth Client', '/api/v2/document/OAuth Client']) {
      const res = await t.http.post(path).set('Authorization', smToken).send({
        app_name: 'escalate',
        grant_type: 'Client Credentials',
        user: 'Administrator',
        scopes: 'all',
        client_secret: 'a-secret-of-my-choosing',
      });
      expect(res.status).toBe(403);
      expect(res.body.exc_type).toBe('PermissionError');
    }
    expect(await countRows(t, CLIENTS)).toBe(before);
    const token = await tokenRequest(
      t,
      { grant_type: 'client_credentials' },
      {
        id: 'escalate',
        secret: 'a-secret-of-my-choosing',
      },
    );
    expect(token.status).toBe(401);
  });

  test('a System Manager cannot turn a client into one acting as Administrator', async () => {
    const res = await t.http.post('/api/resource/OAuth Client').set('Authorization', smToken).send({
      app_name: 'mine',
      grant_type: 'Client Credentials',
      user: SM,
      scopes: 'all',
    });
    expect(res.status).toBe(201);
    const { name, client_id: id, client_secret: secret } = res.body.data;
    const put = await t.http
      .put(`/api/resource/OAuth Client/${name}`)
      .set('Authorization', smToken)
      .send({ user: 'Administrator' });
    expect(put.status).toBe(403);
    const row = await t.site.db.knex(CLIENTS).where('name', name).first('user');
    expect(row.user).toBe(SM);
    // Its own client still works, as itself.
    const token = await tokenRequest(t, { grant_type: 'client_credentials' }, { id, secret });
    expect(token.status).toBe(200);
    expect(await bearerUser(token.body.access_token)).toBe(SM);
  });

  test("a System Manager cannot change Administrator's client (a new secret would hand it over)", async () => {
    const admins = await registerClient(t, {
      grant_type: 'Client Credentials',
      user: 'Administrator',
      scopes: 'all',
    });
    const authCode = await registerClient(t, {
      grant_type: 'Authorization Code',
      redirect_uris: CB,
      user: 'Administrator',
      scopes: 'all',
    });
    const stored = await t.site.db
      .knex(CLIENTS)
      .where('name', admins.name)
      .first('client_secret', 'modified');
    for (const [name, change] of [
      [admins.name, { client_secret: 'sm-chosen-secret-123456' }],
      [admins.name, { app_name: 'renamed' }],
      [authCode.name, { grant_type: 'Client Credentials' }],
    ] as const) {
      const res = await t.http
        .put(`/api/resource/OAuth Client/${name}`)
        .set('Authorization', smToken)
        .send(change);
      expect(res.status).toBe(403);
    }
    expect(
      await t.site.db.knex(CLIENTS).where('name', admins.name).first('client_secret', 'modified'),
    ).toEqual(stored);
    const chosen = await tokenRequest(
      t,
      { grant_type: 'client_credentials' },
      {
        id: admins.clientId,
        secret: 'sm-chosen-secret-123456',
      },
    );
    expect(chosen.status).toBe(401);
    // Administrator's own client keeps working for Administrator.
    const token = await tokenRequest(
      t,
      { grant_type: 'client_credentials' },
      {
        id: admins.clientId,
        secret: admins.secret,
      },
    );
    expect(token.status).toBe(200);
    expect(await bearerUser(token.body.access_token)).toBe('Administrator');
  });

  test('Administrator may make a client act as another user', async () => {
    const client = await registerClient(t, { grant_type: 'Client Credentials', user: OTHER, scopes: 'all' });
    const token = await tokenRequest(
      t,
      { grant_type: 'client_credentials' },
      {
        id: client.clientId,
        secret: client.secret,
      },
    );
    expect(token.status).toBe(200);
    expect(await bearerUser(token.body.access_token)).toBe(OTHER);
  });

  test('a client row a System Manager bound to Administrator behind the API issues no token', async () => {
    const res = await t.http.post('/api/resource/OAuth Client').set('Authorization', smToken).send({
      app_name: 'legacy',
      grant_type: 'Client Credentials',
      user: SM,
      scopes: 'all',
    });
    expect(res.status).toBe(201);
    // As a row written before the rule existed: its last writer (the System Manager) may not act as Administrator.
    await t.site.db.knex(CLIENTS).where('name', res.body.data.name).update({ user: 'Administrator' });
    const before = await countRows(t, TOKENS);
    const token = await tokenRequest(
      t,
      { grant_type: 'client_credentials' },
      {
        id: res.body.data.client_id,
        secret: res.body.data.client_secret,
      },
    );
    expect(token.status).toBe(400);
    expect(token.body.error).toBe('invalid_grant');
    expect(await countRows(t, TOKENS)).toBe(before);
  });
});

describe('OAuth Bearer Token inserted through the API', () => {
  test('a System Manager cannot insert a token for Administrator (plain or pre-hashed)', async () => {
    const before = await countRows(t, TOKENS);
    const chosen = plain();
    for (const [path, accessToken] of [
      ['/api/resource/OAuth Bearer Token', chosen],
      ['/api/v2/document/OAuth Bearer Token', chosen],
      ['/api/resource/OAuth Bearer Token', tokenDigest(chosen)],
    ] as const) {
      const res = await t.http.post(path).set('Authorization', smToken).send({
        access_token: accessToken,
        refresh_token: plain(),
        user: 'Administrator',
        scopes: 'all',
        status: 'Active',
        expiration_time: inAnHour(),
      });
      expect(res.status).toBe(403);
      expect(res.body.exc_type).toBe('PermissionError');
    }
    expect(await countRows(t, TOKENS)).toBe(before);
    expect(await bearerUser(chosen)).toBeUndefined();
    expect(await bearerUser(tokenDigest(chosen))).toBeUndefined();
  });

  test('a token inserted for oneself is stored as its digest and its plain value authenticates', async () => {
    const chosen = plain();
    const res = await t.http.post('/api/resource/OAuth Bearer Token').set('Authorization', smToken).send({
      access_token: chosen,
      user: SM,
      scopes: 'all',
      status: 'Active',
      expiration_time: inAnHour(),
    });
    expect(res.status).toBe(201);
    expect(res.body.data.access_token).toBe(tokenDigest(chosen));
    expect(res.body.data.name).toBe(tokenDigest(chosen));
    expect(JSON.stringify(await t.site.db.knex(TOKENS).where('name', tokenDigest(chosen)))).not.toContain(
      chosen,
    );
    expect(await bearerUser(chosen)).toBe(SM);
    // Rebinding it to Administrator is refused and changes nothing.
    const put = await t.http
      .put(`/api/resource/OAuth Bearer Token/${tokenDigest(chosen)}`)
      .set('Authorization', smToken)
      .send({ user: 'Administrator' });
    expect(put.status).toBe(403);
    expect(await bearerUser(chosen)).toBe(SM);
  });

  test('Administrator may insert a token for another user', async () => {
    const chosen = plain();
    const res = await t.http
      .post('/api/v2/document/OAuth Bearer Token')
      .set('Authorization', t.adminToken)
      .send({
        access_token: chosen,
        user: OTHER,
        scopes: 'all',
        expiration_time: inAnHour(),
      });
    expect(res.status).toBe(201);
    expect(await bearerUser(chosen)).toBe(OTHER);
  });

  test("a System Manager may revoke Administrator's token but not set its value or revive it", async () => {
    const adminTokenValue = plain();
    const res = await t.http
      .post('/api/resource/OAuth Bearer Token')
      .set('Authorization', t.adminToken)
      .send({
        access_token: adminTokenValue,
        user: 'Administrator',
        scopes: 'all',
        expiration_time: inAnHour(),
      });
    expect(res.status).toBe(201);
    const name = res.body.data.name as string;
    expect(await bearerUser(adminTokenValue)).toBe('Administrator');
    const chosen = plain();
    const setValue = await t.http
      .put(`/api/resource/OAuth Bearer Token/${name}`)
      .set('Authorization', smToken)
      .send({ access_token: chosen });
    expect(setValue.status).toBe(403);
    expect(await bearerUser(chosen)).toBeUndefined();
    expect(await bearerUser(adminTokenValue)).toBe('Administrator');
    const revoke = await t.http
      .put(`/api/resource/OAuth Bearer Token/${name}`)
      .set('Authorization', smToken)
      .send({ status: 'Revoked' });
    expect(revoke.status).toBe(200);
    expect(await bearerUser(adminTokenValue)).toBeUndefined();
    const revive = await t.http
      .put(`/api/resource/OAuth Bearer Token/${name}`)
      .set('Authorization', smToken)
      .send({ status: 'Active' });
    expect(revive.status).toBe(403);
    expect(await bearerUser(adminTokenValue)).toBeUndefined();
  });

  test('a token row bound to Administrator behind the API by a System Manager authenticates no one', async () => {
    const chosen = plain();
    const stamp = inAnHour();
    await t.site.db.knex(TOKENS).insert({
      name: tokenDigest(chosen),
      access_token: tokenDigest(chosen),
      user: 'Administrator',
      scopes: 'all',
      status: 'Active',
      expiration_time: stamp,
      owner: SM,
      modified_by: SM,
      creation: stamp,
      modified: stamp,
      docstatus: 0,
      idx: 0,
    });
    expect(await bearerUser(chosen)).toBeUndefined();
  });
});

describe('OAuth Authorization Code inserted through the API', () => {
  test('a System Manager cannot insert a code for Administrator, nor exchange one written behind the API', async () => {
    const res = await t.http.post('/api/resource/OAuth Client').set('Authorization', smToken).send({
      app_name: 'code app',
      grant_type: 'Authorization Code',
      redirect_uris: CB,
      scopes: 'all',
    });
    expect(res.status).toBe(201);
    const client = res.body.data as { name: string; client_id: string; client_secret: string };
    const code = plain();
    const before = await countRows(t, CODES);
    const insert = await t.http
      .post('/api/resource/OAuth Authorization Code')
      .set('Authorization', smToken)
      .send({
        authorization_code: tokenDigest(code),
        client: client.name,
        user: 'Administrator',
        scopes: 'all',
        expiration_time: inAnHour(),
        redirect_uri_bound_to_authorization_code: CB,
        validity: 'Valid',
      });
    expect(insert.status).toBe(403);
    expect(await countRows(t, CODES)).toBe(before);
    const stamp = inAnHour();
    await t.site.db.knex(CODES).insert({
      name: tokenDigest(code),
      authorization_code: tokenDigest(code),
      client: client.name,
      user: 'Administrator',
      scopes: 'all',
      expiration_time: stamp,
      redirect_uri_bound_to_authorization_code: CB,
      validity: 'Valid',
      owner: SM,
      modified_by: SM,
      creation: stamp,
      modified: stamp,
      docstatus: 0,
      idx: 0,
    });
    const tokensBefore = await countRows(t, TOKENS);
    const exchange = await tokenRequest(
      t,
      { grant_type: 'authorization_code', code, redirect_uri: CB },
      { id: client.client_id, secret: client.client_secret },
    );
    expect(exchange.status).toBe(400);
    expect(exchange.body.error).toBe('invalid_grant');
    expect(await countRows(t, TOKENS)).toBe(tokensBefore);
  });
});
