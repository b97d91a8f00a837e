// frappe.client.* built-ins over the shared operations: same permissions and validation as the resource endpoints.
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';

let t: TestSite;
let reader: string;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
  reader = await createUser(t, 'client-reader@example.com', ['Probe Reader']);
  for (const [title, counter] of [
    ['fc-a', 1],
    ['fc-b', 2],
    ['fc-c', 3],
  ] as const) {
    await t.http
      .post('/api/v2/document/Method Probe')
      .set('Authorization', t.adminToken)
      .send({ title, counter })
      .expect(201);
  }
});
afterAll(() => t.close());

const admin = () => ({ Authorization: t.adminToken });
const m = (name: string) => `/api/method/frappe.client.${name}`;

test('get_list and get_count take v1 list parameters (filters as list or dict)', async () => {
  const list = await t.http
    .get(m('get_list'))
    .query({
      doctype: 'Method Probe',
      fields: '["title","counter"]',
      filters: '[["counter",">",1]]',
      order_by: 'counter desc',
    })
    .set(admin());
  expect(list.status).toBe(200);
  expect(list.body.message).toEqual([
    { title: 'fc-c', counter: 3 },
    { title: 'fc-b', counter: 2 },
  ]);
  const count = await t.http
    .post(m('get_count'))
    .set(admin())
    .send({ doctype: 'Method Probe', filters: { counter: 2 } });
  expect(count.body).toEqual({ message: 1 });
  const v2 = await t.http
    .get('/api/v2/method/frappe.client.get_count')
    .query({ doctype: 'Method Probe' })
    .set(admin());
  expect(v2.body).toEqual({ data: 3 });
});

test('get by name or by filters; get_value answers { fieldname: value }', async () => {
  const byName = await t.http.get(m('get')).query({ doctype: 'Method Probe', name: 'fc-a' }).set(admin());
  expect(byName.body.message).toMatchObject({ name: 'fc-a', counter: 1 });
  const byFilters = await t.http
    .get(m('get'))
    .query({ doctype: 'Method Probe', filters: '{"counter":2}' })
    .set(admin());
  expect(byFilters.body.message.name).toBe('fc-b');
  const value = await t.http
    .get(m('get_value'))
    .query({ doctype: 'Method Probe', fieldname: 'counter', filters: 'fc-c' })
    .set(admin());
  expect(value.body).toEqual({ message: { counter: 3 } });
  const values = await t.http
    .get(m('get_value'))
    .query({ doctype: 'Method Probe', fieldname: '["title","counter"]', filters: '{"counter":1}' })
    .set(admin());
  expect(values.body).toEqual({ message: { title: 'fc-a', counter: 1 } });
  const none = await t.http
    .get(m('get_value'))
    .query({ doctype: 'Method Probe', fieldname: 'counter', filters: 'nothing' })
    .set(admin());
  expect(none.status).toBe(200);
  // Frappe's `{}` for no match with as_dict (only None leaves `message` out).
  expect(none.body).toEqual({ message: {} });
  // As Frappe's doc.as_dict(): the document keeps its unset fields as null (v1's /api/resource leaves them out).
  expect(byName.body.message.note).toBeNull();
  const resource = await t.http.get('/api/resource/Method Probe/fc-a').set(admin());
  expect(Object.hasOwn(resource.body.data, 'note')).toBe(false);
});

test('get_value without as_dict: one field is its value, several a list, no match no message', async () => {
  const get = (query: Record<string, string>) =>
    t.http
      .get(m('get_value'))
      .query({ doctype: 'Method Probe', ...query })
      .set(admin());
  expect((await get({ fieldname: 'counter', filters: 'fc-c', as_dict: '0' })).body).toEqual({ message: 3 });
  expect((await get({ fieldname: '["title","counter"]', filters: 'fc-c', as_dict: 'False' })).body).toEqual({
    message: ['fc-c', 3],
  });
  const none = await get({ fieldname: 'counter', filters: 'nothing', as_dict: 'false' });
  expect([none.status, none.body]).toEqual([200, {}]);
  const bad = await get({ fieldname: 'counter', filters: 'fc-c', as_dict: 'maybe' });
  expect([bad.status, bad.body.exc_type]).toEqual([400, 'DataError']);
});

