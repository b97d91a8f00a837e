// Hostile list/query parameters (security.md §6.3 #17-#32) against every list-shaped surface: v1 and v2 lists, the v2
// count, frappe.client.get_list / get_count. Each is refused with 400 or 403 (or, for hostile values, answered with
// no rows), fast, with the tables intact.
import { countRows, expectRefused } from '../api/api-version';
import { createUser } from '../helpers/test-site';
import { query, seededSite, type Seeded } from './query-site';

let s: Seeded;
let reader: string;
const HOSTILE_VALUE = "back\\slash' OR 1=1 -- ";
beforeAll(async () => {
  s = await seededSite();
  reader = await createUser(s.t, 'hostile-reader@example.com', ['Query Reader']);
  await s.t.http
    .post('/api/v2/document/Query%20Order')
    .set('Authorization', s.t.adminToken)
    .send({ title: HOSTILE_VALUE });
});
afterAll(() => s.t.close());

type Surface = 'v1 list' | 'v2 list' | 'v2 count' | 'get_list' | 'get_count';
const LISTS: Surface[] = ['v1 list', 'v2 list', 'get_list'];
const ALL_SURFACES: Surface[] = [...LISTS, 'v2 count', 'get_count'];

function call(
  surface: Surface,
  params: Record<string, unknown>,
  auth = s.t.adminToken,
  doctype = 'Query Order',
) {
  const dt = encodeURIComponent(doctype);
  const path = {
    'v1 list': `/api/resource/${dt}`,
    'v2 list': `/api/v2/document/${dt}`,
    'v2 count': `/api/v2/doctype/${dt}/count`,
    get_list: '/api/method/frappe.client.get_list',
    get_count: '/api/method/frappe.client.get_count',
  }[surface];
  const extra = surface.startsWith('get_') ? { doctype } : {};
  return s.t.http
    .get(path)
    .query(query({ ...extra, ...params }))
    .set('Authorization', auth);
}

/** Refused with `status`, in under a second, nothing changed (the watched tables and Query Order). */
async function refused(
  surface: Surface,
  params: Record<string, unknown>,
  status: number,
  auth?: string,
  doctype?: string,
) {
  const orders = await countRows(s.t, 'Query Order');
  const started = Date.now();
  const res = await expectRefused(s.t, () => call(surface, params, auth, doctype), status);
  expect(Date.now() - started).toBeLessThan(1000);
  expect(res.body.exc_type).toBe(status === 403 ? 'PermissionError' : 'DataError');
  // No driver error text (the message may quote the user's own input, never SQL the server built).
  expect(JSON.stringify(res.body)).not.toMatch(
    /SQLITE_[A-Z]|\bER_[A-Z]|: syntax error|error in your SQL syntax/,
  );
  expect(await countRows(s.t, 'Query Order')).toBe(orders);
  return res;
}

const F5 = [
  'title, version()',
  'title, IF(issingle=1, (select name from tabUser), count(name))',
  'title, (select count(*) from tabSessions)',
  "title, SELECT LOCATE('', `tabUser`.`user`) AS user;",
  "title ''",
  "title,'",
  'select * from tabSessions',
  'title from --',
  'title from tabDocType order by 2 --',
  "1' UNION SELECT * FROM __Auth --",
  '@@version',
  '(insert into tabUser values (1))',
  '(select name from `tabUser` where `tabDocType`.owner = `tabUser`.name )',
  'sqlite_version()',
  '(select sql from sqlite_master)',
  "load_extension('x')",
  'title as `x`; drop table tabToDo',
  'title as x from tabUser --',
  'count(name) from tabUser',
  'count(name) as n; drop table tabToDo',
  'sum(qty) over ()',
];

