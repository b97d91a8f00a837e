// ctx.renameDocType with documents: the rows move to the declared DocType (a table rename before the sync, a copy into
// the table the sync made after it), and every value naming the old DocType follows: Link-to-DocType and Dynamic Link
// type fields, child rows' parenttype, stored passwords, a Single's values.
import request from 'supertest';
import { createApp } from '../../runtime/app';
import { closeSite } from '../../runtime/bootstrap';
import { indexName } from '../../runtime/db/migrate';
import { PatchError } from '../../runtime/errors/errors';
import { renameDocType as renameIn } from '../../runtime/patches/rename-doctype';
import type { Registry } from '../../runtime/registry/registry';
import type { Site } from '../../runtime/site';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { patchProject, type PatchProject } from '../helpers/patch-project';
import { createTestSite, DB_KIND, type TestSite } from '../helpers/test-site';

/** renameDocType in a transaction of its own, as a patch runs it. */
const renameDocType = (on: Site, from: string, to: string): Promise<void> =>
  on.db.knex.transaction((trx) => renameIn(on, trx, from, to));

let t: TestSite;
let registry: Registry;
let project: PatchProject;
const opened: Site[] = [];
let orders: string[] = [];
let ada: string;
let widget: string;
let todo: string;
let removed: string;

const renaming = (from: string, to: string) =>
  `export async function execute(ctx: any): Promise<void> {
  await ctx.renameDocType(${JSON.stringify(from)}, ${JSON.stringify(to)});
}
`;

/** Puts the site back as an older schema left it: Gadget Order was called Legacy Order. */
async function makeLegacy(site: Site): Promise<void> {
  const knex = site.db.knex;
  await knex.schema.renameTable('tabGadget Order', 'tabLegacy Order');
  // PostgreSQL names a primary key after the table that made it (`<table>_pkey`), and a rename keeps that name.
  if (DB_KIND === 'postgres')
    await knex.raw('alter index ?? rename to ??', ['tabGadget Order_pkey', 'tabLegacy Order_pkey']);
  // The indexes the service would have given tabLegacy Order (a renamed table keeps its index names).
  const columns = ['creation', 'modified'];
  await knex.schema.alterTable('tabLegacy Order', (tb) => {
    for (const column of columns) tb.dropIndex([], indexName('tabGadget Order', column));
    for (const column of [...columns, 'customer']) tb.index([column], indexName('tabLegacy Order', column));
  });
  await knex('tabWidget Part').where({ parenttype: 'Gadget Order' }).update({ parenttype: 'Legacy Order' });
  await knex('tabWidget').where({ name: widget }).update({ ref_type: 'Legacy Order' });
  await knex('tabToDo').where({ name: todo }).update({ reference_type: 'Legacy Order' });
  await knex('__Auth').where({ doctype: 'Gadget Order' }).update({ doctype: 'Legacy Order' });
  await knex('tabSingles').where({ doctype: 'Widget Settings' }).update({ doctype: 'Old Settings' });
  await knex('tabDeleted Document')
    .where({ deleted_name: removed })
    .update({ deleted_doctype: 'Legacy Order' });
  await knex('__Event').where({ doctype: 'Gadget Order' }).update({ doctype: 'Legacy Order' });
}

