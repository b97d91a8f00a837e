// API key + secret authentication: keys looked up once and cached, secrets compared as digests in constant time.
import type { Queryable } from '../document/store';
import { digestSecret, generateHash, readAuth, secretMatches, writeAuth } from './passwords';

interface KeyEntry {
  user: string;
  /** The stored secret digest, decoded once when the key is cached. */
  digest: Buffer;
}

const TTL_MS = 5_000;
const UNKNOWN_KEY_DIGEST = Buffer.alloc(32);
const cache = new Map<string, { entry: KeyEntry | undefined; at: number }>();

/** Drops cached keys (after a User write or key generation). */
export function forgetApiKeys(): void {
  cache.clear();
}

async function lookup(q: Queryable, key: string): Promise<KeyEntry | undefined> {
  const hit = cache.get(key);
  if (hit && Date.now() - hit.at < TTL_MS) return hit.entry;
  const row = (await q('tabUser').where('api_key', key).first('name')) as { name: string } | undefined;
  const digest = row ? await readAuth(q, 'User', row.name, 'api_secret') : undefined;
  const entry = row && digest ? { user: row.name, digest: Buffer.from(digest, 'hex') } : undefined;
  cache.set(key, { entry, at: Date.now() });
  return entry;
}

/** The user whose key and secret these are, or undefined. */
export async function userForApiKey(q: Queryable, key: string, secret: string): Promise<string | undefined> {
  const entry = await lookup(q, key);
  // Compare even when the key is unknown, so both failures cost the same.
  const ok = secretMatches(secret, entry?.digest ?? UNKNOWN_KEY_DIGEST);
  return entry && ok ? entry.user : undefined;
}

/** Keeps the user's API key (creating one if missing), replaces the secret, and returns both (secret shown once). */
export async function regenerateKeys(trx: Queryable, user: string): Promise<{ api_key: string; api_secret: string } | undefined> {
  const row = (await trx('tabUser').where('name', user).first('api_key')) as { api_key: string | null } | undefined;
  if (!row) return undefined;
  const apiKey = row.api_key || generateHash(15);
  const apiSecret = generateHash(15);
  await trx('tabUser').where('name', user).update({ api_key: apiKey, api_secret: '*****' });
  await writeAuth(trx, 'User', user, 'api_secret', digestSecret(apiSecret).toString('hex'));
  forgetApiKeys();
  return { api_key: apiKey, api_secret: apiSecret };
}
