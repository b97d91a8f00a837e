// Every filter operator and syntax (v1 lists, dicts, v2 nested groups, or_filters, child-table conditions) on v1 and v2,
// with Frappe's NULL rules; the same answers on SQLite and MariaDB.
import { PATHS, ALL, query, seededSite, titles, type Seeded } from './query-site';

let s: Seeded;
beforeAll(async () => {
  s = await seededSite();
});
afterAll(() => s.t.close());

const list = (version: 'v1' | 'v2', params: Record<string, unknown>) =>
  s.t.http
    .get(PATHS[version])
    .query(query({ fields: ['title'], limit_page_length: 0, limit: 100, ...params }))
    .set('Authorization', s.t.adminToken);

async function expectTitles(params: Record<string, unknown>, expected: string[]): Promise<void> {
  for (const version of ['v1', 'v2'] as const) {
    const res = await list(version, params);
    expect({ version, status: res.status, body: res.status === 200 ? titles(res.body) : res.body }).toEqual({
      version,
      status: 200,
      body: [...expected].sort(),
    });
  }
}

describe('operators', () => {
  test.each([
    ['= (two-element form)', [['status', 'Open']], ['alpha', 'gamma', 'epsilon']],
    ['= (three-element form)', [['status', '=', 'Open']], ['alpha', 'gamma', 'epsilon']],
    ['= (four-element form)', [['Query Order', 'status', '=', 'Open']], ['alpha', 'gamma', 'epsilon']],
    ['!= includes NULL', [['customer', '!=', 'Acme']], ['beta', 'gamma', 'epsilon', 'zeta']],
    ['= "" matches NULL and empty', [['note', '=', '']], ['beta', 'gamma', 'zeta']],
    ['!= "" excludes NULL and empty', [['note', '!=', '']], ['alpha', 'delta', 'epsilon']],
    ['>', [['amount', '>', 100]], ['beta', 'epsilon']],
    ['<', [['amount', '<', 100]], ['gamma', 'delta', 'zeta']],
    ['>=', [['amount', '>=', 100]], ['alpha', 'beta', 'epsilon']],
    ['<=', [['amount', '<=', 75]], ['gamma', 'delta', 'zeta']],
    ['numeric text value', [['qty', '=', '2']], ['epsilon', 'zeta']],
    ['boolean value on a Check', [['urgent', '=', true]], ['alpha', 'delta']],
    ['like', [['title', 'like', '%ta']], ['beta', 'delta', 'zeta']],
    ['like is case-insensitive', [['title', 'like', 'ALP%']], ['alpha']],
    ['not like', [['title', 'not like', '%a']], ['epsilon']],
    ['like with an escaped %', [['note', 'like', 'x\\%y']], ['epsilon']],
    ['in', [['status', 'in', ['Closed', 'Cancelled']]], ['beta', 'delta', 'zeta']],
    ['in as comma text', [['status', 'in', 'Closed, Cancelled']], ['beta', 'delta', 'zeta']],
    ['not in includes NULL', [['customer', 'not in', ['Acme', 'Globex']]], ['gamma', 'zeta']],
    ['in [] matches nothing', [['status', 'in', []]], []],
    ['not in [] restricts nothing', [['status', 'not in', []]], ALL],
    ['between numbers', [['amount', 'between', [75, 250.5]]], ['alpha', 'beta', 'delta']],
    ['between dates', [['order_date', 'between', ['2024-01-10', '2024-02-01']]], ['alpha', 'beta']],
    [
      'between widens a Datetime to whole days',
      [['ship_at', 'between', ['2024-02-01', '2024-02-01']]],
      ['beta'],
    ],
    ['is set', [['customer', 'is', 'set']], ['alpha', 'beta', 'delta', 'epsilon', 'zeta']],
    ['is not set', [['order_date', 'is', 'not set']], ['delta']],
    ['timespan today', [['order_date', 'timespan', 'today']], ['zeta']],
    ['timespan last 7 days', [['order_date', 'timespan', 'last 7 days']], ['zeta']],
    ['timespan last year matches nothing seeded', [['order_date', 'timespan', 'next year']], []],
    ["Frappe's previous: last week holds no seeded date", [['order_date', 'previous', '1 week']], []],
    ["Frappe's next: next month holds no seeded date", [['order_date', 'next', '1 month']], []],
    ['operators are case-insensitive', [['title', 'LIKE', 'b%']], ['beta']],
    ['= on a Date', [['order_date', '=', '2024-02-15']], ['gamma']],
    ['> on a Datetime with a bare date', [['ship_at', '>', '2024-01-10']], ['alpha', 'beta']],
  ])('%s', async (_label, filters, expected) => {
    await expectTitles({ filters }, expected as string[]);
  });
});

