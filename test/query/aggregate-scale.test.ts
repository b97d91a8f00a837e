// Sums and averages of decimal fields come back at their columns' 9 places on every database (SQLite adds REALs, the
// average is divided in JS): 0.1 + 0.2 is 0.3, not 0.30000000000000004. Integer aggregates are exact as they are.
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, type TestSite } from '../helpers/test-site';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
  const widgets = [
    { active: 0, rate: 0.1, amount: 0.5, qty: 1 },
    { active: 0, rate: 0.2, amount: 0.5, qty: 2 },
    { active: 1, rate: 1, amount: 0.833333333, qty: 2 },
  ];
  for (const [i, w] of widgets.entries()) {
    const res = await t.http
      .post('/api/v2/document/Widget')
      .set('Authorization', t.adminToken)
      .send({ title: `w${i}`, status: 'Draft', ...w });
    expect(res.status).toBe(201);
  }
});
afterAll(() => t.close());

const aggregate = (fields: string[], extra: Record<string, string> = {}) =>
  t.http
    .get('/api/v2/document/Widget')
    .query({ fields: JSON.stringify(fields), ...extra })
    .set('Authorization', t.adminToken);

test('sum and avg of Float and Currency at 9 places; of Int as they are', async () => {
  const byCode = await aggregate(['active', 'sum(rate) as s', 'avg(rate) as a', 'avg(qty) as q'], {
    group_by: 'active',
    order_by: 'active asc',
  });
  expect(byCode.status).toBe(200);
  expect(byCode.body.data).toEqual([
    { active: 0, s: 0.3, a: 0.15, q: 1.5 },
    { active: 1, s: 1, a: 1, q: 2 },
  ]);
  const all = await aggregate(['sum(amount) as s', 'avg(amount) as a', 'avg(qty) as q']);
  expect(all.body.data).toEqual([{ s: 1.833333333, a: 0.611111111, q: 5 / 3 }]);
});