describe('#17 #18 #20 fields', () => {
  test.each([['*', '(select password from __Auth)'], ...F5.map((f) => ['name', f])])(
    '%s, %s → 400 DataError',
    async (...fields) => {
      for (const surface of LISTS) await refused(surface, { fields }, 400);
    },
  );

  test.each([
    ['an object', { 0: 'name' }],
    ['a nested list', [['name']]],
    ['a number', 5],
  ])('fields as %s → 400', async (_label, fields) => {
    for (const surface of LISTS) await refused(surface, { fields }, 400);
  });

  test('5,000 fields (in a JSON body) → 400', async () => {
    const fields = Array.from({ length: 5000 }, () => 'name');
    for (const path of ['/api/resource/Query%20Order', '/api/v2/document/Query%20Order']) {
      const res = await expectRefused(
        s.t,
        () => s.t.http.get(path).set('Authorization', s.t.adminToken).send({ fields }),
        400,
        'DataError',
      );
      expect(res.body.exception).toMatch(/at most 500/);
    }
  });
});

describe('#19 #23 Password and unreadable fields: 403, the same answer whatever is guessed', () => {
  test.each([['api_secret'], ['`tabUser`.`api_secret`'], ['User.api_secret'], ['new_password']])(
    'User fields %s → 403',
    async (field) => {
      for (const surface of LISTS)
        await refused(surface, { fields: ['name', field] }, 403, s.t.adminToken, 'User');
    },
  );

  test('oracle attempts on User.api_secret in filters and order_by', async () => {
    for (const surface of ALL_SURFACES) {
      const bodies = new Set<string>();
      for (const prefix of ['a%', 'b%', '%']) {
        bodies.add(
          JSON.stringify(
            (
              await refused(
                surface,
                { filters: [['User', 'api_secret', 'like', prefix]] },
                403,
                s.t.adminToken,
                'User',
              )
            ).body,
          ),
        );
      }
      expect(bodies.size).toBe(1);
    }
    for (const surface of LISTS)
      await refused(surface, { order_by: 'api_secret' }, 403, s.t.adminToken, 'User');
  });

  test('a permlevel-1 field as a reader, in every parameter', async () => {
    for (const surface of LISTS) {
      await refused(surface, { fields: ['cost'] }, 403, reader);
      await refused(surface, { order_by: 'cost' }, 403, reader);
      await refused(surface, { fields: ['cost'], group_by: 'cost' }, 403, reader);
    }
    for (const surface of ALL_SURFACES) {
      await refused(surface, { filters: [['cost', '>', 0]] }, 403, reader);
      await refused(
        surface,
        {
          or_filters: [
            ['cost', '>', 0],
            ['title', '=', 'x'],
          ],
        },
        403,
        reader,
      );
    }
  });
});

describe('#21 hostile values are bound literally', () => {
  test.each([["x' OR 1=1 -- "], ['%" OR "1"="1'], ["') OR ('1'='1"]])('%s matches nothing', async (value) => {
    for (const surface of LISTS) {
      const res = await call(surface, { filters: [['Query Order', 'title', '=', value]] });
      expect(res.status).toBe(200);
      expect(res.body.data ?? res.body.message).toEqual([]);
    }
    expect((await call('v2 count', { filters: { title: value } })).body).toEqual({ data: 0 });
  });

  test('a value with a backslash and a quote matches exactly its own row (MariaDB backslash escapes)', async () => {
    for (const surface of ['v1 list', 'v2 list'] as const) {
      const res = await call(surface, { fields: ['title'], filters: [['title', '=', HOSTILE_VALUE]] });
      expect(res.body.data).toEqual([{ title: HOSTILE_VALUE }]);
    }
    const like = await call('v2 list', { fields: ['title'], filters: [['title', 'like', 'back\\\\slash%']] });
    expect(like.body.data).toEqual([{ title: HOSTILE_VALUE }]);
  });
});

