// A child table's row by name (Frappe's has_child_permission): read with the parent document's read permission, and
// changed, added or removed by saving the parent with its write permission. Every path: v1 and v2 REST, and
// frappe.client's get, set_value, insert and delete.
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';

let t: TestSite;
let clerk: string;
let ownerClerk: string;
let ledgerReader: string;
let stranger: string;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry(), site: { max_child_rows: 4 } });
  clerk = await createUser(t, 'row-clerk@example.com', ['Query Reader']);
  ownerClerk = await createUser(t, 'row-owner@example.com', ['Query Owner Reader']);
  ledgerReader = await createUser(t, 'row-ledger-reader@example.com', ['Ledger Reader']);
  stranger = await createUser(t, 'row-stranger@example.com', []);
});
afterAll(() => t.close());

const LINE = 'Query%20Order%20Line';
interface Row {
  name: string;
  item: string;
  qty: number;
  idx: number;
  parent: string;
  parentfield: string;
  parenttype: string;
  unit_cost?: number;
}

/** A new Query Order with two lines, as `auth`: its name and its lines' names in order. */
async function order(auth = t.adminToken): Promise<{ name: string; lines: string[] }> {
  // unit_cost is at permlevel 1: only Administrator sets it here.
  const cost = (unit_cost: number) => (auth === t.adminToken ? { unit_cost } : {});
  const res = await t.http
    .post('/api/v2/document/Query%20Order')
    .set('Authorization', auth)
    .send({
      title: 'rows',
      lines: [
        { item: 'bolt', qty: 2, ...cost(5) },
        { item: 'nut', qty: 3, ...cost(7) },
      ],
    });
  expect(res.status).toBe(201);
  return { name: res.body.data.name, lines: res.body.data.lines.map((l: Row) => l.name) };
}

/** The order's lines as stored (read as Administrator). */
async function linesOf(name: string): Promise<Row[]> {
  const res = await t.http.get(`/api/v2/document/Query%20Order/${name}`).set('Authorization', t.adminToken);
  expect(res.status).toBe(200);
  return res.body.data.lines;
}

describe('reading a row', () => {
  test.each([
    ['v1', (n: string) => `/api/resource/${LINE}/${n}`, 'data'],
    ['v2', (n: string) => `/api/v2/document/${LINE}/${n}`, 'data'],
    [
      'frappe.client.get',
      (n: string) => `/api/method/frappe.client.get?doctype=${LINE}&name=${n}`,
      'message',
    ],
  ])('%s answers the row to a reader of its parent', async (_label, url, key) => {
    const o = await order();
    const res = await t.http.get(url(o.lines[1] as string)).set('Authorization', clerk);
    expect(res.status).toBe(200);
    expect(res.body[key]).toMatchObject({
      name: o.lines[1],
      item: 'nut',
      qty: 3,
      idx: 2,
      parent: o.name,
      parentfield: 'lines',
      parenttype: 'Query Order',
    });
    // unit_cost is at permlevel 1, which only System Manager reads on Query Order.
    expect(res.body[key]).not.toHaveProperty('unit_cost');
  });

  test('Administrator reads the fields of every level', async () => {
    const o = await order();
    const res = await t.http.get(`/api/v2/document/${LINE}/${o.lines[0]}`).set('Authorization', t.adminToken);
    expect(res.body.data).toMatchObject({ item: 'bolt', unit_cost: 5 });
  });

  test('a user who may read the parent DocType but not this document (if_owner) is 403', async () => {
    const o = await order();
    const res = await t.http.get(`/api/v2/document/${LINE}/${o.lines[0]}`).set('Authorization', ownerClerk);
    expect(res.status).toBe(403);
    const own = await order(ownerClerk);
    const mine = await t.http
      .get(`/api/v2/document/${LINE}/${own.lines[0]}`)
      .set('Authorization', ownerClerk);
    expect(mine.status).toBe(200);
  });

  test('a user who can read no parent of the rows is 403, whether the row exists or not', async () => {
    const o = await order();
    for (const name of [o.lines[0], 'no-such-row']) {
      const res = await t.http.get(`/api/v2/document/${LINE}/${name}`).set('Authorization', stranger);
      expect(res.status).toBe(403);
      expect(res.body.errors[0].message).toContain('No permission to read the Query Order Line rows');
    }
  });

  test('Guest is 401', async () => {
    const o = await order();
    const res = await t.http.get(`/api/v2/document/${LINE}/${o.lines[0]}`);
    expect(res.status).toBe(401);
  });

  test('an unknown row is 404 and a name no row can have is 400', async () => {
    const missing = await t.http.get(`/api/resource/${LINE}/no-such-row`).set('Authorization', clerk);
    expect(missing.status).toBe(404);
    expect(missing.body.exc_type).toBe('DoesNotExistError');
    const long = await t.http.get(`/api/resource/${LINE}/${'x'.repeat(10_000)}`).set('Authorization', clerk);
    expect(long.status).toBe(400);
  });
});

