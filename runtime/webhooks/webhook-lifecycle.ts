// Webhooks in the document lifecycle: the Webhook's own checks and secret, the events that fire them, the queueing of
// their deliveries after the commit, and resends (docs/webhooks.md).
import { lifecycleOf } from '../document/extension-points';
import type { Site } from '../site';
import { LOG_DOCTYPE } from './request-log';
import { prepareResend, queueResend } from './resend';
import { onCommitted, onDocEvent } from './webhook-events';
import { forgetWebhooks, webhooksChanged } from './webhook-index';
import { checkWebhook } from './webhook-rules';
import { storeWebhookSecret } from './webhook-secret';

/** Registers the webhooks' handlers; call before auth's, whose beforeWrite would hash the secret for good. */
export function registerWebhooks(site: Site): void {
  const points = lifecycleOf(site);
  points.on('validateSave', checkWebhook, 'Webhook');
  points.on('beforeWrite', storeWebhookSecret, 'Webhook');
  // A written Webhook drops the index here and (with REDIS_URL) in every other process.
  points.on('afterTransaction', () => webhooksChanged(site), 'Webhook');
  // The index holds each owner's roles (a body is the document as its owner may read it): a write of the owner's
  // record, roles or User Permissions drops it here too, so the next save reads them as they are now (other
  // processes within CHECK_MS).
  for (const doctype of ['User', 'Has Role', 'User Permission'])
    if (site.registry.get(doctype)) points.on('afterTransaction', () => forgetWebhooks(site), doctype);
  points.on('beforeSave', prepareResend, LOG_DOCTYPE);
  points.on('afterWrite', queueResend, LOG_DOCTYPE);
  points.on('docEvent', onDocEvent);
  points.on('afterCommit', onCommitted);
}
