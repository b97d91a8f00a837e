// Data Import Log rows: one per document of an import, written in the document's own transaction (a success) or in
// the transaction that records the failure, so the log says exactly which lines are done after any crash.
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { now } from '../db/stored-values';
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

/** Inserts the log row of `entry` in `trx`, as `user`. */
export async function writeLog(site: Site, trx: Knex, user: string, entry: LogEntry): Promise<void> {
  const binding = site.registry.get(LOG_DOCTYPE);
  if (!binding) return;
  const stamp = now();
  // The row store's document insert (its statements prepared once per DocType): a log row per imported document.
  await site.rows.insert(trx, binding, {
    name: randomBytes(5).toString('hex') + entry.index.toString(36),
    owner: user,
    modified_by: user,
    creation: stamp,
    modified: stamp,
    docstatus: 0,
    idx: 0,
    data_import: entry.dataImport,
    row_indexes: JSON.stringify(entry.lines),
    success: entry.success ? 1 : 0,
    docname: entry.docname,
    messages: JSON.stringify(entry.messages),
    exception: null,
    log_index: entry.index,
  });
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
