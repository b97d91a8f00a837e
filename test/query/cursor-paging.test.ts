// Keyset pagination of v2 lists: walking by `cursor` gives every row once, in the order of order_by then name (ties
// and NULLs included), and a hostile or malformed cursor is 400 without touching SQL.
import { createTestSite, DB_KIND, type TestSite } from '../helpers/test-site';

const ROWS = 53;
let t: TestSite;

beforeAll(async () => {
  t = await createTestSite();
  const knex = t.site.db.knex;
  const cat = (a: string, b: string) => (DB_KIND === 'sqlite' ? `(${a} || ${b})` : `concat(${a}, ${b})`);
  // Zero-padded n % m + add as text; PostgreSQL pads text only, and takes text into a timestamp or date column only cast.
  const pad = (m: number, add: number) =>
    DB_KIND === 'sqlite'
      ? `substr('00' || (${add} + n % ${m}), -2)`
      : `lpad(${DB_KIND === 'postgres' ? `(${add} + n % ${m})::text` : `${add} + n % ${m}`}, 2, '0')`;
  const as = (type: string) => (DB_KIND === 'postgres' ? `::${type}` : '');
  // modified has ties (7 values), date is NULL on every fourth row, priority has three values.
  await knex.raw(
    `insert into ?? (name, creation, modified, owner, modified_by, docstatus, idx, status, priority, date, description)
     with recursive seq(n) as (select 1 union all select n + 1 from seq where n < ${ROWS})
     select ${cat("'cur-'", 'n')}, '2026-01-01 00:00:00.000000', ${cat("'2026-01-01 00:00:'", pad(7, 0))}${as('timestamp')}, 'Administrator',
            'Administrator', 0, 0, 'Open',
            case when n % 3 = 0 then 'Low' when n % 3 = 1 then 'Medium' else 'High' end,
            case when n % 4 = 0 then null else ${cat("'2026-02-'", pad(9, 1))}${as('date')} end,
            ${cat("'row '", 'n')} from seq`,
    ['tabToDo'],
  );
});
afterAll(() => t.close());

const get = (path: string) => t.http.get(path).set('Authorization', t.adminToken);
const q = (value: unknown) => encodeURIComponent(JSON.stringify(value));
const BASE = '/api/v2/document/ToDo';

async function walk(extra: string, limit: number): Promise<{ names: string[]; pages: number }> {
  const names: string[] = [];
  let cursor = '';
  for (let pages = 1; pages < 100; pages++) {
    const res = await get(`${BASE}?limit=${limit}&cursor=${encodeURIComponent(cursor)}${extra}`);
    expect(res.status).toBe(200);
    names.push(...res.body.data.map((r: { name: string }) => r.name));
    expect(res.body.has_next_page).toBe(res.body.next_cursor !== null);
    if (res.body.next_cursor === null) return { names, pages };
    expect(typeof res.body.next_cursor).toBe('string');
    cursor = res.body.next_cursor;
  }
  throw new Error('did not end');
}

/** Every ToDo's name in the order the database gives for `orderBy`, NULLs first ascending, last descending. */
async function expected(column: string, direction: 'asc' | 'desc'): Promise<string[]> {
  const rows = (await t.site.db.knex('tabToDo').select('name', column)) as Record<string, unknown>[];
  const value = (r: Record<string, unknown>) => (r[column] === null ? null : String(r[column]));
  return rows
    .sort((a, b) => {
      const [x, y] = [value(a), value(b)];
      let c = 0;
      if (x !== y) c = x === null ? -1 : y === null ? 1 : x < y ? -1 : 1;
      if (direction === 'desc') c = -c;
      return c || (String(a.name) < String(b.name) ? -1 : 1);
    })
    .map((r) => String(r.name));
}

test('walking the default order (modified desc, with ties) gives every row once, in order', async () => {
  const { names, pages } = await walk('', 5);
  expect(names).toEqual(await expected('modified', 'desc'));
  expect(pages).toBe(Math.ceil(names.length / 5));
});

