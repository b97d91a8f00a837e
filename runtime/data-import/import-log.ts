// Data Import Log rows: one per document of an import, written in the document's own transaction (a success) or in
// the transaction that records the failure, so the log says exactly which lines are done after any crash. The rows
// are the import job's item store (registerJobKind's `items`): the done-set on resume, the job's progress, and the
// once-only key. A log row is named `<Data Import>-<document index>`, so its primary key is the unique key
// (data_import, log_index): a second run of a document cannot commit. An outcome kept in a __JobItem row as well was a
// third row per document, where bulk_insert writes two (figures in docs/data-import.md).
import type { Knex } from 'knex';
import { serviceStamps } from '../document/service-row';
import { inWriteTransaction } from '../db/write-transaction';
import type { ItemStore, StoredJob } from '../jobs/job-queue';
import type { ItemOutcome } from '../operations/bulk-operations';
import type { Site } from '../site';

/** The DocType of the log rows. */
export const LOG_DOCTYPE = 'Data Import Log';

/** What a log row says of one document. */
export interface LogEntry {
  dataImport: string;
  /** The document's position among the file's documents. */
  index: number;
  /** Its line numbers in the file (1 is the header). */
  lines: readonly number[];
  success: boolean;
  docname: string | null;
  messages: readonly { message: string; exc_type?: string }[];
}

/** The name of the log row of an import's document `index`: unique per (data_import, log_index). */
function logName(dataImport: string, index: number): string {
  return `${dataImport}-${index}`;
}

/** The row of `entry`, as `user`. */
function logRow(user: string, entry: LogEntry): Record<string, unknown> {
  return {
    name: logName(entry.dataImport, entry.index),
    ...serviceStamps(user),
    data_import: entry.dataImport,
    row_indexes: JSON.stringify(entry.lines),
    success: entry.success ? 1 : 0,
    docname: entry.docname,
    messages: JSON.stringify(entry.messages),
    exception: null,
    log_index: entry.index,
  };
}

/** Inserts the log row of `entry` in `trx`, as `user` (409 DuplicateEntryError when the document has one). */
export async function writeLog(site: Site, trx: Knex, user: string, entry: LogEntry): Promise<void> {
  const binding = site.registry.get(LOG_DOCTYPE);
  if (!binding) return;
  // The row store's document insert (its statements prepared once per DocType): a log row per imported document.
  await site.rows.insert(trx, binding, logRow(user, entry));
}

/** An import job's item outcome: the bulk outcome of a document and its lines in the file. */
export type LoggedOutcome = ItemOutcome & { lines: readonly number[] };

function entryOf(dataImport: string, index: number, outcome: LoggedOutcome): LogEntry {
  return {
    dataImport,
    index,
    lines: outcome.lines,
    success: outcome.ok,
    docname: outcome.name,
    messages: outcome.ok ? [] : [{ message: outcome.message, exc_type: outcome.error }],
  };
}

/**
 * The item store of the import job of `job.payload.data_import`: its Data Import Log rows. An outcome read back is
 * `{ ok, name }` (what a resumed run and the final counts need). The rows stay when the job ends: they are the log.
 */
export function logItemStore(site: Site, job: StoredJob): ItemStore {
  const dataImport = String((job.payload as { data_import?: unknown } | null)?.data_import);
  const table = site.registry.get(LOG_DOCTYPE)?.meta.tableName ?? 'tabData Import Log';
  const mine = () => site.db.knex(table).where('data_import', dataImport);
  return {
    outcomes: async () => {
      const rows = (await mine().select('log_index', 'success', 'docname')) as Record<string, unknown>[];
      return new Map(
        rows.map((r) => [Number(r.log_index), { ok: Number(r.success) === 1, name: r.docname ?? null }]),
      );
    },
    count: async () => Number(((await mine().count({ n: '*' }).first()) as { n: unknown }).n),
    recordIn: (trx, index, outcome) =>
      writeLog(site, trx, job.user, entryOf(dataImport, index, outcome as LoggedOutcome)),
    recordOnce: (q, index, outcome) =>
      site.rows.insertRowOnce(
        q,
        table,
        logRow(job.user, entryOf(dataImport, index, outcome as LoggedOutcome)),
        ['name'],
      ),
    release: async () => undefined,
  };
}

/**
 * Deletes the log rows of an import's failed documents, as a new run of it starts: those documents run again, and the
 * ones that succeeded stay done (their rows are the job's item outcomes).
 */
export async function clearFailedLogs(site: Site, dataImport: string): Promise<void> {
  const table = site.registry.get(LOG_DOCTYPE)?.meta.tableName;
  if (!table) return;
  await inWriteTransaction(site.db, (q) => q(table).where({ data_import: dataImport, success: 0 }).delete());
}

/** The log rows of an import, in document order: line numbers, success, document name and messages. */
export async function importLogs(
  site: Site,
  dataImport: string,
): Promise<
  { lines: number[]; success: boolean; docname: string | null; messages: unknown; index: number }[]
> {
  const table = site.registry.get(LOG_DOCTYPE)?.meta.tableName;
  if (!table) return [];
  const rows = (await site.db
    .knex(table)
    .where('data_import', dataImport)
    .orderBy('log_index')
    .select('row_indexes', 'success', 'docname', 'messages', 'log_index')) as Record<string, unknown>[];
  return rows.map((r) => ({
    lines: JSON.parse(String(r.row_indexes ?? '[]')) as number[],
    success: Number(r.success) === 1,
    docname: r.docname === null || r.docname === undefined ? null : String(r.docname),
    messages: JSON.parse(String(r.messages ?? '[]')) as unknown,
    index: Number(r.log_index),
  }));
}
