// The signature headers of a webhook request: Standard Webhooks' `webhook-signature` (v1, HMAC-SHA256 of
// "<id>.<timestamp>.<body>"; the key is the base64 part of a `whsec_` secret, else the secret's UTF-8 bytes) and
// Frappe's `X-Frappe-Webhook-Signature` (base64 HMAC-SHA256 of the body, keyed with the secret's UTF-8 bytes).
import { createHmac } from 'node:crypto';

/** The Standard Webhooks key of a secret. */
export function standardKey(secret: string): Buffer {
  return secret.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : Buffer.from(secret, 'utf8');
}

/** The identity and signature headers of one attempt: `webhook-id`, `webhook-timestamp` and, with a secret, both signatures. */
export function signatureHeaders(
  messageId: string,
  timestamp: number,
  body: string,
  secret: string | undefined,
): Record<string, string> {
  const headers: Record<string, string> = {
    'webhook-id': messageId,
    'webhook-timestamp': String(timestamp),
  };
  if (!secret) return headers;
  const signed = createHmac('sha256', standardKey(secret))
    .update(`${messageId}.${timestamp}.${body}`)
    .digest('base64');
  headers['webhook-signature'] = `v1,${signed}`;
  headers['X-Frappe-Webhook-Signature'] = createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(body)
    .digest('base64');
  return headers;
}
