// Runs an import's documents through the bulk path (runtime/operations/bulk-operations.ts): each document through the
// caller's normal insert or update (permissions, validation, hooks) in a transaction of its own; documents the file
// already got wrong fail without reaching it. Outcomes are indexed by the document's position in the file.
import type { Knex } from 'knex';
import type { Caller } from '../document/caller';
import { DataError } from '../errors/errors';
import { runBulk, type BulkItem, type ItemOutcome } from '../operations/bulk-operations';
import type { ImportPlan } from './plan-import';

/** The two kinds of import (Frappe's `import_type`). */
export const IMPORT_TYPES = ['Insert New Records', 'Update Existing Records'] as const;

/** One kind of import. */
export type ImportType = (typeof IMPORT_TYPES)[number];

/** Where an import keeps its outcomes (a job's item store and log, or the CLI's counters). */
export interface ImportRecorder {
  /** Outcomes of documents done by an earlier run (skipped now). */
  done: ReadonlyMap<number, unknown>;
  /** Records a success inside the document's own write transaction. */
  success(trx: Knex, index: number, outcome: ItemOutcome): Promise<void>;
  /** Records a failure (the document changed nothing). */
  failure(index: number, outcome: ItemOutcome): Promise<void>;
  stopping(): boolean;
  pace?(batchMs: number): Promise<void>;
}

/** The import type given; anything else is a 400. */
export function importTypeOf(raw: unknown): ImportType {
  if ((IMPORT_TYPES as readonly unknown[]).includes(raw)) return raw as ImportType;
  throw new DataError(`import_type must be one of ${IMPORT_TYPES.join(', ')}`);
}

/**
 * Imports the plan's documents into `doctype`; false when it stopped early (`recorder.stopping()`), true when every
 * document has an outcome.
 */
export async function runImport(
  caller: Caller,
  doctype: string,
  type: ImportType,
  plan: ImportPlan,
  recorder: ImportRecorder,
): Promise<boolean> {
  const positions: number[] = [];
  const items: BulkItem[] = [];
  for (const [index, { doc, errors }] of plan.documents.entries()) {
    if (recorder.done.has(index)) continue;
    if (errors.length) {
      const name = typeof doc.name === 'string' ? doc.name : null;
      await recorder.failure(index, {
        ok: false,
        name,
        doctype,
        error: 'ValidationError',
        message: errors.join('; '),
      });
      continue;
    }
    positions.push(index);
    items.push({ doctype, entry: doc });
  }
  // Frappe's in_import: what an import writes notifies no one outside (webhooks).
  const importing: Caller = { ...caller, flags: { ...caller.flags, inImport: true } };
  const outcome = await runBulk(importing, type === 'Insert New Records' ? 'insert' : 'update', items, {
    recorder: {
      done: new Map(),
      inTransaction: (trx, i, result) => recorder.success(trx, positions[i] as number, result),
      failure: (i, result) => recorder.failure(positions[i] as number, result),
      stopping: () => recorder.stopping(),
      ...(recorder.pace ? { pace: recorder.pace } : {}),
    },
  });
  return outcome !== undefined;
}
