// A child DocType is not listed on its own: Frappe answers PermissionError (403), its rows being read through the
// parent (db_query's parent check), on every listing path: v1 and v2 lists, v2 count, frappe.client.get_list/get_count.
import { countRows, expectErrorBody } from './api-version';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, type TestSite } from '../helpers/test-site';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
});
afterAll(() => t.close());

const CHILD = encodeURIComponent('Widget Part');

test.each([
  [1, `/api/resource/${CHILD}`],
  [1, `/api/v1/resource/${CHILD}?fields=["*"]`],
  [2, `/api/v2/document/${CHILD}`],
  [2, `/api/v2/doctype/${CHILD}/count`],
  [1, `/api/method/frappe.client.get_list?doctype=${CHILD}`],
  [1, `/api/method/frappe.client.get_count?doctype=${CHILD}`],
  [2, `/api/v2/method/frappe.client.get_list?doctype=${CHILD}`],
] as const)('v%s GET %s is 403 PermissionError', async (version, url) => {
  const res = await t.http.get(url).set('Authorization', t.adminToken);
  expect(res.status).toBe(403);
  expectErrorBody(res.body, version, 'PermissionError');
  expect(res.body.exception).toContain('Widget Part is a child table');
});

// A row by name is read and written through its parent (test/api/child-row-by-name); what has no meaning for a row
// (copy, submit, cancel, bulk operations, insert_many) stays 403 saying why.
test.each([
  [2, 'get', `/api/v2/document/${CHILD}/row-1/copy`, {}],
  [2, 'post', `/api/v2/document/${CHILD}/bulk_delete`, { names: ['row-1'] }],
  [2, 'post', `/api/v2/document/${CHILD}/bulk_update`, { docs: [{ name: 'row-1', qty: 1 }] }],
  [1, 'post', '/api/method/frappe.client.cancel', { doctype: 'Widget Part', name: 'row-1' }],
  [
    1,
    'post',
    '/api/method/frappe.client.insert_many',
    { docs: [{ doctype: 'Widget Part', part_name: 'x' }] },
  ],
] as const)('v%s %s %s is 403 saying why', async (version, verb, url, body) => {
  const res = await t.http[verb](url).set('Authorization', t.adminToken).send(body);
  expect(res.status).toBe(403);
  expectErrorBody(res.body, version, 'PermissionError');
  expect(res.body.exception).toContain('Widget Part is a child table: its rows are read and written through');
});

test('a child DocType meta is still answered', async () => {
  const res = await t.http.get(`/api/v2/doctype/${CHILD}/meta`).set('Authorization', t.adminToken);
  expect(res.status).toBe(200);
});

test('the child rows stay readable through the parent document', async () => {
  const created = await t.http
    .post('/api/v2/document/Widget')
    .set('Authorization', t.adminToken)
    .send({ title: 'with parts', parts: [{ part_name: 'bolt', qty: 2 }] });
  expect(created.status).toBe(201);
  const res = await t.http
    .get(`/api/v2/document/Widget/${created.body.data.name}`)
    .set('Authorization', t.adminToken);
  expect(res.body.data.parts).toMatchObject([{ part_name: 'bolt', qty: 2 }]);
  expect(await countRows(t, 'Widget Part', { parent: created.body.data.name })).toBe(1);
});

test('a parent DocType is still listed (200)', async () => {
  const res = await t.http.get('/api/v2/document/Widget').set('Authorization', t.adminToken);
  expect(res.status).toBe(200);
});

test('an unknown DocType stays 404', async () => {
  const res = await t.http.get('/api/v2/document/No%20Such%20Thing').set('Authorization', t.adminToken);
  expect(res.status).toBe(404);
});
