// frappe.integrations.oauth2.openid_profile: the OpenID userinfo endpoint, answered to a bearer token with `openid`.
import { assertScopes } from '../auth/scopes';
import { AuthenticationError } from '../errors/errors';
import type { AppContext } from '../http/state';
import { userClaims } from './user-claims';

/**
 * GET or POST with `Authorization: Bearer` (a token holding `openid` or `all`): `{sub, email, name, roles}` of the
 * token's user. Any other caller is 401 with `WWW-Authenticate: Bearer` (OpenID Connect Core 5.3.3).
 */
export async function openidProfile(ctx: AppContext): Promise<unknown> {
  const { state } = ctx;
  if (state.auth !== 'bearer')
    throw new AuthenticationError('A bearer token is required', {
      headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
    });
  assertScopes(state, ['openid']);
  const claims = await userClaims(state.site, state.user.name);
  if (!claims)
    throw new AuthenticationError('User disabled or missing', {
      headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
    });
  ctx.set('Cache-Control', 'no-store');
  return claims;
}
