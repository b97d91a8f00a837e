// Defaults fill missing fields on create; mandatory fields (also in child rows) left empty are one 400 MandatoryError naming them.
import { countRows } from '../api/api-version';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, type TestSite } from '../helpers/test-site';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
});
afterAll(() => t.close());

const post = (body: object) =>
  t.http.post('/api/v2/document/Widget').set('Authorization', t.adminToken).send(body);

test('defaults fill the fields the body leaves out: Select, Int, Check; numbers without a default are 0', async () => {
  const res = await post({ title: 'defaults' });
  expect(res.status).toBe(201);
  expect(res.body.data).toMatchObject({ status: 'Draft', qty: 1, active: 0, rate: 0, amount: 0 });
});

test('a value sent wins over the default, also a falsy one', async () => {
  const res = await post({ title: 'explicit', status: 'Active', qty: 0 });
  expect(res.body.data).toMatchObject({ status: 'Active', qty: 0 });
});

test('a null for a field with a default gets the default on create', async () => {
  const res = await post({ title: 'nulls', status: null });
  expect(res.status).toBe(201);
  expect(res.body.data.status).toBe('Draft');
});

test.each([
  ['missing', {}],
  ['null', { title: null }],
  ['blank', { title: '   ' }],
])('a %s mandatory field is 400 MandatoryError naming it, nothing stored', async (_label, body) => {
  const before = await countRows(t, 'Widget');
  const res = await post(body);
  expect(res.status).toBe(400);
  expect(res.body.exc_type).toBe('MandatoryError');
  expect(res.body.exception).toMatch(/\btitle\b/);
  expect(await countRows(t, 'Widget')).toBe(before);
});

test('a child row without its mandatory field is refused naming the table, row and field; no row stored', async () => {
  const [widgets, parts] = [await countRows(t, 'Widget'), await countRows(t, 'Widget Part')];
  const res = await post({ title: 'with parts', parts: [{ part_name: 'ok' }, { qty: 2 }] });
  expect(res.status).toBe(400);
  expect(res.body.exc_type).toBe('MandatoryError');
  expect(res.body.exception).toContain('parts[1].part_name');
  expect(res.body.exception).toContain('Row #2');
  expect([await countRows(t, 'Widget'), await countRows(t, 'Widget Part')]).toEqual([widgets, parts]);
});

test('every missing field is named in the one error (parent and child)', async () => {
  const res = await post({ parts: [{}] });
  expect(res.status).toBe(400);
  expect(res.body.exception).toContain('title');
  expect(res.body.exception).toContain('parts[0].part_name');
});

test('an update that empties a mandatory field is refused and the stored value stays', async () => {
  const { body } = await post({ title: 'keep me' });
  const res = await t.http
    .put(`/api/v2/document/Widget/${body.data.name}`)
    .set('Authorization', t.adminToken)
    .send({ title: '' });
  expect(res.status).toBe(400);
  expect(res.body.exc_type).toBe('MandatoryError');
  expect(await countRows(t, 'Widget', { name: body.data.name, title: 'keep me' })).toBe(1);
});
