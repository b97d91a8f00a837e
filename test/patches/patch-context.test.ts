// What a patch's ctx does beside renames: SQL with bindings (its rows back), and documents read and saved through the
// document path (hooks, validation, naming) as Administrator; a refused save fails the patch and stores nothing.
import { closeSite } from '../../runtime/bootstrap';
import { connect } from '../../runtime/db/connect';
import type { Registry } from '../../runtime/registry/registry';
import type { Site } from '../../runtime/site';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { patchProject, type PatchProject } from '../helpers/patch-project';
import { createTestSite, DB_KIND, type TestSite } from '../helpers/test-site';

let t: TestSite;
let registry: Registry;
let project: PatchProject;
const opened: Site[] = [];
const names: string[] = [];
const seen = globalThis as { patchSeen?: Record<string, unknown> };

beforeAll(async () => {
  registry = await fixtureRegistry();
  t = await createTestSite({ registry });
  project = patchProject();
  for (const title of ['One', 'Two']) {
    const res = await t.http
      .post('/api/resource/Widget')
      .set('Authorization', t.adminToken)
      .send({ title, qty: 4 });
    names.push(res.body.data.name);
  }
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

test('sql runs with value and identifier bindings; getDoc and saveDoc go through the document path', async () => {
  seen.patchSeen = {};
  project.patch(
    'patches.ctx.ok',
    `export async function execute(ctx: any): Promise<void> {
  const rows = await ctx.sql('SELECT COUNT(*) AS n FROM ?? WHERE ?? = ?', ['tabWidget', 'status', 'Draft']);
  (globalThis as any).patchSeen.count = Number(rows[0].n);
  (globalThis as any).patchSeen.update = await ctx.sql('UPDATE ?? SET ?? = ?', ['tabWidget', 'rate', 2.5]);
  const doc = await ctx.getDoc('Widget', ${JSON.stringify(names[0])});
  doc.title = 'Patched';
  await ctx.saveDoc(doc);
  const todo = await ctx.saveDoc({ doctype: 'ToDo', description: 'made by a patch' });
  (globalThis as any).patchSeen.todo = todo.name;
}
`,
  );
  project.list('patches.ctx.ok\n');
  const site = await migrate();
  expect(seen.patchSeen).toMatchObject({ count: 2, update: [] });
  const rows = await site.db
    .knex('tabWidget')
    .orderBy('title')
    .select('title', 'rate', 'modified_by', 'hook_log');
  expect(rows.map((r: { title: string; rate: unknown }) => [r.title, Number(r.rate)])).toEqual([
    ['Patched', 2.5],
    ['Two', 2.5],
  ]);
  expect(rows[0].modified_by).toBe('Administrator');
  const todo = await site.db
    .knex('tabToDo')
    .where({ name: seen.patchSeen?.todo })
    .first('description', 'owner');
  expect(todo).toEqual({ description: 'made by a patch', owner: 'Administrator' });
  await closeSite(site);
});

test('a save the document refuses fails the patch with its message and stores nothing', async () => {
  project.patch(
    'patches.ctx.bad',
    `export async function execute(ctx: any): Promise<void> {
  const doc = await ctx.getDoc('Widget', ${JSON.stringify(names[1])});
  doc.qty = -1;
  await ctx.saveDoc(doc);
}
`,
  );
  project.list('patches.ctx.ok\npatches.ctx.bad\n');
  await expect(migrate()).rejects.toThrow(
    'patch patches.ctx.bad (patches.txt:2) failed: Quantity cannot be negative',
  );
  const db = connect(t.site.config.databaseUrl);
  try {
    expect(await db.knex('tabWidget').where({ name: names[1] }).first('qty')).toEqual({ qty: 4 });
    expect(await db.knex('tabPatch Log').where({ patch: 'patches.ctx.bad' }).select('name')).toEqual([]);
  } finally {
    await db.close();
  }
});

test('a patch that throws leaves nothing it wrote: its SQL, its knex, its saves and its Patch Log row roll back', async () => {
  project.patch(
    'patches.ctx.partial',
    `export async function execute(ctx: any): Promise<void> {
  await ctx.sql('UPDATE ?? SET ?? = ?', ['tabWidget', 'rate', 9]);
  await ctx.site.db.knex('tabWidget').update({ qty: 99 });
  const doc = await ctx.getDoc('Widget', ${JSON.stringify(names[1])});
  if (Number(doc.rate) !== 9) throw new Error('the patch does not read its own SQL');
  doc.title = 'Half done';
  await ctx.saveDoc(doc);
  await ctx.saveDoc({ doctype: 'ToDo', description: 'half done' });
  const [row] = await ctx.sql('SELECT COUNT(*) AS n FROM ?? WHERE ?? = ?', ['tabToDo', 'description', 'half done']);
  if (Number(row.n) !== 1) throw new Error('the patch does not read its own insert');
  throw new Error('stopped half way');
}
`,
  );
  project.list('patches.ctx.ok\npatches.ctx.partial\n');
  await expect(migrate()).rejects.toThrow(
    'patch patches.ctx.partial (patches.txt:2) failed: stopped half way',
  );
  const db = connect(t.site.config.databaseUrl);
  try {
    const rows = await db.knex('tabWidget').orderBy('title').select('title', 'rate', 'qty');
    expect(
      rows.map((r: { title: string; rate: unknown; qty: unknown }) => [
        r.title,
        Number(r.rate),
        Number(r.qty),
      ]),
    ).toEqual([
      ['Patched', 2.5, 4],
      ['Two', 2.5, 4],
    ]);
    expect(await db.knex('tabToDo').where({ description: 'half done' }).select('name')).toEqual([]);
    expect(await db.knex('tabPatch Log').where({ patch: 'patches.ctx.partial' }).select('name')).toEqual([]);
  } finally {
    await db.close();
  }
});

test('a patch that throws after a rename: the rename rolls back with it where DDL is transactional', async () => {
  const db = connect(t.site.config.databaseUrl);
  try {
    await db.knex.schema.alterTable('tabWidget', (tb) => tb.string('legacy_code', 140).nullable());
    await db.knex('tabWidget').update({ legacy_code: db.knex.ref('name') });
  } finally {
    await db.close();
  }
  project.patch(
    'patches.ctx.rename_then_fail',
    `export async function execute(ctx: any): Promise<void> {
  await ctx.renameField('Widget', 'legacy_code', 'code');
  throw new Error('failed after the rename');
}
`,
  );
  project.list('patches.ctx.ok\npatches.ctx.rename_then_fail\n');
  await expect(migrate()).rejects.toThrow('failed after the rename');
  const after = connect(t.site.config.databaseUrl);
  try {
    const columns = Object.keys(await after.knex('tabWidget').columnInfo());
    const codes = (await after.knex('tabWidget').orderBy('name').pluck('code')) as unknown[];
    if (DB_KIND === 'mysql') {
      // MariaDB's DDL commits on its own: the copy and the dropped column stay (docs/migrations.md).
      expect(columns).not.toContain('legacy_code');
      expect(codes).toEqual([...names].sort());
    } else {
      expect(columns).toContain('legacy_code');
      expect(codes).toEqual([null, null]);
      expect(await after.knex('tabWidget').orderBy('name').pluck('legacy_code')).toEqual([...names].sort());
    }
    expect(
      await after.knex('tabPatch Log').where({ patch: 'patches.ctx.rename_then_fail' }).select('name'),
    ).toEqual([]);
  } finally {
    await after.close();
  }
});

test('a failure the patch catches undoes that call alone: the patch goes on and commits (PostgreSQL too)', async () => {
  project.patch(
    'patches.ctx.caught',
    `export async function execute(ctx: any): Promise<void> {
  try {
    await ctx.sql('SELECT * FROM ??', ['tabNo Such Table']);
  } catch {
    // expected: the table does not exist
  }
  try {
    await ctx.saveDoc({ doctype: 'ToDo' });
  } catch {
    // expected: a ToDo needs its description
  }
  await ctx.sql('UPDATE ?? SET ?? = ?', ['tabWidget', 'rate', 3.5]);
}
`,
  );
  project.list('patches.ctx.ok\npatches.ctx.caught\n');
  await closeSite(await migrate());
  const db = connect(t.site.config.databaseUrl);
  try {
    expect((await db.knex('tabWidget').pluck('rate')).map(Number)).toEqual([3.5, 3.5]);
    expect(
      Number((await db.knex('tabPatch Log').where({ patch: 'patches.ctx.caught' }).count({ n: '*' }))[0]?.n),
    ).toBe(1);
  } finally {
    await db.close();
  }
});