test('ascending and descending orders over a field with NULLs, the key column not among the fields', async () => {
  for (const direction of ['asc', 'desc'] as const) {
    const { names } = await walk(`&order_by=${encodeURIComponent(`date ${direction}`)}`, 4);
    expect(names).toEqual(await expected('date', direction));
  }
  const first = await get(`${BASE}?limit=2&cursor=&fields=${q(['description'])}&order_by=date%20asc`);
  expect(Object.keys(first.body.data[0])).toEqual(['description']);
});

test('two keys, mixed directions', async () => {
  const { names } = await walk(
    `&order_by=${encodeURIComponent('priority asc, modified desc')}&fields=${q(['name'])}`,
    6,
  );
  const rows = (await t.site.db.knex('tabToDo').select('name', 'priority', 'modified')) as Record<
    string,
    string
  >[];
  rows.sort((a, b) =>
    a.priority !== b.priority
      ? (a.priority as string) < (b.priority as string)
        ? -1
        : 1
      : a.modified !== b.modified
        ? (a.modified as string) > (b.modified as string)
          ? -1
          : 1
        : (a.name as string) < (b.name as string)
          ? -1
          : 1,
  );
  expect(names).toEqual(rows.map((r) => r.name));
});

test('without cursor the answer has no next_cursor; v1 ignores cursor', async () => {
  const plain = await get(`${BASE}?limit=2`);
  expect(plain.body.next_cursor).toBeUndefined();
  const v1 = await get(`/api/resource/ToDo?limit_page_length=2&cursor=abc`);
  expect(v1.status).toBe(200);
  expect(v1.body.next_cursor).toBeUndefined();
});

describe('hostile and malformed cursors are 400', () => {
  const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  let shape: string;
  beforeAll(async () => {
    const res = await get(`${BASE}?limit=1&cursor=&order_by=priority%20asc`);
    shape = JSON.parse(Buffer.from(res.body.next_cursor, 'base64url').toString())[0];
  });
  const cases: [string, () => string][] = [
    ['not base64url', () => "' or 1=1 --"],
    ['base64 of not JSON', () => Buffer.from('nope').toString('base64url')],
    ['JSON of the wrong shape', () => b64({ a: 1 })],
    ['too few values', () => b64([shape, 'Low'])],
    ['another order (default order cursor)', () => b64(['xxxxxxxxxx', 'Low', 'cur-1'])],
    ['a number for a text key', () => b64([shape, 5, 'cur-1'])],
    ['an object value', () => b64([shape, { $gt: '' }, 'cur-1'])],
    ['a null name', () => b64([shape, 'Low', null])],
    ['an overlong value', () => b64([shape, 'x'.repeat(5000), 'cur-1'])],
    ['an overlong cursor', () => 'A'.repeat(10_000)],
  ];
  test.each(cases)('%s', async (_, make) => {
    const res = await get(`${BASE}?limit=3&order_by=priority%20asc&cursor=${encodeURIComponent(make())}`);
    expect(res.status).toBe(400);
    expect(res.body.exc_type).toBe('DataError');
    expect(JSON.stringify(res.body)).not.toMatch(/select|tabToDo/i);
  });

  test('SQL in a well-formed value is only a value: bound, the table intact', async () => {
    const res = await get(
      `${BASE}?limit=3&order_by=priority%20asc&cursor=${b64([shape, "Low'; drop table `tabToDo`; --", 'cur-1'])}`,
    );
    expect(res.status).toBe(200);
    expect((await get(`${BASE}?limit=1`)).body.data).toHaveLength(1);
  });

  test('cursor with start, group_by or aggregates, or a repeated (non-string) cursor', async () => {
    for (const path of [
      `${BASE}?cursor=&start=5`,
      `${BASE}?cursor=&fields=${q(['status', 'count(name) as n'])}&group_by=status`,
      `${BASE}?cursor=a&cursor=b`,
    ]) {
      const res = await get(path);
      expect(res.status).toBe(400);
    }
  });
});
