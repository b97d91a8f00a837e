// A list row holds exactly the values a document read answers (the list path's own transport — on SQLite one JSON
// array per row — must not change text, numbers, NULLs or datetimes), for awkward text and fractional numbers too, and
// the rows of an answer are the caller's own (a remembered page is copied, never handed out).
import { listDocuments } from '../../runtime/operations/list-operations';
import { PATHS, query, seededSite, type Seeded } from './query-site';

let s: Seeded;
beforeAll(async () => {
  s = await seededSite();
});
afterAll(() => s.t.close());

const AWKWARD = {
  title: 'quote " backslash \\ tab \t newline \n bell \u0007 line sep \u2028 é 😀 [1,2] {"a":null}',
  status: 'Open',
  amount: 0.1 + 0.2,
  qty: -7,
  urgent: 1,
  ship_at: '2024-05-06 07:08:09.123456',
  note: null,
};

test('every field of a listed row equals the document read, in v1 and v2', async () => {
  const created = await s.t.http.post(`${PATHS.v2}`).set('Authorization', s.t.adminToken).send(AWKWARD);
  expect(created.status).toBe(201);
  const name = created.body.data.name as string;
  const doc = (await s.t.http.get(`${PATHS.v2}/${name}`).set('Authorization', s.t.adminToken)).body
    .data as Record<string, unknown>;
  expect(doc.title).toBe(AWKWARD.title);
  for (const version of ['v1', 'v2'] as const) {
    const res = await s.t.http
      .get(PATHS[version])
      .query(query({ filters: { name } }))
      .set('Authorization', s.t.adminToken);
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1);
    const row = res.body.data[0] as Record<string, unknown>;
    for (const [key, value] of Object.entries(row)) expect([key, value]).toEqual([key, doc[key]]);
    expect(row).toMatchObject({
      title: AWKWARD.title,
      qty: -7,
      urgent: 1,
      ship_at: AWKWARD.ship_at,
      note: null,
    });
  }
});

test('value lists (as_dict=0) and a joined column carry the same values', async () => {
  const res = await s.t.http
    .get(PATHS.v1)
    .query(
      query({
        fields: ['title', 'amount', 'customer.region', 'lines.rate'],
        filters: { title: 'alpha' },
        order_by: 'lines.rate asc',
        as_dict: 0,
      }),
    )
    .set('Authorization', s.t.adminToken);
  expect(res.status).toBe(200);
  expect(res.body.data).toEqual([
    ['alpha', 100, 'North', 0.25],
    ['alpha', 100, 'North', 1.5],
    ['alpha', 100, 'North', 1.5],
  ]);
});

test('changing the rows of one answer leaves the next answer as it was', async () => {
  const caller = {
    site: s.t.site,
    user: { name: 'Administrator', roles: new Set(['Administrator', 'System Manager']) },
    version: 2 as const,
  };
  const params = { fields: '["title","amount",{"lines":["item"]}]', filters: '{"title":"alpha"}' };
  const first = (await listDocuments(caller, 'Query Order', params)).data as Record<string, unknown>[];
  expect(first).toEqual([
    { title: 'alpha', amount: 100, lines: [{ item: 'bolt' }, { item: 'nut' }, { item: 'bolt' }] },
  ]);
  const row = first[0] as Record<string, unknown>;
  row.title = 'changed';
  delete row.amount;
  expect((await listDocuments(caller, 'Query Order', params)).data).toEqual([
    { title: 'alpha', amount: 100, lines: [{ item: 'bolt' }, { item: 'nut' }, { item: 'bolt' }] },
  ]);
});
