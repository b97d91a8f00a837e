// `fields`: defaults, `*`, aliases, backticked names, child-table and Link-target columns through joins, aggregates in
// the string grammar and the v2 dict form with group_by, nested child rows, v1 as_dict; unknown fields are a 400.
import { PATHS, query, seededSite, type Seeded } from './query-site';

let s: Seeded;
beforeAll(async () => {
  s = await seededSite();
});
afterAll(() => s.t.close());

const list = (version: 'v1' | 'v2', params: Record<string, unknown>) =>
  s.t.http
    .get(PATHS[version])
    .query(query({ limit_page_length: 0, limit: 100, ...params }))
    .set('Authorization', s.t.adminToken);
const both = async (params: Record<string, unknown>) => {
  const [a, b] = [await list('v1', params), await list('v2', params)];
  expect([a.status, b.status]).toEqual([200, 200]);
  expect(a.body.data).toEqual(b.body.data);
  return a.body.data as Record<string, unknown>[];
};
const byTitle = (rows: Record<string, unknown>[]) =>
  [...rows].sort((x, y) => String(x.title).localeCompare(String(y.title)));

test('default fields: every readable stored field and the standard ones; no Password or Table field', async () => {
  const rows = await both({ filters: { title: 'alpha' } });
  expect(rows).toHaveLength(1);
  const keys = Object.keys(rows[0] as object).sort();
  expect(keys).toEqual(
    [
      'amount',
      'assigned_to',
      'cost',
      'creation',
      'customer',
      'docstatus',
      'idx',
      'modified',
      'modified_by',
      'name',
      'note',
      'order_date',
      'owner',
      'qty',
      'ship_at',
      'status',
      'title',
      'urgent',
    ].sort(),
  );
  expect(rows[0]).toMatchObject({
    title: 'alpha',
    amount: 100,
    qty: 1,
    urgent: 1,
    order_date: '2024-01-10',
    ship_at: '2024-01-10 09:00:00',
    docstatus: 0,
  });
  expect(await both({ fields: ['*'], filters: { title: 'alpha' } })).toEqual(rows);
});

test('named fields, an alias and a backticked table-qualified name', async () => {
  const rows = await both({
    fields: ['title', 'amount as total', '`tabQuery Order`.`qty`'],
    filters: { title: ['in', ['alpha', 'beta']] },
    order_by: 'title',
  });
  expect(rows).toEqual([
    { title: 'alpha', total: 100, qty: 1 },
    { title: 'beta', total: 250.5, qty: 5 },
  ]);
});

test('a child-table field joins the child rows (parents repeat, as in Frappe)', async () => {
  const rows = await both({
    fields: ['title', 'lines.item', 'lines.qty as line_qty'],
    filters: { title: 'alpha' },
    order_by: 'line_qty',
  });
  expect(rows).toEqual([
    { title: 'alpha', 'lines.item': 'bolt', line_qty: 2 },
    { title: 'alpha', 'lines.item': 'bolt', line_qty: 4 },
    { title: 'alpha', 'lines.item': 'nut', line_qty: 10 },
  ]);
});

test('a Link-target field joins the linked table (NULL when the link is empty)', async () => {
  const rows = byTitle(
    await both({
      fields: ['title', 'customer.region'],
      filters: { title: ['in', ['alpha', 'beta', 'gamma', 'zeta']] },
    }),
  );
  expect(rows).toEqual([
    { title: 'alpha', 'customer.region': 'North' },
    { title: 'beta', 'customer.region': 'South' },
    { title: 'gamma', 'customer.region': null },
    { title: 'zeta', 'customer.region': null },
  ]);
});

test('aggregates in the string grammar with group_by', async () => {
  const rows = await both({
    fields: ['status', 'count(name) as n', 'sum(amount) as total', 'max(qty)', 'min(order_date) as first'],
    group_by: 'status',
    order_by: 'status',
  });
  expect(rows).toEqual([
    { status: 'Cancelled', n: 1, total: 75, 'max(qty)': 3, first: null },
    { status: 'Closed', n: 2, total: 260.5, 'max(qty)': 5, first: '2024-02-01' },
    { status: 'Open', n: 3, total: 600, 'max(qty)': 2, first: '2024-01-10' },
  ]);
  const avg = await both({ fields: ['avg(qty) as mean', 'count(*)', 'count(distinct status) as statuses'] });
  expect(avg).toEqual([{ mean: 13 / 6, 'count(*)': 6, statuses: 3 }]);
});

test('aggregates in the v2 dict form, ordered by their alias', async () => {
  const rows = await both({
    fields: ['customer', { COUNT: '*', as: 'count' }, { SUM: 'amount', as: 'total' }],
    group_by: 'customer',
    order_by: 'total desc',
  });
  expect(rows).toEqual([
    { customer: 'Globex', count: 2, total: 750.5 },
    { customer: 'Acme', count: 2, total: 175 },
    { customer: 'Initech', count: 1, total: 10 },
    { customer: null, count: 1, total: 0 },
  ]);
});

test('v2 nested child rows: one list per parent, in idx order, only the named fields', async () => {
  const res = await list('v2', {
    fields: ['title', { lines: ['item', 'qty'] }],
    filters: { title: ['in', ['alpha', 'gamma']] },
    order_by: 'title',
  });
  expect(res.status).toBe(200);
  expect(res.body.data).toEqual([
    {
      title: 'alpha',
      lines: [
        { item: 'bolt', qty: 2 },
        { item: 'nut', qty: 10 },
        { item: 'bolt', qty: 4 },
      ],
    },
    { title: 'gamma', lines: [] },
  ]);
});

test('v1 as_dict=0 answers rows as value lists in field order', async () => {
  const res = await list('v1', { fields: ['title', 'qty'], filters: { title: 'beta' }, as_dict: 0 });
  expect(res.status).toBe(200);
  expect(res.body.data).toEqual([['beta', 5]]);
});

describe('refused fields', () => {
  test.each([
    ['an unknown field, named in the error', ['title', 'nope'], 400, /nope/],
    ['a Table field by name', ['lines'], 400, /lines/],
    ['a function outside the allowlist', ['version()'], 400, /function version is not allowed/],
    ['sum of a text field', ['sum(title)'], 400, /sum needs a number field/],
    ['a plain field beside an aggregate without group_by', ['title', 'count(name)'], 400, /group_by/],
    ['an alias that is not an identifier', ['title as `x y`'], 400, /invalid syntax/],
    ['two fields under one key', ['title', 'qty as title'], 400, /alias/],
    ['a dict naming an unknown function', [{ SLEEP: '1' }], 400, /SLEEP/],
    ['a Password field', ['pin'], 403, /pin/],
    ['a Password field through *', ['*', 'pin'], 403, /pin/],
    ['fields that are not a list', { a: 1 }, 400, /must be a list/],
  ])('%s', async (_label, fields, status, message) => {
    for (const version of ['v1', 'v2'] as const) {
      const res = await list(version, { fields });
      expect(res.status).toBe(status);
      expect(res.body.exception).toMatch(message as RegExp);
    }
  });
});
