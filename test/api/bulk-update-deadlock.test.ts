// Two bulk_update requests over the same documents in opposite orders: their batches (one transaction each, the items
// in request order) lock the rows from both ends and deadlock where they meet. The item that lost the deadlock was
// reported as a 500 ("InternalServerError") while the other items of its rolled-back batch ran again; now it runs
// again alone too, as a deadlock's victim may, and both requests update every document.
import { createTestSite, DB_KIND, type TestSite } from '../helpers/test-site';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite({ site: { db_busy_timeout: 20_000 } });
});
afterAll(() => t?.close());

const bulkUpdate = (names: string[], description: string) =>
  t.http
    .post('/api/v2/document/ToDo/bulk_update')
    .set('Authorization', t.adminToken)
    .send({ docs: names.map((name) => ({ name, description })) });

// SQLite has one writer: the two requests cannot deadlock there, and the test checks only the counts.
test(`opposite orders over 12 documents: every item of both requests is updated (${DB_KIND})`, async () => {
  const names: string[] = [];
  for (let i = 0; i < 12; i++) {
    const res = await t.http
      .post('/api/resource/ToDo')
      .set('Authorization', t.adminToken)
      .send({ description: `bulk deadlock ${i}` });
    expect(res.status).toBe(201);
    names.push(res.body.data.name as string);
  }
  const [forward, backward] = await Promise.all([
    bulkUpdate(names, 'forward'),
    bulkUpdate([...names].reverse(), 'backward'),
  ]);
  for (const res of [forward, backward]) {
    expect(res.status).toBe(200);
    expect(res.body.data.failed).toEqual([]);
    expect(res.body.data.success_count).toBe(12);
  }
  const stored = (await t.site.db.knex('tabToDo').whereIn('name', names).pluck('description')) as string[];
  expect(stored.every((d) => d === 'forward' || d === 'backward')).toBe(true);
});
