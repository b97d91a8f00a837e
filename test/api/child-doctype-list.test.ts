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

test.each([
  [1, 'get', `/api/resource/${CHILD}/row-1`],
  [1, 'put', `/api/resource/${CHILD}/row-1`],
  [1, 'delete', `/api/resource/${CHILD}/row-1`],
  [1, 'post', `/api/resource/${CHILD}`],
  [2, 'get', `/api/v2/document/${CHILD}/row-1`],
  [2, 'patch', `/api/v2/document/${CHILD}/row-1`],
  [2, 'delete', `/api/v2/document/${CHILD}/row-1`],
  [1, 'get', `/api/method/frappe.client.get?doctype=${CHILD}&name=row-1`],
  [1, 'post', `/api/method/frappe.client.set_value?doctype=${CHILD}&name=row-1&fieldname=qty&value=9`],
] as const)(
  'v%s %s %s (a row by name) is 403 saying why, not 404 for a DocType that exists',
  async (version, verb, url) => {
    const req = t.http[verb](url).set('Authorization', t.adminToken);
    const res = url.includes('/api/method/') ? await req : await req.send({ qty: 9 });
    expect(res.status).toBe(403);
    expectErrorBody(res.body, version, 'PermissionError');
    expect(res.body.exception).toContain(
      'Widget Part is a child table: its rows are read and written through',
    );
  },
);

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
