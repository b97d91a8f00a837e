// frappe.integrations.oauth2.introspect_token: RFC 7662 token introspection for authenticated confidential clients.
import { tokenDigest } from '../auth/bearer-tokens';
import { parseScopes } from '../auth/scopes';
import { mayActAs } from '../auth/users';
import type { AppContext } from '../http/state';
import { requestClient, tokenParam } from './client-auth';
import { oauthLifetimes } from './oauth-config';
import { parseStoredDatetime } from './token-store';

interface TokenRow {
  client: string | null;
  user: string | null;
  scopes: string | null;
  status: string | null;
  access_token: string | null;
  refresh_token: string | null;
  expiration_time: unknown;
  creation: unknown;
  modified_by: string | null;
}

/**
 * POST (form `token`, optional `token_type_hint`), the client authenticated by its secret (public clients cannot
 * introspect). An active token issued to the calling client answers `{active: true, scope, client_id, username, sub,
 * token_type (access tokens), exp, iat}`; anything else (unknown, revoked, expired, another client's) is `{active: false}`, so a client
 * cannot probe other clients' tokens.
 */
export async function introspectToken(ctx: AppContext): Promise<unknown> {
  const client = await requestClient(ctx, false);
  const token = tokenParam(ctx);
  const { site } = ctx.state;
  const digest = tokenDigest(token);
  const row = (await site.db
    .knex('tabOAuth Bearer Token')
    .where('access_token', digest)
    .orWhere('refresh_token', digest)
    .first(
      'client',
      'user',
      'scopes',
      'status',
      'access_token',
      'refresh_token',
      'expiration_time',
      'creation',
      'modified_by',
    )) as TokenRow | undefined;
  ctx.set('Cache-Control', 'no-store');
  if (!row || row.client !== client.id || !row.user || (row.status ?? 'Active') !== 'Active')
    return { active: false };
  // As the bearer middleware: a row whose last writer may not act as its user is no token.
  if (!row.modified_by || !mayActAs(row.modified_by, row.user)) return { active: false };
  const issued = parseStoredDatetime(row.creation).getTime();
  const refresh = row.refresh_token === digest && row.access_token !== digest;
  const expires = refresh
    ? issued + oauthLifetimes(site.config.site).refreshToken * 1000
    : parseStoredDatetime(row.expiration_time).getTime();
  if (expires <= Date.now()) return { active: false };
  return {
    active: true,
    scope: parseScopes(row.scopes).join(' '),
    client_id: client.clientId,
    username: row.user,
    sub: row.user,
    ...(refresh ? {} : { token_type: 'Bearer' }),
    exp: Math.floor(expires / 1000),
    iat: Math.floor(issued / 1000),
  };
}
