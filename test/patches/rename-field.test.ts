// ctx.renameField with documents in the table: before the sync the column is renamed, after it the values are copied
// into the new column and the old one dropped (its index first); a Table field moves its child rows, a Single its value.
import request from 'supertest';
import { createApp } from '../../runtime/app';
import { closeSite } from '../../runtime/bootstrap';
import { indexName } from '../../runtime/db/migrate';
import { PatchError } from '../../runtime/errors/errors';
import { renameField as renameIn } from '../../runtime/patches/rename-field';
import type { Registry } from '../../runtime/registry/registry';
import type { Site } from '../../runtime/site';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { patchProject, type PatchProject } from '../helpers/patch-project';
import { createTestSite, type TestSite } from '../helpers/test-site';

/** renameField in a transaction of its own, as a patch runs it. */
const renameField = (on: Site, doctype: string, from: string, to: string): Promise<void> =>
  on.db.knex.transaction((trx) => renameIn(on, trx, doctype, from, to));

let t: TestSite;
let registry: Registry;
let project: PatchProject;
let site: Site;
const widgets: string[] = [];
let deletedCopy: string;

const renaming = (doctype: string, from: string, to: string) =>
  `export async function execute(ctx: any): Promise<void> {
  await ctx.renameField(${JSON.stringify(doctype)}, ${JSON.stringify(from)}, ${JSON.stringify(to)});
}
`;

beforeAll(async () => {
  registry = await fixtureRegistry();
  t = await createTestSite({ registry });
  project = patchProject();
  for (const [title, code] of [
    ['Alpha', 'A-1'],
    ['Beta', 'B-2'],
  ]) {
    const res = await t.http
      .post('/api/resource/Widget')
      .set('Authorization', t.adminToken)
      .send({ title, code, parts: [{ part_name: `${title} bolt`, qty: 2 }] });
    expect(res.status).toBe(201);
    widgets.push(res.body.data.name);
  }
  await t.http
    .put('/api/resource/Widget Settings/Widget Settings')
    .set('Authorization', t.adminToken)
    .send({ site_label: 'Before' });
  // A deleted widget, whose Deleted Document keeps its copy as the older schema had it (title was old_title).
  const gamma = await t.http
    .post('/api/resource/Widget')
    .set('Authorization', t.adminToken)
    .send({ title: 'Gamma' });
  expect(
    (await t.http.delete(`/api/resource/Widget/${gamma.body.data.name}`).set('Authorization', t.adminToken))
      .status,
  ).toBe(202);
  const copy = await t.site.db
    .knex('tabDeleted Document')
    .where({ deleted_name: gamma.body.data.name })
    .first();
  const old = JSON.parse(copy.data);
  old.old_title = old.title;
  delete old.title;
  await t.site.db
    .knex('tabDeleted Document')
    .where({ name: copy.name })
    .update({ data: JSON.stringify(old) });
  deletedCopy = copy.name;
  // The database as an older schema left it: `title` was `old_title` (indexed), `code` was `legacy_code` (indexed,
  // its values not yet in `code`), the parts were under `old_parts`, and Widget Settings' label was `old_label`.
  const knex = t.site.db.knex;
  await knex.schema.alterTable('tabWidget', (tb) => tb.renameColumn('title', 'old_title'));
  await knex.schema.alterTable('tabWidget', (tb) => {
    tb.index(['old_title'], indexName('tabWidget', 'old_title'));
    tb.string('legacy_code', 140).nullable().index(indexName('tabWidget', 'legacy_code'));
  });
  await knex('tabWidget').update({ legacy_code: knex.ref('code') });
  await knex('tabWidget').update({ code: null });
  await knex('tabWidget Part').where({ parenttype: 'Widget' }).update({ parentfield: 'old_parts' });
  await knex('tabSingles').insert({ doctype: 'Widget Settings', field: 'old_label', value: 'Shop' });
  await closeSite(t.site);

  project.patch('patches.v2.title', renaming('Widget', 'old_title', 'title'));
  project.patch('patches.v2.parts', renaming('Widget', 'old_parts', 'parts'));
  project.patch('patches.v2.label', renaming('Widget Settings', 'old_label', 'site_label'));
  project.patch('patches.v2.code', renaming('Widget', 'legacy_code', 'code'));
  project.list(
    '[pre_model_sync]\npatches.v2.title\npatches.v2.parts\npatches.v2.label\n[post_model_sync]\npatches.v2.code\n',
  );
  site = await project.migrate(t.site, registry);
});
afterAll(async () => {
  await closeSite(site);
  await t.close();
  project.remove();
});

async function columns(): Promise<string[]> {
  return Object.keys(await site.db.knex('tabWidget').columnInfo());
}

