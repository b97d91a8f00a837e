// Hole (b): a System Manager may not become Administrator: not through Administrator's API keys (generate_keys),
// nor by writing the Administrator User record (api_key, api_secret, new_password), nor by deleting it.
import { regenerateKeys } from '../../runtime/auth/api-keys';
import { readAuth } from '../../runtime/auth/passwords';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';

let t: TestSite;
let manager: string;
beforeAll(async () => {
  t = await createTestSite();
  manager = await createUser(t, 'manager@example.com', ['System Manager']);
});
afterAll(() => t.close());

const authStore = () =>
  t.site.db.knex('__Auth').where({ doctype: 'User', name: 'Administrator' }).orderBy('fieldname').select();
const adminRow = () => t.site.db.knex('tabUser').where({ name: 'Administrator' }).first();

test("generate_keys for Administrator by a System Manager is 403 and Administrator's keys stay", async () => {
  const before = await authStore();
  for (const path of [
    '/api/method/frappe.core.doctype.user.user.generate_keys',
    '/api/v2/method/User/generate_keys',
  ]) {
    const res = await t.http.post(path).set('Authorization', manager).send({ user: 'Administrator' });
    expect(res.status).toBe(403);
    expect(res.body.exc_type).toBe('PermissionError');
  }
  expect(await authStore()).toEqual(before);
  const still = await t.http
    .get('/api/method/frappe.auth.get_logged_user')
    .set('Authorization', t.adminToken);
  expect(still.body.message).toBe('Administrator');
});

test("a System Manager still generates other users' keys; Administrator generates its own", async () => {
  await createUser(t, 'other@example.com', ['All']);
  const other = await t.http
    .post('/api/method/frappe.core.doctype.user.user.generate_keys')
    .set('Authorization', manager)
    .send({ user: 'other@example.com' });
  expect(other.status).toBe(200);
  const own = await t.http
    .post('/api/method/frappe.core.doctype.user.user.generate_keys')
    .set('Authorization', t.adminToken)
    .send({ user: 'Administrator' });
  expect(own.status).toBe(200);
  t.adminToken = `token ${own.body.message.api_key}:${own.body.message.api_secret}`;
});

test.each([
  ['api_secret', { api_secret: 'chosen-secret-123' }],
  ['api_key and api_secret', { api_key: 'chosenkey', api_secret: 'chosen-secret-123' }],
  ['new_password', { new_password: 'taken-over-1' }],
  ['enabled', { enabled: 0 }],
])(
  'writing %s of the Administrator User by a System Manager is 403 and changes nothing',
  async (_l, body) => {
    const row = await adminRow();
    const auth = await authStore();
    for (const [method, path] of [
      ['put', '/api/resource/User/Administrator'],
      ['patch', '/api/v2/document/User/Administrator'],
    ] as const) {
      const res = await t.http[method](path).set('Authorization', manager).send(body);
      expect(res.status).toBe(403);
      expect(res.body.exc_type).toBe('PermissionError');
    }
    const viaClient = await t.http
      .post('/api/method/frappe.client.set_value')
      .set('Authorization', manager)
      .send({ doctype: 'User', name: 'Administrator', fieldname: body });
    expect(viaClient.status).toBe(403);
    expect(await adminRow()).toEqual(row);
    expect(await authStore()).toEqual(auth);
    // The chosen credentials authenticate nobody.
    const chosen = await t.http
      .get('/api/method/frappe.auth.get_logged_user')
      .set('Authorization', 'token chosenkey:chosen-secret-123');
    expect(chosen.status).toBe(401);
  },
);

test('deleting the Administrator User by a System Manager is 403', async () => {
  const res = await t.http.delete('/api/resource/User/Administrator').set('Authorization', manager);
  expect(res.status).toBe(403);
  expect(await adminRow()).toBeDefined();
});

test('Administrator may still change its own record', async () => {
  const res = await t.http
    .put('/api/resource/User/Administrator')
    .set('Authorization', t.adminToken)
    .send({ new_password: 'admin-new-password-1' });
  expect(res.status).toBe(200);
  expect(await readAuth(t.site.db.knex, 'User', 'Administrator', 'password')).toMatch(/^scrypt\$/);
  const keys = await regenerateKeys(t.site.db.knex, 'Administrator');
  t.adminToken = `token ${keys!.api_key}:${keys!.api_secret}`;
});
