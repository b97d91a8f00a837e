// frappe.integrations.oauth2.get_token: the RFC 6749 token endpoint (client credentials, authorization code, refresh).
import OAuth2Server from '@node-oauth/oauth2-server';
import type { AppContext } from '../http/state';
import type { Site } from '../site';
import { SitePlugin } from '../site';
import { CodeGrant } from './code-grant';
import { signIdToken } from './id-token';
import { issuerOf } from './issuer';
import type { OAuthClientRecord } from './oauth-clients';
import type { GrantUser } from './oauth-model';
import { userClaims } from './user-claims';
import { oauthLifetimes } from './oauth-config';
import { createOAuthModel } from './oauth-model';
import { runOAuth } from './oauth-request';

/** The site's protocol server: its model and the lifetimes from site config. */
const SERVERS = new SitePlugin<OAuth2Server>('oauth server', (site) => {
  const lifetimes = oauthLifetimes(site.config.site);
  return new OAuth2Server({
    model: createOAuthModel(site),
    accessTokenLifetime: lifetimes.accessToken,
    refreshTokenLifetime: lifetimes.refreshToken,
    authorizationCodeLifetime: lifetimes.authorizationCode,
    // A public client refreshes with its client_id alone; confidential clients are held to their secret by the model.
    requireClientAuthentication: { refresh_token: false },
    alwaysIssueNewRefreshToken: true,
    // PKCE protects the code; state stays the client's choice (echoed when sent).
    allowEmptyState: true,
    extendedGrantTypes: { authorization_code: CodeGrant },
  });
});

/** The site's protocol server (made on first use). */
export function oauthServer(site: Site): OAuth2Server {
  return SERVERS.of(site);
}

/**
 * The OpenID ID token of a user sign-in whose scope holds `openid` (authorization code or its refresh; never client
 * credentials, which sign no user in); undefined otherwise, or when the user is gone.
 */
async function idTokenFor(ctx: AppContext, token: OAuth2Server.Token): Promise<string | undefined> {
  const user = token.user as GrantUser;
  if (!user.family || !token.scope?.includes('openid')) return undefined;
  const { site } = ctx.state;
  const claims = await userClaims(site, user.name);
  if (!claims) return undefined;
  return signIdToken(site, {
    issuer: issuerOf(ctx),
    clientId: (token.client as OAuthClientRecord).clientId,
    claims,
    accessToken: token.accessToken,
    lifetime: oauthLifetimes(site.config.site).accessToken,
    ...(user.nonce ? { nonce: user.nonce } : {}),
  });
}

/**
 * POST (form): issues tokens; answers RFC 6749 section 5.1 `{access_token, token_type, expires_in, scope, ...}`, with
 * `id_token` for an `openid` sign-in.
 */
export async function getToken(ctx: AppContext): Promise<unknown> {
  const server = oauthServer(ctx.state.site);
  const { result, response } = await runOAuth(ctx, (request, res) => server.token(request, res));
  const body = response.body as Record<string, unknown>;
  const idToken = await idTokenFor(ctx, result);
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Pragma', 'no-cache');
  return idToken ? { ...body, id_token: idToken } : body;
}
