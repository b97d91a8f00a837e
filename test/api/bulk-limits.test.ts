// A bulk request is bounded (issue #36 item 3): more than `max_bulk_items` items is a 413 before any item runs or a
// job is queued, on every bulk entry point; at the limit it runs as before.
import { SYSTEM_TABLES } from '../../runtime/db/migrate';
import { createTestSite, type TestSite } from '../helpers/test-site';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite({ site: { max_bulk_items: 3, bulk_operation_async_threshold: 1 } });
});
afterAll(() => t.close());

const post = (path: string, body: unknown) =>
  t.http
    .post(path)
    .set('Authorization', t.adminToken)
    .send(body as object);
const todos = async () => Number((await t.site.db.knex('tabToDo').count({ n: '*' }))[0]?.n);
const jobs = async () => Number((await t.site.db.knex(SYSTEM_TABLES.jobs).count({ n: '*' }))[0]?.n);

const four = [1, 2, 3, 4].map((i) => ({ description: `bulk ${i}` }));

test.each([
  ['/api/v2/document/ToDo/bulk_insert', { docs: four }],
  ['/api/v2/document/ToDo/bulk_update', { docs: four.map((d, i) => ({ ...d, name: `n${i}` })) }],
  ['/api/v2/document/ToDo/bulk_delete', { names: ['a', 'b', 'c', 'd'] }],
  ['/api/v2/method/bulk_update', { docs: four.map((d, i) => ({ ...d, doctype: 'ToDo', name: `n${i}` })) }],
  ['/api/v2/method/bulk_delete', { docs: four.map((_, i) => ({ doctype: 'ToDo', name: `n${i}` })) }],
  [
    '/api/method/frappe.client.bulk_update',
    { docs: four.map((d, i) => ({ ...d, doctype: 'ToDo', docname: `n${i}` })) },
  ],
])('%s with one item over max_bulk_items: 413, nothing run, nothing queued', async (path, body) => {
  const [before, queued] = [await todos(), await jobs()];
  const res = await post(path, body);
  expect(res.status).toBe(413);
  expect(res.type).toBe('application/json');
  expect(JSON.stringify(res.body)).toContain('at most 3 items (max_bulk_items); this one has 4');
  expect(await todos()).toBe(before);
  expect(await jobs()).toBe(queued);
});

test('at the limit the request is taken (queued as a job over the async threshold)', async () => {
  const res = await post('/api/v2/document/ToDo/bulk_insert', { docs: four.slice(0, 3) });
  expect(res.status).toBe(202);
  expect(res.body.data.job_id).toEqual(expect.any(String));
});

test('a million-item request under the body limit is refused by the default cap', async () => {
  const site = await createTestSite();
  try {
    const names = Array.from({ length: 1_000_001 }, (_, i) => String(i % 10));
    const res = await site.http
      .post('/api/v2/document/ToDo/bulk_delete')
      .set('Authorization', site.adminToken)
      .send({ names });
    expect(res.status).toBe(413);
    expect(res.body.exc_type).toBe('RequestEntityTooLargeError');
    expect(Number((await site.site.db.knex(SYSTEM_TABLES.jobs).count({ n: '*' }))[0]?.n)).toBe(0);
  } finally {
    await site.close();
  }
});
