// Frappe's Data Import methods (frappe.core.doctype.data_import.data_import.*): the preview that checks every document
// of the attached file through the document path and writes nothing, the start of the import as a background job,
// its status, and the failed lines as a file to fix and import again.
import { csvLine } from '../data-export/export-stream';
import { assertDocTypePermission } from '../permissions/doctype-permission';
import { assertDocumentPermission } from '../permissions/document-permission';
import type { Caller } from '../document/caller';
import type { DocTypeMeta } from '../meta/types';
import { AppError, DataError, DoesNotExistError, ValidationError } from '../errors/errors';
import { callerOf } from '../http/caller-of';
import { requestParams } from '../http/params';
import type { AppContext } from '../http/state';
import * as documents from '../operations/document-operations';
import {
  DATA_IMPORT_JOB,
  IMPORT_DOCTYPE,
  claimImport,
  isLiveClaim,
  loadImportRecord,
  setImportFields,
} from './import-job';
import { jobQueueOf } from '../jobs/job-queue';
import { clearFailedLogs, importLogs } from './import-log';
import { assertCanImport } from './import-rights';
import { openAttachedFile } from './import-source';
import { checkImportFile, streamImport } from './stream-import';
import { readLines } from './read-table';
import { asImporter, importTypeOf, type ImportType } from './run-import';

/** Thrown inside a preview's transaction once the document passed every check: rolls it back. */
class PreviewRollback extends Error {}

/** Documents shown whole in a preview. */
const PREVIEW_DOCUMENTS = 20;
/**
 * Documents a preview runs through the document path (the first ones; each is a rolled-back write, about half a
 * millisecond): past them only the file's own problems are found, and the job checks the rest as it imports them.
 */
export const PREVIEW_CHECKS = 1_000;
/** Warnings a preview lists (`warnings_count` counts them all). */
export const PREVIEW_WARNINGS = 1_000;

/** The Data Import named by `key` of the request, checked for `right`, and its reference DocType. */
async function importRecord(
  ctx: AppContext,
  key: string,
  right: 'read' | 'write',
): Promise<{ caller: Caller; name: string; record: Record<string, unknown> }> {
  const name = requestParams(ctx)[key];
  if (typeof name !== 'string' || name === '') throw new ValidationError(`${key} is required`);
  const caller = callerOf(ctx);
  const binding = caller.site.registry.get(IMPORT_DOCTYPE);
  if (!binding) throw new DoesNotExistError('DocType Data Import not found');
  // Refused before the lookup, as a GET of the document is: a user without the right learns nothing of which exist.
  assertDocTypePermission(caller.user, binding.meta, right);
  const record = await loadImportRecord(caller.site, name);
  await assertDocumentPermission(caller, binding, record, right);
  return { caller, name, record };
}

/** The DocType a Data Import imports into, its import type and its attached file (or the one the request names). */
async function importInput(caller: Caller, record: Record<string, unknown>, file?: unknown) {
  const doctype = String(record.reference_doctype ?? '');
  const binding = caller.site.registry.get(doctype);
  if (!binding || binding.meta.istable || binding.meta.issingle)
    throw new ValidationError(`Data Import: ${doctype.slice(0, 140)} is not a DocType that can be imported`);
  // Checked again for the caller: the one who previews or starts may not be the one who saved the record.
  assertCanImport(caller.user, binding.meta);
  const type = importTypeOf(record.import_type);
  const source = await openAttachedFile(caller.site, caller.user, file ?? record.import_file);
  return { doctype, binding, type, source };
}

/** What checking a document found: its error, if any, and the name it would have. */
interface Checked {
  problem?: { message: string; exc_type: string };
  name?: string;
}

/**
 * Runs one document through the insert or update path, as the job's caller (`importer`), in a transaction that is
 * rolled back.
 */
async function checkDocument(
  importer: Caller,
  doctype: string,
  type: ImportType,
  doc: Record<string, unknown>,
): Promise<Checked> {
  let named: string | undefined;
  const rollback = async (_trx: unknown, name: string) => {
    named = name;
    throw new PreviewRollback();
  };
  try {
    if (type === 'Insert New Records')
      await documents.insertDocument(importer, doctype, { ...doc }, rollback);
    else {
      const { name, ...changes } = doc;
      if (typeof name !== 'string' || name === '')
        return { problem: { message: 'name is required to update a document', exc_type: 'ValidationError' } };
      await documents.saveChanges(importer, doctype, name, changes, rollback);
    }
    return {};
  } catch (err) {
    if (err instanceof PreviewRollback) return { name: named };
    if (err instanceof AppError) return { problem: { message: err.message, exc_type: err.excType } };
    return { problem: { message: 'Internal Server Error', exc_type: 'InternalServerError' } };
  }
}

/**
 * Whether a new document's name, as its rolled-back check gives it, is the name the job would give it: one the file
 * gives, or one made of the document's fields. Not one drawn from a counter (a series, autoincrement; every check
 * rolls the counter back, so each would get the same name) or at random.
 */
function nameIsTheDocument(meta: DocTypeMeta, doc: Record<string, unknown>, name: string): boolean {
  if (name === doc.name) return true;
  const naming = meta.naming;
  return naming.kind === 'field' || (naming.kind === 'format' && !naming.pattern.includes('#'));
}

/**
 * get_preview_from_template(data_import, import_file?): the file's problems, and those of its first PREVIEW_CHECKS
 * documents run through the document path; nothing written.
 */
