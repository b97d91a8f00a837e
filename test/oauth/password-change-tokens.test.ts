// A new password revokes the user's OAuth bearer and refresh tokens and spends its unspent codes, as it ends its
// sessions (issue #36 item 16); other users' tokens, and saves without a new password, keep theirs.
import { randomBytes } from 'node:crypto';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';

let t: TestSite;
const USER = 'token-password@example.com';
const OTHER = 'token-keeps@example.com';
beforeAll(async () => {
  t = await createTestSite();
  await createUser(t, USER, ['System Manager'], 'first-password-1');
  await createUser(t, OTHER, ['System Manager'], 'other-password-1');
});
afterAll(() => t.close());

/** Inserts a token for `user` as Administrator (CONTRACT section 7); returns the plain access token. */
async function tokenFor(user: string): Promise<string> {
  const access = randomBytes(24).toString('base64url');
  const res = await t.http
    .post('/api/resource/OAuth Bearer Token')
    .set('Authorization', t.adminToken)
    .send({
      access_token: access,
      refresh_token: randomBytes(24).toString('base64url'),
      user,
      scopes: 'all',
    });
  if (res.status !== 201) throw new Error(`token: ${res.status} ${JSON.stringify(res.body)}`);
  return access;
}

const whoAmI = async (token: string) => {
  const res = await t.http
    .get('/api/method/frappe.auth.get_logged_user')
    .set('Authorization', `Bearer ${token}`);
  return res.status === 200 ? (res.body.message as string) : res.status;
};

test("a password change revokes the user's tokens at once, no one else's", async () => {
  const mine = await tokenFor(USER);
  const theirs = await tokenFor(OTHER);
  expect(await whoAmI(mine)).toBe(USER);
  const change = await t.http
    .put(`/api/resource/User/${USER}`)
    .set('Authorization', t.adminToken)
    .send({ new_password: 'second-password-2' });
  expect(change.status).toBe(200);
  expect(await whoAmI(mine)).toBe(401);
  expect(await whoAmI(theirs)).toBe(OTHER);
  const rows = await t.site.db.knex('tabOAuth Bearer Token').where({ user: USER }).select('status');
  expect(rows.map((r: { status: string }) => r.status)).toEqual(['Revoked']);
});

test('a save without a new password keeps the tokens', async () => {
  const mine = await tokenFor(USER);
  const save = await t.http
    .put(`/api/resource/User/${USER}`)
    .set('Authorization', t.adminToken)
    .send({ first_name: 'Renamed' });
  expect(save.status).toBe(200);
  expect(await whoAmI(mine)).toBe(USER);
});
