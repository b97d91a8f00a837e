// Issued OAuth tokens as `OAuth Bearer Token` rows: only digests of the access and refresh tokens are stored.
import { randomBytes } from 'node:crypto';
import { authChanged } from '../auth/auth-broadcast';
import { tokenDigest } from '../auth/bearer-tokens';
import { parseScopes } from '../auth/scopes';
import { mayActAs } from '../auth/users';
import { now } from '../db/stored-values';
import type { Site } from '../site';

/** A new random token (256 bits, base64url): what clients hold; the row keeps its digest. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** `YYYY-MM-DD HH:MM:SS` (UTC) of a Date, as Datetime fields are stored. */
export function datetimeOf(date: Date): string {
  return date.toISOString().replace('T', ' ').slice(0, 19);
}

/** `YYYY-MM-DD HH:MM:SS` (UTC) or a Date, as the drivers return Datetime fields; unreadable text is the epoch (expired). */
export function parseStoredDatetime(value: unknown): Date {
  if (value instanceof Date) return value;
  const ms = Date.parse(
    `${String(value ?? '')
      .trim()
      .replace(' ', 'T')}Z`,
  );
  return new Date(Number.isNaN(ms) ? 0 : ms);
}

/** What one issue of tokens writes. */
export interface IssuedToken {
  accessToken: string;
  accessTokenExpiresAt: Date;
  refreshToken?: string;
  client: string;
  user: string;
  scopes: readonly string[];
  /** The digest of the code the grant started from; tokens refreshed from it keep it. */
  family?: string;
}

/** Writes one `OAuth Bearer Token` row for an issued token (digests only). */
export async function storeToken(site: Site, token: IssuedToken): Promise<void> {
  const stamp = now();
  const digest = tokenDigest(token.accessToken);
  await site.db.knex('tabOAuth Bearer Token').insert({
    name: digest,
    access_token: digest,
    refresh_token: token.refreshToken ? tokenDigest(token.refreshToken) : null,
    client: token.client,
    user: token.user,
    scopes: token.scopes.join(' '),
    family: token.family ?? null,
    status: 'Active',
    expiration_time: datetimeOf(token.accessTokenExpiresAt),
    expires_in: Math.max(0, Math.round((token.accessTokenExpiresAt.getTime() - Date.now()) / 1000)),
    owner: token.user,
    modified_by: token.user,
    creation: stamp,
    modified: stamp,
    docstatus: 0,
    idx: 0,
  });
}

/** Marks rows revoked; every process's token cache forgets them (this one at once, others through Redis). */
export async function revokeTokens(site: Site, where: Record<string, string>): Promise<number> {
  const count = await site.db
    .knex('tabOAuth Bearer Token')
    .where(where)
    .where('status', 'Active')
    .update({ status: 'Revoked', modified: now() });
  if (count > 0) await authChanged(site);
  return count;
}

/** A stored refresh token: the row's grant and whether it is still active. */
export interface StoredRefreshToken {
  client: string;
  user: string;
  scopes: string[];
  family?: string;
  active: boolean;
  /** When the row was written: the refresh token lives `oauth_refresh_token_lifetime` from then. */
  issuedAt: Date;
}

/** The row holding this refresh token (active or not); undefined when there is none. */
export async function findRefreshToken(site: Site, token: string): Promise<StoredRefreshToken | undefined> {
  const row = (await site.db
    .knex('tabOAuth Bearer Token')
    .where('refresh_token', tokenDigest(token))
    .first('client', 'user', 'scopes', 'family', 'status', 'creation', 'modified_by')) as
    | {
        client: string | null;
        user: string | null;
        scopes: string | null;
        family: string | null;
        status: string | null;
        creation: unknown;
        modified_by: string | null;
      }
    | undefined;
  if (!row || !row.client || !row.user) return undefined;
  if (!row.modified_by || !mayActAs(row.modified_by, row.user)) return undefined;
  return {
    client: row.client,
    user: row.user,
    scopes: parseScopes(row.scopes),
    ...(row.family ? { family: row.family } : {}),
    active: (row.status ?? 'Active') === 'Active',
    issuedAt: parseStoredDatetime(row.creation),
  };
}

/**
 * Revokes the row of a refresh token as it is exchanged (rotation: its access token goes with it). True for the one
 * call that revoked it; false when it was no longer active (reused, or a racing exchange).
 */
export async function revokeRefreshToken(site: Site, token: string): Promise<boolean> {
  return (await revokeTokens(site, { refresh_token: tokenDigest(token) })) === 1;
}

/**
 * Revokes a family for good (a spent code or a rotated refresh token was presented again): its code row is marked
 * `Revoked`, so a token of the family being issued at this moment is withdrawn too (`familyRevoked`), then every active
 * token of it is revoked.
 */
export async function revokeFamily(site: Site, family: string | undefined): Promise<number> {
  if (!family) return 0;
  await site.db
    .knex('tabOAuth Authorization Code')
    .where('name', family)
    .update({ validity: 'Revoked', modified: now() });
  return revokeTokens(site, { family });
}

/** True once `revokeFamily` has run for the family (checked after a token of it is stored). */
export async function familyRevoked(site: Site, family: string): Promise<boolean> {
  const row = (await site.db.knex('tabOAuth Authorization Code').where('name', family).first('validity')) as
    { validity: string | null } | undefined;
  return row?.validity === 'Revoked';
}