beforeAll(async () => {
  registry = await fixtureRegistry();
  t = await createTestSite({ registry });
  project = patchProject();
  const auth = { Authorization: t.adminToken };
  for (const customer of ['Ada', 'Grace']) {
    const res = await t.http
      .post('/api/resource/Gadget Order')
      .set(auth)
      .send({ customer, qty: 3, parts: [{ part_name: `${customer} gear`, qty: 1 }] });
    expect(res.status).toBe(201);
    orders.push(res.body.data.name);
  }
  // A deleted order: its Deleted Document (and events) name the DocType too.
  const gone = await t.http
    .post('/api/resource/Gadget Order')
    .set(auth)
    .send({ customer: 'Lin', qty: 1, parts: [] });
  removed = gone.body.data.name;
  expect((await t.http.delete(`/api/resource/Gadget Order/${removed}`).set(auth)).status).toBe(202);
  ada = orders[0] as string;
  orders = orders.sort();
  widget = (await t.http.post('/api/resource/Widget').set(auth).send({ title: 'Linked' })).body.data.name;
  todo = (await t.http.post('/api/resource/ToDo').set(auth).send({ description: 'Ship it' })).body.data.name;
  const knex = t.site.db.knex;
  await knex('tabWidget').where({ name: widget }).update({ ref_type: 'Gadget Order', ref_name: orders[0] });
  await knex('tabToDo')
    .where({ name: todo })
    .update({ reference_type: 'Gadget Order', reference_name: orders[1] });
  await knex('__Auth').insert({
    doctype: 'Gadget Order',
    name: orders[0],
    fieldname: 'secret',
    password: 'x',
  });
  await t.http.put('/api/resource/Widget Settings/Widget Settings').set(auth).send({ site_label: 'Kept' });
  await makeLegacy(t.site);
  await closeSite(t.site);
});
afterAll(async () => {
  for (const site of opened) await closeSite(site);
  await t.close();
  project.remove();
});

async function migrate(): Promise<Site> {
  const site = await project.migrate(t.site, registry);
  opened.push(site);
  return site;
}

/** Everything that names the DocType, as a test reads it back. */
async function references(site: Site) {
  const knex = site.db.knex;
  return {
    tables: [...(await site.db.schema.tables(knex))]
      .filter((n) => /Gadget Order|Legacy Order/.test(n))
      .sort(),
    orders: (
      (await knex('tabGadget Order').orderBy('name').select('name', 'customer')) as { name: string }[]
    ).map((r) => r.name),
    parenttypes: [
      ...new Set((await knex('tabWidget Part').whereIn('parent', orders).pluck('parenttype')) as string[]),
    ],
    widget: await knex('tabWidget').where({ name: widget }).first('ref_type', 'ref_name'),
    todo: await knex('tabToDo').where({ name: todo }).first('reference_type', 'reference_name'),
    auth: (await knex('__Auth').where({ name: orders[0] }).pluck('doctype')) as string[],
    deleted: (await knex('tabDeleted Document')
      .where({ deleted_name: removed })
      .pluck('deleted_doctype')) as string[],
    events: [...new Set((await knex('__Event').where({ docname: removed }).pluck('doctype')) as string[])],
    singles: [
      ...new Set(
        (await knex('tabSingles')
          .whereIn('doctype', ['Old Settings', 'Widget Settings'])
          .pluck('doctype')) as string[],
      ),
    ],
  };
}

const RENAMED = () => ({
  tables: ['tabGadget Order'],
  orders,
  parenttypes: ['Gadget Order'],
  widget: { ref_type: 'Gadget Order', ref_name: orders[0] },
  todo: { reference_type: 'Gadget Order', reference_name: orders[1] },
  auth: ['Gadget Order'],
  deleted: ['Gadget Order'],
  events: ['Gadget Order'],
  singles: ['Widget Settings'],
});

