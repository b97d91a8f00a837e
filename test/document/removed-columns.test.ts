// A column the DocType no longer declares (a removed or renamed field, kept in the table as Frappe keeps it) is never
// answered and never written: single-document GETs (v1, v2), child rows, frappe.client.get, Singles, write answers.
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, type TestSite } from '../helpers/test-site';

let t: TestSite;
let name: string;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
  const knex = t.site.db.knex;
  // What a field removed from widget.json and widget_part.json leaves behind after the sync: its column and data.
  await knex.schema.alterTable('tabWidget', (tb) => tb.string('legacy_note', 140).nullable());
  await knex.schema.alterTable('tabWidget Part', (tb) => tb.string('legacy_part', 140).nullable());
  await knex('tabSingles').insert({ doctype: 'Widget Settings', field: 'legacy_flag', value: 'kept' });
  const res = await t.http
    .post('/api/resource/Widget')
    .set(auth())
    .send({ title: 'Old widget', parts: [{ part_name: 'bolt', qty: 2 }] });
  expect(res.status).toBe(201);
  name = res.body.data.name;
  await knex('tabWidget').where({ name }).update({ legacy_note: 'from before' });
  await knex('tabWidget Part').where({ parent: name }).update({ legacy_part: 'old part' });
});
afterAll(() => t.close());

const auth = () => ({ Authorization: t.adminToken });

/** Every key of a document and of its child rows. */
function keysOf(doc: Record<string, unknown>): string[] {
  const parts = (doc.parts as Record<string, unknown>[] | undefined) ?? [];
  return [...Object.keys(doc), ...parts.flatMap((p) => Object.keys(p))];
}

test('GET v1 and v2 answer only declared fields, child rows included', async () => {
  for (const path of [`/api/resource/Widget/${name}`, `/api/v2/document/Widget/${name}`]) {
    const res = await t.http.get(path).set(auth());
    expect(res.status).toBe(200);
    expect(res.body.data.title).toBe('Old widget');
    expect(res.body.data.parts[0].part_name).toBe('bolt');
    expect(keysOf(res.body.data)).not.toContain('legacy_note');
    expect(keysOf(res.body.data)).not.toContain('legacy_part');
  }
});

test('frappe.client.get answers only declared fields', async () => {
  const res = await t.http
    .get('/api/method/frappe.client.get')
    .query({ doctype: 'Widget', name })
    .set(auth());
  expect(res.status).toBe(200);
  expect(res.body.message.title).toBe('Old widget');
  expect(keysOf(res.body.message)).not.toContain('legacy_note');
  expect(keysOf(res.body.message)).not.toContain('legacy_part');
});

test('a list of every field (`*`, v1 and v2) leaves the removed column out', async () => {
  for (const path of ['/api/resource/Widget', '/api/v2/document/Widget']) {
    const res = await t.http
      .get(path)
      .query({ fields: JSON.stringify(['*']), filters: JSON.stringify([['name', '=', name]]) })
      .set(auth());
    expect(res.status).toBe(200);
    expect(res.body.data[0].title).toBe('Old widget');
    expect(Object.keys(res.body.data[0])).not.toContain('legacy_note');
  }
});

test('a list refuses the removed column', async () => {
  const res = await t.http
    .get('/api/resource/Widget')
    .query({ fields: JSON.stringify(['name', 'legacy_note']) })
    .set(auth());
  expect(res.status).toBe(400);
});

test('an update sending the removed field answers as for an unknown field and leaves the column alone', async () => {
  const unknown = await t.http
    .put(`/api/resource/Widget/${name}`)
    .set(auth())
    .send({ no_such_field: 'x', title: 'Renamed once' });
  const removed = await t.http
    .put(`/api/v2/document/Widget/${name}`)
    .set(auth())
    .send({
      legacy_note: 'overwritten',
      title: 'Renamed twice',
      parts: [{ part_name: 'nut', legacy_part: 'x' }],
    });
  expect(removed.status).toBe(unknown.status);
  expect(removed.status).toBe(200);
  expect(removed.body.data.title).toBe('Renamed twice');
  expect(keysOf(removed.body.data)).not.toContain('legacy_note');
  expect(keysOf(removed.body.data)).not.toContain('legacy_part');
  const row = await t.site.db.knex('tabWidget').where({ name }).first('legacy_note');
  expect(row.legacy_note).toBe('from before');
  const parts = await t.site.db.knex('tabWidget Part').where({ parent: name }).select('legacy_part');
  expect(parts.map((p: { legacy_part: unknown }) => p.legacy_part)).toEqual([null]);
});

test('a create sending the removed field stores nothing in its column', async () => {
  const res = await t.http
    .post('/api/v2/document/Widget')
    .set(auth())
    .send({ title: 'New widget', legacy_note: 'sneaked in' });
  expect(res.status).toBe(201);
  expect(keysOf(res.body.data)).not.toContain('legacy_note');
  const row = await t.site.db.knex('tabWidget').where({ name: res.body.data.name }).first('legacy_note');
  expect(row.legacy_note).toBeNull();
});

test('a Single answers only declared fields; the stored value of a removed one stays', async () => {
  for (const path of [
    '/api/resource/Widget Settings/Widget Settings',
    '/api/v2/document/Widget Settings/Widget Settings',
  ]) {
    const res = await t.http.get(path).set(auth());
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.data)).not.toContain('legacy_flag');
  }
  const put = await t.http
    .put('/api/v2/document/Widget Settings/Widget Settings')
    .set(auth())
    .send({ site_label: 'Shop', legacy_flag: 'changed' });
  expect(put.status).toBe(200);
  expect(Object.keys(put.body.data)).not.toContain('legacy_flag');
  const row = await t.site.db
    .knex('tabSingles')
    .where({ doctype: 'Widget Settings', field: 'legacy_flag' })
    .first('value');
  expect(row.value).toBe('kept');
});
