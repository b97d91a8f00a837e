// The meta endpoint shows a field's fetch_from and fetch_if_empty (0/1 on every field) as Frappe's DocField does.
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, type TestSite } from '../helpers/test-site';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
});
afterAll(() => t.close());

const auth = () => ({ Authorization: t.adminToken });

test('the meta endpoint shows fetch_from and fetch_if_empty as Frappe does', async () => {
  const res = await t.http.get('/api/v2/doctype/Fetch Order/meta').set(auth());
  expect(res.status).toBe(200);
  const fields = res.body.data.fields as Record<string, unknown>[];
  const field = (name: string) => fields.find((f) => f.fieldname === name);
  expect(field('region')).toMatchObject({ fetch_from: 'supplier.region', fetch_if_empty: 1 });
  expect(field('live_region')).toMatchObject({ fetch_from: 'supplier.region', fetch_if_empty: 0 });
  expect(field('supplier')).toMatchObject({ fetch_if_empty: 0 });
  expect(field('supplier')).not.toHaveProperty('fetch_from');
});