describe('syntaxes', () => {
  test('dict: equality and [operator, value]', async () => {
    await expectTitles({ filters: { status: 'Open', amount: ['>', 50] } }, ['alpha', 'epsilon']);
  });

  test('or_filters are ORed together and ANDed with filters', async () => {
    await expectTitles(
      {
        or_filters: [
          ['status', '=', 'Cancelled'],
          ['amount', '>=', 500],
        ],
      },
      ['delta', 'epsilon'],
    );
    await expectTitles(
      {
        filters: [['urgent', '=', 1]],
        or_filters: [
          ['status', '=', 'Cancelled'],
          ['amount', '>=', 500],
        ],
      },
      ['delta'],
    );
    await expectTitles({ or_filters: { status: 'Closed', qty: 0 } }, ['beta', 'gamma', 'zeta']);
  });

  test('nested AND/OR groups (v2 syntax), also wrapped in a list', async () => {
    const tree = [['status', '=', 'Closed'], 'or', [['amount', '>', 400], 'and', ['qty', '=', 2]]];
    await expectTitles({ filters: tree }, ['beta', 'epsilon', 'zeta']);
    await expectTitles({ filters: [tree] }, ['beta', 'epsilon', 'zeta']);
  });

  test('a null value: = null is "not set", != null is "set"', async () => {
    await expectTitles({ filters: { customer: null } }, ['gamma']);
    await expectTitles({ filters: [['customer', '!=', null]] }, [
      'alpha',
      'beta',
      'delta',
      'epsilon',
      'zeta',
    ]);
  });

  test('mixing "and" and "or" in one group is a 400', async () => {
    const res = await list('v2', {
      filters: [['qty', '=', 1], 'and', ['qty', '=', 2], 'or', ['qty', '=', 3]],
    });
    expect(res.status).toBe(400);
    expect(res.body.exception).toMatch(/nested filters/);
  });
});

describe('child-table conditions', () => {
  test('a condition on a child DocType matches each parent once', async () => {
    await expectTitles({ filters: [['Query Order Line', 'item', '=', 'bolt']] }, ['alpha', 'beta']);
  });

  test('the dotted table-field form works too', async () => {
    await expectTitles({ filters: [['lines.qty', '>', 5]] }, ['alpha', 'delta']);
  });

  test('conditions on the same child table in one AND group hold for the same row', async () => {
    await expectTitles(
      {
        filters: [
          ['Query Order Line', 'item', '=', 'nut'],
          ['Query Order Line', 'qty', '=', 2],
        ],
      },
      [],
    );
    await expectTitles(
      {
        filters: [
          ['Query Order Line', 'item', '=', 'bolt'],
          ['Query Order Line', 'qty', '=', 2],
        ],
      },
      ['alpha'],
    );
  });

  test('a child condition inside an OR group', async () => {
    await expectTitles(
      {
        or_filters: [
          ['Query Order Line', 'item', '=', 'gear'],
          ['status', '=', 'Closed'],
        ],
      },
      ['beta', 'delta', 'zeta'],
    );
  });
});

describe('refused filters', () => {
  test.each([
    ['an unknown operator', [['title', 'regexp', '.*']], 400, /Operator must be one of/],
    ['an unknown field (named in the error)', [['no_such_field', '=', 1]], 400, /no_such_field/],
    ['a Table field', [['lines', '=', 1]], 400, /lines/],
    ['a number field with text', [['amount', '>', 'abc']], 400, /amount needs a number/],
    ['an invalid date', [['order_date', '=', '2024-02-30']], 400, /date/],
    ['is with another value', [['customer', 'is', 'maybe']], 400, /'is' takes/],
    ['between with one value', [['amount', 'between', [1]]], 400, /between/],
    ['an unknown timespan', [['order_date', 'timespan', 'last century']], 400, /timespan/],
    ['timespan on a text field', [['title', 'timespan', 'today']], 400, /timespan/],
    ['previous with a period Frappe does not list', [['order_date', 'previous', '2 weeks']], 400, /previous/],
    ['a five-element condition', [['Query Order', 'title', '=', 'x', 1]], 400, /2, 3 or 4/],
    ['a condition on an unrelated DocType', [['ToDo', 'status', '=', 'Open']], 400, /not supported/],
    ['an object as a value', [['title', '=', { a: 1 }]], 400, /text/],
    ['a Password field', [['pin', '=', '1234']], 403, /pin/],
    ['filters that are neither list nor dict', 'title', 400, /must be a list or dictionary/],
  ])('%s', async (_label, filters, status, message) => {
    for (const version of ['v1', 'v2'] as const) {
      const res = await list(version, { filters });
      expect(res.status).toBe(status);
      expect(res.body.exception).toMatch(message as RegExp);
    }
  });
});
