// The Patch Log DocType (core): one row per patch that has run, keyed by its line in patches.txt. Its table is synced
// on its own, under the migration lock, before the pre_model_sync patches (which run before the rest of the sync).
import { PatchError } from '../errors/errors';
import { hashName } from '../document/naming';
import { insertServiceRow } from '../document/service-row';
import type { Knex } from 'knex';
import type { DocTypeMeta } from '../meta/types';
import type { Site } from '../site';
import { PATCH_USER } from './patch-user';
import type { PatchList } from './patch-list';

/** The DocType recording the patches that ran. */
export const PATCH_LOG = 'Patch Log';

/** The Patch Log's metadata (a PatchError when the registry lacks it). */
export function patchLogMeta(site: Pick<Site, 'registry'>): DocTypeMeta {
  const binding = site.registry.get(PATCH_LOG);
  if (!binding) throw new PatchError(`patches.txt needs the ${PATCH_LOG} DocType (doctypes/core/patch_log)`);
  return binding.meta;
}

/** The keys of the patches that have run (none while the Patch Log table does not exist). */
export async function executedPatches(site: Pick<Site, 'db' | 'registry'>): Promise<Set<string>> {
  const { tableName } = patchLogMeta(site);
  if (!(await site.db.schema.tables(site.db.knex)).has(tableName)) return new Set();
  const rows = (await site.db.knex(tableName).select('patch')) as { patch: string | null }[];
  return new Set(rows.map((r) => String(r.patch)));
}

/** The keys of the patches of `list` that have not run yet, pre_model_sync first, in file order. */
export async function pendingPatches(
  site: Pick<Site, 'db' | 'registry'>,
  list: PatchList,
): Promise<string[]> {
  const all = [...list.pre_model_sync, ...list.post_model_sync];
  if (!all.length) return [];
  const done = await executedPatches(site);
  return all.filter((p) => !done.has(p.key)).map((p) => p.key);
}

/**
 * Records that the patch `key` ran (or, on a new site, that it needs not: `skipped`) in the open transaction `q`, as a
 * row written straight to the Patch Log's table. Not through the document lifecycle: a pre_model_sync patch is recorded
 * before the sync, when the tables the lifecycle reads (Server Scripts, the event log) may not exist yet.
 */
export async function recordPatch(site: Site, q: Knex, key: string, skipped = false): Promise<void> {
  const binding = site.registry.get(PATCH_LOG);
  if (!binding) throw new PatchError(`patches.txt needs the ${PATCH_LOG} DocType (doctypes/core/patch_log)`);
  const values = { patch: key, skipped: skipped ? 1 : 0 };
  await insertServiceRow(site, q, binding, hashName(), values, PATCH_USER.name);
}
