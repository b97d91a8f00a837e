// The reader's access in every part of a query: unreadable fields (permlevel, Password) are left out of defaults and
// refused (403, the same answer whatever the value) in fields, filters, or_filters, order_by, group_by, joins and counts;
// if_owner rows are restricted; Link expansion reads targets with the reader's access.
import { createUser } from '../helpers/test-site';
import { query, seededSite, type Seeded } from './query-site';

let s: Seeded;
let reader: string;
let ownerReader: string;
beforeAll(async () => {
  s = await seededSite();
  reader = await createUser(s.t, 'query-reader@example.com', ['Query Reader']);
  ownerReader = await createUser(s.t, 'query-owner@example.com', ['Query Owner Reader']);
  const res = await s.t.http
    .post('/api/v2/document/Query%20Order')
    .set('Authorization', s.t.adminToken)
    .send({ title: 'eta', customer: 'Acme', assigned_to: 'Administrator', cost: 5 });
  s.names.eta = res.body.data.name;
});
afterAll(() => s.t.close());

const list = (auth: string, params: Record<string, unknown>, version: 'v1' | 'v2' = 'v2') =>
  s.t.http
    .get(version === 'v1' ? '/api/resource/Query%20Order' : '/api/v2/document/Query%20Order')
    .query(query({ limit: 100, ...params }))
    .set('Authorization', auth);

