// The Data Import job: reads the attached file again (a resumed job sees the same documents in the same order), runs
// every document not yet done and logs each in the transaction that records its outcome, so a worker killed mid-import
// resumes without importing a line twice. Progress is the job's: documents with an outcome of the file's total.
import { randomUUID } from 'node:crypto';
import { inWriteTransaction } from '../db/write-transaction';
import { now } from '../db/stored-values';
import { DoesNotExistError } from '../errors/errors';
import { REQUEUE, registerJobKind, type JobRun } from '../jobs/job-queue';
import { requestPacer } from '../jobs/pacing';
import type { Site } from '../site';
import { logItemStore } from './import-log';
import { openAttachedFile } from './import-source';
import { streamImport } from './stream-import';
import { importTypeOf, runImport } from './run-import';

/** The job kind of imports. */
export const DATA_IMPORT_JOB = 'data-import';

/** The DocType of import records. */
export const IMPORT_DOCTYPE = 'Data Import';

/** What an import job stores: the Data Import it runs. */
export interface ImportJobPayload {
  data_import: string;
}

/** The Data Import row `name` (its stored columns), or a 404. */
export async function loadImportRecord(site: Site, name: string): Promise<Record<string, unknown>> {
  const table = site.registry.get(IMPORT_DOCTYPE)?.meta.tableName ?? 'tabData Import';
  const row = (await site.db.knex(table).where({ name }).first()) as Record<string, unknown> | undefined;
  if (!row) throw new DoesNotExistError(`Data Import ${name.slice(0, 140)} not found`);
  return row;
}

/** Sets columns of a Data Import row (status, payload_count, job_id): the import's own bookkeeping, no hooks. */
export async function setImportFields(
  site: Site,
  name: string,
  fields: Record<string, unknown>,
): Promise<void> {
  const table = site.registry.get(IMPORT_DOCTYPE)?.meta.tableName ?? 'tabData Import';
  await inWriteTransaction(site.db, (trx) =>
    trx(table)
      .where({ name })
      .update({ ...fields, modified: now() }),
  );
}

/** How long a start's claim (`claim:<ms>:<uuid>` in job_id, before its job id is known) counts as running. */
const CLAIM_MS = 60_000;

/** True when `jobId` is the claim of a start still in progress (another request is queueing this import). */
export function isLiveClaim(jobId: unknown): boolean {
  const claim = /^claim:(\d+):/.exec(typeof jobId === 'string' ? jobId : '');
  return claim !== null && Date.now() - Number(claim[1]) < CLAIM_MS;
}

/**
 * Claims a Data Import for one start: its job_id becomes a fresh claim only if it still holds `seen` (what the caller
 * read and found not running), so of two concurrent starts one claims it and the other is refused. Returns the claim,
 * or undefined when another start got there first.
 */
export async function claimImport(site: Site, name: string, seen: unknown): Promise<string | undefined> {
  const table = site.registry.get(IMPORT_DOCTYPE)?.meta.tableName ?? 'tabData Import';
  const claim = `claim:${Date.now()}:${randomUUID()}`;
  const updated = await inWriteTransaction(site.db, (trx) => {
    const query = trx(table).where({ name });
    if (typeof seen === 'string' && seen !== '') query.andWhere({ job_id: seen });
    else query.andWhere((w) => w.whereNull('job_id').orWhere('job_id', ''));
    return query.update({ job_id: claim, status: 'Pending', modified: now() });
  });
  return Number(updated) === 1 ? claim : undefined;
}

/** The status an import ends in, from its counts (Frappe's). */
export function finalStatus(success: number, failed: number): string {
  return failed === 0 ? 'Success' : success === 0 ? 'Error' : 'Partial Success';
}

/** Runs (or resumes) an import job; the result is the counts. */
async function runImportJob(run: JobRun): Promise<unknown> {
  const { data_import: name } = run.payload as ImportJobPayload;
  const { site, user } = run;
  const record = await loadImportRecord(site, name);
  try {
    const doctype = String(record.reference_doctype);
    const binding = site.registry.get(doctype);
    if (!binding) throw new DoesNotExistError(`DocType ${doctype.slice(0, 140)} not found`);
    const file = await openAttachedFile(site, user, record.import_file);
    const { documents } = await streamImport(site, binding, file.kind, file.stream);
    const total = await runImport(
      { site, user, version: 2 },
      doctype,
      importTypeOf(record.import_type),
      documents,
      {
        done: run.items.done,
        success: (trx, index, outcome, lines) => run.items.recordIn(trx, index, { ...outcome, lines }),
        failure: (index, outcome, lines) => run.items.record(index, { ...outcome, lines }),
        stopping: () => run.items.stopping(),
        pace: requestPacer(),
      },
    );
    if (total === undefined) return REQUEUE;
    const outcomes = [...(await run.items.all()).values()] as { ok: boolean }[];
    const success = outcomes.filter((o) => o.ok).length;
    const failed = outcomes.length - success;
    await setImportFields(site, name, { status: finalStatus(success, failed) });
    return { total, success_count: success, failure_count: failed };
  } catch (err) {
    await setImportFields(site, name, { status: 'Error' });
    throw err;
  }
}

// The job's item outcomes are its Data Import Log rows: one row per document besides the document's own.
registerJobKind(DATA_IMPORT_JOB, runImportJob, { items: logItemStore });