test('get_value and get of a Single DocType read its one document (filters compared, as Frappe)', async () => {
  await t.http
    .put('/api/v2/document/Widget Settings/Widget Settings')
    .set(admin())
    .send({ site_label: 'Single shop', default_qty: 5 })
    .expect(200);
  const get = (query: Record<string, string>) =>
    t.http
      .get(m('get_value'))
      .query({ doctype: 'Widget Settings', ...query })
      .set(admin());
  expect((await get({ fieldname: 'default_qty' })).body).toEqual({ message: { default_qty: 5 } });
  expect((await get({ fieldname: '["site_label","default_qty"]' })).body).toEqual({
    message: { site_label: 'Single shop', default_qty: 5 },
  });
  expect((await get({ fieldname: 'default_qty', as_dict: '0' })).body).toEqual({ message: 5 });
  expect((await get({ fieldname: 'default_qty', filters: '{"site_label":"Single shop"}' })).body).toEqual({
    message: { default_qty: 5 },
  });
  expect((await get({ fieldname: 'default_qty', filters: '{"site_label":"other"}' })).body).toEqual({
    message: {},
  });
  for (const fieldname of ['nope', 'api_password']) {
    const refused = await get({ fieldname });
    expect([fieldname, refused.status, refused.body.exc_type]).toEqual([fieldname, 400, 'DataError']);
  }
  const reader403 = await t.http
    .get(m('get_value'))
    .query({ doctype: 'Widget Settings', fieldname: 'default_qty' })
    .set('Authorization', reader);
  expect(reader403.status).toBe(403);
  const single = await t.http.get(m('get')).query({ doctype: 'Widget Settings' }).set(admin());
  expect(single.status).toBe(200);
  expect(single.body.message).toMatchObject({ name: 'Widget Settings', default_qty: 5 });
  const notSingle = await t.http.get(m('get')).query({ doctype: 'Method Probe' }).set(admin());
  expect([notSingle.status, notSingle.body.exc_type]).toEqual([400, 'DataError']);
});

test("reads take every verb, as Frappe's plain whitelist (PUT and DELETE too); writes only theirs", async () => {
  for (const verb of ['put', 'del'] as const) {
    const res = await t.http[verb](m('get_count')).query({ doctype: 'Method Probe' }).set(admin());
    expect([verb, res.status]).toEqual([verb, 200]);
  }
  const refused = await t.http.del(m('insert')).set(admin()).send({});
  expect([refused.status, refused.headers.allow]).toEqual([405, 'POST, PUT']);
});

test('Python booleans (True, False) are booleans in list parameters', async () => {
  const res = await t.http
    .get('/api/resource/Method Probe')
    .query({ fields: '["title"]', filters: '{"title":"fc-a"}', as_dict: 'False' })
    .set(admin());
  expect(res.status).toBe(200);
  expect(res.body.data).toEqual([['fc-a']]);
});

test('insert, save, set_value and delete write through the lifecycle (200 like every method)', async () => {
  const inserted = await t.http
    .post(m('insert'))
    .set(admin())
    .send({ doc: { doctype: 'Method Probe', title: 'fc-new', counter: 5 } });
  expect(inserted.status).toBe(200);
  expect(inserted.body.message).toMatchObject({ name: 'fc-new', counter: 5 });
  const saved = await t.http
    .post(m('save'))
    .set(admin())
    .send({ doc: JSON.stringify({ doctype: 'Method Probe', name: 'fc-new', counter: 6 }) });
  expect(saved.body.message.counter).toBe(6);
  const set = await t.http
    .post(m('set_value'))
    .set(admin())
    .send({ doctype: 'Method Probe', name: 'fc-new', fieldname: 'counter', value: 7 });
  expect(set.body.message.counter).toBe(7);
  const setMany = await t.http
    .post(m('set_value'))
    .set(admin())
    .send({ doctype: 'Method Probe', name: 'fc-new', fieldname: { counter: 8, note: 'n' } });
  expect(setMany.body.message).toMatchObject({ counter: 8, note: 'n' });
  const deleted = await t.http
    .post(m('delete'))
    .set(admin())
    .send({ doctype: 'Method Probe', name: 'fc-new' });
  expect(deleted.status).toBe(200);
  expect(await t.site.db.knex('tabMethod Probe').where({ name: 'fc-new' }).count({ n: '*' }).first()).toEqual(
    { n: 0 },
  );
});

