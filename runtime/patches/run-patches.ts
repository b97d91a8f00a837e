// Runs the pending patches of one phase in order: each once, in a transaction of its own that records it in the Patch
// Log (patch-context.ts). A missing or failing patch stops the migration (PatchError): what it wrote is rolled back,
// nothing after it runs, and it runs again next time.
import { existsSync } from 'node:fs';
import { PatchError } from '../errors/errors';
import { inWriteTransaction } from '../db/write-transaction';
import { logger } from '../log/logger';
import type { Site } from '../site';
import { runPatch, type PatchModule } from './patch-context';
import { executedPatches, PATCH_LOG, recordPatch } from './patch-log';
import { PATCHES_FILE, type PatchLine, type PatchPhase } from './patch-list';

/** The file of a patch line: the compiled build's `.js`, else the project's `.ts` or `.js`; a PatchError when none. */
export function patchFile(patch: PatchLine): string {
  const candidates = [
    ...(patch.compiled ? [`${patch.compiled}.js`] : []),
    `${patch.file}.ts`,
    `${patch.file}.js`,
  ];
  const file = candidates.find((f) => existsSync(f));
  if (!file)
    throw new PatchError(
      `${PATCHES_FILE}:${patch.line} ${patch.module}: no file ${patch.module.split('.').join('/')}.ts (nor the .js npm run build makes of it in dist/)`,
    );
  return file;
}

/** `text` on one line (a compiler's or a driver's message may have several): the CLI prints the error as one. */
const oneLine = (text: string): string => text.replace(/\s*\n\s*/g, ' ').trim();

/** The module of a patch line. */
function loadPatch(patch: PatchLine): PatchModule {
  const file = patchFile(patch);
  const where = `${PATCHES_FILE}:${patch.line} ${patch.module}`;
  let mod: Partial<PatchModule> & { default?: Partial<PatchModule> };
  try {
    mod = require(file) as typeof mod;
  } catch (err) {
    // A .ts module under plain node (the compiled start): its patches are compiled by npm run build.
    const hint =
      err instanceof SyntaxError && file.endsWith('.ts')
        ? ' (npm run build compiles patches/ for npm start)'
        : '';
    throw new PatchError(`${where}: cannot be loaded: ${oneLine((err as Error).message)}${hint}`, {
      cause: err,
    });
  }
  const execute = mod.execute ?? mod.default?.execute;
  if (typeof execute !== 'function') throw new PatchError(`${where}: exports no execute(ctx) function`);
  return { execute };
}

/** Runs the patches of `phase` that have not run yet; returns the keys of those that ran. */
export async function runPatches(
  site: Site,
  phase: PatchPhase,
  patches: readonly PatchLine[],
): Promise<string[]> {
  if (!patches.length) return [];
  const done = await executedPatches(site);
  const ran: string[] = [];
  for (const patch of patches) {
    if (done.has(patch.key)) continue;
    const started = Date.now();
    const { execute } = loadPatch(patch);
    try {
      await runPatch(site, execute, (q) => recordPatch(site, q, patch.key));
    } catch (err) {
      const message = oneLine(err instanceof Error ? err.message : String(err));
      logger().error({ event: 'patch_failed', patch: patch.key, phase, err: message }, 'patch failed');
      throw new PatchError(`patch ${patch.key} (${PATCHES_FILE}:${patch.line}) failed: ${message}`, {
        cause: err,
      });
    }
    logger().info(
      { event: 'patch_applied', patch: patch.key, phase, ms: Date.now() - started },
      'patch applied',
    );
    ran.push(patch.key);
  }
  return ran;
}

/**
 * True on a new site: no table of its DocTypes exists yet but the Patch Log's (synced first). Its schema is made at the
 * DocTypes' current state, so its patches need not run (recordSkipped), as Frappe's install marks them all completed.
 */
export async function isNewSite(site: Site): Promise<boolean> {
  const tables = await site.db.schema.tables(site.db.knex);
  return !site.registry
    .all()
    .some((b) => !b.meta.issingle && b.meta.name !== PATCH_LOG && tables.has(b.meta.tableName));
}

/** Records the patches not run yet as done without running them (`skipped`): a new site's (isNewSite). */
export async function recordSkipped(site: Site, patches: readonly PatchLine[]): Promise<string[]> {
  const done = await executedPatches(site);
  const pending = patches.filter((p) => !done.has(p.key));
  // Not run, but there: a mistyped line stops the install as it would stop a migration.
  for (const patch of pending) patchFile(patch);
  const skipped = pending.map((p) => p.key);
  if (skipped.length)
    await inWriteTransaction(site.db, async (q) => {
      for (const key of skipped) await recordPatch(site, q, key, true);
    });
  if (skipped.length)
    logger().info(
      { event: 'patches_skipped', patches: skipped.length },
      'new site: its patches are recorded as done without running',
    );
  return skipped;
}
