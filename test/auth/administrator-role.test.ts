// A System Manager may not give or take the Administrator role (Frappe keeps it to Administrator): whoever holds it
// holds every permission row written for it. Through REST v1 and v2, frappe.client and a new User alike.
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';

let t: TestSite;
let manager: string;
beforeAll(async () => {
  t = await createTestSite();
  manager = await createUser(t, 'manager@example.com', ['System Manager']);
  await createUser(t, 'other@example.com', ['All']);
});
afterAll(() => t.close());

const rolesOf = async (user: string) =>
  (
    (await t.site.db.knex('tabHas Role').where({ parent: user, parenttype: 'User' }).select('role')) as {
      role: string;
    }[]
  )
    .map((r) => r.role)
    .sort();

test.each([
  ['v1 PUT of another user', 'put', '/api/resource/User/other@example.com', 'other@example.com'],
  ['v2 PATCH of another user', 'patch', '/api/v2/document/User/other@example.com', 'other@example.com'],
  ['v1 PUT of oneself', 'put', '/api/resource/User/manager@example.com', 'manager@example.com'],
] as const)('%s adding the Administrator role is 403 and changes nothing', async (_l, method, path, user) => {
  const before = await rolesOf(user);
  const res = await t.http[method](path)
    .set('Authorization', manager)
    .send({ roles: [...before.map((role) => ({ role })), { role: 'Administrator' }] });
  expect(res.status).toBe(403);
  expect(res.body.exc_type).toBe('PermissionError');
  expect(await rolesOf(user)).toEqual(before);
});

test('frappe.client.insert of a new User holding the Administrator role is 403 and creates nothing', async () => {
  const res = await t.http
    .post('/api/method/frappe.client.insert')
    .set('Authorization', manager)
    .send({
      doc: {
        doctype: 'User',
        email: 'sneaky@example.com',
        first_name: 'sneaky',
        roles: [{ role: 'Administrator' }],
      },
    });
  expect(res.status).toBe(403);
  expect(await t.site.db.knex('tabUser').where({ name: 'sneaky@example.com' }).first()).toBeUndefined();
});

test('a role granted by Administrator stays through a manager edit, and only Administrator removes it', async () => {
  const granted = await t.http
    .put('/api/resource/User/other@example.com')
    .set('Authorization', t.adminToken)
    .send({ roles: [{ role: 'Administrator' }] });
  expect(granted.status).toBe(200);
  expect(await rolesOf('other@example.com')).toEqual(['Administrator']);
  // Other fields of that user remain the manager's to change.
  const edit = await t.http
    .put('/api/resource/User/other@example.com')
    .set('Authorization', manager)
    .send({ last_name: 'Edited' });
  expect(edit.status).toBe(200);
  expect(await rolesOf('other@example.com')).toEqual(['Administrator']);
  const removed = await t.http
    .put('/api/resource/User/other@example.com')
    .set('Authorization', manager)
    .send({ roles: [{ role: 'System Manager' }] });
  expect(removed.status).toBe(403);
  expect(await rolesOf('other@example.com')).toEqual(['Administrator']);
});

test('a System Manager still grants and removes other roles', async () => {
  const res = await t.http
    .put('/api/resource/User/other@example.com')
    .set('Authorization', t.adminToken)
    .send({ roles: [] });
  expect(res.status).toBe(200);
  const grant = await t.http
    .put('/api/resource/User/other@example.com')
    .set('Authorization', manager)
    .send({ roles: [{ role: 'System Manager' }] });
  expect(grant.status).toBe(200);
  expect(await rolesOf('other@example.com')).toEqual(['System Manager']);
});
