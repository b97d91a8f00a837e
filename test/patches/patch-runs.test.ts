// Patches run around the schema sync: [pre_model_sync] before it, [post_model_sync] after it, in file order, each once
// (a Patch Log row per patch). A failing patch stops everything after it, the sync included, and runs again next time.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PatchError } from '../../runtime/errors/errors';
import { closeSite, openSite } from '../../runtime/bootstrap';
import { readPatchList } from '../../runtime/patches/patch-list';
import { connect } from '../../runtime/db/connect';
import type { Registry } from '../../runtime/registry/registry';
import type { Site } from '../../runtime/site';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { patchProject, type PatchProject } from '../helpers/patch-project';
import { createTestSite, emptyDatabase, type TestSite } from '../helpers/test-site';

/** What the test patches saw, in the order they ran: [patch, whether the sync had made tabNamed By Hash]. */
const runs: [string, boolean][] = [];
(globalThis as { patchRuns?: typeof runs }).patchRuns = runs;

const PROBE = 'tabNamed By Hash';
let t: TestSite;
let registry: Registry;
let project: PatchProject;
const opened: Site[] = [];

beforeAll(async () => {
  registry = await fixtureRegistry();
  t = await createTestSite({ registry });
  project = patchProject();
});
afterAll(async () => {
  for (const site of opened) await closeSite(site);
  await t.close();
  project.remove();
});

/** A patch that records that it ran and whether the schema sync had run; it fails while `flag` is missing. */
function recordingPatch(name: string, flag?: string): string {
  return `export async function execute(ctx: any): Promise<void> {
  ${flag ? `if (!require('node:fs').existsSync(${JSON.stringify(flag)})) throw new Error('${name} is not ready');` : ''}
  (globalThis as any).patchRuns.push(['${name}', await ctx.site.db.knex.schema.hasTable('${PROBE}')]);
}
`;
}

/** Drops the probe table and forgets its schema, so that the next sync creates it again. */
async function unsyncProbe(site: Site): Promise<void> {
  await site.db.knex.schema.dropTable(PROBE);
  await site.db.knex('__DocTypeSchema').where({ doctype: 'Named By Hash' }).delete();
}

async function migrate(): Promise<Site & { patched: string[] }> {
  const site = await project.migrate(t.site, registry);
  opened.push(site);
  return site;
}

async function patchLog(site: Site): Promise<string[]> {
  return (
    (await site.db.knex('tabPatch Log').orderBy('creation').select('patch')) as { patch: string }[]
  ).map((r) => r.patch);
}

test('pre_model_sync patches run before the sync and post_model_sync after it, each once, in file order', async () => {
  await unsyncProbe(t.site);
  await closeSite(t.site);
  for (const name of ['first', 'second', 'third'])
    project.patch(`patches.order.${name}`, recordingPatch(name));
  project.list(
    '[pre_model_sync]\npatches.order.first\n[post_model_sync]\npatches.order.third\n[pre_model_sync]\npatches.order.second\n',
  );
  runs.length = 0;
  const site = await migrate();
  expect(runs).toEqual([
    ['first', false],
    ['second', false],
    ['third', true],
  ]);
  expect(site.patched).toEqual(['patches.order.first', 'patches.order.second', 'patches.order.third']);
  expect(await patchLog(site)).toEqual([
    'patches.order.first',
    'patches.order.second',
    'patches.order.third',
  ]);
  const row = await site.db.knex('tabPatch Log').first('name', 'owner', 'skipped');
  expect(row).toMatchObject({ owner: 'Administrator' });
  expect(String(row.name)).toMatch(/^[0-9a-z]{10}$/);
  await closeSite(site);

  runs.length = 0;
  const again = await migrate();
  expect(runs).toEqual([]);
  expect(again.patched).toEqual([]);
  expect(await patchLog(again)).toHaveLength(3);
  await closeSite(again);
});