describe('changing a row', () => {
  test.each([
    ['v1 PUT', 'put', (n: string) => `/api/resource/${LINE}/${n}`, 'data'],
    ['v2 PATCH', 'patch', (n: string) => `/api/v2/document/${LINE}/${n}`, 'data'],
  ] as const)('%s saves the parent with the row changed and answers the row', async (_l, verb, url, key) => {
    const o = await order();
    const before = await t.http
      .get(`/api/v2/document/Query%20Order/${o.name}`)
      .set('Authorization', t.adminToken);
    const res = await t.http[verb](url(o.lines[0] as string))
      .set('Authorization', clerk)
      .send({ qty: 9, parent: 'elsewhere', idx: 7, name: 'renamed' });
    expect(res.status).toBe(200);
    expect(res.body[key]).toMatchObject({ name: o.lines[0], item: 'bolt', qty: 9, idx: 1, parent: o.name });
    const lines = await linesOf(o.name);
    expect(lines.map((l) => [l.name, l.qty, l.unit_cost])).toEqual([
      [o.lines[0], 9, 5],
      [o.lines[1], 3, 7],
    ]);
    const after = await t.http
      .get(`/api/v2/document/Query%20Order/${o.name}`)
      .set('Authorization', t.adminToken);
    expect(after.body.data.modified).not.toBe(before.body.data.modified);
    expect(after.body.data.modified_by).toBe('row-clerk@example.com');
  });

  test('frappe.client.set_value changes the row and answers the parent, as Frappe', async () => {
    const o = await order();
    const res = await t.http
      .post('/api/method/frappe.client.set_value')
      .set('Authorization', clerk)
      .send({ doctype: 'Query Order Line', name: o.lines[1], fieldname: 'item', value: 'washer' });
    expect(res.status).toBe(200);
    expect(res.body.message).toMatchObject({ doctype: 'Query Order', name: o.name });
    expect(res.body.message.lines.map((l: Row) => l.item)).toEqual(['bolt', 'washer']);
  });

  test("a field above the caller's levels is 403 and nothing changes", async () => {
    const o = await order();
    const res = await t.http
      .put(`/api/resource/${LINE}/${o.lines[0]}`)
      .set('Authorization', clerk)
      .send({ unit_cost: 1 });
    expect(res.status).toBe(403);
    expect((await linesOf(o.name))[0]?.unit_cost).toBe(5);
  });

  test('a value of the wrong type is 400 and nothing changes', async () => {
    const o = await order();
    const res = await t.http
      .put(`/api/resource/${LINE}/${o.lines[0]}`)
      .set('Authorization', clerk)
      .send({ qty: 'many' });
    expect(res.status).toBe(400);
    expect((await linesOf(o.name))[0]?.qty).toBe(2);
  });

  test("the parent's checks run: a required field emptied is refused", async () => {
    const o = await order();
    const res = await t.http
      .put(`/api/resource/${LINE}/${o.lines[0]}`)
      .set('Authorization', clerk)
      .send({ item: '' });
    expect(res.status).toBe(400);
    expect(res.body.exc_type).toBe('MandatoryError');
    expect((await linesOf(o.name))[0]?.item).toBe('bolt');
  });

  test('a reader without write on the parent is 403', async () => {
    const ledger = await t.http
      .post('/api/v2/document/Tracked%20Ledger')
      .set('Authorization', t.adminToken)
      .send({ name: 'row-ledger', title: 'l', lines: [{ item: 'a', qty: 1 }] });
    expect(ledger.status).toBe(201);
    const row = ledger.body.data.lines[0].name;
    const url = `/api/v2/document/Tracked%20Ledger%20Line/${row}`;
    expect((await t.http.get(url).set('Authorization', ledgerReader)).status).toBe(200);
    const res = await t.http.patch(url).set('Authorization', ledgerReader).send({ qty: 2 });
    expect(res.status).toBe(403);
    const del = await t.http.delete(url).set('Authorization', ledgerReader);
    expect(del.status).toBe(403);
  });

  test("the row of another user's document is 403 for an if_owner writer", async () => {
    const o = await order();
    const res = await t.http
      .put(`/api/resource/${LINE}/${o.lines[0]}`)
      .set('Authorization', ownerClerk)
      .send({ qty: 1 });
    expect(res.status).toBe(403);
    expect((await linesOf(o.name))[0]?.qty).toBe(2);
  });
});