describe('#22 #24 #25 #26 #27 filters', () => {
  test.each([
    ['a field name with a comma', { 'istable,': 1 }],
    ['SQL in a field name', [['Query Order', 'beta and 1=1', '=', 0]]],
    ['an unknown field', { nosuchfield: 1 }],
    ['an unknown operator', [['name', 'regexp', '.*']]],
    ['SQL as the operator', [['name', '; drop', 1]]],
    ['a five-element condition', [['Query Order', 'name', '=', 'x', 'y']]],
    ['a one-element condition', [['name']]],
    ['__proto__', '{"__proto__": {"isAdmin": true}}'],
    ['constructor.prototype', '{"constructor": {"prototype": {"polluted": 1}}}'],
    ['between with SQL in a date', [['order_date', 'between', ['2020-01-01', "x'; --"]]]],
    ['is with another value', [['title', 'is', 'null or 1=1']]],
    ['a nested object as a value', [['title', '=', { $ne: 1 }]]],
    ['a list as an = value', [['title', '=', ['a']]]],
    ['groups nested too deep', JSON.parse(`${'['.repeat(12)}["title","=","x"]${']'.repeat(12)}`)],
    ['a filter on a child table of another DocType', [['Has Role', 'role', '=', 'System Manager']]],
    ['a Link-target filter', [['customer.credit_limit', '>', 0]]],
    // PostgreSQL binds these to the Int column's bigint and failed (500); every database refuses them alike.
    ['a fraction on an Int field', [['qty', '=', 2.5]]],
    ['an Int value past 2^53', [['qty', '>', 2 ** 63]]],
    ['1e20 in an Int in-list', [['qty', 'in', [1, 1e20]]]],
    ['a NUL in a text value', [['title', '=', 'a\u0000b']]],
    ['a NUL in an in-list', [['name', 'in', ['x', 'y\u0000']]]],
    ['a NUL in a like pattern', [['title', 'like', '%\u0000%']]],
  ])('%s → 400', async (_label, filters) => {
    for (const surface of ALL_SURFACES)
      await refused(
        surface,
        { filters: typeof filters === 'string' ? filters : JSON.stringify(filters) },
        400,
      );
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test('a child-table filter on User as a reader who may not read User → 403', async () => {
    for (const surface of ALL_SURFACES)
      await refused(surface, { filters: [['Has Role', 'role', '=', 'System Manager']] }, 403, reader, 'User');
  });

  test('in [] and in null match nothing; not in [] restricts nothing', async () => {
    expect((await call('v2 count', { filters: { name: ['in', []] } })).body.data).toBe(0);
    expect((await call('v2 count', { filters: { name: ['in', null] } })).body.data).toBe(0);
    expect((await call('v2 count', { filters: { name: ['not in', []] } })).body.data).toBe(7);
  });

  test('truncated JSON, a repeated parameter and an in-list over the cap → 400', async () => {
    for (const surface of ALL_SURFACES) {
      await refused(surface, { filters: '[["name","=",' }, 400);
      const started = Date.now();
      const res = await s.t.http
        .get(
          surface === 'v2 count'
            ? '/api/v2/doctype/Query%20Order/count'
            : '/api/v2/document/Query%20Order?filters=[]&filters=[]',
        )
        .set('Authorization', s.t.adminToken)
        .query(surface === 'v2 count' ? 'filters=[]&filters=[]' : '');
      expect(res.status).toBe(400);
      expect(Date.now() - started).toBeLessThan(1000);
    }
    const big = await s.t.http
      .get('/api/v2/document/Query%20Order')
      .set('Authorization', s.t.adminToken)
      .send({ filters: [['name', 'in', Array.from({ length: 100_000 }, (_, i) => `n${i}`)]] });
    expect(big.status).toBe(400);
    expect(big.body.exc_type).toBe('DataError');
  });
});

describe('filter values past what one statement binds', () => {
  const names = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `n${from + i}`);
  // Too long for a query string (431): in a JSON body, as a GET may carry one, or a get_list / get_count POST.
  const withBody = (surface: Surface, params: Record<string, unknown>) => {
    const dt = 'Query%20Order';
    if (surface.startsWith('get_'))
      return s.t.http
        .post(`/api/method/frappe.client.${surface}`)
        .set('Authorization', s.t.adminToken)
        .send({ doctype: 'Query Order', ...params });
    const path = { 'v1 list': `/api/resource/${dt}`, 'v2 list': `/api/v2/document/${dt}` }[
      surface as 'v1 list' | 'v2 list'
    ];
    return s.t.http
      .get(path ?? `/api/v2/doctype/${dt}/count`)
      .set('Authorization', s.t.adminToken)
      .send(params);
  };

  test('in-lists of 10,000 each, four or seven of them → 400 on every surface, not a database error', async () => {
    for (const count of [4, 7]) {
      const filters = Array.from({ length: count }, (_, k) => ['name', 'not in', names(10_000, k * 10_000)]);
      for (const surface of ALL_SURFACES) {
        const res = await withBody(surface, { filters });
        expect(res.status).toBe(400);
        expect(res.body.exc_type).toBe('DataError');
        expect(JSON.stringify(res.body)).toContain('at most 10000 values in all');
      }
    }
  });

  test('10,000 values in all still pass', async () => {
    const res = await withBody('v2 count', {
      filters: [
        ['name', 'not in', names(9_999)],
        ['title', '!=', 'x'],
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toBe(7);
  });

  test('a Check compared with a value no smallint holds → 400 on every database (PostgreSQL: a 500 before)', async () => {
    for (const value of [32768, -32769, 2147483648]) {
      const res = await call('v2 list', { filters: [['urgent', '=', value]] });
      expect(res.status).toBe(400);
      expect(res.body.exc_type).toBe('DataError');
    }
    expect((await call('v2 count', { filters: [['urgent', '=', 32767]] })).body.data).toBe(0);
  });

  test('a like pattern ending in a lone backslash matches a literal backslash (PostgreSQL: a 500 before)', async () => {
    for (const pattern of ['\\', '%\\', 'back\\']) {
      const res = await call('v2 count', { filters: [['title', 'like', pattern]] });
      expect(res.status).toBe(200);
      expect(res.body.data).toBe(0);
    }
    const res = await call('v2 count', { filters: [['title', 'like', 'back\\%']] });
    expect(res.status).toBe(200);
  });
});

describe('#28 #29 order_by', () => {
  test.each([
    'name; drop table tabToDo',
    'sleep (1) asc',
    'SLEEP\n(1)',
    'BENCHMARK(1e7,md5(1))',
    '(select rank from tabX where 1=1) asc',
    'if(1=1,name,creation)',
    'name` desc, (select 1)#',
    "case when (select substr(password,1,1) from __Auth limit 1)='a' then name else creation end",
    'name asc nulls last',
    'name desc limit 1',
    '1',
    'name collate nocase',
  ])('%s → 400', async (orderBy) => {
    for (const surface of LISTS) await refused(surface, { order_by: orderBy }, 400);
  });
});

describe('#30 group_by', () => {
  test.each([
    'SLEEP(0)',
    'owner having 1=1',
    'owner with rollup',
    '(select 1)',
    'owner desc',
    'owner; drop table tabToDo',
  ])('%s → 400', async (groupBy) => {
    for (const surface of LISTS) await refused(surface, { fields: ['owner'], group_by: groupBy }, 400);
  });
});

describe('#31 paging', () => {
  test.each([
    { limit: -1, limit_page_length: -1 },
    { limit_start: -5, start: -5 },
    { limit: 'abc', limit_page_length: 'abc' },
    { limit: '1e9', limit_page_length: '1e9' },
    { start: '1e12', limit_start: '1e12' },
    { limit: '10; drop table tabToDo', limit_page_length: '10 or 1=1' },
  ])('%o → 400', async (params) => {
    for (const surface of LISTS) await refused(surface, params, 400);
  });

  test('huge values are clamped to max_page_length, never unbounded', async () => {
    for (const surface of LISTS) {
      const res = await call(surface, {
        limit: 1_000_000_000,
        limit_page_length: 1_000_000_000,
        start: 1_000_000_000_000,
        limit_start: 1_000_000_000_000,
      });
      expect(res.status).toBe(200);
      expect(res.body.data ?? res.body.message).toEqual([]);
    }
  });
});

describe('#32 count, include and debug', () => {
  test('debug=1 as a reader is ignored: no SQL in the answer', async () => {
    const res = await call('v2 list', { debug: 1, fields: ['title'], limit: 1 }, reader);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['data', 'has_next_page']);
  });

  test('an unknown include part → 400', async () => {
    await refused('v2 list', { include: 'count,sql' }, 400);
  });
});
