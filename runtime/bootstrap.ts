// Opening a site: connect, sync the schema, and on first start create the roles and the Administrator.
import { setJobQueue } from './jobs/job-queue';
import { runsJobWorker, siteJobQueue } from './jobs/site-queue';
import './jobs/bulk-job';
import { startScheduler } from './scripts/script-scheduler';
import { startFileSweep } from './files/orphan-sweep';
import { startWebhookDispatcher } from './webhooks/dispatcher';
import { hashPassword, readAuth, writeAuth } from './auth/passwords';
import { listenForAuthChanges } from './auth/auth-broadcast';
import { listenForUserPermissionChanges } from './permissions/user-permission-broadcast';
import type { ServiceConfig } from './config/config';
import { connect } from './db/connect';
import { isPending, migrate, type MigrateOptions } from './db/migrate';
import { SchemaConflictError, SchemaPendingError } from './errors/errors';
import { ensureSigningKey } from './oauth/signing-keys';
import { installFeatures } from './features';
import type { PatchList } from './patches/patch-list';
import { patchLogMeta, pendingPatches } from './patches/patch-log';
import { isNewSite, recordSkipped, runPatches } from './patches/run-patches';
import { openResultCache, resultCacheLimits } from './query/result-cache';
import { openReplicaReads } from './query/replica-reads';
import { SitePlugins } from './site';
import { ensureFileFolders } from './files/file-rules';
import { now } from './db/stored-values';
import type { Registry } from './registry/registry';
import { ADMINISTRATOR, type Site } from './site';

/** Roles every site has. */
export const CORE_ROLES = ['Administrator', 'System Manager', 'All', 'Guest'] as const;

async function ensureRoles(site: Site): Promise<void> {
  if (!site.registry.get('Role')) return;
  const named = site.registry.all().flatMap((b) => b.meta.permissions.map((p) => p.role));
  const roles = [...new Set([...CORE_ROLES, ...named])].sort();
  const existing = new Set(
    ((await site.db.knex('tabRole').select('name')) as { name: string }[]).map((r) => r.name),
  );
  const stamp = now();
  for (const role of roles) {
    if (existing.has(role)) continue;
    await site.db.knex('tabRole').insert({
      name: role,
      role_name: role,
      desk_access: 1,
      creation: stamp,
      modified: stamp,
      owner: ADMINISTRATOR,
      modified_by: ADMINISTRATOR,
    });
  }
}

