// A controller's custom query through a generated objection model (generated/models/<slug>.ts) on `call.knex`: it reads
// the rows the document API wrote, child rows through the model's relation, on the suite's database (SQLite, or
// MariaDB with TEST_MYSQL_URL); user text is bound.
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, type TestSite } from '../helpers/test-site';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
  for (const [title, seen] of [
    ['model query b', ['Administrator']],
    ['model query a', ['Administrator', 'Guest']],
    ['other note', []],
  ] as const) {
    const res = await t.http
      .post('/api/v2/document/Note')
      .set('Authorization', t.adminToken)
      .send({ title, public: 1, seen_by: seen.map((user) => ({ user })) });
    expect(res.status).toBe(201);
  }
});
afterAll(() => t.close());

const seenNotes = (contains: string) =>
  t.http.get('/api/v2/method/Method Probe/seen_notes').query({ contains }).set('Authorization', t.adminToken);

test('the model reads the documents and their child rows, in its own order', async () => {
  const res = await seenNotes('model query');
  expect(res.status).toBe(200);
  expect(res.body.data).toEqual([
    { title: 'model query a', seen_by: ['Administrator', 'Guest'] },
    { title: 'model query b', seen_by: ['Administrator'] },
  ]);
});

test('hostile text is bound: it matches nothing and changes nothing', async () => {
  for (const hostile of ["' or '1'='1", "%'; drop table `tabNote`; --", '`', '\\']) {
    const res = await seenNotes(hostile);
    expect({ hostile, status: res.status, data: res.body.data }).toEqual({ hostile, status: 200, data: [] });
  }
  const count = await t.http.get('/api/v2/doctype/Note/count').set('Authorization', t.adminToken);
  expect(count.body.data).toBe(3);
});

test('a missing argument is refused before the query runs', async () => {
  const res = await t.http.get('/api/v2/method/Method Probe/seen_notes').set('Authorization', t.adminToken);
  expect({ status: res.status, exc: res.body.exc_type }).toEqual({ status: 400, exc: 'DataError' });
});
