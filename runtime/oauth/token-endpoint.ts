// frappe.integrations.oauth2.get_token: the RFC 6749 token endpoint (client credentials, authorization code, refresh).
import OAuth2Server from '@node-oauth/oauth2-server';
import type { AppContext } from '../http/state';
import type { Site } from '../site';
import { CodeGrant } from './code-grant';
import { oauthLifetimes } from './oauth-config';
import { createOAuthModel } from './oauth-model';
import { runOAuth } from './oauth-request';

const servers = new WeakMap<Site, OAuth2Server>();

/** The site's protocol server: its model and the lifetimes from site config. */
export function oauthServer(site: Site): OAuth2Server {
  let server = servers.get(site);
  if (!server) {
    const lifetimes = oauthLifetimes(site.config.site);
    server = new OAuth2Server({
      model: createOAuthModel(site),
      accessTokenLifetime: lifetimes.accessToken,
      refreshTokenLifetime: lifetimes.refreshToken,
      authorizationCodeLifetime: lifetimes.authorizationCode,
      // A public client refreshes with its client_id alone; confidential clients are held to their secret by the model.
      requireClientAuthentication: { refresh_token: false },
      alwaysIssueNewRefreshToken: true,
      // PKCE protects the code; state stays the client's choice (echoed when sent).
      allowEmptyState: true,
      // The answer carries what saveToken returns beyond the token itself (the OpenID id_token).
      allowExtendedTokenAttributes: true,
      extendedGrantTypes: { authorization_code: CodeGrant },
    });
    servers.set(site, server);
  }
  return server;
}

/** POST (form): issues tokens; answers RFC 6749 section 5.1 `{access_token, token_type, expires_in, scope, ...}`. */
export async function getToken(ctx: AppContext): Promise<unknown> {
  const server = oauthServer(ctx.state.site);
  const { response } = await runOAuth(ctx, (request, res) => server.token(request, res));
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Pragma', 'no-cache');
  return response.body;
}
