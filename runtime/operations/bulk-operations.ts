// Bulk update, delete and insert (SPEC 2.5, 4.2): every item goes through the caller's normal document operation in
// a write transaction of its own (on SQLite a savepoint of the turn's group commit), so one bad item never spoils the
// others and a refused item changes nothing. The outcome is the bulk result object; its counts always add up.
import type { Knex } from 'knex';
import type { DriverErrors } from '../db/backend';
import { deadlockVictimError, isDeadlockError, isOutageError, unavailableReason } from '../db/unavailable';
import { BatchRolledBackError, type WriteBatch } from '../db/write-transaction';
import type { Caller } from '../document/caller';
import type { DocData } from '../db/row-store';
import {
  AppError,
  InternalServerError,
  RequestEntityTooLargeError,
  ServiceUnavailableError,
} from '../errors/errors';
import { refusal } from '../permissions/doctype-permission';
import * as documents from './document-operations';
import type { InTransaction } from './document-operations';

/** A failed item: the document it named, the error's type (`exc_type`) and its message. */
export interface BulkFailure {
  name: string | null;
  doctype: string | null;
  error: string;
  message: string;
}

/** What a bulk operation reports (SPEC 2.5): `updated`, `deleted` or `inserted`, then `failed` and the counts. */
export interface BulkResult {
  [done: string]: unknown;
  failed: BulkFailure[];
  total: number;
  success_count: number;
  failure_count: number;
}

/** A bulk result with the updated documents (update) and the messages the hooks left for the user. */
export interface BulkOutcome {
  result: BulkResult;
  docs: DocData[];
  messages: string[];
  /** The position in the request of each entry of `result.failed`. */
  failedAt: number[];
}

/** One item as the request gave it: the DocType and the raw entry (object, name, or anything hostile). */
export interface BulkItem {
  doctype: unknown;
  entry: unknown;
}

/**
 * Refuses a bulk request of more than `max` items (site config `max_bulk_items`) with a 413, before any item runs or
 * a job is queued: one request may not hold the process (and a job's stored result) to an unbounded list.
 */
export function checkBulkSize(count: number, max: number): void {
  if (count > max)
    throw new RequestEntityTooLargeError(
      `A bulk request may carry at most ${max} items (max_bulk_items); this one has ${count}`,
    );
}

/** The key of the success list per kind of bulk operation. */
export type BulkKind = 'update' | 'delete' | 'insert';
const DONE_KEY: Record<BulkKind, string> = { update: 'updated', delete: 'deleted', insert: 'inserted' };

