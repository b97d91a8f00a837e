// OAuth bearer tokens: `OAuth Bearer Token` rows (user, space-delimited scopes, expiry, status), cached briefly.
import { createHash } from 'node:crypto';
import type { Site } from '../site';
import { SitePlugin } from '../site';
import { parseScopes } from './scopes';
import { mayActAs } from './users';

/** What a valid bearer token grants. */
export interface BearerGrant {
  user: string;
  scopes: readonly string[];
}

interface TokenEntry extends BearerGrant {
  /** ms since epoch; undefined when the token never expires. */
  expiresAt?: number;
}

const TTL_MS = 5_000;
const MAX_ENTRIES = 10_000;
/** Bumped by forgetBearerTokens; a site's cache built under an older generation starts over. */
let tokenGeneration = 0;

/** A site's token cache and the generation it was built under. */
interface TokenCache {
  entries: Map<string, { entry: TokenEntry | undefined; at: number }>;
  generation: number;
}

/** The site's token cache (read by every bearer-token request). */
const TOKEN_CACHE = new SitePlugin<TokenCache>('bearer tokens', () => ({
  entries: new Map(),
  generation: tokenGeneration,
}));

/** Drops cached tokens (after a write to OAuth Bearer Token: a revoked token stops working at once in this process). */
export function forgetBearerTokens(): void {
  tokenGeneration++;
}

/**
 * The stored form of an access or refresh token: its SHA-256 digest (hex). Rows keep only the digest, so a copy of the
 * table grants nothing; tokens are random, so a fast digest is enough.
 */
export function tokenDigest(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

function parseDatetime(value: unknown): number | undefined {
  if (value === null || value === undefined || value === '') return undefined;
  if (value instanceof Date) return value.getTime();
  const ms = Date.parse(`${String(value).trim().replace(' ', 'T')}Z`);
  // An unreadable expiry fails closed: the token counts as expired.
  return Number.isNaN(ms) ? 0 : ms;
}

async function fetchToken(site: Site, token: string): Promise<TokenEntry | undefined> {
  const binding = site.registry.get('OAuth Bearer Token');
  if (!binding) return undefined;
  const row = (await site.db
    .knex(binding.meta.tableName)
    .where('access_token', tokenDigest(token))
    .first('user', 'scopes', 'status', 'expiration_time', 'modified_by')) as
    | {
        user: string | null;
        scopes: string | null;
        status: string | null;
        expiration_time: unknown;
        modified_by: string | null;
      }
    | undefined;
  if (!row || !row.user || (row.status ?? 'Active') !== 'Active') return undefined;
  // A row whose last writer may not act as its user (written behind the API) authenticates no one.
  if (!row.modified_by || !mayActAs(row.modified_by, row.user)) return undefined;
  const expiresAt = parseDatetime(row.expiration_time);
  return {
    user: row.user,
    scopes: parseScopes(row.scopes),
    ...(expiresAt === undefined ? {} : { expiresAt }),
  };
}

/** The site's token cache, started over when forgetBearerTokens has run since it was built or when it is full. */
function entriesOf(site: Site): Map<string, { entry: TokenEntry | undefined; at: number }> {
  const cache = TOKEN_CACHE.of(site);
  if (cache.generation !== tokenGeneration || cache.entries.size >= MAX_ENTRIES) {
    cache.entries = new Map();
    cache.generation = tokenGeneration;
  }
  return cache.entries;
}

/** The grant an entry gives now: none for an unknown, revoked or expired token. */
function grantOf(entry: TokenEntry | undefined): BearerGrant | undefined {
  if (!entry || (entry.expiresAt !== undefined && entry.expiresAt <= Date.now())) return undefined;
  return entry;
}

/** The grant of an active, unexpired token; undefined for unknown, revoked or expired tokens. */
export async function bearerGrant(site: Site, token: string): Promise<BearerGrant | undefined> {
  const entries = entriesOf(site);
  let hit = entries.get(token);
  if (!hit || Date.now() - hit.at >= TTL_MS) {
    hit = { entry: await fetchToken(site, token), at: Date.now() };
    entries.set(token, hit);
  }
  return grantOf(hit.entry);
}

/**
 * The grant of a token found valid moments ago, read from the cache without a database read or an await (the fast path
 * of authentication); undefined when the token is not cached fresh and valid, and `bearerGrant` must decide.
 */
export function cachedBearerGrant(site: Site, token: string): BearerGrant | undefined {
  const hit = entriesOf(site).get(token);
  return hit && Date.now() - hit.at < TTL_MS ? grantOf(hit.entry) : undefined;
}
