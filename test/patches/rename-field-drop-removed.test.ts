// `svc migrate --drop-removed` with a [post_model_sync] renameField: the removed field's column is what the patch moves,
// so it is dropped only after the patch ran (a second sync), never before; its values end in the new column.
import { closeSite, openSite } from '../../runtime/bootstrap';
import { readPatchList } from '../../runtime/patches/patch-list';
import type { Site } from '../../runtime/site';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { patchProject, type PatchProject } from '../helpers/patch-project';
import { createTestSite, type TestSite } from '../helpers/test-site';

let t: TestSite;
let project: PatchProject;
let site: (Site & { patched: string[] }) | undefined;
afterAll(async () => {
  if (site) await closeSite(site);
  await t.close();
  project.remove();
});

test('the values of a column a post_model_sync patch renames survive --drop-removed', async () => {
  const registry = await fixtureRegistry();
  t = await createTestSite({ registry });
  project = patchProject();
  const names: string[] = [];
  for (const [title, code] of [
    ['Alpha', 'A-1'],
    ['Beta', 'B-2'],
  ]) {
    const res = await t.http
      .post('/api/resource/Widget')
      .set('Authorization', t.adminToken)
      .send({ title, code });
    expect(res.status).toBe(201);
    names.push(res.body.data.name as string);
  }
  // As an older schema left it: Widget's code was `legacy_code`.
  const knex = t.site.db.knex;
  await knex.schema.alterTable('tabWidget', (tb) => {
    tb.string('legacy_code', 140).nullable();
  });
  await knex('tabWidget').update({ legacy_code: knex.ref('code') });
  await knex('tabWidget').update({ code: null });
  await closeSite(t.site);
  project.patch(
    'patches.v3.code',
    `export async function execute(ctx: any): Promise<void> {
  await ctx.renameField('Widget', 'legacy_code', 'code');
}
`,
  );
  project.list('[post_model_sync]\npatches.v3.code\n');
  site = await openSite(t.site.config, registry, {
    patches: readPatchList(project.root),
    full: true,
    dropRemoved: true,
  });
  expect(site.patched).toEqual(['patches.v3.code']);
  const rows = await site.db.knex('tabWidget').whereIn('name', names).orderBy('title').select('code');
  expect(rows.map((r: { code: string }) => r.code)).toEqual(['A-1', 'B-2']);
  expect(Object.keys(await site.db.knex('tabWidget').columnInfo())).not.toContain('legacy_code');
});
