// The Patch Log DocType (core): one row per patch that has run, keyed by its line in patches.txt. Its table is synced
// on its own before the pre_model_sync patches, which run before the rest of the schema sync.
import { PatchError } from '../errors/errors';
import { migrate } from '../db/migrate';
import { DocumentTransaction } from '../document/lifecycle';
import type { Site } from '../site';
import { PATCH_USER } from './patch-user';

/** The DocType recording the patches that ran. */
export const PATCH_LOG = 'Patch Log';

/** Creates the Patch Log table when missing; returns the keys of the patches that have run. */
export async function executedPatches(site: Site): Promise<Set<string>> {
  const binding = site.registry.get(PATCH_LOG);
  if (!binding) throw new PatchError(`patches.txt needs the ${PATCH_LOG} DocType (doctypes/core/patch_log)`);
  await migrate(site.db, [binding.meta]);
  const rows = (await site.db.knex(binding.meta.tableName).select('patch')) as { patch: string | null }[];
  return new Set(rows.map((r) => String(r.patch)));
}

/** Records that the patch `key` ran, through the document path (as Administrator). */
export async function recordPatch(site: Site, key: string): Promise<void> {
  const tx = new DocumentTransaction(site, PATCH_USER);
  tx.ignorePermissions = true;
  await tx.run(async () => {
    await tx.newDoc(PATCH_LOG, { patch: key }).insert();
  });
}