describe('a reader without permlevel 1', () => {
  test('default and * fields leave out permlevel-1 and Password fields', async () => {
    for (const fields of [undefined, ['*']]) {
      const res = await list(reader, fields ? { fields } : {});
      expect(res.status).toBe(200);
      expect(res.body.data).toHaveLength(7);
      for (const row of res.body.data) {
        expect(row).not.toHaveProperty('cost');
        expect(row).not.toHaveProperty('pin');
        expect(row).toHaveProperty('amount');
      }
    }
  });

  test.each([
    ['fields', { fields: ['title', 'cost'] }],
    ['an aggregate', { fields: ['sum(cost) as c'] }],
    ['a v2 dict aggregate', { fields: [{ SUM: 'cost' }] }],
    ['filters', { filters: [['cost', '>', 10]] }],
    ['a dict filter', { filters: { cost: 40 } }],
    [
      'or_filters',
      {
        or_filters: [
          ['cost', '>', 10],
          ['title', '=', 'x'],
        ],
      },
    ],
    ['order_by', { order_by: 'cost desc' }],
    ['group_by', { fields: ['cost'], group_by: 'cost' }],
    ['a child field in fields', { fields: ['title', 'lines.unit_cost'] }],
    ['a child field in filters', { filters: [['Query Order Line', 'unit_cost', '>', 0]] }],
    ['a nested child selection', { fields: ['title', { lines: ['item', 'unit_cost'] }] }],
    ['a Link-target field', { fields: ['title', 'customer.credit_limit'] }],
    ['a Link into a DocType the reader may not read', { fields: ['title', 'assigned_to.full_name'] }],
  ])('%s naming an unreadable field is a 403 on v1 and v2', async (_label, params) => {
    for (const version of ['v1', 'v2'] as const) {
      const res = await list(reader, params, version);
      expect(res.status).toBe(403);
      expect(res.body.exc_type).toBe('PermissionError');
    }
  });

  test('the refusal is the same whether or not a guessed value exists (no oracle)', async () => {
    const hit = await list(reader, { filters: [['cost', '=', 40]] });
    const miss = await list(reader, { filters: [['cost', '=', 41]] });
    expect([hit.status, miss.status]).toEqual([403, 403]);
    expect(hit.body).toEqual(miss.body);
    const count = (value: number) =>
      s.t.http
        .get('/api/v2/doctype/Query%20Order/count')
        .query(query({ filters: [['cost', '=', value]] }))
        .set('Authorization', reader);
    const [a, b] = [await count(40), await count(41)];
    expect([a.status, b.status]).toEqual([403, 403]);
    expect(a.body).toEqual(b.body);
  });

  test('readable Link-target and child fields work', async () => {
    const res = await list(reader, {
      fields: ['title', 'customer.region', 'lines.item'],
      filters: { title: 'beta' },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([{ title: 'beta', 'customer.region': 'South', 'lines.item': 'bolt' }]);
  });
});

describe('if_owner', () => {
  test("list, include=count and count see only the owner's rows", async () => {
    for (const title of ['mine 1', 'mine 2']) {
      const res = await s.t.http
        .post('/api/v2/document/Query%20Order')
        .set('Authorization', ownerReader)
        .send({ title });
      expect(res.status).toBe(201);
    }
    const res = await list(ownerReader, { fields: ['title'], include: 'count', order_by: 'title' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: [{ title: 'mine 1' }, { title: 'mine 2' }],
      has_next_page: false,
      count: 2,
    });
    const v1 = await list(
      ownerReader,
      {
        fields: ['title'],
        or_filters: [
          ['title', '=', 'alpha'],
          ['title', 'like', 'mine%'],
        ],
      },
      'v1',
    );
    expect(v1.body.data.map((r: { title: string }) => r.title).sort()).toEqual(['mine 1', 'mine 2']);
    const count = await s.t.http.get('/api/v2/doctype/Query%20Order/count').set('Authorization', ownerReader);
    expect(count.body).toEqual({ data: 2 });
  });
});

describe("the reader's row restriction on a Link target", () => {
  test('a joined column of a linked row the reader may not see is null; an expansion keeps the plain name', async () => {
    const own = await s.t.http
      .post('/api/v2/document/Query%20Customer')
      .set('Authorization', s.t.adminToken)
      .send({ customer_name: 'Own Co', region: 'East' });
    expect(own.status).toBe(201);
    await s.t.site.db
      .knex('tabQuery Customer')
      .where({ name: 'Own Co' })
      .update({ owner: 'query-owner@example.com' });
    for (const [title, customer] of [
      ['linked to Acme', 'Acme'],
      ['linked to Own Co', 'Own Co'],
    ]) {
      const res = await s.t.http
        .post('/api/v2/document/Query%20Order')
        .set('Authorization', ownerReader)
        .send({ title, customer });
      expect(res.status).toBe(201);
    }
    const filters = { title: ['like', 'linked to%'] };
    const joined = await list(ownerReader, {
      fields: ['title', 'customer.region'],
      filters,
      order_by: 'title',
    });
    expect(joined.status).toBe(200);
    expect(joined.body.data).toEqual([
      { title: 'linked to Acme', 'customer.region': null },
      { title: 'linked to Own Co', 'customer.region': 'East' },
    ]);
    const expanded = await list(ownerReader, {
      fields: ['title', 'customer'],
      filters,
      order_by: 'title',
      expand: ['customer'],
    });
    expect(expanded.body.data[0].customer).toBe('Acme');
    expect(expanded.body.data[1].customer).toMatchObject({ name: 'Own Co', region: 'East' });
  });
});

describe('link expansion', () => {
  test('v1 get expand_links=1 replaces Link values, child rows too (Administrator)', async () => {
    const res = await s.t.http
      .get(`/api/resource/Query%20Order/${s.names.alpha}`)
      .query({ expand_links: 1 })
      .set('Authorization', s.t.adminToken);
    expect(res.status).toBe(200);
    expect(res.body.data.customer).toMatchObject({
      name: 'Acme',
      doctype: 'Query Customer',
      customer_name: 'Acme',
      region: 'North',
      credit_limit: 1000,
    });
    expect(res.body.data.lines[0].customer).toMatchObject({ name: 'Globex', region: 'South' });
    expect(res.body.data.lines[1]).not.toHaveProperty('customer');
  });

  test('a reader gets linked documents without the fields the reader may not read; unreadable DocTypes stay names', async () => {
    const res = await s.t.http
      .get(`/api/resource/Query%20Order/${s.names.eta}`)
      .query({ expand_links: 1 })
      .set('Authorization', reader);
    expect(res.status).toBe(200);
    expect(res.body.data.customer).toMatchObject({ name: 'Acme', region: 'North' });
    expect(res.body.data.customer).not.toHaveProperty('credit_limit');
    expect(res.body.data.assigned_to).toBe('Administrator');
  });

  test("Administrator's expanded User has no Password values", async () => {
    const res = await s.t.http
      .get(`/api/resource/Query%20Order/${s.names.eta}`)
      .query({ expand_links: 1 })
      .set('Authorization', s.t.adminToken);
    expect(res.body.data.assigned_to).toMatchObject({ name: 'Administrator', doctype: 'User' });
    expect(res.body.data.assigned_to).not.toHaveProperty('new_password');
    expect(JSON.stringify(res.body)).not.toMatch(/api_secret/);
  });

  test('list expand=["customer"] on v1 and v2, with the reader\'s field access', async () => {
    for (const version of ['v1', 'v2'] as const) {
      const res = await list(
        reader,
        {
          fields: ['title', 'customer'],
          filters: { title: ['in', ['beta', 'gamma']] },
          expand: ['customer'],
          order_by: 'title',
        },
        version,
      );
      expect(res.status).toBe(200);
      expect(res.body.data[0].customer).toMatchObject({ name: 'Globex', region: 'South' });
      expect(res.body.data[0].customer).not.toHaveProperty('credit_limit');
      expect(res.body.data[1].customer).toBeNull();
    }
  });

  test('expand of a field that is not a Link, or not selected, is a 400', async () => {
    expect((await list(reader, { expand: ['title'] })).status).toBe(400);
    expect((await list(reader, { fields: ['title'], expand: ['customer'] })).status).toBe(400);
  });
});
