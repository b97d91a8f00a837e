// A script never does what its author could not (issue #36): a System Manager's API or DocType Event script that
// Administrator triggers makes its calls as the System Manager, so it cannot edit Administrator's record by waiting for
// Administrator to run it; Administrator's own scripts keep Administrator's rights, and the rolled-back attempt leaves
// nothing behind.
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';

let t: TestSite;
let sm: string;
beforeAll(async () => {
  t = await createTestSite();
  sm = await createUser(t, 'sm@author.test', ['System Manager']);
});
afterAll(() => t.close());

const SET_ADMIN_NAME = 'frappe.db.set_value("User", "Administrator", "first_name", "pwned")';
const adminName = async () =>
  (
    (await t.site.db.knex('tabUser').where({ name: 'Administrator' }).first('first_name')) as {
      first_name: string;
    }
  ).first_name;

async function saveAs(auth: string, fields: Record<string, unknown>): Promise<string> {
  const res = await t.http.post('/api/resource/Server Script').set('Authorization', auth).send(fields);
  expect(res.status).toBe(201);
  return res.body.data.name as string;
}

test("the System Manager's own call is refused (the premise)", async () => {
  const res = await t.http
    .put('/api/resource/User/Administrator')
    .set('Authorization', sm)
    .send({ first_name: 'pwned' });
  expect(res.status).toBe(403);
});

test("Administrator calling a System Manager's API script: its writes act as the System Manager", async () => {
  const before = await adminName();
  await saveAs(sm, {
    name: 'sm-api-escalation',
    script_type: 'API',
    api_method: 'sm_escalate',
    script: SET_ADMIN_NAME,
  });
  const res = await t.http.post('/api/method/sm_escalate').set('Authorization', t.adminToken).send({});
  expect(res.status).toBe(403);
  expect(res.body.exc_type).toBe('PermissionError');
  expect(await adminName()).toBe(before);
});

test("Administrator saving a ToDo with a System Manager's Before Save script: refused, nothing written", async () => {
  const before = await adminName();
  const todos = await t.site.db.knex('tabToDo').count({ n: '*' });
  await saveAs(sm, {
    name: 'sm-event-escalation',
    script_type: 'DocType Event',
    reference_doctype: 'ToDo',
    doctype_event: 'Before Save',
    script: `if (doc.description === "trigger") ${SET_ADMIN_NAME}`,
  });
  const res = await t.http
    .post('/api/resource/ToDo')
    .set('Authorization', t.adminToken)
    .send({ description: 'trigger' });
  expect(res.status).toBe(403);
  expect(await adminName()).toBe(before);
  expect(await t.site.db.knex('tabToDo').count({ n: '*' })).toEqual(todos);
  // The same script's calls that its author may make still work when Administrator triggers it.
  const ok = await t.http
    .post('/api/resource/ToDo')
    .set('Authorization', t.adminToken)
    .send({ description: 'plain' });
  expect(ok.status).toBe(201);
});

test("Administrator's own script keeps Administrator's rights", async () => {
  await saveAs(t.adminToken, {
    name: 'admin-api',
    script_type: 'API',
    api_method: 'admin_rename',
    script: 'frappe.db.set_value("User", "Administrator", "first_name", "Admin")',
  });
  const res = await t.http.post('/api/method/admin_rename').set('Authorization', t.adminToken).send({});
  expect(res.status).toBe(200);
  expect(await adminName()).toBe('Admin');
});