describe('adding a row', () => {
  test('v2 POST with parenttype and parent adds the row to the parent and answers it', async () => {
    const o = await order();
    const res = await t.http
      .post(`/api/v2/document/${LINE}`)
      .set('Authorization', clerk)
      .send({ parenttype: 'Query Order', parent: o.name, item: 'gear', qty: 4 });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      item: 'gear',
      qty: 4,
      idx: 3,
      parent: o.name,
      parentfield: 'lines',
    });
    expect((await linesOf(o.name)).map((l) => l.name)).toEqual([...o.lines, res.body.data.name]);
  });

  test('frappe.client.insert of a row answers the parent, as Frappe', async () => {
    const o = await order();
    const res = await t.http
      .post('/api/method/frappe.client.insert')
      .set('Authorization', clerk)
      .send({
        doc: {
          doctype: 'Query Order Line',
          parenttype: 'Query Order',
          parent: o.name,
          parentfield: 'lines',
          item: 'pin',
        },
      });
    expect(res.status).toBe(200);
    expect(res.body.message.name).toBe(o.name);
    expect(res.body.message.lines.map((l: Row) => l.item)).toEqual(['bolt', 'nut', 'pin']);
  });

  test.each([
    ['no parent', { item: 'x' }, 400],
    ['a parent DocType without this table', { parenttype: 'Query Customer', parent: 'Acme', item: 'x' }, 400],
    ['the child DocType as parent', { parenttype: 'Query Order Line', parent: 'x', item: 'x' }, 400],
    ['a field that is not its table', { parenttype: 'Query Order', parentfield: 'title', item: 'x' }, 400],
    ['a parent that does not exist', { parenttype: 'Query Order', parent: 'no-such-order', item: 'x' }, 404],
  ])('%s is refused', async (_what, body, status) => {
    const o = await order();
    const res = await t.http
      .post(`/api/v2/document/${LINE}`)
      .set('Authorization', clerk)
      .send({ parent: o.name, ...body });
    expect(res.status).toBe(status);
    expect((await linesOf(o.name)).length).toBe(2);
  });

  test('a stranger is 403', async () => {
    const o = await order();
    const res = await t.http
      .post(`/api/v2/document/${LINE}`)
      .set('Authorization', stranger)
      .send({ parenttype: 'Query Order', parent: o.name, item: 'x' });
    expect(res.status).toBe(403);
  });
});

describe('removing a row', () => {
  test.each([
    ['v1 DELETE', (n: string) => t.http.delete(`/api/resource/${LINE}/${n}`)],
    ['v2 DELETE', (n: string) => t.http.delete(`/api/v2/document/${LINE}/${n}`)],
    [
      'frappe.client.delete',
      (n: string) =>
        t.http.post('/api/method/frappe.client.delete').send({ doctype: 'Query Order Line', name: n }),
    ],
  ])('%s removes the row by saving its parent (write, not delete, on the parent)', async (_label, send) => {
    const o = await order();
    const res = await send(o.lines[0] as string).set('Authorization', clerk);
    expect(res.status).toBe(_label === 'frappe.client.delete' ? 200 : 202);
    const lines = await linesOf(o.name);
    expect(lines.map((l) => [l.name, l.idx])).toEqual([[o.lines[1], 1]]);
    const gone = await t.http.get(`/api/v2/document/${LINE}/${o.lines[0]}`).set('Authorization', clerk);
    expect(gone.status).toBe(404);
  });
});