test('a failing patch stops the migration: nothing after it runs, nothing is recorded; it runs again next time', async () => {
  const flag = path.join(project.root, 'ready');
  const site = await migrate();
  await unsyncProbe(site);
  await closeSite(site);
  project.patch('patches.fail.flaky', recordingPatch('flaky', flag));
  project.patch('patches.fail.after', recordingPatch('after'));
  project.patch('patches.fail.post', recordingPatch('post'));
  project.list(
    '[pre_model_sync]\npatches.fail.flaky\npatches.fail.after\n[post_model_sync]\npatches.fail.post\n',
  );
  runs.length = 0;
  const failed = migrate();
  await expect(failed).rejects.toThrow(PatchError);
  await expect(failed).rejects.toThrow('patch patches.fail.flaky (patches.txt:2) failed: flaky is not ready');
  expect(runs).toEqual([]);

  // The sync did not run (the probe table is still missing) and no patch of this list was recorded.
  const db = connect(t.site.config.databaseUrl);
  try {
    expect(await db.knex.schema.hasTable(PROBE)).toBe(false);
    expect(await db.knex('tabPatch Log').where('patch', 'like', 'patches.fail.%').count({ n: '*' })).toEqual([
      { n: 0 },
    ]);
  } finally {
    await db.close();
  }
  writeFileSync(flag, '');
  const fixed = await migrate();
  expect(runs).toEqual([
    ['flaky', false],
    ['after', false],
    ['post', true],
  ]);
  expect((await patchLog(fixed)).slice(-3)).toEqual([
    'patches.fail.flaky',
    'patches.fail.after',
    'patches.fail.post',
  ]);
  await closeSite(fixed);
});

test('a patch whose module is missing, or exports no execute, stops the migration naming it', async () => {
  project.list('[post_model_sync]\npatches.missing.gone\n');
  await expect(migrate()).rejects.toThrow(
    'patches.txt:2 patches.missing.gone: no file patches/missing/gone.ts',
  );
  project.patch('patches.missing.empty', 'export const nothing = 1;\n');
  project.list('patches.missing.empty\n');
  await expect(migrate()).rejects.toThrow(
    'patches.txt:1 patches.missing.empty: exports no execute(ctx) function',
  );
  // A module that fails to load with a message of several lines (as a compiler's): the error is one line.
  project.patch(
    'patches.missing.broken',
    "throw new Error('Transform failed with 1 error:\\n  x.ts:1:25: ERROR');\n",
  );
  project.list('patches.missing.broken\n');
  const broken = await migrate().catch((err: Error) => err);
  expect(broken).toBeInstanceOf(PatchError);
  expect((broken as Error).message).toMatch(/^patches\.txt:1 patches\.missing\.broken: cannot be loaded: \S/);
  expect((broken as Error).message).toContain('Transform failed with 1 error: x.ts:1:25: ERROR');
  expect((broken as Error).message).not.toContain('\n');
});

test('a new site records its patches as done without running them, as Frappe installs a site', async () => {
  project.patch('patches.fresh.before', recordingPatch('fresh-before'));
  project.patch('patches.fresh.after', recordingPatch('fresh-after'));
  project.list('[pre_model_sync]\npatches.fresh.before\n[post_model_sync]\npatches.fresh.after\n');
  runs.length = 0;
  const empty = await emptyDatabase();
  try {
    const site = await openSite({ ...t.site.config, databaseUrl: empty.url }, registry, {
      patches: readPatchList(project.root),
    });
    try {
      expect(runs).toEqual([]);
      expect(site.patched).toEqual([]);
      const rows = (await site.db.knex('tabPatch Log').orderBy('patch').select('patch', 'skipped')) as {
        patch: string;
        skipped: number | boolean;
      }[];
      expect(rows.map((r) => [r.patch, Number(r.skipped)])).toEqual([
        ['patches.fresh.after', 1],
        ['patches.fresh.before', 1],
      ]);
      // The site works: its tables, Administrator and the document path are there.
      expect(await site.db.knex.schema.hasTable(PROBE)).toBe(true);
    } finally {
      await closeSite(site);
    }
  } finally {
    await empty.drop();
  }
});

test('patch modules are found under the modules folder given (dist/ in a compiled build), as plain .js', async () => {
  const compiled = path.join(project.root, 'dist');
  mkdirSync(path.join(compiled, 'patches', 'built'), { recursive: true });
  writeFileSync(
    path.join(compiled, 'patches', 'built', 'probe.js'),
    "exports.execute = async () => { globalThis.patchRuns.push(['built', true]); };\n",
  );
  project.list('[post_model_sync]\npatches.built.probe\n');
  runs.length = 0;
  await closeSite(t.site);
  const site = await openSite(t.site.config, registry, { patches: readPatchList(project.root, compiled) });
  opened.push(site);
  expect(runs).toEqual([['built', true]]);
  expect(site.patched).toEqual(['patches.built.probe']);
});

test('a new site still refuses a patch line whose module does not exist (a typo is not recorded as done)', async () => {
  project.list('[post_model_sync]\npatches.fresh.mistyped\n');
  const empty = await emptyDatabase();
  try {
    await expect(
      openSite({ ...t.site.config, databaseUrl: empty.url }, registry, {
        patches: readPatchList(project.root),
      }),
    ).rejects.toThrow('patches.txt:2 patches.fresh.mistyped: no file patches/fresh/mistyped.ts');
  } finally {
    await empty.drop();
  }
});
