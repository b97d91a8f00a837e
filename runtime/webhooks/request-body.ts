// What a webhook sends about a document: the document as the webhook's owner, and its last editor when another user,
// may read it (fields above either's read levels left out; nothing when either may not read it at all), the condition
// decided on that view in the Server Script sandbox, and the body built from it: the rendered `webhook_json` (the
// whole view when empty) or the form of `webhook_data`.
import type { Knex } from 'knex';
import { serializeDoc } from '../document/serialize';
import type { DocData } from '../db/row-store';
import type { DocumentTransaction } from '../document/lifecycle';
import { ValidationError } from '../errors/errors';
import { hasDocumentPermission } from '../permissions/document-permission';
import { readableDoc } from '../permissions/field-levels';
import type { DocTypeBinding } from '../registry/registry';
import { readOnlyCaller } from '../scripts/host-api';
import { runScript, runScriptInline } from '../scripts/run-script';
import type { ServerScript } from '../scripts/script-store';
import type { Site } from '../site';
import { renderTemplate } from './json-template';
import type { WebhookRecord } from './webhook-index';

/** A request body and its content type. */
export interface WebhookBody {
  contentType: string;
  body: string;
}

/**
 * The document `data` of `binding` as every one of `webhook`'s readers (its owner, and its last editor when another
 * user) may read it; undefined when one of them may not read it.
 */
export async function ownerView(
  site: Site,
  webhook: WebhookRecord,
  binding: DocTypeBinding,
  data: DocData,
  trx: Knex,
): Promise<DocData | undefined> {
  if (webhook.readers.length === 0) return undefined;
  const doc = serializeDoc(binding, site.registry, data, 2);
  for (const user of webhook.readers)
    if (!(await hasDocumentPermission(site, user, binding, doc, 'read', trx))) return undefined;
  let view = doc;
  for (const user of webhook.readers) view = readableDoc({ site, user, version: 2 }, binding, view);
  return view;
}

/** The user a webhook's condition runs as: its last editor (or its owner); undefined when one of them is gone. */
const conditionUser = (webhook: WebhookRecord) => webhook.readers[webhook.readers.length - 1];

/** The condition as a script: `frappe.response.message` is whether it holds (newlines keep a comment inside it). */
function conditionScript(webhook: WebhookRecord): ServerScript {
  return {
    name: `Webhook ${webhook.name}`,
    scriptType: 'API',
    script: conditionSource(webhook.condition),
    modified: webhook.modified,
    allowGuest: false,
    createdAt: 0,
    modifiedBy: conditionUser(webhook)?.name ?? 'Administrator',
  };
}

/** The source the sandbox compiles for a condition (the save checks that it compiles). */
export function conditionSource(condition: string): string {
  return `frappe.response.message = Boolean(\n${condition}\n);`;
}

/**
 * Whether `webhook`'s condition holds for `doc` (true without one): evaluated in the Server Script sandbox as the
 * webhook's last editor (its owner when no one else saved it), who may read but not write there; inside the
 * document's transaction `tx`.
 */
export async function conditionHolds(
  tx: DocumentTransaction,
  webhook: WebhookRecord,
  doc: DocData,
): Promise<boolean> {
  const user = conditionUser(webhook);
  if (!webhook.condition || !user) return true;
  const caller = readOnlyCaller({ site: tx.site, user, version: 2, tx }, 'webhook condition');
  const script = conditionScript(webhook);
  const result = runScriptInline(script, caller, { doc }) ?? (await runScript(script, caller, { doc }));
  return result.message === true;
}

/** The body `webhook` sends for `doc` (its owner's view); throws ValidationError when the JSON template does not give JSON. */
export function webhookBody(webhook: WebhookRecord, doc: DocData): WebhookBody {
  if (webhook.structure === 'Form URL-Encoded') {
    const form = new URLSearchParams();
    for (const { fieldname, key } of webhook.data) {
      const value = doc[fieldname];
      form.append(
        key,
        value === null || value === undefined
          ? ''
          : typeof value === 'object'
            ? JSON.stringify(value)
            : String(value),
      );
    }
    return { contentType: 'application/x-www-form-urlencoded', body: form.toString() };
  }
  if (!webhook.template) return { contentType: 'application/json', body: JSON.stringify(doc) };
  const body = renderTemplate(webhook.template, doc);
  try {
    JSON.parse(body);
  } catch (err) {
    throw new ValidationError(`JSON Request Body is not JSON: ${(err as Error).message}`);
  }
  return { contentType: 'application/json', body };
}
