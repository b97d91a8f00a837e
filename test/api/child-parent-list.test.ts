// Child rows listed with `parent=<DocType>` (Frappe's get_list `parent`): the parent DocType's read right decides; only
// rows stored under that parent DocType, in Table fields the reader may read, of parent documents the reader may reach
// (if_owner) are listed. A parent that is not a DocType holding this child table is 403, as in Frappe.
import { createUser } from '../helpers/test-site';
import { query, seededSite, type Seeded } from '../query/query-site';

let s: Seeded;
let reader: string;
let ownerReader: string;
let stranger: string;
beforeAll(async () => {
  s = await seededSite();
  reader = await createUser(s.t, 'line-reader@example.com', ['Query Reader']);
  ownerReader = await createUser(s.t, 'line-owner@example.com', ['Query Owner Reader']);
  stranger = await createUser(s.t, 'line-stranger@example.com', []);
  const own = await s.t.http
    .post('/api/v2/document/Query%20Order')
    .set('Authorization', ownerReader)
    .send({ title: 'own', lines: [{ item: 'own-item', qty: 1 }] });
  expect(own.status).toBe(201);
  for (const doctype of ['Widget', 'Gadget Order']) {
    const res = await s.t.http
      .post(`/api/v2/document/${encodeURIComponent(doctype)}`)
      .set('Authorization', s.t.adminToken)
      .send({ title: 'parts', customer: 'parts', parts: [{ part_name: `${doctype}-part` }] });
    expect(res.status).toBe(201);
  }
});
afterAll(() => s.t.close());

const LINES = 'Query%20Order%20Line';
const get = (path: string, auth: string, params: Record<string, unknown> = {}) =>
  s.t.http.get(path).query(query(params)).set('Authorization', auth);
const items = (rows: { item: string }[]) => rows.map((r) => r.item).sort();

/** Every listing path, with how it answers rows (list) or a number (count). */
const PATHS = [
  ['v1 list', `/api/resource/${LINES}`, {}, 'rows'],
  ['v2 list', `/api/v2/document/${LINES}`, {}, 'rows'],
  ['v2 count', `/api/v2/doctype/${LINES}/count`, {}, 'count'],
  [
    'frappe.client.get_list',
    '/api/method/frappe.client.get_list',
    { doctype: 'Query Order Line' },
    'message',
  ],
  [
    'frappe.client.get_count',
    '/api/method/frappe.client.get_count',
    { doctype: 'Query Order Line' },
    'count',
  ],
] as const;

describe.each(PATHS)('%s with parent', (_label, path, extra, shape) => {
  test('lists the rows of the parent DocType for a reader of it', async () => {
    const res = await get(path, reader, { ...extra, parent: 'Query Order', fields: ['item'], limit: 100 });
    expect(res.status).toBe(200);
    const body = shape === 'rows' ? res.body.data : shape === 'message' ? res.body.message : undefined;
    if (body) expect(items(body)).toEqual(['bolt', 'bolt', 'bolt', 'gear', 'nut', 'own-item']);
    else expect(res.body.data ?? res.body.message).toBe(6);
  });

  test.each([
    ['a DocType without this child table', 'Query Customer'],
    ['the child DocType itself', 'Query Order Line'],
    ['a child DocType of another parent', 'Widget Part'],
    ['an unknown DocType', 'No Such DocType'],
    ['SQL', "Query Order' OR '1'='1"],
  ])('naming %s is 403 PermissionError', async (_what, parent) => {
    const res = await get(path, s.t.adminToken, { ...extra, parent });
    expect(res.status).toBe(403);
    expect(res.body.exc_type).toBe('PermissionError');
    expect(JSON.stringify(res.body)).toContain('is not a valid parent DocType for Query Order Line');
  });

  test('without read on the parent DocType it is 403', async () => {
    const res = await get(path, stranger, { ...extra, parent: 'Query Order' });
    expect(res.status).toBe(403);
    expect(res.body.exc_type).toBe('PermissionError');
  });

  test('without a parent it stays 403', async () => {
    const res = await get(path, s.t.adminToken, extra);
    expect(res.status).toBe(403);
  });
});

test('an if_owner reader of the parent gets only the rows of its own parents', async () => {
  const res = await get(`/api/v2/document/${LINES}`, ownerReader, {
    parent: 'Query Order',
    fields: ['item'],
  });
  expect(res.status).toBe(200);
  expect(items(res.body.data)).toEqual(['own-item']);
  const count = await get(`/api/v2/doctype/${LINES}/count`, ownerReader, { parent: 'Query Order' });
  expect(count.body.data).toBe(1);
});

test("the parent's permlevels govern the child's fields", async () => {
  const refused = await get(`/api/v2/document/${LINES}`, reader, {
    parent: 'Query Order',
    fields: ['item', 'unit_cost'],
  });
  expect(refused.status).toBe(403);
  const star = await get(`/api/v2/document/${LINES}`, reader, { parent: 'Query Order', fields: ['*'] });
  expect(star.status).toBe(200);
  for (const row of star.body.data) expect(row).not.toHaveProperty('unit_cost');
  const admin = await get(`/api/v2/document/${LINES}`, s.t.adminToken, {
    parent: 'Query Order',
    fields: ['item', 'unit_cost'],
  });
  expect(admin.status).toBe(200);
});

test('a child table shared by two parents lists only the named parent DocType', async () => {
  for (const parent of ['Widget', 'Gadget Order']) {
    const res = await get('/api/v2/document/Widget%20Part', s.t.adminToken, {
      parent,
      fields: ['part_name', 'parenttype'],
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([{ part_name: `${parent}-part`, parenttype: parent }]);
  }
});

test('a parent that is not a string is refused: repeated (400) or a JSON list (403)', async () => {
  const repeated = await s.t.http
    .get(`/api/v2/document/${LINES}?parent=Query%20Order&parent=Query%20Order`)
    .set('Authorization', s.t.adminToken);
  expect(repeated.status).toBe(400);
  expect(repeated.body.data).toBeUndefined();
  const list = await s.t.http
    .post('/api/method/frappe.client.get_list')
    .set('Authorization', s.t.adminToken)
    .send({ doctype: 'Query Order Line', parent: ['Query Order'] });
  expect(list.status).toBe(403);
  expect(list.body.exc_type).toBe('PermissionError');
});

test('filters on the child rows still apply, and cannot widen past the parent restriction', async () => {
  const res = await get(`/api/v2/document/${LINES}`, ownerReader, {
    parent: 'Query Order',
    fields: ['item'],
    or_filters: [
      ['parenttype', '!=', 'x'],
      ['item', '=', 'bolt'],
    ],
  });
  expect(res.status).toBe(200);
  expect(items(res.body.data)).toEqual(['own-item']);
});