test('#34 set_value refuses identity fields and docstatus; nothing changes', async () => {
  const res = await t.http
    .post(m('set_value'))
    .set(admin())
    .send({ doctype: 'Method Probe', name: 'fc-a', fieldname: { owner: 'x', docstatus: 1 } });
  expect(res.status).toBe(400);
  expect(res.body.exception).toContain('owner, docstatus');
  expect(await t.site.db.knex('tabMethod Probe').where({ name: 'fc-a' }).first('owner', 'docstatus')).toEqual(
    { owner: 'Administrator', docstatus: 0 },
  );
});

test("the caller's permissions apply: a reader may read, not write", async () => {
  expect(
    (await t.http.get(m('get_list')).query({ doctype: 'Method Probe' }).set('Authorization', reader)).status,
  ).toBe(200);
  const refused = await t.http
    .post(m('set_value'))
    .set('Authorization', reader)
    .send({ doctype: 'Method Probe', name: 'fc-a', fieldname: 'counter', value: 99 });
  expect(refused.status).toBe(403);
  const insert = await t.http
    .post(m('insert'))
    .set('Authorization', reader)
    .send({ doc: { doctype: 'Method Probe', title: 'fc-reader' } });
  expect(insert.status).toBe(403);
  expect((await t.http.get(m('get_list')).query({ doctype: 'Method Probe' })).status).toBe(401);
});

test('missing or malformed arguments are 400 naming them; writes refuse GET (405)', async () => {
  expect((await t.http.get(m('get_list')).set(admin())).body.exception).toContain(
    'Missing argument: doctype',
  );
  expect(
    (
      await t.http
        .post(m('insert'))
        .set(admin())
        .send({ doc: { title: 'x' } })
    ).body.exception,
  ).toContain('Argument doc');
  expect((await t.http.post(m('insert')).set(admin()).send({ doc: '{broken' })).status).toBe(400);
  expect(
    (
      await t.http
        .get(m('get_list'))
        .query({ doctype: 'Method Probe', filters: '[["counter","; drop",1]]' })
        .set(admin())
    ).status,
  ).toBe(400);
  const get = await t.http.get(m('delete')).query({ doctype: 'Method Probe', name: 'fc-a' }).set(admin());
  expect(get.status).toBe(405);
  expect(await t.site.db.knex('tabMethod Probe').where({ name: 'fc-a' }).count({ n: '*' }).first()).toEqual({
    n: 1,
  });
});

test('submit, cancel and get_single_value (frappe-js-sdk calls them too)', async () => {
  const created = await t.http
    .post('/api/v2/document/Gadget Order')
    .set(admin())
    .send({ customer: 'fc-submit', qty: 1, parts: [{ part_name: 'p' }] });
  const name = created.body.data.name as string;
  const submitted = await t.http
    .post(m('submit'))
    .set(admin())
    .send({ doc: { doctype: 'Gadget Order', name, remarks: 'sent with submit' } });
  expect(submitted.status).toBe(200);
  expect(submitted.body.message).toMatchObject({ name, docstatus: 1, remarks: 'sent with submit' });
  const cancelled = await t.http.post(m('cancel')).set(admin()).send({ doctype: 'Gadget Order', name });
  expect(cancelled.status).toBe(200);
  // As Frappe's client.cancel: the cancelled document (frappe-js-sdk's db.cancel returns it).
  expect(cancelled.body.message).toMatchObject({ name, docstatus: 2 });
  expect((await t.site.db.knex('tabGadget Order').where({ name }).first('docstatus')).docstatus).toBe(2);
  await t.http
    .put('/api/v2/document/Widget Settings/Widget Settings')
    .set(admin())
    .send({ site_label: 'Shop', default_qty: 4 })
    .expect(200);
  expect(
    (
      await t.http
        .get(m('get_single_value'))
        .query({ doctype: 'Widget Settings', field: 'default_qty' })
        .set(admin())
    ).body,
  ).toEqual({ message: 4 });
  expect(
    (
      await t.http
        .get(m('get_single_value'))
        .query({ doctype: 'Widget Settings', field: 'nope' })
        .set(admin())
    ).status,
  ).toBe(400);
  expect(
    (
      await t.http
        .get(m('get_single_value'))
        .query({ doctype: 'Widget Settings', field: 'api_password' })
        .set(admin())
    ).status,
  ).toBe(400);
  expect(
    (await t.http.post(m('cancel')).set('Authorization', reader).send({ doctype: 'Gadget Order', name }))
      .status,
  ).toBe(403);
});
