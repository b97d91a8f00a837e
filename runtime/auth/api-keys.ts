// API key + secret authentication: keys looked up once and cached, secrets compared as digests in constant time.
import { timingSafeEqual } from 'node:crypto';
import type { Queryable } from '../db/row-store';
import type { DocTypeBinding } from '../registry/registry';
import { digestSecret, generateHash, readAuth, secretMatches, writeAuth } from './passwords';
import { SingleFlight } from './single-flight';

interface KeyEntry {
  user: string;
  /** The stored secret digest, decoded once when the key is cached. */
  digest: Buffer;
  /**
   * The secret that last matched `digest`, while the entry is cached: repeat requests compare bytes in constant time
   * instead of hashing again (the hash was most of token authentication's cost).
   */
  verified?: Buffer;
}

const TTL_MS = 5_000;
/** Unknown keys are cached too; past this many entries a source's cache starts over. */
const MAX_ENTRIES = 10_000;
const UNKNOWN_KEY_DIGEST = Buffer.alloc(32);
/** Cached keys by key source (`User` or a custom DocType), then by key. */
const cache = new Map<string, Map<string, { entry: KeyEntry | undefined; at: number }>>();
/** Key lookups in flight: concurrent misses of one key share one read. */
const flights = new SingleFlight<KeyEntry | undefined>();
/** Bumped by every forget: a lookup that began before it is used by its callers but not cached. */
let generation = 0;

/** Drops cached keys of one key source (after a write to that DocType), or of all. */
export function forgetApiKeys(source?: string): void {
  generation++;
  flights.forget();
  if (source === undefined) cache.clear();
  else cache.delete(source);
}

/** The rows a key source is read from: User itself, or a custom DocType with `api_key`, `user` and `enabled`. */
async function fetchEntry(
  q: Queryable,
  source: DocTypeBinding | undefined,
  key: string,
): Promise<KeyEntry | undefined> {
  if (!source) {
    const row = (await q('tabUser').where('api_key', key).first('name')) as { name: string } | undefined;
    const digest = row ? await readAuth(q, 'User', row.name, 'api_secret') : undefined;
    return row && digest ? { user: row.name, digest: Buffer.from(digest, 'hex') } : undefined;
  }
  const row = (await q(source.meta.tableName).where('api_key', key).first('name', 'user', 'enabled')) as
    { name: string; user: string | null; enabled: unknown } | undefined;
  if (!row || Number(row.enabled) !== 1 || !row.user) return undefined;
  const digest = await readAuth(q, source.meta.name, row.name, 'api_secret');
  return digest ? { user: row.user, digest: Buffer.from(digest, 'hex') } : undefined;
}

function cachedEntry(sourceName: string, key: string): { entry: KeyEntry | undefined } | undefined {
  const hit = cache.get(sourceName)?.get(key);
  return hit && Date.now() - hit.at < TTL_MS ? hit : undefined;
}

async function lookup(
  q: Queryable,
  source: DocTypeBinding | undefined,
  key: string,
): Promise<KeyEntry | undefined> {
  const sourceName = source?.meta.name ?? 'User';
  const hit = cachedEntry(sourceName, key);
  if (hit) return hit.entry;
  return flights.run(q, `${sourceName}\u0000${key}`, async () => {
    const readIn = generation;
    const entry = await fetchEntry(q, source, key);
    if (readIn !== generation) return entry;
    let entries = cache.get(sourceName);
    if (!entries || entries.size >= MAX_ENTRIES) {
      entries = new Map();
      cache.set(sourceName, entries);
    }
    entries.set(key, { entry, at: Date.now() });
    return entry;
  });
}

/** The user whose key and secret these are (in User, or in the custom key source `source`), or undefined. */
export async function userForApiKey(
  q: Queryable,
  key: string,
  secret: string,
  source?: DocTypeBinding,
): Promise<string | undefined> {
  const entry = await lookup(q, source, key);
  // Compare even when the key is unknown, so both failures cost the same.
  const ok = secretMatches(secret, entry?.digest ?? UNKNOWN_KEY_DIGEST);
  if (!entry || !ok) return undefined;
  entry.verified = Buffer.from(secret, 'utf8');
  return entry.user;
}

/**
 * Synchronous fast path: the user of a cached key whose secret matched before, compared in constant time; undefined
 * when the cache cannot tell (unknown, expired or different secret), and the caller goes through userForApiKey.
 */
export function verifiedApiKeyUser(key: string, secret: string, source?: DocTypeBinding): string | undefined {
  const entry = cachedEntry(source?.meta.name ?? 'User', key)?.entry;
  const verified = entry?.verified;
  if (!verified || verified.length !== Buffer.byteLength(secret, 'utf8')) return undefined;
  return timingSafeEqual(verified, Buffer.from(secret, 'utf8')) ? entry.user : undefined;
}

/** Keeps the user's API key (creating one if missing), replaces the secret, and returns both (secret shown once). */
export async function regenerateKeys(
  trx: Queryable,
  user: string,
): Promise<{ api_key: string; api_secret: string } | undefined> {
  const row = (await trx('tabUser').where('name', user).first('api_key')) as
    { api_key: string | null } | undefined;
  if (!row) return undefined;
  const apiKey = row.api_key || generateHash(15);
  const apiSecret = generateHash(15);
  await trx('tabUser').where('name', user).update({ api_key: apiKey, api_secret: '*****' });
  await writeAuth(trx, 'User', user, 'api_secret', digestSecret(apiSecret).toString('hex'));
  forgetApiKeys('User');
  return { api_key: apiKey, api_secret: apiSecret };
}
