// Issued OAuth tokens as `OAuth Bearer Token` rows: only digests of the access and refresh tokens are stored.
import { randomBytes } from 'node:crypto';
import { forgetBearerTokens, tokenDigest } from '../auth/bearer-tokens';
import { now } from '../document/values';
import type { Site } from '../site';

/** A new random token (256 bits, base64url): what clients hold; the row keeps its digest. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** `YYYY-MM-DD HH:MM:SS` (UTC) of a Date, as Datetime fields are stored. */
export function datetimeOf(date: Date): string {
  return date.toISOString().replace('T', ' ').slice(0, 19);
}

/** What one issue of tokens writes. */
export interface IssuedToken {
  accessToken: string;
  accessTokenExpiresAt: Date;
  refreshToken?: string;
  client: string;
  user: string;
  scopes: readonly string[];
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

/** Marks rows revoked; every process's token cache forgets them (this one at once). */
export async function revokeTokens(site: Site, where: Record<string, string>): Promise<number> {
  const count = await site.db
    .knex('tabOAuth Bearer Token')
    .where(where)
    .where('status', 'Active')
    .update({ status: 'Revoked', modified: now() });
  forgetBearerTokens();
  return count;
}
