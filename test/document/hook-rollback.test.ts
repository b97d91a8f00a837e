// A hook that throws rolls the whole request back: no row, no child rows, no series number taken, no half-done update or delete.
import { countRows } from '../api/api-version';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, type TestSite } from '../helpers/test-site';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
});
afterAll(() => t.close());

const auth = () => ({ Authorization: t.adminToken });
const snapshot = async (parent?: string) => ({
  widgets: await countRows(t, 'Widget'),
  parts: await countRows(t, 'Widget Part'),
  ...(parent
    ? {
        doc: await t.site.db.knex('tabWidget').where({ name: parent }).first(),
        rows: await t.site.db.knex('tabWidget Part').where({ parent }).orderBy('idx'),
      }
    : {}),
});

test.each(['before_insert', 'before_validate', 'validate', 'before_save', 'after_insert', 'on_update'])(
  'insert: a throwing %s leaves no row and no child rows',
  async (hook) => {
    const before = await snapshot();
    const res = await t.http
      .post('/api/resource/Widget')
      .set(auth())
      .send({ title: `fail:${hook}`, parts: [{ part_name: 'p' }, { part_name: 'q' }] });
    expect(res.status).toBe(400);
    expect(res.body.exc_type).toBe('ValidationError');
    expect(res.body.exception).toContain(`${hook} refused`);
    expect(await snapshot()).toEqual(before);
  },
);

test.each(['validate', 'on_update'])(
  'save: a throwing %s leaves the stored document and its rows as they were',
  async (hook) => {
    const { body } = await t.http
      .post('/api/resource/Widget')
      .set(auth())
      .send({ title: 'stable', qty: 1, parts: [{ part_name: 'p' }] });
    const before = await snapshot(body.data.name);
    const res = await t.http
      .put(`/api/resource/Widget/${body.data.name}`)
      .set(auth())
      .send({
        title: `fail:${hook}`,
        qty: 99,
        parts: [{ part_name: 'replacement' }, { part_name: 'another' }],
      });
    expect(res.status).toBe(400);
    expect(await snapshot(body.data.name)).toEqual(before);
  },
);

test.each(['on_trash', 'after_delete'])(
  'delete: a throwing %s keeps the document and its rows',
  async (hook) => {
    const { body } = await t.http
      .post('/api/resource/Widget')
      .set(auth())
      .send({ title: `fail:${hook}`, parts: [{ part_name: 'p' }] });
    expect(body.data.name).toBeDefined();
    const before = await snapshot(body.data.name);
    const res = await t.http.delete(`/api/resource/Widget/${body.data.name}`).set(auth());
    expect(res.status).toBe(400);
    expect(await snapshot(body.data.name)).toEqual(before);
  },
);

test('a failed insert takes no series number: the next document gets the number the failed one would have', async () => {
  const year = new Date().getUTCFullYear();
  const post = (title: string) => t.http.post('/api/resource/Named By Format').set(auth()).send({ title });
  expect((await post('first')).body.data.name).toBe(`WID-${year}-00001`);
  expect((await post('fail:validate')).status).toBe(400);
  expect((await post('fail:on_update')).status).toBe(400);
  expect((await post('second')).body.data.name).toBe(`WID-${year}-00002`);
  const series = await t.site.db
    .knex('tabSeries')
    .where({ name: `WID-${year}-` })
    .first('current');
  expect(Number(series.current)).toBe(2);
  expect(await countRows(t, 'Named By Format')).toBe(2);
});
