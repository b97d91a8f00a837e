// Values per field type: what is coerced (and how it reads back), what is refused with 400 and stores nothing.
import { countRows } from '../api/api-version';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, type TestSite } from '../helpers/test-site';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
});
afterAll(() => t.close());

const post = (body: object) =>
  t.http
    .post('/api/v2/document/Widget')
    .set('Authorization', t.adminToken)
    .send({ title: 'values', ...body });
const reread = async (name: string) =>
  (await t.http.get(`/api/v2/document/Widget/${name}`).set('Authorization', t.adminToken)).body.data;

test.each([
  ['Int from a numeric string', { qty: '5' }, { qty: 5 }],
  ['Int zero-padded', { qty: '007' }, { qty: 7 }],
  ['Float from a string', { rate: '2.5' }, { rate: 2.5 }],
  ['Currency with cents', { amount: 10.25 }, { amount: 10.25 }],
  ['Currency just under 10^12', { amount: 999999999999.5 }, { amount: 999999999999.5 }],
  ['Int at the top of int(11)', { qty: 2147483647 }, { qty: 2147483647 }],
  // Decimal columns keep 9 places on every database (SQLite stored every binary digit before).
  ['Float past 9 places', { rate: 0.1234567891234 }, { rate: 0.123456789 }],
  ['Float under 10^-9', { rate: 1e-10 }, { rate: 0 }],
  ['Currency 0.1 + 0.2', { amount: 0.30000000000000004 }, { amount: 0.3 }],
  ['Check true', { active: true }, { active: 1 }],
  ['Check false', { active: false }, { active: 0 }],
  ['Check "1"', { active: '1' }, { active: 1 }],
  ['Select option', { status: 'Retired' }, { status: 'Retired' }],
  ['Date', { due_date: '2024-02-29' }, { due_date: '2024-02-29' }],
  ['Datetime to the second', { starts_at: '2020-01-02 03:04:05' }, { starts_at: '2020-01-02 03:04:05' }],
  [
    'Datetime with microseconds',
    { starts_at: '2020-01-02 03:04:05.123456' },
    { starts_at: '2020-01-02 03:04:05.123456' },
  ],
  ['Datetime with a T', { starts_at: '2020-01-02T03:04:05' }, { starts_at: '2020-01-02 03:04:05' }],
  ['Datetime date only', { starts_at: '2020-01-02' }, { starts_at: '2020-01-02 00:00:00' }],
  ['Time', { start_time: '13:45:10' }, { start_time: '13:45:10' }],
  ['Time without seconds', { start_time: '09:30' }, { start_time: '9:30:00' }],
  ['JSON object', { payload: { a: [1, 2], b: { c: 'd' } } }, { payload: { a: [1, 2], b: { c: 'd' } } }],
  ['JSON list', { payload: [1, 'two', null] }, { payload: [1, 'two', null] }],
  ['Data with unicode', { notes: 'naïve – 漢字 😀' }, { notes: 'naïve – 漢字 😀' }],
])('%s is accepted and reads back the same', async (_label, body, expected) => {
  const res = await post(body);
  expect(res.status).toBe(201);
  expect(res.body.data).toMatchObject(expected);
  expect(await reread(res.body.data.name)).toMatchObject(expected);
});

test.each([
  ['Int "x"', { qty: 'x' }, 'qty'],
  ['Int 1.5', { qty: 1.5 }, 'qty'],
  ['Int 1e999 (as text)', { qty: '1e999' }, 'qty'],
  ['Int object', { qty: { $gt: 0 } }, 'qty'],
  ['Float "abc"', { rate: 'abc' }, 'rate'],
  ['Check "yes"', { active: 'yes' }, 'active'],
  ['Check 2', { active: 2 }, 'active'],
  ['Select outside options', { status: 'Bogus' }, 'status'],
  ['Date 2020-13-45', { due_date: '2020-13-45' }, 'due_date'],
  ['Date 2021-02-29', { due_date: '2021-02-29' }, 'due_date'],
  ['Date 02/03/2020', { due_date: '02/03/2020' }, 'due_date'],
  ['Datetime 25:00', { starts_at: '2020-01-02 25:00:00' }, 'starts_at'],
  ['Datetime text', { starts_at: 'tomorrow' }, 'starts_at'],
  ['Time 24:61', { start_time: '24:61' }, 'start_time'],
  ['Data as an object', { notes: { a: 1 } }, 'notes'],
  ['Data as a list', { code: ['a'] }, 'code'],
  ['Data longer than its column', { code: 'x'.repeat(141) }, 'code'],
  ['Data with a lone surrogate', { notes: 'a\ud800b' }, 'notes'],
  ['Table not a list', { parts: { part_name: 'p' } }, 'parts'],
  // Past the column on MariaDB and PostgreSQL (a 500 there before; SQLite stored them): 400 on every database.
  ['Int past int(11)', { qty: 2147483648 }, 'qty'],
  ['Int below int(11)', { qty: -2147483649 }, 'qty'],
  ['Currency of 10^12', { amount: 1e12 }, 'amount'],
  ['Float of -10^13', { rate: -1e13 }, 'rate'],
])('%s is 400 naming the field, nothing stored', async (_label, body, field) => {
  const before = await countRows(t, 'Widget');
  const res = await post(body);
  expect(res.status).toBe(400);
  expect(res.body.exc_type).toMatch(/^(ValidationError|DataError)$/);
  expect(res.body.exception).toContain(field);
  expect(await countRows(t, 'Widget')).toBe(before);
});

