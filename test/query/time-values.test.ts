// Time values compare, order and aggregate as times on every database: SQLite keeps them as text, so they are stored
// with two-digit hours (as filter values are given), while the API answers Frappe's `H:MM:SS`.
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, type TestSite } from '../helpers/test-site';

let t: TestSite;
const TIMES = ['10:00', '5:05:05.25', '23:59:59', '06:00:00', '9:30'];
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
  for (const [i, time] of TIMES.entries()) {
    const res = await t.http
      .post('/api/v2/document/Widget')
      .set('Authorization', t.adminToken)
      .send({ title: `time ${i}`, status: 'Draft', start_time: time });
    expect(res.status).toBe(201);
    expect(res.body.data.start_time).toBe(
      ['10:00:00', '5:05:05.250000', '23:59:59', '6:00:00', '9:30:00'][i],
    );
  }
});
afterAll(() => t.close());

const list = (params: Record<string, unknown>) =>
  t.http
    .get('/api/v2/document/Widget')
    .query(
      Object.fromEntries(
        Object.entries({ fields: ['name', 'start_time'], limit: 100, ...params }).map(([k, v]) => [
          k,
          typeof v === 'string' ? v : JSON.stringify(v),
        ]),
      ),
    )
    .set('Authorization', t.adminToken);

test('filters compare times, not text: 5:05 is before 06:00 and 10:00 after it', async () => {
  const before = await list({ filters: [['start_time', '<', '06:00:00']] });
  expect(before.status).toBe(200);
  expect(before.body.data.map((r: any) => r.start_time)).toEqual(['5:05:05.250000']);
  const after = await list({ filters: [['start_time', '>', '9:00']], order_by: 'start_time asc' });
  expect(after.body.data.map((r: any) => r.start_time)).toEqual(['9:30:00', '10:00:00', '23:59:59']);
  const between = await list({
    filters: [['start_time', 'between', ['5:00', '9:30']]],
    order_by: 'start_time asc',
  });
  expect(between.body.data.map((r: any) => r.start_time)).toEqual(['5:05:05.250000', '6:00:00', '9:30:00']);
});

test('order_by and min/max follow the clock', async () => {
  const ordered = await list({ filters: [['start_time', 'is', 'set']], order_by: 'start_time asc' });
  expect(ordered.body.data.map((r: any) => r.start_time)).toEqual([
    '5:05:05.250000',
    '6:00:00',
    '9:30:00',
    '10:00:00',
    '23:59:59',
  ]);
  const bounds = await list({ fields: ['min(start_time) as a', 'max(start_time) as b'] });
  expect(bounds.body.data).toEqual([{ a: '5:05:05.250000', b: '23:59:59' }]);
});
