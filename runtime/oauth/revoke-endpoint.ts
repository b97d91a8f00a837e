// frappe.integrations.oauth2.revoke_token: RFC 7009 token revocation (access or refresh token of the calling client).
import { tokenDigest } from '../auth/bearer-tokens';
import type { AppContext } from '../http/state';
import { requestClient, tokenParam } from './client-auth';
import { revokeFamily, revokeTokens } from './token-store';

/**
 * POST (form `token`, optional `token_type_hint`): revokes the token when it was issued to the calling client. A
 * refresh token takes every token of its grant with it (RFC 7009 section 2.1). The answer is 200 with an empty body
 * whatever the token was (unknown, already revoked, another client's: nothing is revoked then), so the endpoint tells
 * nothing about tokens; a client that fails authentication is 401 `invalid_client`.
 */
export async function revokeToken(ctx: AppContext): Promise<unknown> {
  const client = await requestClient(ctx, true);
  const token = tokenParam(ctx);
  const { site } = ctx.state;
  const digest = tokenDigest(token);
  const row = (await site.db
    .knex('tabOAuth Bearer Token')
    .where('access_token', digest)
    .orWhere('refresh_token', digest)
    .first('name', 'client', 'family', 'refresh_token')) as
    { name: string; client: string | null; family: string | null; refresh_token: string | null } | undefined;
  if (row && row.client === client.id) {
    if (row.refresh_token === digest && row.family) await revokeFamily(site, row.family);
    else await revokeTokens(site, { name: row.name });
  }
  ctx.set('Cache-Control', 'no-store');
  return {};
}
