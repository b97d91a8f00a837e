// Hole (c): a new password ends every session of its user (an attacker's stolen session dies with the old password),
// whichever way the password is changed; other users' sessions stay.
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { login } from './auth-helpers';

let t: TestSite;
const USER = 'changes-password@example.com';
const OTHER = 'keeps-session@example.com';
let password = 'first-password-1';
beforeAll(async () => {
  t = await createTestSite();
  await createUser(t, USER, ['System Manager'], password);
  await createUser(t, OTHER, ['System Manager'], 'other-password-1');
});
afterAll(() => t.close());

const whoAmI = (cookie: string) =>
  t.http.get('/api/method/frappe.auth.get_logged_user').set('Cookie', cookie);

test.each([
  [
    'PUT by Administrator',
    (pwd: string) =>
      t.http.put(`/api/resource/User/${USER}`).set('Authorization', t.adminToken).send({ new_password: pwd }),
  ],
  [
    'frappe.client.set_value',
    (pwd: string) =>
      t.http
        .post('/api/method/frappe.client.set_value')
        .set('Authorization', t.adminToken)
        .send({ doctype: 'User', name: USER, fieldname: 'new_password', value: pwd }),
  ],
])('a password changed by %s ends all sessions of that user, no other', async (_label, change) => {
  const first = await login(t, USER, password);
  const second = await login(t, USER, password);
  const other = await login(t, OTHER, 'other-password-1');
  expect((await whoAmI(first.cookie)).body.message).toBe(USER);
  password = `${password}x`;
  expect((await change(password)).status).toBe(200);
  for (const s of [first, second]) expect((await whoAmI(s.cookie)).status).toBe(401);
  expect(await t.site.db.knex('tabSessions').where({ user: USER })).toHaveLength(0);
  expect((await whoAmI(other.cookie)).body.message).toBe(OTHER);
  const again = await login(t, USER, password);
  expect((await whoAmI(again.cookie)).body.message).toBe(USER);
});

test('the user changing their own password through their session ends it too (sign in again)', async () => {
  const s = await login(t, USER, password);
  password = `${password}y`;
  const res = await t.http
    .put(`/api/resource/User/${USER}`)
    .set('Cookie', s.cookie)
    .set('X-Frappe-CSRF-Token', s.csrf)
    .send({ new_password: password });
  expect(res.status).toBe(200);
  expect((await whoAmI(s.cookie)).status).toBe(401);
});

test('a save without a new password keeps the sessions', async () => {
  const s = await login(t, USER, password);
  const res = await t.http
    .put(`/api/resource/User/${USER}`)
    .set('Authorization', t.adminToken)
    .send({ first_name: 'Renamed' });
  expect(res.status).toBe(200);
  expect((await whoAmI(s.cookie)).body.message).toBe(USER);
});