test('before the sync: the table is renamed and every value naming the old DocType follows', async () => {
  project.patch('patches.v3.orders', renaming('Legacy Order', 'Gadget Order'));
  project.patch('patches.v3.settings', renaming('Old Settings', 'Widget Settings'));
  project.list('[pre_model_sync]\npatches.v3.orders\npatches.v3.settings\n');
  const site = await migrate();
  expect(await references(site)).toEqual(RENAMED());
  const indexes = [...(await site.db.schema.indexes(site.db.knex, 'tabGadget Order')).keys()];
  expect([...indexes].some((n) => n.includes('Legacy'))).toBe(false);
  // The sync looked at the DocType again and made its indexes under the new table's names.
  expect(indexes).toContain(indexName('tabGadget Order', 'creation'));

  const http = request(createApp(site, { onServerError: () => undefined }).callback());
  const res = await http.get(`/api/v2/document/Gadget Order/${ada}`).set('Authorization', t.adminToken);
  expect(res.status).toBe(200);
  expect(res.body.data).toMatchObject({ customer: 'Ada', parts: [{ part_name: 'Ada gear' }] });
  const settings = await http
    .get('/api/v2/document/Widget Settings/Widget Settings')
    .set('Authorization', t.adminToken);
  expect(settings.body.data.site_label).toBe('Kept');
  // The deleted order comes back as a Gadget Order.
  const [copy] = await site.db.knex('tabDeleted Document').where({ deleted_name: removed }).pluck('name');
  const restored = await http
    .post(`/api/v2/document/Deleted Document/${copy}/method/restore`)
    .set('Authorization', t.adminToken);
  expect(restored.status).toBe(200);
  expect(
    (await http.get(`/api/v2/document/Gadget Order/${removed}`).set('Authorization', t.adminToken)).status,
  ).toBe(200);
  await site.db.knex('tabGadget Order').where({ name: removed }).delete();
  await site.db.knex('tabDeleted Document').where({ name: copy }).update({ restored: 0, new_name: null });
  await closeSite(site);
});

test('after the sync: the rows are copied into the table the sync made and the old table is dropped', async () => {
  const site = await migrate();
  await makeLegacy(site);
  // The sync makes an empty tabGadget Order again.
  await site.db.knex('__DocTypeSchema').where({ doctype: 'Gadget Order' }).delete();
  await closeSite(site);
  project.patch('patches.v4.orders', renaming('Legacy Order', 'Gadget Order'));
  project.patch('patches.v4.settings', renaming('Old Settings', 'Widget Settings'));
  project.list('[post_model_sync]\npatches.v4.orders\npatches.v4.settings\n');
  const after = await migrate();
  expect(await references(after)).toEqual(RENAMED());
  await closeSite(after);
});

test('after the sync: a column only the old table has keeps its values; a DocType with rows is no target', async () => {
  const site = await migrate();
  await makeLegacy(site);
  await site.db.knex.schema.alterTable('tabLegacy Order', (tb) => tb.string('legacy_note', 140).nullable());
  await site.db.knex('tabLegacy Order').where({ name: ada }).update({ legacy_note: 'kept' });
  await site.db.knex('__DocTypeSchema').where({ doctype: 'Gadget Order' }).delete();
  await closeSite(site);
  project.patch('patches.v5.orders', renaming('Legacy Order', 'Gadget Order'));
  project.list('[post_model_sync]\npatches.v5.orders\n');
  const after = await migrate();
  expect(await references(after)).toMatchObject({ tables: ['tabGadget Order'], orders });
  expect(await after.db.knex('tabGadget Order').where({ name: ada }).first('legacy_note')).toEqual({
    legacy_note: 'kept',
  });
  // Renaming another table onto Gadget Order, which holds rows now, would merge two DocTypes' documents.
  await after.db.knex.schema.createTable('tabLegacy Order', (tb) => tb.string('name', 140).primary());
  await after.db.knex('tabLegacy Order').insert({ name: 'L-1' });
  await expect(renameDocType(after, 'Legacy Order', 'Gadget Order')).rejects.toThrow(
    /Gadget Order already holds rows/,
  );
  expect(await after.db.knex('tabLegacy Order').pluck('name')).toEqual(['L-1']);
  expect((await references(after)).orders).toEqual(orders);
  await after.db.knex.schema.dropTable('tabLegacy Order');
  await closeSite(after);
});

test.each([
  ['Widget', 'Gadget Order', /Widget is still declared/],
  ['Legacy Order', 'No Such DocType', /no DocType No Such DocType is declared/],
  ['', 'Gadget Order', /is not a DocType name/],
])('renameDocType(%s, %s) is refused and changes nothing', async (from, to, message) => {
  const site = await migrate();
  const before = await references(site);
  await expect(renameDocType(site, from, to)).rejects.toThrow(PatchError);
  await expect(renameDocType(site, from, to)).rejects.toThrow(message);
  expect(await references(site)).toEqual(before);
  await closeSite(site);
});