async function ensureAdministrator(site: Site): Promise<boolean> {
  const knex = site.db.knex;
  if (!site.registry.get('User')) return false;
  if (await knex('tabUser').where('name', ADMINISTRATOR).first('name')) {
    if (!(await readAuth(knex, 'User', ADMINISTRATOR, 'password')))
      await writeAuth(knex, 'User', ADMINISTRATOR, 'password', await hashPassword(site.config.adminPassword));
    return false;
  }
  const stamp = now();
  await knex.transaction(async (trx) => {
    await trx('tabUser').insert({
      name: ADMINISTRATOR,
      email: 'admin@example.com',
      first_name: ADMINISTRATOR,
      full_name: ADMINISTRATOR,
      enabled: 1,
      user_type: 'System User',
      creation: stamp,
      modified: stamp,
      owner: ADMINISTRATOR,
      modified_by: ADMINISTRATOR,
    });
    const guestRow = await trx('tabUser').where('name', 'Guest').first('name');
    if (!guestRow) {
      await trx('tabUser').insert({
        name: 'Guest',
        email: 'guest@example.com',
        first_name: 'Guest',
        full_name: 'Guest',
        enabled: 1,
        user_type: 'Website User',
        creation: stamp,
        modified: stamp,
        owner: ADMINISTRATOR,
        modified_by: ADMINISTRATOR,
      });
    }
    if (site.registry.get('Has Role')) {
      for (const [i, role] of ['Administrator', 'System Manager'].entries()) {
        await trx('tabHas Role').insert({
          name: `${ADMINISTRATOR}-${role}`.toLowerCase().replace(/\s+/g, '-'),
          parent: ADMINISTRATOR,
          parenttype: 'User',
          parentfield: 'roles',
          role,
          idx: i + 1,
          creation: stamp,
          modified: stamp,
          owner: ADMINISTRATOR,
          modified_by: ADMINISTRATOR,
        });
      }
    }
    await writeAuth(trx, 'User', ADMINISTRATOR, 'password', await hashPassword(site.config.adminPassword));
  });
  return true;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/**
 * Migrates the schema at start (site config auto_migrate), running the pending patches around the sync under the
 * migration lock; or, with auto_migrate false, refuses to go on while a schema change or a patch is pending. A refused
 * change stops the start. Both throw with the reason on one line.
 */
async function migrateAtStart(
  site: Site,
  options: MigrateOptions,
  patches: PatchList | undefined,
): Promise<{ changed: string[]; patched: string[] }> {
  const metas = site.registry.all().map((b) => b.meta);
  if (!site.config.site.auto_migrate) {
    const pending = (await migrate(site.db, metas, { ...options, dryRun: true })).plan.filter(isPending);
    const waiting = patches ? await pendingPatches(site, patches) : [];
    const reasons = [
      ...(pending.length
        ? [
            `${plural(pending.length, 'schema change is', 'schema changes are')} pending (${[...new Set(pending.map((c) => c.doctype))].slice(0, 5).join(', ')})`,
          ]
        : []),
      ...(waiting.length
        ? [`${plural(waiting.length, 'patch is', 'patches are')} pending (${waiting.slice(0, 5).join(', ')})`]
        : []),
    ];
    if (reasons.length)
      throw new SchemaPendingError(`${reasons.join(', ')} and auto_migrate is false: run \`svc migrate\``);
    return { changed: [], patched: [] };
  }
  const patched: string[] = [];
  // A new site's schema is made at the DocTypes' current state: its patches are recorded, not run (isNewSite).
  let newSite = false;
  const withPatches =
    patches && patches.pre_model_sync.length + patches.post_model_sync.length > 0
      ? {
          syncFirst: [patchLogMeta(site)],
          phases: {
            beforeSync: [
              async () => {
                newSite = await isNewSite(site);
                if (!newSite)
                  patched.push(...(await runPatches(site, 'pre_model_sync', patches.pre_model_sync)));
              },
            ],
            afterSync: [
              async () => {
                if (newSite)
                  await recordSkipped(site, [...patches.pre_model_sync, ...patches.post_model_sync]);
                else patched.push(...(await runPatches(site, 'post_model_sync', patches.post_model_sync)));
              },
            ],
          },
        }
      : {};
  const { changed, refused } = await migrate(site.db, metas, { ...options, ...withPatches });
  if (refused.length) throw new SchemaConflictError(refused.map((c) => c.refusal).join('; '));
  return { changed, patched };
}

/** What opening a site does around the schema sync: MigrateOptions, and the patches of patches.txt to run around it. */
export interface OpenSiteOptions extends MigrateOptions {
  /** The patches of patches.txt to run around the schema sync (svc migrate, svc serve); none when absent. */
  patches?: PatchList;
}

/**
 * Opens the site's database and syncs it (between the pre_model_sync and post_model_sync patches, when given, all under
 * the migration lock); creates roles and Administrator when missing. A failing patch or sync closes the database and throws.
 */
export async function openSite(
  config: ServiceConfig,
  registry: Registry,
  options: OpenSiteOptions = {},
): Promise<Site & { created: boolean; migrated: string[]; patched: string[] }> {
  const { site: conf } = config;
  const db = connect(config.databaseUrl, {
    statementMs: conf.db_statement_timeout,
    acquireMs: conf.db_acquire_timeout,
    busyMs: conf.db_busy_timeout,
    site: conf,
  });
  const site: Site = {
    db,
    registry,
    rows: db.openRowStore(registry),
    config,
    plugins: new SitePlugins(),
  };
  // Installed first, closed last: every other plugin may still write while it closes.
  site.plugins.onClose('database', () => db.close());
  installFeatures(site);
  db.resultCache = resultCacheLimits(site);
  try {
    // A read_replicas the backend cannot serve (SQLite) is a configuration error: the site does not start.
    openReplicaReads(site);
  } catch (err) {
    await site.plugins.close(site).catch(() => undefined);
    throw err;
  }
  const jobs = siteJobQueue(site);
  setJobQueue(site, jobs);
  const { patches, ...migration } = options;
  let changed: string[];
  let patched: string[];
  try {
    ({ changed, patched } = await migrateAtStart(site, migration, patches));
  } catch (err) {
    await site.plugins.close(site).catch(() => undefined);
    throw err;
  }
  await ensureRoles(site);
  const created = await ensureAdministrator(site);
  await ensureFileFolders(site);
  // A new site gets its OpenID signing key now; a site made before keys existed gets one at first use.
  if (created) await ensureSigningKey(site);
  listenForAuthChanges(site);
  listenForUserPermissionChanges(site);
  openResultCache(site);
  // Closed before every plugin a job may use; the scheduler (which queues jobs) first of all.
  site.plugins.onClose('job worker', () => jobs.close());
  if (runsJobWorker(config)) {
    jobs.start();
    startScheduler(site);
    startFileSweep(site);
    startWebhookDispatcher(site);
  }
  // The same object the job worker holds: per-site state (Redis connections, script caches) is keyed by it.
  return Object.assign(site, { created, migrated: changed, patched });
}

/**
 * Closes a site: its plugins in reverse order of installation (the scheduler and job worker first, then what features
 * hold: request log rows written, subscriptions and Redis closed; the database last). A failing one does not stop the
 * others; its error is thrown once all have run.
 */
export async function closeSite(site: Site): Promise<void> {
  await site.plugins.close(site);
}
