// The checks of a Webhook save (Frappe's Webhook.validate, and ours): a DocType that can fire (not a child table, not
// the webhook DocTypes themselves; submit events only on a submittable one), a condition that compiles in the sandbox,
// a URL the address policy allows (resolved now: a name resolving to a refused address is refused), a JSON template
// our renderer reads, data fields of the DocType named once, header names and values that cannot split a request,
// and a secret when security is on.
import { readAuth } from '../auth/passwords';
import { isNewSecret } from '../auth/password-fields';
import type { WritingSave } from '../document/extension-points';
import type { DocData } from '../db/row-store';
import { ValidationError } from '../errors/errors';
import { STANDARD_FIELDS } from '../meta/types';
import { assertCompiles } from '../scripts/run-script';
import { assertTemplate } from './json-template';
import { LOG_DOCTYPE } from './request-log';
import { conditionSource } from './request-body';
import { MAX_TIMEOUT_S } from './send-request';
import { WEBHOOKS } from './webhook-index';
import { siteAllowedHosts } from './webhook-settings';
import { vetUrl } from './vet-url';

/** Events only a submittable DocType has. */
const SUBMIT_EVENTS = new Set(['on_submit', 'on_cancel', 'on_update_after_submit']);

/** Headers the service sets itself: a webhook may not set them. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
  'x-frappe-webhook-signature',
]);

/**
 * Headers about the connection rather than the request (RFC 9110 7.6.1; Expect asks for an interim answer the
 * delivery does not wait for): undici refuses several of them, so every attempt would fail.
 */
const HOP_BY_HOP = new Set(['expect', 'upgrade', 'keep-alive', 'te', 'trailer', 'proxy-connection']);

/** An HTTP header name (RFC 9110 token). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,200}$/;

const rows = (value: unknown): DocData[] => (Array.isArray(value) ? (value as DocData[]) : []);

function checkDocType(op: WritingSave): void {
  const { data } = op;
  const doctype = String(data.webhook_doctype ?? '');
  const target = op.tx.site.registry.get(doctype);
  if (!target) throw new ValidationError(`DocType ${doctype.slice(0, 140)} not found`);
  if (target.meta.istable) throw new ValidationError('A webhook cannot listen to a child table');
  if (doctype === 'Webhook' || doctype === LOG_DOCTYPE)
    throw new ValidationError(`A webhook cannot listen to ${doctype}`);
  if (SUBMIT_EVENTS.has(String(data.webhook_docevent)) && !target.meta.isSubmittable)
    throw new ValidationError('DocType must be Submittable for the selected Doc Event');
}

function checkBody(op: WritingSave): void {
  const { data } = op;
  if (!data.request_structure)
    data.request_structure = rows(data.webhook_data).length ? 'Form URL-Encoded' : 'JSON';
  if (data.request_structure === 'Form URL-Encoded') {
    data.webhook_json = null;
    const target = op.tx.site.registry.get(String(data.webhook_doctype));
    const seen = new Set<string>();
    for (const row of rows(data.webhook_data)) {
      const fieldname = String(row.fieldname ?? '');
      if (seen.has(fieldname)) throw new ValidationError('Same Field is entered more than once');
      seen.add(fieldname);
      if (target && !target.fieldMap.has(fieldname) && !STANDARD_FIELDS.includes(fieldname as never))
        throw new ValidationError(
          `Webhook Data: ${fieldname.slice(0, 140)} is not a field of ${target.meta.name}`,
        );
    }
  } else {
    data.webhook_data = [];
    const template = String(data.webhook_json ?? '').trim();
    if (template) assertTemplate(template);
  }
}

function checkHeaders(data: DocData): void {
  for (const row of rows(data.webhook_headers)) {
    const key = String(row.key ?? '').trim();
    const value = String(row.value ?? '').trim();
    if (!key && !value) continue;
    if (!TOKEN.test(key))
      throw new ValidationError(
        `Header name ${JSON.stringify(key.slice(0, 100))} is not a valid header name`,
      );
    if (RESERVED_HEADERS.has(key.toLowerCase()))
      throw new ValidationError(`Header ${key} is set by the service`);
    if (HOP_BY_HOP.has(key.toLowerCase()) || key.toLowerCase().startsWith('proxy-'))
      throw new ValidationError(
        `Header ${key} is about the connection, not the request: a webhook may not set it`,
      );
    if (/[\r\n\0]/.test(value)) throw new ValidationError(`Header ${key}: a value may not hold a line break`);
  }
}

async function checkSecret(op: WritingSave): Promise<void> {
  const { data } = op;
  if (!Number(data.enable_security)) return;
  if (isNewSecret(data.webhook_secret)) {
    const secret = data.webhook_secret;
    if (secret.startsWith('whsec_') && !/^whsec_[A-Za-z0-9+/]+={0,2}$/.test(secret))
      throw new ValidationError('Webhook Secret: a whsec_ secret must be base64 after the prefix');
    return;
  }
  if (!op.isNew && (await readAuth(op.trx, 'Webhook', String(data.name), 'webhook_secret'))) return;
  throw new ValidationError('Webhook Secret is required when security is enabled');
}

/** validateSave of Webhook: every check above; the first that fails refuses the save (400). */
export async function checkWebhook(op: WritingSave): Promise<void> {
  const { data } = op;
  checkDocType(op);
  const timeout = Number(data.timeout ?? 5);
  if (!Number.isInteger(timeout) || timeout < 1 || timeout > MAX_TIMEOUT_S)
    throw new ValidationError(`Request Timeout must be a whole number of seconds from 1 to ${MAX_TIMEOUT_S}`);
  const condition = String(data.condition ?? '').trim();
  if (condition) await assertCompiles(conditionSource(condition));
  checkBody(op);
  checkHeaders(data);
  await checkSecret(op);
  const site = op.tx.site;
  await vetUrl(data.request_url, siteAllowedHosts(site), WEBHOOKS.of(site).lookup);
}