/** A per-item refusal found before the item reaches the document path (Frappe's per-item validation texts). */
class ItemShapeError extends AppError {
  override readonly status = 400;
  override readonly excType = 'ValidationError';
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A name as Frappe takes it: a string, or an integer turned into a string; anything else is refused. */
function nameOf(value: unknown): string {
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  throw new ItemShapeError("'name' must be a string or integer");
}

function doctypeOf(value: unknown): string {
  if (typeof value === 'string' && value !== '') return value;
  throw new ItemShapeError("'doctype' must be a string");
}

/**
 * The name and DocType a failed item is reported under (null where the item did not give a usable one). `bare`: the
 * entry is the name itself (bulk_delete's `names`), otherwise the name is the entry's `name`.
 */
function identify(item: BulkItem, bare: boolean): { name: string | null; doctype: string | null } {
  const raw = bare ? item.entry : isObject(item.entry) ? item.entry.name : undefined;
  const name =
    typeof raw === 'string'
      ? raw.slice(0, 140)
      : typeof raw === 'number' && Number.isFinite(raw)
        ? String(raw)
        : null;
  return { name, doctype: typeof item.doctype === 'string' ? item.doctype.slice(0, 140) : null };
}

/**
 * Whether `err` undid the item's write for a reason of the database's (a deadlock, its batch rolled back): retry. Not
 * when the database is down (the batch ended on an outage): the retry would wait as long again.
 */
function rolledBack(err: unknown, errors: DriverErrors): boolean {
  return (err instanceof BatchRolledBackError || isDeadlockError(err, errors)) && !isOutageError(err, errors);
}

/**
 * The failure entry of an error: the service's own errors keep their text; a write the database rolled back, or could
 * not take (unreachable, busy past its wait), is ServiceUnavailableError (retriable, as the error handler answers
 * it); anything else is an internal error.
 */
function failureOf(item: BulkItem, bare: boolean, err: unknown, errors: DriverErrors): BulkFailure {
  const known =
    err instanceof AppError
      ? err
      : rolledBack(err, errors)
        ? deadlockVictimError(err)
        : unavailableReason(err, errors)
          ? new ServiceUnavailableError('The database is unavailable; retry', { cause: err })
          : new InternalServerError('Internal Server Error');
  const message = known instanceof InternalServerError ? 'Internal Server Error' : known.message;
  return { ...identify(item, bare), error: known.excType, message };
}

/** An item's outcome as a job keeps it: a success (the document's name) or the failure entry. */
export type ItemOutcome = { ok: true; name: string; doctype: string } | ({ ok: false } & BulkFailure);

/**
 * Where a background job keeps outcomes: `inTransaction` records a success inside the item's own write transaction;
 * `failure` records a failure after the item's transaction was rolled back (a crash in between leaves the item
 * without an outcome, so it runs again). `done` holds the outcomes recorded by an earlier run of the job.
 */
export interface OutcomeRecorder {
  done: ReadonlyMap<number, ItemOutcome>;
  inTransaction(trx: Knex, index: number, outcome: ItemOutcome): Promise<void>;
  failure(index: number, outcome: ItemOutcome): Promise<void>;
  /** True when the job should stop after the items it has started (graceful shutdown). */
  stopping(): boolean;
  /** Awaited between two batches of items, given how long the last one took (a job yields to requests). */
  pace?(batchMs: number): Promise<void>;
}

/** The failure entry of a stored failed outcome. */
function failureEntry(outcome: BulkFailure): BulkFailure {
  return { name: outcome.name, doctype: outcome.doctype, error: outcome.error, message: outcome.message };
}

/** What one item's work gives back: the name it succeeded on, the document to report and its messages. */
interface ItemDone {
  name: string;
  doctype: string;
  doc?: DocData;
  messages: string[];
}

/** The updated document as SPEC 4.2 reports it: `name`, the fields the item changed (readable ones) and `modified`. */
function changedFields(doc: DocData, sent: Record<string, unknown>, across: boolean): DocData {
  const out: DocData = { name: doc.name };
  if (across) out.doctype = doc.doctype;
  for (const key of Object.keys(sent)) if (key in doc && key !== 'name') out[key] = doc[key];
  out.modified = doc.modified;
  return out;
}

/**
 * Runs one item of a bulk update through the caller's update path. `report`: the updated document is reported (a
 * request's `docs`); a job reports names only and skips building it.
 */
async function updateItem(
  caller: Caller,
  item: BulkItem,
  across: boolean,
  report: boolean,
  hook?: (doctype: string) => InTransaction,
): Promise<ItemDone> {
  if (!isObject(item.entry) || !('name' in item.entry))
    throw new ItemShapeError(
      across
        ? "Each document must be a dictionary with 'doctype', 'name', and field values"
        : "Each update must be a dictionary with 'name' and field values",
    );
  const doctype = doctypeOf(item.doctype);
  const name = nameOf(item.entry.name);
  const changes: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(item.entry))
    if (key !== 'name' && key !== 'doctype' && key !== 'flags' && key !== '__proto__') changes[key] = value;
  if (!report) {
    const { messages } = await documents.saveChanges(caller, doctype, name, changes, hook?.(doctype));
    return { name, doctype, messages };
  }
  const { doc, messages } = await documents.updateDocument(caller, doctype, name, changes, hook?.(doctype));
  return { name, doctype, doc: changedFields(doc, changes, across), messages };
}

/** Runs one item of a bulk delete through the caller's delete path. */
async function deleteItem(
  caller: Caller,
  item: BulkItem,
  across: boolean,
  hook?: (doctype: string) => InTransaction,
): Promise<ItemDone> {
  if (across && (!isObject(item.entry) || !('name' in item.entry) || !('doctype' in item.entry)))
    throw new ItemShapeError("Each document must be a dictionary with 'doctype' and 'name' keys");
  const doctype = doctypeOf(item.doctype);
  const name = nameOf(isObject(item.entry) ? item.entry.name : item.entry);
  return { name, doctype, messages: await documents.deleteDocument(caller, doctype, name, hook?.(doctype)) };
}

/** Runs one item of a bulk insert through the caller's create path. */
async function insertItem(
  caller: Caller,
  item: BulkItem,
  hook?: (doctype: string) => InTransaction,
): Promise<ItemDone> {
  if (!isObject(item.entry)) throw new ItemShapeError('Each document must be a dictionary of field values');
  const doctype = doctypeOf(item.doctype);
  const { name, messages } = await documents.insertDocument(caller, doctype, item.entry, hook?.(doctype));
  return { name, doctype, messages };
}

/**
 * The bulk result object of a job from its stored outcomes, in item order. An item without an outcome cannot occur
 * for a finished job; it would be reported as failed, never left out.
 */
export function bulkResult(
  kind: BulkKind,
  across: boolean,
  outcomes: readonly (ItemOutcome | undefined)[],
): BulkResult {
  const done: unknown[] = [];
  const failed: BulkFailure[] = [];
  for (const outcome of outcomes) {
    if (outcome?.ok) done.push(across ? { doctype: outcome.doctype, name: outcome.name } : outcome.name);
    else if (outcome) {
      failed.push(failureEntry(outcome));
    } else
      failed.push({
        name: null,
        doctype: null,
        error: 'InternalServerError',
        message: 'No outcome recorded',
      });
  }
  return {
    [DONE_KEY[kind]]: done,
    failed,
    total: outcomes.length,
    success_count: done.length,
    failure_count: failed.length,
  };
}

