// frappe.client.get_list / get_count with Frappe's kwargs (fields, filters, or_filters, order_by, group_by,
// limit_start, limit_page_length, limit, as_dict) go through the same engine as the REST lists.
import { query, seededSite, type Seeded } from './query-site';

let s: Seeded;
beforeAll(async () => {
  s = await seededSite();
});
afterAll(() => s.t.close());

const call = (method: string, params: Record<string, unknown>) =>
  s.t.http
    .get(`/api/method/frappe.client.${method}`)
    .query(query({ doctype: 'Query Order', ...params }))
    .set('Authorization', s.t.adminToken);

test('get_list with fields, filters, order_by and paging', async () => {
  const res = await call('get_list', {
    fields: ['title', 'amount'],
    filters: [['status', '=', 'Open']],
    order_by: 'amount desc',
    limit_start: 1,
    limit_page_length: 2,
  });
  expect(res.status).toBe(200);
  expect(res.body.message).toEqual([
    { title: 'alpha', amount: 100 },
    { title: 'gamma', amount: 0 },
  ]);
});

test('get_list with or_filters, limit and as_dict=0', async () => {
  const res = await call('get_list', {
    fields: ['title'],
    or_filters: { status: 'Cancelled', amount: ['>=', 500] },
    order_by: 'title',
    limit: 5,
    as_dict: 0,
  });
  expect(res.status).toBe(200);
  expect(res.body.message).toEqual([['delta'], ['epsilon']]);
});

test('get_list with group_by and an aggregate, as a POST JSON body', async () => {
  const res = await s.t.http
    .post('/api/method/frappe.client.get_list')
    .set('Authorization', s.t.adminToken)
    .send({
      doctype: 'Query Order',
      fields: ['status', 'count(name) as n'],
      group_by: 'status',
      order_by: 'n desc, status',
    });
  expect(res.status).toBe(200);
  expect(res.body.message).toEqual([
    { status: 'Open', n: 3 },
    { status: 'Closed', n: 2 },
    { status: 'Cancelled', n: 1 },
  ]);
});

test('get_count with filters', async () => {
  const res = await call('get_count', { filters: { status: 'Open' } });
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ message: 3 });
});

test('a bad kwarg is a 400 on the method surface too', async () => {
  const res = await call('get_list', { order_by: 'sleep(1)' });
  expect(res.status).toBe(400);
  expect(res.body.exc_type).toBe('DataError');
});
