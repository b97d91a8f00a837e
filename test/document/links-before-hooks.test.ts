// The Link check runs before the validate hooks, as Frappe's _validate_links: a hook sees the linked document's fetched
// values; a value a hook puts in a fetched field is kept; a Link a hook changes is checked (and
// fetched through) again, so no hook stores a link to nothing.
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, type TestSite } from '../helpers/test-site';

let t: TestSite;
let seen: { supplier: unknown; supplier_name: unknown; live_region: unknown }[];
beforeAll(async () => {
  const registry = await fixtureRegistry();
  seen = (registry.get('Fetch Order')?.controller as { seenInValidate: typeof seen }).seenInValidate;
  t = await createTestSite({ registry });
  for (const [name, region] of [
    ['Hook Co', 'North'],
    ['Override Co', 'East'],
    ['Swap Me Co', 'South'],
    ['Swapped Co', 'West'],
    ['Break Me Co', 'North'],
  ]) {
    const res = await t.http
      .post('/api/v2/document/Fetch Supplier')
      .set(auth())
      .send({ supplier_name: name, region });
    expect(res.status).toBe(201);
  }
});
afterAll(() => t.close());

const auth = () => ({ Authorization: t.adminToken });
const ORDERS = '/api/v2/document/Fetch Order';

test('validate sees the fetched values, on insert and on save', async () => {
  seen.length = 0;
  const res = await t.http.post(ORDERS).set(auth()).send({ supplier: 'Hook Co' });
  expect(res.status).toBe(201);
  expect(seen).toEqual([{ supplier: 'Hook Co', supplier_name: 'Hook Co', live_region: 'North' }]);
  const put = await t.http
    .put(`${ORDERS}/${res.body.data.name}`)
    .set(auth())
    .send({ supplier: 'Swapped Co' });
  expect(put.status).toBe(200);
  expect(seen[1]).toEqual({ supplier: 'Swapped Co', supplier_name: 'Swapped Co', live_region: 'West' });
});

test("a hook's value in a fetched field is stored, not fetched over", async () => {
  const res = await t.http.post(ORDERS).set(auth()).send({ supplier: 'Override Co' });
  expect(res.status).toBe(201);
  expect(res.body.data).toMatchObject({ supplier_name: 'Override Co', live_region: 'Set by validate' });
  const read = await t.http.get(`${ORDERS}/${res.body.data.name}`).set(auth());
  expect(read.body.data.live_region).toBe('Set by validate');
});

test('a Link a hook changes is checked and fetched through again', async () => {
  const res = await t.http.post(ORDERS).set(auth()).send({ supplier: 'Swap Me Co' });
  expect(res.status).toBe(201);
  expect(res.body.data).toMatchObject({
    supplier: 'Swapped Co',
    supplier_name: 'Swapped Co',
    live_region: 'West',
  });
  const before = (await t.http.get(`${ORDERS}?limit=0`).set(auth())).body.data.length;
  const broken = await t.http.post(ORDERS).set(auth()).send({ supplier: 'Break Me Co' });
  expect(broken.status).toBe(400);
  expect(broken.body.exc_type).toBe('LinkValidationError');
  expect(broken.body.exception).toMatch(/Could not find Supplier: No Such Supplier/);
  expect((await t.http.get(`${ORDERS}?limit=0`).set(auth())).body.data.length).toBe(before);
});

test('a link to nothing is refused before the hooks run', async () => {
  seen.length = 0;
  const res = await t.http.post(ORDERS).set(auth()).send({ supplier: 'Nobody Co' });
  expect(res.body.exc_type).toBe('LinkValidationError');
  expect(seen).toEqual([]);
});