test('submitting, copying and bulk writes of rows stay 403', async () => {
  const o = await order();
  const copy = await t.http
    .get(`/api/v2/document/${LINE}/${o.lines[0]}/copy`)
    .set('Authorization', t.adminToken);
  expect([403, 404]).toContain(copy.status);
  const bulk = await t.http
    .post(`/api/v2/document/${LINE}/bulk_delete`)
    .set('Authorization', t.adminToken)
    .send({ names: [o.lines[0]] });
  expect(bulk.status).toBe(403);
  expect((await linesOf(o.name)).length).toBe(2);
});

test('frappe.client.get_value of a row takes the parent DocType as Frappe (`parent`)', async () => {
  const o = await order();
  const url = '/api/method/frappe.client.get_value';
  const params = {
    doctype: 'Query Order Line',
    filters: JSON.stringify({ name: o.lines[1] }),
    fieldname: 'item',
  };
  const res = await t.http
    .get(url)
    .query({ ...params, parent: 'Query Order' })
    .set('Authorization', clerk);
  expect(res.status).toBe(200);
  expect(res.body.message).toEqual({ item: 'nut' });
  const without = await t.http.get(url).query(params).set('Authorization', clerk);
  expect(without.status).toBe(403);
  const stranger_ = await t.http
    .get(url)
    .query({ ...params, parent: 'Query Order' })
    .set('Authorization', stranger);
  expect(stranger_.status).toBe(403);
});

describe('what holds for a parent holds for its rows', () => {
  test('an Idempotency-Key POST of a row answers once and a retry replays it: one row added', async () => {
    const o = await order();
    const send = () =>
      t.http
        .post(`/api/v2/document/${LINE}`)
        .set('Authorization', clerk)
        .set('Idempotency-Key', `row-key-${o.name}`)
        .send({ parenttype: 'Query Order', parent: o.name, item: 'keyed' });
    const first = await send();
    expect(first.status).toBe(201);
    const again = await send();
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.data.name).toBe(first.body.data.name);
    expect((await linesOf(o.name)).map((l) => l.item)).toEqual(['bolt', 'nut', 'keyed']);
  });

  test('rows added one at a time stop at max_child_rows (413), as a PUT of the parent does', async () => {
    const o = await order();
    const add = (item: string) =>
      t.http
        .post(`/api/v2/document/${LINE}`)
        .set('Authorization', clerk)
        .send({ parenttype: 'Query Order', parent: o.name, item });
    expect((await add('third')).status).toBe(201);
    expect((await add('fourth')).status).toBe(201);
    const over = await add('fifth');
    expect(over.status).toBe(413);
    expect((await linesOf(o.name)).length).toBe(4);
  });

  test('a stale modified of the row is 409, as for a document', async () => {
    const o = await order();
    const url = `/api/v2/document/${LINE}/${o.lines[0]}`;
    const read = await t.http.get(url).set('Authorization', clerk);
    const first = await t.http
      .patch(url)
      .set('Authorization', clerk)
      .send({ qty: 5, modified: read.body.data.modified });
    expect(first.status).toBe(200);
    const stale = await t.http
      .patch(url)
      .set('Authorization', clerk)
      .send({ qty: 6, modified: read.body.data.modified });
    expect(stale.status).toBe(409);
    expect((await linesOf(o.name))[0]?.qty).toBe(5);
  });

  test('a row of a document the caller may not read is 403 without naming that document', async () => {
    const o = await order();
    const res = await t.http.get(`/api/v2/document/${LINE}/${o.lines[0]}`).set('Authorization', ownerClerk);
    expect(res.status).toBe(403);
    expect(JSON.stringify(res.body)).not.toContain(o.name);
  });

  test("a Single's rows are added to its one document; another parent name is 404", async () => {
    const single = encodeURIComponent('Vault Secret');
    const wrong = await t.http
      .post(`/api/v2/document/${single}`)
      .set('Authorization', t.adminToken)
      .send({ parenttype: 'Vault Settings', parent: 'whatever', label: 'x' });
    expect(wrong.status).toBe(404);
    const right = await t.http
      .post(`/api/v2/document/${single}`)
      .set('Authorization', t.adminToken)
      .send({ parenttype: 'Vault Settings', parent: 'Vault Settings', label: 'kept' });
    expect(right.status).toBe(201);
    const settings = await t.http
      .get('/api/v2/document/Vault%20Settings/Vault%20Settings')
      .set('Authorization', t.adminToken);
    expect(settings.body.data.secrets.map((r: { label: string }) => r.label)).toEqual(['kept']);
  });
});
