// Optimistic locking: an update carrying a stale `modified` is 409 TimestampMismatchError and changes nothing; no `modified`, no check.
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, type TestSite } from '../helpers/test-site';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
});
afterAll(() => t.close());

const auth = () => ({ Authorization: t.adminToken });
const create = async () =>
  (await t.http.post('/api/v2/document/Widget').set(auth()).send({ title: 'locked', qty: 1 })).body.data;

test.each([
  ['v1 PUT', (n: string) => t.http.put(`/api/resource/Widget/${n}`)],
  ['v2 PUT', (n: string) => t.http.put(`/api/v2/document/Widget/${n}`)],
  ['v2 PATCH', (n: string) => t.http.patch(`/api/v2/document/Widget/${n}`)],
])('%s with a stale modified is 409 and the stored document is unchanged', async (_label, request) => {
  const doc = await create();
  const first = await request(doc.name).set(auth()).send({ qty: 2, modified: doc.modified });
  expect(first.status).toBe(200);
  const stale = await request(doc.name).set(auth()).send({ qty: 3, modified: doc.modified });
  expect(stale.status).toBe(409);
  expect(stale.body.exc_type).toBe('TimestampMismatchError');
  const stored = await t.http.get(`/api/v2/document/Widget/${doc.name}`).set(auth());
  expect(stored.body.data).toMatchObject({ qty: 2, modified: first.body.data.modified });
});

test("the current modified is accepted, in any of Frappe's spellings of the same instant", async () => {
  const doc = await create();
  const spelled = String(doc.modified).replace(' ', 'T');
  const res = await t.http
    .put(`/api/v2/document/Widget/${doc.name}`)
    .set(auth())
    .send({ qty: 5, modified: spelled });
  expect(res.status).toBe(200);
});

test('without modified in the body there is no check (last write wins)', async () => {
  const doc = await create();
  await t.http.put(`/api/v2/document/Widget/${doc.name}`).set(auth()).send({ qty: 2 });
  const res = await t.http.put(`/api/v2/document/Widget/${doc.name}`).set(auth()).send({ qty: 3 });
  expect(res.status).toBe(200);
  expect(res.body.data.qty).toBe(3);
});

test('a modified from the future is as stale as one from the past', async () => {
  const doc = await create();
  const res = await t.http
    .put(`/api/v2/document/Widget/${doc.name}`)
    .set(auth())
    .send({ qty: 9, modified: '2999-01-01 00:00:00' });
  expect(res.status).toBe(409);
  expect(res.body.exc_type).toBe('TimestampMismatchError');
});