/**
 * Runs a bulk operation. `across`: items name their own DocType and successes are reported as `{doctype, name}`.
 * With a `recorder` (a background job), items it already holds an outcome for are skipped, each new outcome is
 * recorded, and the run stops between windows when the recorder says so (undefined: not finished).
 * A window of items is started together so they share one commit, each still in its own savepoint, in request order:
 * in the batch the backend opens per window (Database.bulkWrites; MariaDB's), or in the commit it groups concurrent
 * writes into by itself (SQLite's group commit of the turn). Items of a batch that the server rolled back as a whole
 * (a deadlock) are run again alone, the deadlock's victim too (on PostgreSQL only the victim's savepoint is undone).
 */
export async function runBulk(
  caller: Caller,
  kind: BulkKind,
  items: readonly BulkItem[],
  options: { across?: boolean; recorder?: OutcomeRecorder } = {},
): Promise<BulkOutcome | undefined> {
  const across = options.across === true;
  const recorder = options.recorder;
  if (caller.user.name === 'Guest') throw refusal(caller.user, 'Login required');
  const run = (index: number, item: BulkItem, as: Caller): Promise<ItemDone> => {
    const hook = recorder
      ? (doctype: string): InTransaction =>
          (trx, name) =>
            recorder.inTransaction(trx, index, { ok: true, name, doctype })
      : undefined;
    return kind === 'update'
      ? updateItem(as, item, across, !recorder, hook)
      : kind === 'delete'
        ? deleteItem(as, item, across, hook)
        : insertItem(as, item, hook);
  };
  const outcomes: (ItemDone | BulkFailure)[] = new Array(items.length);
  const { errors } = caller.site.db;
  /** The first error of an item that found the database unavailable. */
  let outage: unknown;
  /**
   * The first error of an item that found the database down (not busy): a request's items not started yet fail with it
   * at once, instead of each waiting for the timeouts again (a job goes on: its items record their own outcomes).
   */
  let down: unknown;
  const settle = async (index: number, batch?: WriteBatch): Promise<void> => {
    const item = items[index] as BulkItem;
    try {
      try {
        outcomes[index] = await run(index, item, batch ? { ...caller, batch } : caller);
      } catch (err) {
        // Undone by the database, not refused: it runs again alone, once (two bulk requests over the same documents
        // in opposite orders deadlock; the victim may well succeed now).
        if (!(batch ? rolledBack(err, errors) : isDeadlockError(err, errors))) throw err;
        outcomes[index] = await run(index, item, caller);
      }
    } catch (err) {
      if (outage === undefined && unavailableReason(err, errors)) outage = err;
      if (down === undefined && !recorder && isOutageError(err, errors)) down = err;
      const failure = failureOf(item, kind === 'delete' && !across, err, errors);
      if (recorder) await recorder.failure(index, { ok: false, ...failure });
      outcomes[index] = failure;
    }
  };
  for (const [index, previous] of recorder?.done ?? []) {
    if (previous.ok) outcomes[index] = { name: previous.name, doctype: previous.doctype, messages: [] };
    else {
      outcomes[index] = failureEntry(previous);
    }
  }
  const writes = caller.site.db.bulkWrites;
  let next = 0;
  while (next < items.length) {
    if (recorder?.stopping()) return undefined;
    const started: Promise<void>[] = [];
    const batchStart = Date.now();
    const batch = writes.openBatch?.();
    for (; next < items.length && started.length < writes.window; next++)
      if (down !== undefined)
        outcomes[next] = failureOf(items[next] as BulkItem, kind === 'delete' && !across, down, errors);
      else if (!recorder?.done.has(next)) started.push(settle(next, batch));
    const count = started.length;
    if (batch) started.push(batch.close());
    await Promise.all(started);
    if (count) await recorder?.pace?.(Date.now() - batchStart);
  }
  const done: unknown[] = [];
  const failed: BulkFailure[] = [];
  const docs: DocData[] = [];
  const messages: string[] = [];
  const failedAt: number[] = [];
  for (const [index, outcome] of outcomes.entries()) {
    if ('error' in outcome) {
      failed.push(outcome);
      failedAt.push(index);
      continue;
    }
    done.push(across ? { doctype: outcome.doctype, name: outcome.name } : outcome.name);
    if (outcome.doc) docs.push(outcome.doc);
    messages.push(...outcome.messages);
  }
  // A request whose items all failed, some for a database outage, changed nothing: it is answered as any request the
  // database could not take (503, Retry-After; the error handler logs it), and can be sent again as it is.
  if (outage !== undefined && !recorder && !done.length) throw outage;
  const result: BulkResult = {
    [DONE_KEY[kind]]: done,
    failed,
    total: items.length,
    success_count: done.length,
    failure_count: failed.length,
  };
  return { result, docs, messages, failedAt };
}
