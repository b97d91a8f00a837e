// The bulk job: a bulk request above the async threshold, run by a worker as the user who sent it. Each item's outcome
// is recorded with its write (success) or right after its rollback (failure); the result is built from the recorded
// outcomes, so a job resumed after a crash reports every item exactly once.
import type { Caller } from '../document/caller';
import {
  bulkResult,
  runBulk,
  type BulkItem,
  type BulkKind,
  type ItemOutcome,
} from '../operations/bulk-operations';
import { REQUEUE, registerJobKind, type JobRun } from './job-queue';
import { requestPacer } from './pacing';

/** The kind name of bulk jobs. */
export const BULK_JOB = 'bulk';

/** What a bulk job stores: the operation, whether items name their own DocType, and the items as sent. */
export interface BulkJobPayload {
  kind: BulkKind;
  across: boolean;
  items: BulkItem[];
}

/** Runs (or resumes) a bulk job; the result is the bulk result object. */
export async function runBulkJob(run: JobRun): Promise<unknown> {
  const { kind, across, items } = run.payload as BulkJobPayload;
  const caller: Caller = { site: run.site, user: run.user, version: 2 };
  const finished = await runBulk(caller, kind, items, {
    across,
    recorder: {
      done: run.items.done as ReadonlyMap<number, ItemOutcome>,
      inTransaction: (trx, index, outcome) => run.items.recordIn(trx, index, outcome),
      failure: (index, outcome) => run.items.record(index, outcome),
      stopping: () => run.items.stopping(),
      pace: requestPacer(),
    },
  });
  if (!finished) return REQUEUE;
  const stored = (await run.items.all()) as Map<number, ItemOutcome>;
  return bulkResult(
    kind,
    across,
    items.map((_, index) => stored.get(index)),
  );
}

registerJobKind(BULK_JOB, runBulkJob);
