// v2 count (same filters as the list, child conditions never double-count), copy (identity dropped, no_copy per
// ignore_no_copy, child rows kept, posts back as a new document) and meta.
import { query, seededSite, type Seeded } from './query-site';

let s: Seeded;
beforeAll(async () => {
  s = await seededSite();
});
afterAll(() => s.t.close());

const count = (params: Record<string, unknown>) =>
  s.t.http
    .get('/api/v2/doctype/Query%20Order/count')
    .query(query(params))
    .set('Authorization', s.t.adminToken);

describe('count', () => {
  test.each([
    ['no filters', {}, 6],
    ['a dict filter', { filters: { status: 'Open' } }, 3],
    ['a list filter', { filters: [['amount', '>', 100]] }, 2],
    [
      'or_filters',
      {
        or_filters: [
          ['status', '=', 'Cancelled'],
          ['amount', '>=', 500],
        ],
      },
      2,
    ],
    [
      'a child condition counts each parent once',
      { filters: [['Query Order Line', 'item', '=', 'bolt']] },
      2,
    ],
    ['in []', { filters: { name: ['in', []] } }, 0],
  ])('%s', async (_label, params, expected) => {
    const res = await count(params);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: expected });
  });

  test('a count after a write (create, update, delete) is fresh', async () => {
    const open = async () => (await count({ filters: { status: 'Open' } })).body.data;
    expect(await open()).toBe(3);
    const created = await s.t.http
      .post('/api/v2/document/Query%20Order')
      .set('Authorization', s.t.adminToken)
      .send({ title: 'fresh', status: 'Open' });
    expect(await open()).toBe(4);
    await s.t.http
      .put(`/api/v2/document/Query%20Order/${created.body.data.name}`)
      .set('Authorization', s.t.adminToken)
      .send({ status: 'Closed' });
    expect(await open()).toBe(3);
    await s.t.http
      .put(`/api/v2/document/Query%20Order/${created.body.data.name}`)
      .set('Authorization', s.t.adminToken)
      .send({ status: 'Open' });
    expect(await open()).toBe(4);
    await s.t.http
      .delete(`/api/v2/document/Query%20Order/${created.body.data.name}`)
      .set('Authorization', s.t.adminToken);
    expect(await open()).toBe(3);
  });

  test('a bad filter is a 400 and an unreadable one a 403', async () => {
    expect((await count({ filters: [['nope', '=', 1]] })).status).toBe(400);
    expect((await count({ filters: [['pin', 'like', '1%']] })).status).toBe(403);
  });
});

describe('copy', () => {
  const copy = (name: string, params: Record<string, string> = {}) =>
    s.t.http
      .get(`/api/v2/document/Query%20Order/${name}/copy`)
      .query(params)
      .set('Authorization', s.t.adminToken);

  test('drops identity fields, keeps no_copy fields by default and child rows without their identity', async () => {
    const res = await copy(s.names.alpha as string);
    expect(res.status).toBe(200);
    const doc = res.body.data;
    for (const key of ['name', 'owner', 'creation', 'modified', 'modified_by', 'docstatus'])
      expect(doc).not.toHaveProperty(key);
    expect(doc).toMatchObject({ doctype: 'Query Order', title: 'alpha', note: 'first', amount: 100 });
    expect(doc.lines.map((l: Record<string, unknown>) => [l.item, l.qty])).toEqual([
      ['bolt', 2],
      ['nut', 10],
      ['bolt', 4],
    ]);
    for (const line of doc.lines)
      for (const key of ['name', 'parent', 'parentfield', 'parenttype', 'owner', 'creation'])
        expect(line).not.toHaveProperty(key);
    expect(Object.values(doc).includes(null)).toBe(false);
  });

  test('ignore_no_copy=0 drops no_copy fields', async () => {
    const res = await copy(s.names.alpha as string, { ignore_no_copy: '0' });
    expect(res.status).toBe(200);
    expect(res.body.data).not.toHaveProperty('note');
    expect(res.body.data.title).toBe('alpha');
  });

  test('the copy posts back as a new document with its child rows', async () => {
    const { body } = await copy(s.names.beta as string);
    const created = await s.t.http
      .post('/api/v2/document/Query%20Order')
      .set('Authorization', s.t.adminToken)
      .send(body.data);
    expect(created.status).toBe(201);
    expect(created.body.data.name).not.toBe(s.names.beta);
    expect(created.body.data).toMatchObject({ title: 'beta', status: 'Closed', amount: 250.5 });
    expect(created.body.data.lines.map((l: Record<string, unknown>) => l.item)).toEqual(['bolt']);
    await s.t.http
      .delete(`/api/v2/document/Query%20Order/${created.body.data.name}`)
      .set('Authorization', s.t.adminToken);
  });

  test('an unknown document is a 404', async () => {
    expect((await copy('no-such-order')).status).toBe(404);
  });
});

test("meta answers the DocType metadata in Frappe's shape", async () => {
  const res = await s.t.http.get('/api/v2/doctype/Query%20Order/meta').set('Authorization', s.t.adminToken);
  expect(res.status).toBe(200);
  expect(res.body.data).toMatchObject({
    doctype: 'DocType',
    name: 'Query Order',
    module: 'Test',
    istable: 0,
    issingle: 0,
    autoname: 'hash',
    sort_field: 'amount',
    sort_order: 'DESC',
  });
  const fields = res.body.data.fields as Record<string, unknown>[];
  expect(fields.find((f) => f.fieldname === 'customer')).toMatchObject({
    doctype: 'DocField',
    fieldtype: 'Link',
    options: 'Query Customer',
    reqd: 0,
    permlevel: 0,
  });
  expect(fields.find((f) => f.fieldname === 'note')).toMatchObject({ fieldtype: 'Small Text', no_copy: 1 });
  expect(fields.find((f) => f.fieldname === 'cost')).toMatchObject({ permlevel: 1 });
  expect(res.body.data.permissions).toContainEqual(
    expect.objectContaining({ role: 'Query Owner Reader', if_owner: 1, read: 1, delete: 0 }),
  );
  const child = await s.t.http
    .get('/api/v2/doctype/Query%20Customer/meta')
    .set('Authorization', s.t.adminToken);
  expect(child.body.data).toMatchObject({
    autoname: 'field:customer_name',
    title_field: 'customer_name',
    sort_order: 'ASC',
  });
});

test('meta of an unknown DocType is a 404 and needs a signed-in user', async () => {
  expect((await s.t.http.get('/api/v2/doctype/Nope/meta').set('Authorization', s.t.adminToken)).status).toBe(
    404,
  );
  expect((await s.t.http.get('/api/v2/doctype/Query%20Order/meta')).status).toBe(401);
});
