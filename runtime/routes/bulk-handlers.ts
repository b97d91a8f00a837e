// HTTP handlers of the bulk rows (SPEC 4.2): read the list from the body, refuse a malformed request as a whole (400),
// hand each item to runBulk (a malformed item is a failed item) and answer with the bulk result object.
import { ValidationError } from '../errors/errors';
import { bodyObject } from '../http/params';
import type { AppContext } from '../http/state';
import type { Caller } from '../document/caller';
import { callerOf } from '../http/caller-of';
import { bindingFor } from '../operations/doctype-binding';
import { refusal } from '../permissions/doctype-permission';
import { BULK_JOB, type BulkJobPayload } from '../jobs/bulk-job';
import { asyncThreshold } from '../jobs/threshold';
import { checkBulkSize, runBulk, type BulkItem, type BulkKind } from '../operations/bulk-operations';
import { respond } from './resource-handlers';
import type { RouteParams, RouteRow } from '../http/route-row';
import { jobQueueOf } from '../jobs/job-queue';

/**
 * The request body's `key` as a list: absent gives `fallback` (or a 400 when there is none), anything else a 400; a
 * list longer than site config `max_bulk_items` is a 413 before any item runs or is queued.
 */
function listOf(ctx: AppContext, key: string, fallback?: unknown[]): unknown[] {
  const value = bodyObject(ctx)?.[key];
  if (value === undefined && fallback) return fallback;
  if (!Array.isArray(value)) throw new ValidationError(`'${key}' must be a list`);
  checkBulkSize(value.length, callerOf(ctx).site.config.site.max_bulk_items);
  return value;
}

/** Runs the items and answers: `data` is the bulk result object; an update adds the saved documents as `docs`. */
async function answer(
  ctx: AppContext,
  row: RouteRow,
  kind: BulkKind,
  items: BulkItem[],
  across: boolean,
  doctype?: string,
): Promise<void> {
  const caller = callerOf(ctx);
  const jobs = jobQueueOf(caller.site);
  if (jobs && items.length > asyncThreshold(caller.site.config.site, doctype)) {
    const payload: BulkJobPayload = { kind, across, items };
    const jobId = await jobs.enqueue(BULK_JOB, caller.user.name, payload, items.length);
    respond(ctx, 202, 'data', { job_id: jobId });
    return;
  }
  const outcome = await runBulk(caller, kind, items, { across });
  if (!outcome) return;
  const { result, docs, messages } = outcome;
  const body = respond(ctx, row.status, 'data', result, messages);
  if (kind === 'update') body.docs = docs;
}

/** The caller of a bulk row: a Guest is refused (401) before the body or the DocType is looked at. */
function signedIn(ctx: AppContext): Caller {
  const caller = callerOf(ctx);
  if (caller.user.name === 'Guest') throw refusal(caller.user, 'Login required');
  return caller;
}

/** The entry of an item as the DocType-wide endpoints see it. */
const entryOf = (doctype: string) => (entry: unknown) => ({ doctype, entry });
/** The entry of an item of a cross-DocType endpoint: it names its own DocType. */
const ownDocType = (entry: unknown): BulkItem => ({
  doctype:
    entry && typeof entry === 'object' && !Array.isArray(entry)
      ? (entry as Record<string, unknown>).doctype
      : undefined,
  entry,
});

/** POST /api/v2/document/{doctype}/bulk_update: `docs`, each with `name` and the fields to set. */
export async function bulkUpdate(ctx: AppContext, p: RouteParams, row: RouteRow): Promise<void> {
  bindingFor(signedIn(ctx), p.doctype, 'bulk_update');
  await answer(ctx, row, 'update', listOf(ctx, 'docs').map(entryOf(p.doctype)), false, p.doctype);
}

/** POST /api/v2/document/{doctype}/bulk_delete: `names`. */
export async function bulkDelete(ctx: AppContext, p: RouteParams, row: RouteRow): Promise<void> {
  bindingFor(signedIn(ctx), p.doctype, 'bulk_delete');
  await answer(ctx, row, 'delete', listOf(ctx, 'names').map(entryOf(p.doctype)), false, p.doctype);
}

/** POST /api/v2/document/{doctype}/bulk_insert: `docs`, each the fields of a new document. */
export async function bulkInsert(ctx: AppContext, p: RouteParams, row: RouteRow): Promise<void> {
  bindingFor(signedIn(ctx), p.doctype, 'bulk_insert');
  await answer(ctx, row, 'insert', listOf(ctx, 'docs').map(entryOf(p.doctype)), false, p.doctype);
}

/** POST /api/v2/method/bulk_update: `docs`, each with `doctype`, `name` and the fields to set. */
export async function bulkUpdateAcross(ctx: AppContext, _p: RouteParams, row: RouteRow): Promise<void> {
  signedIn(ctx);
  await answer(ctx, row, 'update', listOf(ctx, 'docs').map(ownDocType), true);
}

/** POST /api/v2/method/bulk_delete: `docs`, each with `doctype` and `name` (a missing `docs` is an empty list, as Frappe). */
export async function bulkDeleteAcross(ctx: AppContext, _p: RouteParams, row: RouteRow): Promise<void> {
  signedIn(ctx);
  await answer(ctx, row, 'delete', listOf(ctx, 'docs', []).map(ownDocType), true);
}
