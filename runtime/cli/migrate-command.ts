// `svc migrate [--dry-run] [--json] [--history] [--drop-removed]`: the plan of the schema sync, applied or only shown,
// and the history of applied changes. Exit status: 0, 1 when a change is refused, 2 for a usage error.
import { closeSite, openSite, type OpenSiteOptions } from '../bootstrap';
import { loadConfig } from '../config/config';
import { connect } from '../db/connect';
import { isPending, migrate, migrationHistory } from '../db/migrate';
import type { SchemaChange } from '../db/migration-plan';
import { readPatchList } from '../patches/patch-list';
import { pendingPatches } from '../patches/patch-log';
import { patchFile } from '../patches/run-patches';
import { compiledPatchesRoot, projectRoot } from './layout';
import { loadRegistry } from './load-registry';

/** The help text of `svc migrate`. */
export const MIGRATE_HELP = `Usage: svc migrate [--dry-run] [--json] [--history] [--drop-removed]

Syncs the database (DATABASE_URL) to the generated DocTypes: creates tables, adds columns (with the field's default),
converts column types, adds and drops indexes. Never drops a table; keeps the columns of removed fields.
  --dry-run       print the plan (one line per change: DocType, kind, SQL, warnings) and change nothing
  --json          print the plan (or the history) as JSON
  --history       list the applied changes
  --drop-removed  drop the columns of removed fields too
Exit status: 0; 1 when a change is refused (nothing of that DocType changes); 2 for a usage error.`;

const FLAGS = new Set(['--dry-run', '--json', '--history', '--drop-removed']);

/** One line of a plan. */
function planLine(change: SchemaChange): string {
  const parts = [change.doctype, change.kind, change.detail];
  if (change.statements.length) parts.push(change.statements.join('; '));
  for (const warning of change.warnings) parts.push(`warning: ${warning}`);
  if (change.refusal) parts.push(`REFUSED: ${change.refusal}`);
  return parts.join(' | ');
}

function planJson(change: SchemaChange) {
  const { doctype, kind, field, detail, statements, warnings, refusal } = change;
  return { doctype, kind, field: field ?? null, detail, statements, warnings, refusal: refusal ?? null };
}

/** A pending patch in the dry run's lines (`patch | pending | <line of patches.txt>`) and JSON. */
const patchLine = (key: string) => `patch | pending | ${key}`;
const patchJson = (key: string) => ({ kind: 'patch', patch: key });

/** Removed fields' columns first (what --drop-removed would drop), then the plan in its order. */
const REMOVED_FIRST = (a: SchemaChange, b: SchemaChange) =>
  Number(b.kind === 'removed_field' || b.kind === 'drop_column') -
  Number(a.kind === 'removed_field' || a.kind === 'drop_column');

/** Opens the site to migrate it (whatever `auto_migrate` says, with no job worker), with `options`. */
async function openToMigrate(config: ReturnType<typeof loadConfig>, options: OpenSiteOptions = {}) {
  return openSite(
    { ...config, site: { ...config.site, auto_migrate: true, job_worker: false } },
    await loadRegistry(),
    options,
  );
}

/**
 * Applies the sync between the patches of patches.txt (those not run yet: pre_model_sync, the sync, post_model_sync),
 * through opening the site; a failing patch or a refused change throws (the CLI prints it on one line, exit 1).
 */
async function migrateWithPatches(
  config: ReturnType<typeof loadConfig>,
  patches: ReturnType<typeof readPatchList>,
  dropRemoved: boolean,
): Promise<number> {
  const site = await openToMigrate(config, { full: true, dropRemoved, patches });
  if (site.patched.length) console.log(`ran ${site.patched.length} patches: ${site.patched.join(', ')}`);
  console.log(
    site.migrated.length
      ? `migrated ${site.migrated.length} DocTypes: ${site.migrated.join(', ')}`
      : 'schema is up to date',
  );
  await closeSite(site);
  return 0;
}

/** Runs `svc migrate`; returns the exit code. */
export async function migrateCommand(argv: string[]): Promise<number> {
  const unknown = argv.find((a) => !FLAGS.has(a));
  if (unknown !== undefined) {
    console.error(`unknown option ${unknown}\n\n${MIGRATE_HELP}`);
    return 2;
  }
  const has = (flag: string) => argv.includes(flag);
  const config = loadConfig();
  const { site } = config;
  const db = connect(config.databaseUrl, {
    statementMs: site.db_statement_timeout,
    acquireMs: site.db_acquire_timeout,
    busyMs: site.db_busy_timeout,
    site,
  });
  let code = 0;
  try {
    if (has('--history')) {
      const rows = await migrationHistory(db);
      if (has('--json')) console.log(JSON.stringify(rows, null, 2));
      else if (!rows.length) console.log('no schema change applied yet');
      else
        for (const r of rows)
          console.log([r.applied_at, r.doctype, r.kind, r.detail, `${String(r.ms)} ms`].join(' | '));
      return 0;
    }
    const patches = readPatchList(projectRoot(), compiledPatchesRoot());
    if (!has('--dry-run') && patches.pre_model_sync.length + patches.post_model_sync.length > 0) {
      await db.close();
      return await migrateWithPatches(config, patches, has('--drop-removed'));
    }
    const registry = await loadRegistry();
    const metas = registry.all().map((b) => b.meta);
    // The dry run names the patches that would run (before and after the sync) besides the schema changes.
    const waiting = has('--dry-run') ? await pendingPatches({ db, registry }, patches) : [];
    const result = await migrate(db, metas, {
      full: true,
      dryRun: has('--dry-run'),
      dropRemoved: has('--drop-removed'),
    });
    const shown = result.plan
      .filter((c) => c.kind !== 'create_table' || has('--dry-run'))
      .sort(REMOVED_FIRST);
    if (has('--json'))
      console.log(JSON.stringify([...waiting.map(patchJson), ...shown.map(planJson)], null, 2));
    else if (!shown.length && !result.changed.length && !waiting.length)
      console.log(has('--dry-run') ? 'nothing to change' : 'schema is up to date');
    else for (const line of [...waiting.map(patchLine), ...shown.map(planLine)]) console.log(line);
    if (result.changed.length && !has('--json'))
      console.log(`migrated ${result.changed.length} DocTypes: ${result.changed.join(', ')}`);
    // A pending patch whose module is missing would stop the run: the dry run says so, and fails as the run would.
    const missing = [...patches.pre_model_sync, ...patches.post_model_sync].flatMap((patch) => {
      if (!waiting.includes(patch.key)) return [];
      try {
        patchFile(patch);
        return [];
      } catch (err) {
        return [(err as Error).message];
      }
    });
    for (const message of missing) console.error(message);
    if (missing.length) code = 1;
    if (result.refused.length) {
      for (const change of result.refused) console.error(change.refusal);
      code = 1;
    } else if (has('--dry-run') && !has('--json')) {
      const pending = result.plan.filter(isPending).length + waiting.length;
      console.log(`${pending} change${pending === 1 ? '' : 's'} pending`);
    }
  } finally {
    await db.close();
  }
  // A first migration also creates the site (roles, Administrator), as `svc serve` would.
  if (code === 0 && !has('--dry-run') && !has('--history')) {
    await closeSite(await openToMigrate(config));
  }
  return code;
}
