// frappe.desk.search.search_link, Frappe's Link search (a Link field's autocomplete, frappe-react-sdk's useSearch):
// name or a `search_fields` field containing `txt`, as `{value, description}`, with the caller's read permission.
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';

let t: TestSite;
let reader: string;
let outsider: string;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
  reader = await createUser(t, 'search-reader@example.com', ['Probe Reader']);
  outsider = await createUser(t, 'search-outsider@example.com', []);
  for (const [title, counter, note] of [
    ['ls-apple', 1, 'red fruit'],
    ['ls-banana', 2, 'yellow'],
    ['ls-cherry', 3, null],
  ] as const) {
    await t.http
      .post('/api/v2/document/Method Probe')
      .set('Authorization', t.adminToken)
      .send({ title, counter, note })
      .expect(201);
  }
});
afterAll(() => t.close());

const search = (query: Record<string, string>, auth = t.adminToken) => {
  const req = t.http
    .get('/api/method/frappe.desk.search.search_link')
    .query({ doctype: 'Method Probe', ...query });
  return auth ? req.set('Authorization', auth) : req;
};

test('matches name and the text search fields; the description is their values (search_fields order)', async () => {
  expect((await search({ txt: 'yellow' })).body).toEqual({
    message: [{ value: 'ls-banana', description: 'yellow, 2' }],
  });
  expect((await search({ txt: 'cherry' })).body).toEqual({
    message: [{ value: 'ls-cherry', description: '3' }],
  });
  const all = await search({ txt: 'ls-' });
  expect(all.body.message.map((r: { value: string }) => r.value).sort()).toEqual([
    'ls-apple',
    'ls-banana',
    'ls-cherry',
  ]);
  expect((await search({ txt: 'ls-', page_length: '2' })).body.message).toHaveLength(2);
  expect((await search({ txt: 'ls', filters: '{"counter":1}' })).body.message).toEqual([
    { value: 'ls-apple', description: 'red fruit, 1' },
  ]);
  // The meta shows the search fields Frappe's way (a misspelt one is left out).
  const meta = await t.http.get('/api/v2/doctype/Method Probe/meta').set('Authorization', t.adminToken);
  expect(meta.body.data.search_fields).toBe('note,counter');
});

test("the caller's read permission applies: a reader searches, others 403, a guest 401", async () => {
  expect((await search({ txt: 'apple' }, reader)).body.message).toEqual([
    { value: 'ls-apple', description: 'red fruit, 1' },
  ]);
  expect((await search({ txt: 'apple' }, outsider)).status).toBe(403);
  expect((await search({ txt: 'apple' }, '')).status).toBe(401);
});

test.each([
  ['page_length 0', { txt: 'a', page_length: '0' }, 400],
  ['page_length over 500', { txt: 'a', page_length: '100000' }, 400],
  ['a custom query method', { txt: 'a', query: 'os.system' }, 400],
  ['no doctype', { doctype: '' }, 400],
  ['an unknown DocType', { doctype: 'No Such Thing' }, 404],
  ['filters that are not JSON filters', { txt: 'a', filters: '{"no_such_field":1}' }, 400],
])('%s → the status given, nothing else answered', async (_label, query, status) => {
  const res = await search(query as Record<string, string>);
  expect(res.status).toBe(status);
  expect(res.body.exc_type).toEqual(expect.any(String));
});

test('txt is a bound value: SQL in it matches nothing; % in it is a wildcard, as in Frappe', async () => {
  expect((await search({ txt: "' OR '1'='1" })).body).toEqual({ message: [] });
  expect((await search({ txt: 'ls-apple%' })).body.message).toEqual([
    { value: 'ls-apple', description: 'red fruit, 1' },
  ]);
});
