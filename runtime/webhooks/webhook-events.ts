// Which webhooks a document event fires, and their log rows. Frappe fires a webhook from the document method of its
// event (run_webhooks in run_method): here the docEvent point, right after the controller's hook of the same name
// (after_insert, on_update, on_submit, on_cancel, on_update_after_submit, on_trash), and on_change after the last
// after-write hook of any save but an insert, and after a delete's on_trash. The rows are written in the document's transaction, so a delivery
// exists exactly when its change committed; the afterCommit point then queues their job. Imports, patches and
// migrations (`tx.flags`) fire none.
import type { DeleteOperation, SaveOperation, WritingSave } from '../document/extension-points';
import { AFTER_WRITE, type HookName } from '../document/hooks';
import type { DocData } from '../db/row-store';
import { queueDelivery, leaseUntil } from './dispatcher';
import { LOG_DOCTYPE, insertLogRow, newMessageId } from './request-log';
import { conditionHolds, ownerView, webhookBody } from './request-body';
import { webhookIndex, type WebhookIndex, type WebhookRecord } from './webhook-index';

/** The log rows each written document's events made, for its afterCommit handler. */
const rowsOf = new WeakMap<SaveOperation | DeleteOperation, string[]>();

/**
 * The events a hook is: its own name, and on_change after a save's last after-write hook (not an insert's) and after a
 * delete's on_trash (Frappe's delete_doc runs on_change then, and run_webhooks fires it but on an insert).
 */
function eventsOf(op: SaveOperation | DeleteOperation, hook: HookName): string[] {
  if (op.kind === 'delete') return hook === 'on_trash' ? [hook, 'on_change'] : [hook];
  if (op.kind === 'save' && !op.isNew) {
    const after = AFTER_WRITE[op.action];
    if (after[after.length - 1] === hook) return [hook, 'on_change'];
  }
  return [hook];
}

/** The webhooks that listen for `events` of the DocType. */
function listening(index: WebhookIndex, doctype: string, events: readonly string[]): WebhookRecord[] {
  const found: WebhookRecord[] = [];
  for (const event of events) found.push(...(index.byEvent.get(`${doctype}|${event}`) ?? []));
  return found;
}

/** Writes the log row of one webhook fired by `op` (Failed, not retried, when its condition or body cannot be made). */
async function fire(
  op: SaveOperation | DeleteOperation,
  webhook: WebhookRecord,
): Promise<string | undefined> {
  const { tx, trx, binding } = op;
  const data: DocData = Object.assign({}, op.kind === 'delete' ? op.stored : op.doc);
  const view = await ownerView(tx.site, webhook, binding, data, trx);
  if (!view) return undefined;
  let body: { contentType: string; body: string } | undefined;
  let error: string | undefined;
  try {
    if (!(await conditionHolds(tx, webhook, view))) return undefined;
    body = webhookBody(webhook, view);
  } catch (err) {
    error = err instanceof Error ? err.message : String(err);
  }
  const headers: Record<string, string> = { 'Content-Type': body?.contentType ?? 'application/json' };
  for (const { key, value } of webhook.headers) headers[key] = value;
  const name = await insertLogRow(
    tx.site,
    trx,
    {
      webhook: webhook.name,
      reference_doctype: binding.meta.name,
      reference_document: String(data.name),
      user: tx.user.name,
      url: webhook.requestUrl,
      request_method: webhook.method,
      headers: JSON.stringify(headers),
      data: body?.body ?? '',
      message_id: newMessageId(),
      status: body ? 'Queued' : 'Failed',
      attempts: 1,
      next_retry: body ? leaseUntil() : null,
      error: error === undefined ? null : `Not sent: ${error}`,
    },
    tx.user.name,
  );
  tx.markWritten(LOG_DOCTYPE);
  return body ? name : undefined;
}

/** Notes log rows `op` wrote: their job is queued once it has committed. */
export function noteRows(op: SaveOperation | DeleteOperation, names: readonly string[]): void {
  const rows = rowsOf.get(op);
  if (rows) rows.push(...names);
  else rowsOf.set(op, [...names]);
}

async function fireAll(
  op: SaveOperation | DeleteOperation,
  webhooks: readonly WebhookRecord[],
): Promise<void> {
  for (const webhook of webhooks) {
    const name = await fire(op, webhook);
    if (name !== undefined) noteRows(op, [name]);
  }
}

/** docEvent: the webhooks listening for this hook's events write their rows (nothing to wait for when none listens). */
export function onDocEvent(op: SaveOperation | DeleteOperation, hook: HookName): Promise<void> | undefined {
  const { flags } = op.tx;
  if (flags.inImport || flags.inPatch || flags.inMigrate) return undefined;
  const doctype = op.binding.meta.name;
  const index = webhookIndex(op.tx.site, op.trx);
  if (!(index instanceof Promise)) {
    if (!index.doctypes.has(doctype)) return undefined;
    const webhooks = listening(index, doctype, eventsOf(op, hook));
    return webhooks.length ? fireAll(op, webhooks) : undefined;
  }
  return index.then((loaded) => fireAll(op, listening(loaded, doctype, eventsOf(op, hook))));
}

/** afterCommit: queues the job of the rows this document's events wrote. */
export function onCommitted(op: WritingSave | DeleteOperation): void {
  const rows = rowsOf.get(op);
  if (!rows) return;
  rowsOf.delete(op);
  queueDelivery(op.tx.site, rows);
}
