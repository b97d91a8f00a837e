// Sending a logged request again: a user (System Manager) inserts a Webhook Request Log naming a logged `message_id`
// (the `resend` document method does this). The new row is filled from the newest row of that message, whatever
// else the user sent, so a resend can only repeat what a webhook produced: same URL, body and webhook-id, attempts
// counted from one, signed afresh. Any other write of a row by a user is refused.
import type { SaveOperation, WritingSave } from '../document/extension-points';
import type { DocData } from '../db/row-store';
import { ValidationError } from '../errors/errors';
import { leaseUntil } from './dispatcher';
import { LOG_TABLE } from './request-log';
import { noteRows } from './webhook-events';

/** Headers an attempt adds: not copied into the row of a resend (its attempt signs again). */
const PER_ATTEMPT = new Set([
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
  'x-frappe-webhook-signature',
]);

/** The stored headers without the per-attempt ones. */
function requestHeaders(stored: unknown): string {
  let headers: Record<string, string> = {};
  try {
    headers = JSON.parse(String(stored || '{}')) as Record<string, string>;
  } catch {
    // an unreadable value: the resend goes with the webhook's own headers only
  }
  return JSON.stringify(
    Object.fromEntries(Object.entries(headers).filter(([k]) => !PER_ATTEMPT.has(k.toLowerCase()))),
  );
}

/** beforeSave of Webhook Request Log: a user's insert becomes the resend of a logged message; an update is refused. */
export async function prepareResend(op: SaveOperation): Promise<void> {
  if (op.tx.ignorePermissions) return;
  if (!op.isNew)
    throw new ValidationError('A Webhook Request Log is written by the service; use resend to send it again');
  const id = typeof op.doc.message_id === 'string' ? op.doc.message_id : '';
  const source = (
    id ? await op.trx(LOG_TABLE).where({ message_id: id }).orderBy('creation', 'desc').first() : undefined
  ) as DocData | undefined;
  if (!source)
    throw new ValidationError(
      'A Webhook Request Log is made by a webhook: to send a request again, resend its log row',
    );
  const doc = op.doc as DocData;
  for (const key of Object.keys(doc)) if (op.binding.fieldMap.has(key)) delete doc[key];
  Object.assign(doc, {
    webhook: source.webhook,
    reference_doctype: source.reference_doctype,
    reference_document: source.reference_document,
    user: op.tx.user.name,
    url: source.url,
    request_method: source.request_method,
    headers: requestHeaders(source.headers),
    data: source.data,
    message_id: id,
    status: 'Queued',
    attempts: 1,
    next_retry: leaseUntil(),
  });
  // Every value is the logged row's (or the sender's own name): its reference may have been deleted since (every
  // on_trash delivery's has), and a resend repeats the request whatever became of it.
  op.ignoreLinks = true;
}

/** afterWrite of Webhook Request Log: a resend's row is delivered after the commit. */
export function queueResend(op: WritingSave): void {
  if (!op.tx.ignorePermissions && op.isNew) noteRows(op, [String(op.data.name)]);
}