test('before the sync: the column is renamed with its values, and the old index is gone', async () => {
  expect(await columns()).toContain('title');
  expect(await columns()).not.toContain('old_title');
  const rows = await site.db.knex('tabWidget').whereIn('name', widgets).orderBy('title').select('title');
  expect(rows.map((r: { title: string }) => r.title)).toEqual(['Alpha', 'Beta']);
  expect([...(await site.db.schema.indexes(site.db.knex, 'tabWidget')).keys()]).not.toContain(
    indexName('tabWidget', 'old_title'),
  );
});

test('after the sync: the values are copied into the new column and the old column and index are dropped', async () => {
  expect(await columns()).not.toContain('legacy_code');
  const rows = await site.db.knex('tabWidget').whereIn('name', widgets).orderBy('code').select('code');
  expect(rows.map((r: { code: string }) => r.code)).toEqual(['A-1', 'B-2']);
  const indexes = [...(await site.db.schema.indexes(site.db.knex, 'tabWidget')).keys()];
  expect(indexes).not.toContain(indexName('tabWidget', 'legacy_code'));
  expect(indexes).toContain(indexName('tabWidget', 'code'));
});

test('the API answers the renamed fields, child rows and Single value included', async () => {
  const http = request(createApp(site, { onServerError: () => undefined }).callback());
  const res = await http.get(`/api/v2/document/Widget/${widgets[0]}`).set('Authorization', t.adminToken);
  expect(res.status).toBe(200);
  expect(res.body.data).toMatchObject({
    title: 'Alpha',
    code: 'A-1',
    parts: [{ part_name: 'Alpha bolt', qty: 2 }],
  });
  const settings = await http
    .get('/api/v2/document/Widget Settings/Widget Settings')
    .set('Authorization', t.adminToken);
  expect(settings.body.data.site_label).toBe('Shop');
  expect(
    await site.db
      .knex('tabSingles')
      .where({ doctype: 'Widget Settings' })
      .whereIn('field', ['old_label', 'site_label']),
  ).toEqual([{ doctype: 'Widget Settings', field: 'site_label', value: 'Shop' }]);
});

test('run again, a rename finds nothing to move and changes nothing', async () => {
  const before = await site.db.knex('tabWidget').orderBy('name').select('name', 'title', 'code');
  await renameField(site, 'Widget', 'old_title', 'title');
  await renameField(site, 'Widget', 'legacy_code', 'code');
  expect(await site.db.knex('tabWidget').orderBy('name').select('name', 'title', 'code')).toEqual(before);
});

test.each([
  ['No Such DocType', 'a', 'b', /no DocType No Such DocType/],
  ['Widget', 'old_title', 'no_such_field', /Widget declares no field no_such_field/],
  ['Widget', 'code', 'title', /Widget still declares code/],
])('renameField(%s, %s, %s) is refused and changes nothing', async (doctype, from, to, message) => {
  const before = await site.db.knex('tabWidget').orderBy('name').select('name', 'title', 'code');
  const attempt = renameField(site, doctype, from, to);
  await expect(attempt).rejects.toThrow(PatchError);
  await expect(renameField(site, doctype, from, to)).rejects.toThrow(message);
  expect(await site.db.knex('tabWidget').orderBy('name').select('name', 'title', 'code')).toEqual(before);
});

test('after the sync, a copy into a column of another type, or onto values of its own, is refused', async () => {
  const knex = site.db.knex;
  await knex.schema.alterTable('tabWidget', (tb) => {
    tb.string('legacy_qty', 140).nullable();
    tb.string('legacy_title', 140).nullable();
  });
  await knex('tabWidget').update({ legacy_qty: 'seven', legacy_title: 'overwritten?' });
  const before = await knex('tabWidget').orderBy('name').select('name', 'title', 'qty', 'legacy_qty');
  // Int `qty` from text: the sync's conversion checks are skipped by a copy (and each database would do otherwise).
  await expect(renameField(site, 'Widget', 'legacy_qty', 'qty')).rejects.toThrow(
    /legacy_qty \(varchar\(140\)\) and qty \(\w+\) differ in type: rename it in \[pre_model_sync\]/,
  );
  // `title` holds the documents' own titles: the copy would overwrite them.
  await expect(renameField(site, 'Widget', 'legacy_title', 'title')).rejects.toThrow(
    /tabWidget\.title already holds values in 2 rows/,
  );
  expect(await knex('tabWidget').orderBy('name').select('name', 'title', 'qty', 'legacy_qty')).toEqual(
    before,
  );
  await knex.schema.alterTable('tabWidget', (tb) => tb.dropColumns('legacy_qty', 'legacy_title'));
});

test("a Deleted Document's copy holds the value under the new name, so a restore keeps it", async () => {
  const copy = await site.db.knex('tabDeleted Document').where({ name: deletedCopy }).first('data');
  const data = JSON.parse(copy.data);
  expect(data.title).toBe('Gamma');
  expect('old_title' in data).toBe(false);
});