test('an update refuses a bad value and leaves the stored one', async () => {
  const { body } = await post({ qty: 3, due_date: '2020-01-01' });
  for (const change of [{ qty: 'x' }, { due_date: '2020-02-30' }, { status: 'Nope' }]) {
    const res = await t.http
      .put(`/api/v2/document/Widget/${body.data.name}`)
      .set('Authorization', t.adminToken)
      .send(change);
    expect(res.status).toBe(400);
  }
  expect(await reread(body.data.name)).toMatchObject({
    qty: 3,
    due_date: '2020-01-01',
    status: 'Draft',
    modified: body.data.modified,
  });
});

test('unknown fields in the body are ignored, not stored and not an error', async () => {
  const res = await post({ no_such_field: 'x', hook_log_extra: 1 });
  expect(res.status).toBe(201);
  expect(res.body.data).not.toHaveProperty('no_such_field');
});

describe('values checked once rounded, and dates of the first century', () => {
  const probe = (body: object) =>
    t.http.post('/api/v2/document/Rating Probe').set('Authorization', t.adminToken).send(body);

  test.each([9.999, 9.996, -9.999])(
    'a Rating of %s rounds to 10, past decimal(3,2): 400 naming the field, nothing stored',
    async (score) => {
      const before = await countRows(t, 'Rating Probe');
      const res = await probe({ score });
      expect(res.status).toBe(400);
      expect(res.body.exc_type).toBe('DataError');
      expect(res.body.exception).toContain('score');
      expect(await countRows(t, 'Rating Probe')).toBe(before);
    },
  );

  test('a Rating of 9.994 is stored as 9.99', async () => {
    const res = await probe({ score: 9.994 });
    expect(res.status).toBe(201);
    expect(res.body.data.score).toBe(9.99);
  });

  test.each(['0001-01-01', '0050-06-15', '0099-12-31'])(
    'the Date %s is stored and reads back',
    async (day) => {
      const res = await probe({ happened_on: day });
      expect(res.status).toBe(201);
      const read = await t.http
        .get(`/api/v2/document/Rating Probe/${res.body.data.name}`)
        .set('Authorization', t.adminToken);
      expect(read.body.data.happened_on).toBe(day);
      const filtered = await t.http
        .get('/api/v2/document/Rating Probe')
        .query({ filters: JSON.stringify([['happened_on', '=', day]]), fields: '["name"]' })
        .set('Authorization', t.adminToken);
      expect(filtered.status).toBe(200);
      expect(filtered.body.data.map((r: { name: string }) => r.name)).toContain(res.body.data.name);
    },
  );

  test('the Date 0000-01-01 is 400: no database has a year 0', async () => {
    expect((await probe({ happened_on: '0000-01-01' })).status).toBe(400);
  });
});

test('an empty Date, Datetime or Time is stored as NULL, as Frappe; an update with "" clears the value', async () => {
  const res = await post({ due_date: '', starts_at: '', start_time: '' });
  expect(res.status).toBe(201);
  expect(res.body.data).toMatchObject({ due_date: null, starts_at: null, start_time: null });
  const name = res.body.data.name as string;
  const set = await t.http
    .put(`/api/v2/document/Widget/${name}`)
    .set('Authorization', t.adminToken)
    .send({ due_date: '2024-01-02' });
  expect(set.body.data.due_date).toBe('2024-01-02');
  const cleared = await t.http
    .put(`/api/resource/Widget/${name}`)
    .set('Authorization', t.adminToken)
    .send({ due_date: '' });
  expect(cleared.status).toBe(200);
  expect(await reread(name)).toMatchObject({ due_date: null });
  const row = await t.site.db.knex('tabWidget').where({ name }).first('due_date', 'starts_at', 'start_time');
  expect(row).toEqual({ due_date: null, starts_at: null, start_time: null });
});
