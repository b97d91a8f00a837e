// A document's secrets (its Password fields' rows in `__Auth`) go with it, as Frappe's delete_all_passwords_for: a user
// made again under a deleted user's name, or the deleted user restored from its Deleted Document, signs in with neither
// the old password nor the old API key.
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';

let t: TestSite;
const USER = 'ghost@example.com';
const PASSWORD = 'ghost-password-1';
beforeAll(async () => {
  t = await createTestSite();
});
afterAll(() => t.close());

const secrets = () => t.site.db.knex('__Auth').where({ doctype: 'User', name: USER });
const loginStatus = async () =>
  (await t.http.post('/api/method/login').send({ usr: USER, pwd: PASSWORD })).status;
const whoAmI = (authorization: string) =>
  t.http.get('/api/method/frappe.auth.get_logged_user').set('Authorization', authorization);
const deleteUser = async () =>
  expect((await t.http.delete(`/api/resource/User/${USER}`).set('Authorization', t.adminToken)).status).toBe(
    202,
  );

test('deleting a user deletes its password and API secret; a user made again under its name has neither', async () => {
  const oldKey = await createUser(t, USER, ['System Manager'], PASSWORD);
  expect((await whoAmI(oldKey)).body.message).toBe(USER);
  expect(await loginStatus()).toBe(200);
  expect((await secrets()).length).toBeGreaterThanOrEqual(2);

  await deleteUser();
  expect(await secrets()).toEqual([]);

  const again = await t.http
    .post('/api/resource/User')
    .set('Authorization', t.adminToken)
    .send({ email: USER, first_name: 'new person' });
  expect(again.status).toBe(201);
  expect(await loginStatus()).toBe(401);
  expect((await whoAmI(oldKey)).status).toBe(401);
});

test('a user restored from its Deleted Document gets back neither its password nor its API key', async () => {
  const oldKey = await createUser(t, 'restored@example.com', ['System Manager'], PASSWORD);
  expect(
    (await t.http.delete('/api/resource/User/restored@example.com').set('Authorization', t.adminToken))
      .status,
  ).toBe(202);
  const deleted = await t.site.db
    .knex('tabDeleted Document')
    .where({ deleted_doctype: 'User', deleted_name: 'restored@example.com' })
    .first('name');
  const restored = await t.http
    .post(`/api/v2/document/Deleted Document/${deleted.name}/method/restore`)
    .set('Authorization', t.adminToken)
    .send({});
  expect(restored.status).toBe(200);
  expect((await t.site.db.knex('tabUser').where({ name: 'restored@example.com' })).length).toBe(1);
  expect(
    (await t.http.post('/api/method/login').send({ usr: 'restored@example.com', pwd: PASSWORD })).status,
  ).toBe(401);
  expect((await whoAmI(oldKey)).status).toBe(401);
});
