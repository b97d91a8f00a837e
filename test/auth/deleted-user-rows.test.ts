// What goes with a deleted document, as Frappe's on_trash: a User's own rows (its User Permissions, its rows in Note
// Seen By, its OAuth codes and tokens) and a Data Import's logs are deleted with it and do not stop its delete; any
// other document that links to a User still does (runtime/back-links).
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite();
});
afterAll(() => t.close());

const admin = () => ({ Authorization: t.adminToken });
const post = async (doctype: string, body: Record<string, unknown>) => {
  const res = await t.http.post(`/api/v2/document/${doctype}`).set(admin()).send(body);
  expect(res.status).toBe(201);
  return res.body.data as Record<string, unknown>;
};
const del = (doctype: string, name: string) =>
  t.http.delete(`/api/v2/document/${doctype}/${name}`).set(admin());

test("a user's User Permissions and Note Seen By rows go with it", async () => {
  await createUser(t, 'leaving@example.com', []);
  await post('User Permission', { user: 'leaving@example.com', allow: 'User', for_value: 'Administrator' });
  const note = await post('Note', { title: 'seen', seen_by: [{ user: 'leaving@example.com' }] });
  expect((await del('User', 'leaving@example.com')).status).toBe(202);
  const knex = t.site.db.knex;
  expect(await knex('tabUser Permission').where({ user: 'leaving@example.com' })).toEqual([]);
  expect(await knex('tabNote Seen By').where({ user: 'leaving@example.com' })).toEqual([]);
  expect(await knex('tabNote').where({ name: note.name })).toHaveLength(1);
});

test('a user another document links to is refused: disable it instead', async () => {
  await createUser(t, 'app-owner@example.com', []);
  await post('OAuth Client', {
    app_name: 'an app',
    user: 'app-owner@example.com',
    client_type: 'Confidential',
    scopes: 'openid',
    grant_type: 'Authorization Code',
    redirect_uris: 'https://app.example/cb',
    default_redirect_uri: 'https://app.example/cb',
  });
  const refused = await del('User', 'app-owner@example.com');
  expect(refused.status).toBe(400);
  expect(refused.body).toMatchObject({ exc_type: 'LinkExistsError' });
  expect(refused.body.exception).toContain('You can disable this User instead of deleting it.');
});

test("a Data Import's logs go with it", async () => {
  const imported = await post('Data Import', {
    reference_doctype: 'ToDo',
    import_type: 'Insert New Records',
  });
  await t.site.db.knex('tabData Import Log').insert({
    name: 'log-of-an-import',
    data_import: imported.name,
    owner: 'Administrator',
    creation: '2026-01-01 00:00:00',
    modified: '2026-01-01 00:00:00',
    modified_by: 'Administrator',
    docstatus: 0,
    idx: 0,
  });
  expect((await del('Data Import', String(imported.name))).status).toBe(202);
  expect(await t.site.db.knex('tabData Import Log').where({ data_import: imported.name })).toEqual([]);
});
