// Link, Dynamic Link and unique checks: a missing target is 400 LinkValidationError, a unique clash 409; nothing stored either way.
import { countRows } from '../api/api-version';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, DB_KIND, type TestSite } from '../helpers/test-site';

let t: TestSite;
let todo: string;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
  todo = (
    await t.http.post('/api/resource/ToDo').set('Authorization', t.adminToken).send({ description: 'target' })
  ).body.data.name;
});
afterAll(() => t.close());

const post = (body: object) =>
  t.http
    .post('/api/v2/document/Widget')
    .set('Authorization', t.adminToken)
    .send({ title: 'links', ...body });

test('a Link to an existing document is stored', async () => {
  const res = await post({ todo });
  expect(res.status).toBe(201);
  expect(res.body.data.todo).toBe(todo);
});

test.each([
  ['a Link to a missing document', () => ({ todo: 'no-such-todo' }), 'no-such-todo'],
  ['a Link in a child row', () => ({ parts: [{ part_name: 'p', todo: 'ghost-todo' }] }), 'ghost-todo'],
  ['a Dynamic Link to a missing document', () => ({ ref_type: 'ToDo', ref_name: 'ghost' }), 'ghost'],
  [
    'a Dynamic Link whose DocType is unknown',
    () => ({ ref_type: 'No Such DocType', ref_name: todo }),
    'No Such DocType',
  ],
  ['a Dynamic Link without its DocType', () => ({ ref_name: todo }), 'Reference Name'],
  ['a Link that is an injection attempt', () => ({ todo: "x' OR '1'='1" }), "x' OR '1'='1"],
])('%s is 400 LinkValidationError naming the value, nothing stored', async (_label, body, shown) => {
  const [widgets, parts] = [await countRows(t, 'Widget'), await countRows(t, 'Widget Part')];
  const res = await post(body());
  expect(res.status).toBe(400);
  expect(res.body.exc_type).toBe('LinkValidationError');
  expect(res.body.exception).toContain(shown);
  expect([await countRows(t, 'Widget'), await countRows(t, 'Widget Part')]).toEqual([widgets, parts]);
});

test('a Dynamic Link follows the DocType named in its options field', async () => {
  const widget = (await post({})).body.data.name as string;
  for (const [refType, refName] of [
    ['ToDo', todo],
    ['Widget', widget],
  ]) {
    const res = await post({ ref_type: refType, ref_name: refName });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ ref_type: refType, ref_name: refName });
  }
  expect((await post({ ref_type: 'Widget', ref_name: todo })).status).toBe(400);
});

test('an update to a missing Link target is refused and the stored link stays', async () => {
  const { body } = await post({ todo });
  const res = await t.http
    .put(`/api/v2/document/Widget/${body.data.name}`)
    .set('Authorization', t.adminToken)
    .send({ todo: 'gone' });
  expect(res.status).toBe(400);
  expect(res.body.exc_type).toBe('LinkValidationError');
  expect(await countRows(t, 'Widget', { name: body.data.name, todo })).toBe(1);
});

test('a unique value used twice is 409 DuplicateEntryError; the second document is not stored', async () => {
  expect((await post({ code: 'UNIQUE-1' })).status).toBe(201);
  const res = await post({ code: 'UNIQUE-1' });
  expect(res.status).toBe(409);
  expect(res.body.exc_type).toBe('DuplicateEntryError');
  expect(await countRows(t, 'Widget', { code: 'UNIQUE-1' })).toBe(1);
});

test("an update taking another document's unique value is 409 and changes nothing", async () => {
  await post({ code: 'UNIQUE-A' });
  const { body } = await post({ code: 'UNIQUE-B' });
  const res = await t.http
    .put(`/api/v2/document/Widget/${body.data.name}`)
    .set('Authorization', t.adminToken)
    .send({ code: 'UNIQUE-A' });
  expect(res.status).toBe(409);
  expect(res.body.exc_type).toBe('DuplicateEntryError');
  expect(await countRows(t, 'Widget', { name: body.data.name, code: 'UNIQUE-B' })).toBe(1);
});

test('saving a document with its own unique value again is fine; empty unique values never clash', async () => {
  const { body } = await post({ code: 'MINE' });
  const res = await t.http
    .put(`/api/v2/document/Widget/${body.data.name}`)
    .set('Authorization', t.adminToken)
    .send({ code: 'MINE', qty: 9 });
  expect(res.status).toBe(200);
  expect((await post({})).status).toBe(201);
  expect((await post({})).status).toBe(201);
});

test('a Link another case (or accent) finds holds the name as stored on MariaDB, as Frappe; elsewhere it is 400', async () => {
  const customer = await t.http
    .post('/api/v2/document/Query Customer')
    .set('Authorization', t.adminToken)
    .send({ customer_name: 'Acme Links' });
  expect(customer.status).toBe(201);
  const stored = customer.body.data.name as string;
  const before = await countRows(t, 'Query Order');
  const res = await t.http
    .post('/api/v2/document/Query Order')
    .set('Authorization', t.adminToken)
    .send({ title: 'case', customer: stored.toUpperCase(), lines: [] });
  if (DB_KIND !== 'mysql') {
    expect(res.status).toBe(400);
    expect(res.body.exc_type).toBe('LinkValidationError');
    expect(await countRows(t, 'Query Order')).toBe(before);
    return;
  }
  expect(res.status).toBe(201);
  expect(res.body.data.customer).toBe(stored);
  const row = await t.site.db.knex('tabQuery Order').where({ name: res.body.data.name }).first('customer');
  expect(row.customer).toBe(stored);
});
