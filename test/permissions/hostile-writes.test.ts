// Hostile write bodies and object-level attacks by ordinary users (security.md 6.4 #33, #34, #36 — the writable
// variant of #36 is in permission-matrix.test.ts; OWASP API1, API5):
// refused or ignored, and nothing changes outside what the user may change.
import { countRows } from '../api/api-version';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';

let t: TestSite;
let u1: string;
let u2: string;
let todo: Record<string, any>;

beforeAll(async () => {
  t = await createTestSite();
  u1 = await createUser(t, 'u1@hostile.test', []);
  u2 = await createUser(t, 'u2@hostile.test', []);
  const res = await t.http
    .post('/api/resource/ToDo')
    .set('Authorization', u1)
    .send({ description: 'T1 of u1' });
  expect(res.status).toBe(201);
  todo = res.body.data;
});
afterAll(() => t.close());

const stored = () => t.site.db.knex('tabToDo').where({ name: todo.name }).first();
const roleRows = () => countRows(t, 'Has Role');

test('#33 the URL’s DocType wins: a ToDo body naming User creates no User and grants no role', async () => {
  const [users, roles] = [await countRows(t, 'User'), await roleRows()];
  for (const path of ['/api/resource/ToDo', '/api/v2/document/ToDo']) {
    const res = await t.http
      .post(path)
      .set('Authorization', u1)
      .send({
        doctype: 'User',
        name: 'x',
        email: 'x@hostile.test',
        description: 'd',
        roles: [{ role: 'System Manager' }],
      });
    expect(res.status === 201 ? res.body.data.doctype : res.status).toBe(res.status === 201 ? 'ToDo' : 400);
  }
  expect(await countRows(t, 'User')).toBe(users);
  expect(await roleRows()).toBe(roles);
  expect(await countRows(t, 'User', { name: 'x@hostile.test' })).toBe(0);
});

test('#34 system fields and flags in an update body: never applied', async () => {
  const before = await stored();
  for (const path of [`/api/resource/ToDo/${todo.name}`, `/api/v2/document/ToDo/${todo.name}`]) {
    const res = await t.http
      .put(path)
      .set('Authorization', u1)
      .send({
        owner: 'Administrator',
        creation: '2000-01-01',
        modified_by: 'x',
        flags: { ignore_permissions: true },
        name: 'T2',
        __islocal: 1,
        description: 'changed',
      });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      name: todo.name,
      owner: 'u1@hostile.test',
      modified_by: 'u1@hostile.test',
    });
    const docstatus = await t.http.put(path).set('Authorization', u1).send({ docstatus: 2 });
    expect(docstatus.status).toBe(400);
  }
  const after = await stored();
  expect([after.owner, after.creation, after.name, Number(after.docstatus)]).toEqual([
    before.owner,
    before.creation,
    before.name,
    0,
  ]);
  expect(await countRows(t, 'ToDo', { name: 'T2' })).toBe(0);
});

test('#34 flags cannot lift permissions: another user’s ToDo stays refused', async () => {
  const before = await stored();
  const res = await t.http
    .put(`/api/v2/document/ToDo/${todo.name}`)
    .set('Authorization', u2)
    .send({ description: 'taken', flags: { ignore_permissions: true } });
  expect(res.status).toBe(403);
  expect(await stored()).toEqual(before);
});

test('#36 on User: a child row naming another parent grants no role to anyone (User is not writable by the user)', async () => {
  const roles = await roleRows();
  const res = await t.http
    .put('/api/v2/document/User/u1@hostile.test')
    .set('Authorization', u1)
    .send({
      roles: [{ role: 'System Manager', parent: 'Administrator', parenttype: 'User', parentfield: 'roles' }],
    });
  expect(res.status).toBe(403);
  expect(await roleRows()).toBe(roles);
  expect(await countRows(t, 'Has Role', { parent: 'u1@hostile.test', role: 'System Manager' })).toBe(0);
});

test('API1: another user’s ToDo is 403 on every surface and invisible to list and count', async () => {
  const before = await stored();
  for (const res of [
    await t.http.get(`/api/resource/ToDo/${todo.name}`).set('Authorization', u2),
    await t.http.get(`/api/v2/document/ToDo/${todo.name}`).set('Authorization', u2),
    await t.http.get(`/api/v2/document/ToDo/${todo.name}/copy`).set('Authorization', u2),
    await t.http.put(`/api/resource/ToDo/${todo.name}`).set('Authorization', u2).send({ description: 'x' }),
    await t.http.delete(`/api/resource/ToDo/${todo.name}`).set('Authorization', u2),
    await t.http.delete(`/api/v2/document/ToDo/${todo.name}`).set('Authorization', u2),
  ]) {
    expect(res.status).toBe(403);
    expect(res.body.exc_type).toBe('PermissionError');
  }
  expect(await stored()).toEqual(before);
  const list = await t.http.get('/api/v2/document/ToDo').set('Authorization', u2);
  expect(list.body.data).toEqual([]);
  const count = await t.http
    .get('/api/v2/doctype/ToDo/count')
    .query({ filters: JSON.stringify({ name: todo.name }) })
    .set('Authorization', u2);
  expect(count.body.data).toBe(0);
  const own = await t.http.get('/api/v2/doctype/ToDo/count').set('Authorization', u1);
  expect(own.body.data).toBeGreaterThanOrEqual(1);
});

test('API5: an ordinary user cannot create users, server scripts or roles, nor change System Settings', async () => {
  const counts = [
    await countRows(t, 'User'),
    await countRows(t, 'Server Script'),
    await countRows(t, 'Role'),
  ];
  for (const res of [
    await t.http
      .post('/api/resource/User')
      .set('Authorization', u1)
      .send({ email: 'evil@hostile.test', first_name: 'e', roles: [{ role: 'System Manager' }] }),
    await t.http
      .post('/api/v2/document/Server Script')
      .set('Authorization', u1)
      .send({ name: 'evil', script_type: 'API', api_method: 'evil', script: '1' }),
    await t.http.post('/api/v2/document/Role').set('Authorization', u1).send({ role_name: 'Evil' }),
    await t.http
      .put('/api/v2/document/System Settings/System Settings')
      .set('Authorization', u1)
      .send({ log_api_requests: 1 }),
    await t.http
      .put('/api/v2/document/User/u1@hostile.test')
      .set('Authorization', u1)
      .send({ first_name: 'me' }),
  ]) {
    expect(res.status).toBe(403);
    expect(res.body.exc_type).toBe('PermissionError');
  }
  expect([
    await countRows(t, 'User'),
    await countRows(t, 'Server Script'),
    await countRows(t, 'Role'),
  ]).toEqual(counts);
});