export async function getPreviewFromTemplate(ctx: AppContext): Promise<unknown> {
  const { caller, record } = await importRecord(ctx, 'data_import', 'read');
  const { doctype, binding, type, source } = await importInput(
    caller,
    record,
    requestParams(ctx).import_file,
  );
  // One document at a time: a preview keeps what it answers, not the file (concurrent previews of a large file ran
  // the process out of memory as whole plans).
  const { layout, documents } = await streamImport(caller.site, binding, source.kind, source.stream);
  const warnings: { row: number[]; message: string; exc_type?: string }[] = [];
  let count = 0;
  const warn = (warning: (typeof warnings)[number]) => {
    if (++count <= PREVIEW_WARNINGS) warnings.push(warning);
  };
  let checked = 0;
  let payload = 0;
  const shown: { lines: number[]; doc: Record<string, unknown> }[] = [];
  const importer = asImporter(caller);
  // The first line of each name the checked new documents would have: each check rolls back, so a second document
  // with a name would pass its own and fail in the job. Compared exactly (MariaDB's names ignore case).
  const named = new Map<string, number>();
  for await (const { lines, doc, errors } of documents) {
    if (payload++ < PREVIEW_DOCUMENTS) shown.push({ lines, doc });
    if (errors.length) {
      for (const message of errors) warn({ row: lines, message, exc_type: 'ValidationError' });
      continue;
    }
    if (checked === PREVIEW_CHECKS) continue;
    checked++;
    const { problem, name } = await checkDocument(importer, doctype, type, doc);
    if (problem) warn({ row: lines, ...problem });
    if (name === undefined || type !== 'Insert New Records' || !nameIsTheDocument(binding.meta, doc, name))
      continue;
    const first = named.get(name);
    if (first === undefined) named.set(name, lines[0] as number);
    else
      warn({
        row: lines,
        message: `${doctype} ${name} is also the name of the document on line ${first} of this file`,
        exc_type: 'DuplicateEntryError',
      });
  }
  return {
    columns: layout.columns.map((c) => c.key),
    data: shown,
    payload_count: payload,
    checked_count: checked,
    warnings,
    warnings_count: count,
  };
}

/** form_start_import(data_import): checks the file, queues the import job, answers its id. */
export async function formStartImport(ctx: AppContext): Promise<unknown> {
  const { caller, name, record } = await importRecord(ctx, 'data_import', 'write');
  const jobs = jobQueueOf(caller.site);
  if (!jobs) throw new ValidationError('This site runs no background jobs');
  if (record.status === 'Success') throw new ValidationError('This import has already run successfully');
  const seen = record.job_id;
  const job = typeof seen === 'string' && seen ? await jobs.get(seen) : undefined;
  if (isLiveClaim(seen) || job?.status === 'queued' || job?.status === 'running')
    throw new ValidationError('This import is already running');
  // The whole file is read (a bad one is refused, nothing queued) but its cells are not converted: the job does that.
  const { binding, source } = await importInput(caller, record);
  const count = await checkImportFile(caller.site, binding, source.kind, source.stream);
  if (count === 0) throw new DataError('Import file has no documents');
  // Of concurrent starts, the one whose claim replaces the job_id all of them read queues the job; the others are 400.
  const claim = await claimImport(caller.site, name, seen);
  if (!claim) throw new ValidationError('This import is already running');
  let jobId: string;
  try {
    // A run after a failed or partial one retries the failed documents and skips the imported ones.
    await clearFailedLogs(caller.site, name);
    jobId = await jobs.enqueue(DATA_IMPORT_JOB, caller.user.name, { data_import: name }, count);
  } catch (err) {
    await setImportFields(caller.site, name, { job_id: seen ?? null, status: record.status ?? null });
    throw err;
  }
  await setImportFields(caller.site, name, {
    status: 'Pending',
    job_id: jobId,
    payload_count: count,
  });
  return { job_id: jobId, payload_count: count };
}

/** get_import_status(data_import_name): the status and the counts of the log so far. */
export async function getImportStatus(ctx: AppContext): Promise<unknown> {
  const { caller, name, record } = await importRecord(ctx, 'data_import_name', 'read');
  const logs = await importLogs(caller.site, name);
  const success = logs.filter((l) => l.success).length;
  return {
    status: record.status,
    success,
    failed: logs.length - success,
    total_records: Number(record.payload_count ?? 0),
    job_id: String(record.job_id ?? '').startsWith('claim:') ? null : (record.job_id ?? null),
  };
}

/**
 * A cell a spreadsheet would run as a formula (OWASP's list). The failed lines go back to a spreadsheet, so such a cell
 * gets a leading `'` (shown as text; the importer removes it).
 */
const RUNNABLE = /^[=+\-@\t\r]/;

/** download_errored_template(data_import_name): the header and the lines of the failed documents, as CSV. */
export async function downloadErroredTemplate(ctx: AppContext): Promise<unknown> {
  const { caller, name, record } = await importRecord(ctx, 'data_import_name', 'read');
  const failed = new Set<number>();
  for (const log of await importLogs(caller.site, name))
    if (!log.success) for (const line of log.lines) failed.add(line);
  const source = await openAttachedFile(caller.site, caller.user, record.import_file);
  let out = '\ufeff';
  let lineNo = 0;
  for await (const cells of readLines(source.kind, source.stream)) {
    lineNo++;
    if (lineNo === 1 || failed.has(lineNo))
      out += csvLine(
        cells.map((c) =>
          c instanceof Date ? c.toISOString() : typeof c === 'string' && RUNNABLE.test(c) ? `'${c}` : c,
        ),
      );
  }
  ctx.status = 200;
  ctx.type = 'text/csv; charset=utf-8';
  ctx.set('Content-Disposition', `attachment; filename="failed-rows-${name.replace(/[^\w-]/g, '')}.csv"`);
  ctx.body = out;
  return undefined;
}
