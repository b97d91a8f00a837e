// Runs an import's documents through the bulk path (runtime/operations/bulk-operations.ts): each document through the
// caller's normal insert or update (permissions, validation, hooks) in a transaction of its own; documents the file
// already got wrong fail without reaching it. Outcomes are indexed by the document's position in the file. The file is
// read as it is imported, CHUNK documents at a time: what an import holds is a chunk, not the file (a 20 MB CSV held
// about 750 MB as a whole plan).
import type { Knex } from 'knex';
import type { Caller } from '../document/caller';
import { DataError } from '../errors/errors';
import { runBulk, type BulkItem, type ItemOutcome } from '../operations/bulk-operations';
import type { ImportDocument } from './import-documents';

/** The two kinds of import (Frappe's `import_type`). */
export const IMPORT_TYPES = ['Insert New Records', 'Update Existing Records'] as const;

/** One kind of import. */
export type ImportType = (typeof IMPORT_TYPES)[number];

/** Where an import keeps its outcomes (a job's item store and log, or the CLI's counters). */
export interface ImportRecorder {
  /** Outcomes of documents done by an earlier run (skipped now). */
  done: ReadonlyMap<number, unknown>;
  /** Records a success inside the document's own write transaction; `lines`: the document's lines in the file. */
  success(trx: Knex, index: number, outcome: ItemOutcome, lines: readonly number[]): Promise<void>;
  /** Records a failure (the document changed nothing). */
  failure(index: number, outcome: ItemOutcome, lines: readonly number[]): Promise<void>;
  stopping(): boolean;
  pace?(batchMs: number): Promise<void>;
}

/** The import type given; anything else is a 400. */
export function importTypeOf(raw: unknown): ImportType {
  if ((IMPORT_TYPES as readonly unknown[]).includes(raw)) return raw as ImportType;
  throw new DataError(`import_type must be one of ${IMPORT_TYPES.join(', ')}`);
}

/** Documents handed to the bulk path at a time. */
const CHUNK = 1_000;

/**
 * `caller` as an import writes: v2 (a file's `name` column names a new document) and Frappe's in_import (what an import
 * writes notifies no one outside, webhooks; an update keeps the child rows' values the file does not give). The preview
 * checks documents as this caller too.
 */
export function asImporter(caller: Caller): Caller {
  return { ...caller, version: 2, flags: { ...caller.flags, inImport: true } };
}

/**
 * Imports `documents` (in file order) into `doctype`; undefined when it stopped early (`recorder.stopping()`), else
 * how many documents the file held (each now has an outcome).
 */
export async function runImport(
  caller: Caller,
  doctype: string,
  type: ImportType,
  documents: AsyncIterable<ImportDocument>,
  recorder: ImportRecorder,
): Promise<number | undefined> {
  const importing = asImporter(caller);
  let chunk: ImportDocument[] = [];
  let positions: number[] = [];
  /** Runs the chunk through the bulk path; false when it stopped early. */
  const flush = async (): Promise<boolean> => {
    if (!chunk.length) return true;
    const [docs, at] = [chunk, positions];
    [chunk, positions] = [[], []];
    const items: BulkItem[] = docs.map((d) => ({ doctype, entry: d.doc }));
    const outcome = await runBulk(importing, type === 'Insert New Records' ? 'insert' : 'update', items, {
      recorder: {
        done: new Map(),
        inTransaction: (trx, i, result) =>
          recorder.success(trx, at[i] as number, result, (docs[i] as ImportDocument).lines),
        failure: (i, result) => recorder.failure(at[i] as number, result, (docs[i] as ImportDocument).lines),
        stopping: () => recorder.stopping(),
        ...(recorder.pace ? { pace: recorder.pace } : {}),
      },
    });
    return outcome !== undefined;
  };
  let index = 0;
  for await (const document of documents) {
    const at = index++;
    if (recorder.done.has(at)) continue;
    const { doc, errors, lines } = document;
    if (errors.length) {
      const name = typeof doc.name === 'string' ? doc.name : null;
      await recorder.failure(
        at,
        { ok: false, name, doctype, error: 'ValidationError', message: errors.join('; ') },
        lines,
      );
      continue;
    }
    chunk.push(document);
    positions.push(at);
    if (chunk.length === CHUNK && !(await flush())) return undefined;
  }
  return (await flush()) ? index : undefined;
}
