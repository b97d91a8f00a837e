// order_by (default sort_field/sort_order, directions, comma lists), paging (v1 limit_start/limit_page_length, v2
// start/limit/has_next_page), max_page_length, include=count, and parameters sent as a JSON body on GET.
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite } from '../helpers/test-site';
import { PATHS, query, seededSite, type Seeded } from './query-site';

let s: Seeded;
beforeAll(async () => {
  s = await seededSite({ max_page_length: 4 });
});
afterAll(() => s.t.close());

const list = (version: 'v1' | 'v2', params: Record<string, unknown>) =>
  s.t.http
    .get(PATHS[version])
    .query(query({ fields: ['title'], ...params }))
    .set('Authorization', s.t.adminToken);
const titlesOf = (res: { body: { data: { title: string }[] } }) => res.body.data.map((r) => r.title);

describe('order_by', () => {
  test.each([
    ['the DocType default (sort_field amount, sort_order DESC)', {}, ['epsilon', 'beta', 'alpha', 'delta']],
    ['a field with no direction is ascending', { order_by: 'amount' }, ['gamma', 'zeta', 'delta', 'alpha']],
    ['desc', { order_by: 'title desc' }, ['zeta', 'gamma', 'epsilon', 'delta']],
    ['a comma list', { order_by: 'qty desc, title desc' }, ['beta', 'delta', 'zeta', 'epsilon']],
    [
      'a backticked qualified name',
      { order_by: '`tabQuery Order`.`title` DESC' },
      ['zeta', 'gamma', 'epsilon', 'delta'],
    ],
    [
      'a selected alias',
      { fields: ['title', 'amount as a'], order_by: 'a asc' },
      ['gamma', 'zeta', 'delta', 'alpha'],
    ],
  ])('%s', async (_label, params, expected) => {
    for (const version of ['v1', 'v2'] as const) {
      const res = await list(version, { limit: 4, limit_page_length: 4, ...params });
      expect(res.status).toBe(200);
      expect(titlesOf(res)).toEqual(expected);
    }
  });

  test.each([
    ['a function', 'sleep(1)'],
    ['a sub-query', '(select 1)'],
    ['a statement separator', 'title; drop table `tabQuery Order`'],
    ['an unknown field', 'nope desc'],
    ['a direction twice', 'title asc desc'],
    ['a trailing comma', 'title,'],
    ['a child field', 'lines.qty'],
  ])('%s is a 400', async (_label, orderBy) => {
    for (const version of ['v1', 'v2'] as const)
      expect((await list(version, { order_by: orderBy })).status).toBe(400);
  });
});

describe('paging', () => {
  test('v1 limit_start / limit_page_length; 0 means all up to max_page_length', async () => {
    const page = (start: number, length: number) =>
      list('v1', { order_by: 'title', limit_start: start, limit_page_length: length });
    expect(titlesOf(await page(0, 2))).toEqual(['alpha', 'beta']);
    expect(titlesOf(await page(2, 2))).toEqual(['delta', 'epsilon']);
    expect(titlesOf(await page(5, 2))).toEqual(['zeta']);
    expect(titlesOf(await page(0, 0))).toEqual(['alpha', 'beta', 'delta', 'epsilon']);
    expect(titlesOf(await page(0, 50))).toHaveLength(4);
    expect(titlesOf(await list('v1', { order_by: 'title', limit: 3 }))).toHaveLength(3);
  });

  test('v2 start / limit / has_next_page (fetches one extra row), capped by max_page_length', async () => {
    const page = async (start: number, limit: number) => {
      const res = await list('v2', { order_by: 'title', start, limit });
      expect(res.status).toBe(200);
      return [titlesOf(res), res.body.has_next_page];
    };
    expect(await page(0, 2)).toEqual([['alpha', 'beta'], true]);
    expect(await page(4, 2)).toEqual([['gamma', 'zeta'], false]);
    expect(await page(3, 3)).toEqual([['epsilon', 'gamma', 'zeta'], false]);
    expect(await page(0, 100)).toEqual([['alpha', 'beta', 'delta', 'epsilon'], true]);
    expect(await page(0, 0)).toEqual([[], false]);
  });

  test('the default page is 20 rows (a site without max_page_length 4)', async () => {
    const t = await createTestSite({ registry: await fixtureRegistry() });
    try {
      for (let i = 0; i < 22; i++)
        await t.http
          .post('/api/v2/document/Query%20Customer')
          .set('Authorization', t.adminToken)
          .send({ customer_name: `C${i}` });
      for (const path of ['/api/resource/Query%20Customer', '/api/v2/document/Query%20Customer']) {
        const res = await t.http.get(path).set('Authorization', t.adminToken);
        expect(res.body.data).toHaveLength(20);
      }
    } finally {
      await t.close();
    }
  });

  test.each([
    ['negative', { limit: -1, limit_page_length: -1 }],
    ['non-integer', { limit: 'abc', limit_page_length: 'abc' }],
    ['exponent notation', { limit: '1e9', limit_page_length: '1e9' }],
    ['fractional', { limit: '2.5', limit_page_length: '2.5' }],
    ['negative start', { start: -5, limit_start: -5 }],
  ])('%s paging values are a 400', async (_label, params) => {
    for (const version of ['v1', 'v2'] as const) {
      const res = await list(version, params);
      expect(res.status).toBe(400);
      expect(res.body.exc_type).toBe('DataError');
    }
  });
});

describe('include=count', () => {
  test('v2 adds the filtered count beside data and has_next_page', async () => {
    const res = await list('v2', { filters: { status: 'Open' }, include: 'count', limit: 1 });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['count', 'data', 'has_next_page']);
    expect(res.body).toMatchObject({ count: 3, has_next_page: true });
    expect((await list('v2', { include: ['count'] })).body.count).toBe(6);
  });

  test("the v2 count endpoint caps its answer at a positive limit, as Frappe's get_count", async () => {
    const countOf = async (params: Record<string, unknown>) =>
      (
        await s.t.http
          .get('/api/v2/doctype/Query%20Order/count')
          .query(query(params))
          .set('Authorization', s.t.adminToken)
      ).body;
    expect(await countOf({})).toEqual({ data: 6 });
    expect(await countOf({ limit: 2 })).toEqual({ data: 2 });
    expect(await countOf({ limit: 100 })).toEqual({ data: 6 });
    expect(await countOf({ limit: 0 })).toEqual({ data: 6 });
    expect(await countOf({ filters: { status: 'Open' }, limit: 2 })).toEqual({ data: 2 });
    expect((await countOf({ limit: -1 })).exc_type).toBe('DataError');
  });

  test('an unknown part is a 400', async () => {
    expect((await list('v2', { include: 'everything' })).status).toBe(400);
  });

  test('v1 has no include parameter: it is ignored', async () => {
    const res = await list('v1', { include: 'count', limit_page_length: 1 });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['data']);
  });
});

test('parameters as a JSON body on GET (as Frappe clients send them)', async () => {
  const res = await s.t.http
    .get(PATHS.v2)
    .set('Authorization', s.t.adminToken)
    .send({ fields: ['title'], filters: [['status', '=', 'Closed']], order_by: 'title desc', limit: 5 });
  expect(res.status).toBe(200);
  expect(titlesOf(res)).toEqual(['zeta', 'beta']);
});
