// OAuth scopes on methods: under bearer authentication a method needs its `scopes` (default `all`); 403 otherwise.
import { randomBytes } from 'node:crypto';
import { tokenDigest } from '../../runtime/auth/bearer-tokens';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';

let t: TestSite;
const USER = 'scoped@example.com';
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
  await createUser(t, USER, ['Probe Reader']);
});
afterAll(() => t.close());

const stamp = (offsetMs: number) =>
  new Date(Date.now() + offsetMs).toISOString().replace('T', ' ').slice(0, 19);

async function bearer(scopes: string): Promise<string> {
  const access = randomBytes(20).toString('hex');
  const now = stamp(0);
  await t.site.db.knex('tabOAuth Bearer Token').insert({
    name: tokenDigest(access),
    access_token: tokenDigest(access), // rows keep the token's digest
    user: USER,
    scopes,
    status: 'Active',
    expiration_time: stamp(3_600_000),
    owner: 'Administrator',
    modified_by: 'Administrator',
    creation: now,
    modified: now,
    docstatus: 0,
    idx: 0,
  });
  return `Bearer ${access}`;
}

test('a method declaring scopes answers a token holding them (or `all`) and refuses others with 403', async () => {
  expect(
    (await t.http.get('/api/v2/method/Method Probe/scoped').set('Authorization', await bearer('probe'))).body,
  ).toEqual({ data: 'in scope' });
  expect(
    (await t.http.get('/api/v2/method/Method Probe/scoped').set('Authorization', await bearer('all'))).status,
  ).toBe(200);
  const refused = await t.http
    .get('/api/v2/method/Method Probe/scoped')
    .set('Authorization', await bearer('openid'));
  expect(refused.status).toBe(403);
  expect(refused.headers['www-authenticate']).toContain('insufficient_scope');
});

test('a method without scopes needs `all` from a bearer token', async () => {
  expect(
    (await t.http.get('/api/v2/method/Method Probe/titles').set('Authorization', await bearer('probe')))
      .status,
  ).toBe(403);
  expect(
    (await t.http.get('/api/v2/method/Method Probe/titles').set('Authorization', await bearer('all'))).status,
  ).toBe(200);
});
