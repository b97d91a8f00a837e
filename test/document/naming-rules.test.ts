// Naming rules: the name the server makes for each `autoname` when the client gives none (v1 create).
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, type TestSite } from '../helpers/test-site';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
});
afterAll(() => t.close());

const year = () => String(new Date().getUTCFullYear());
const create = (doctype: string, body: object = {}) =>
  t.http
    .post(`/api/resource/${doctype}`)
    .set('Authorization', t.adminToken)
    .send({ title: 'x', ...body });
const nameOf = async (doctype: string, body: object = {}) => {
  const res = await create(doctype, body);
  expect(res.status).toBe(201);
  return res.body.data.name as string;
};

test('hash: ten lower-case hex characters, different each time', async () => {
  const [a, b] = [await nameOf('Named By Hash'), await nameOf('Named By Hash')];
  expect(a).toMatch(/^[0-9a-f]{10}$/);
  expect(b).not.toBe(a);
});

test('autoincrement: 1, 2, 3 in order', async () => {
  expect([
    await nameOf('Named By Autoincrement'),
    await nameOf('Named By Autoincrement'),
    await nameOf('Named By Autoincrement'),
  ]).toEqual(['1', '2', '3']);
});

test('field:code: the value of the field', async () => {
  expect(await nameOf('Named By Field', { code: 'ABC-1' })).toBe('ABC-1');
});

test('field:code without the field: 400 MandatoryError, nothing stored', async () => {
  const res = await create('Named By Field', {});
  expect(res.status).toBe(400);
  expect(res.body.exc_type).toBe('MandatoryError');
  const [row] = await t.site.db.knex('tabNamed By Field').count({ n: '*' });
  expect(Number(row?.n)).toBe(1);
});

test('format:WID-{YYYY}-{#####}: the year and a five-digit counter', async () => {
  expect(await nameOf('Named By Format')).toBe(`WID-${year()}-00001`);
  expect(await nameOf('Named By Format')).toBe(`WID-${year()}-00002`);
});

test('old-style series WO-.YYYY.-.####: the year and a four-digit counter', async () => {
  expect(await nameOf('Named By Series')).toBe(`WO-${year()}-0001`);
  expect(await nameOf('Named By Series')).toBe(`WO-${year()}-0002`);
});

test('naming_series: the chosen series, each with its own counter', async () => {
  expect(await nameOf('Named By Naming Series', { naming_series: 'ALT-.###' })).toBe('ALT-001');
  expect(await nameOf('Named By Naming Series', { naming_series: 'SER-.####' })).toBe('SER-0001');
  expect(await nameOf('Named By Naming Series', { naming_series: 'ALT-.###' })).toBe('ALT-002');
});

test('naming_series: without a series, the first option (also stored in the field, as Frappe)', async () => {
  const res = await create('Named By Naming Series', {});
  expect(res.status).toBe(201);
  expect(res.body.data).toMatchObject({ name: 'SER-0002', naming_series: 'SER-.####' });
});

test('Prompt: the name the client sets (v1 too)', async () => {
  expect(await nameOf('Named By Prompt', { name: 'chosen by me' })).toBe('chosen by me');
});

test('Prompt without a name: 400, nothing stored', async () => {
  const res = await create('Named By Prompt', {});
  expect(res.status).toBe(400);
  expect(res.body.exc_type).toMatch(/ValidationError|InvalidNameError|MandatoryError/);
  const [row] = await t.site.db.knex('tabNamed By Prompt').count({ n: '*' });
  expect(Number(row?.n)).toBe(1);
});

test('UUID: a v4 UUID when none is given, the client one when given (v1 too)', async () => {
  expect(await nameOf('Named By UUID')).toMatch(
    /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
  );
  expect(await nameOf('Named By UUID', { name: '0190c0de-0000-7000-8000-000000000001' })).toBe(
    '0190c0de-0000-7000-8000-000000000001',
  );
});

test("a controller's autoname wins over the DocType's rule", async () => {
  expect(await nameOf('Widget', { title: 'auto:seven' })).toBe('AUTO-seven');
  expect(await nameOf('Widget', { title: 'plain' })).toMatch(/^[0-9a-f]{10}$/);
});
