// The webhook secret: a Password field like any other on the wire (never read back), but kept so that it can be used
// to sign, unlike a login password's one-way hash. In `__Auth`, encrypted (AES-256-GCM) with a key derived from site
// config `encryption_key` when it is set; without one it is kept as given (`__Auth` is never served by the API).
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { readAuth, writeAuth } from '../auth/passwords';
import { isNewSecret } from '../auth/password-fields';
import type { WritingSave } from '../document/extension-points';
import type { Site } from '../site';

const FIELD = 'webhook_secret';
const MASK = '*****';

function keyOf(site: Site): Buffer | undefined {
  const configured: unknown = site.config.site.encryption_key;
  return typeof configured === 'string' && configured
    ? createHash('sha256').update(configured, 'utf8').digest()
    : undefined;
}

/** The stored form of a secret. */
function seal(site: Site, secret: string): string {
  const key = keyOf(site);
  if (!key) return `plain:${secret}`;
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return `aes256gcm:${iv.toString('base64')}:${cipher.getAuthTag().toString('base64')}:${sealed.toString('base64')}`;
}

/** The secret of a stored form; undefined when it cannot be opened (encryption_key changed). */
function open(site: Site, stored: string): string | undefined {
  if (stored.startsWith('plain:')) return stored.slice(6);
  const [kind, iv, tag, sealed] = stored.split(':');
  const key = keyOf(site);
  if (kind !== 'aes256gcm' || !key || !iv || !tag || sealed === undefined) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(sealed, 'base64')), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

/** beforeWrite of Webhook: a new secret goes to `__Auth` (sealed) and the row keeps the mask. */
export async function storeWebhookSecret(op: WritingSave): Promise<void> {
  const value = op.data[FIELD];
  if (!isNewSecret(value)) return;
  await writeAuth(op.trx, 'Webhook', String(op.data.name), FIELD, seal(op.tx.site, value));
  op.data[FIELD] = MASK;
}

/** The secret of a webhook, or undefined when it has none (or it cannot be opened). */
export async function readWebhookSecret(site: Site, q: Knex, webhook: string): Promise<string | undefined> {
  const stored = await readAuth(q, 'Webhook', webhook, FIELD);
  return stored ? open(site, stored) : undefined;
}
