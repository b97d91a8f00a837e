// frappe.integrations.oauth2.authorize: GET asks a signed-in user's consent (or signs them in first), POST answers it.
import OAuth2Server from '@node-oauth/oauth2-server';
import { AuthenticationError, InternalServerError } from '../errors/errors';
import { bodyObject } from '../http/params';
import type { AppContext } from '../http/state';
import { checkAuthorizationRequest, errorRedirect, type AuthorizationRequest } from './authorize-request';
import { sendConsentPage } from './consent-page';
import type { GrantUser } from './oauth-model';
import { runOAuth } from './oauth-request';
import { signInPath } from './sign-in-page';
import { oauthServer } from './token-endpoint';

/** Issues the code through the library for the approving user and redirects to the client (303 after a POST). */
async function issueCode(ctx: AppContext, request: AuthorizationRequest): Promise<void> {
  const server = oauthServer(ctx.state.site);
  const user: GrantUser = {
    name: ctx.state.user.name,
    ...(request.params.nonce ? { nonce: request.params.nonce } : {}),
  };
  // The checked parameters are the library's only input (never a mix of the query and the form).
  const libraryRequest = new OAuth2Server.Request({
    method: 'GET',
    headers: {},
    query: { ...request.params, redirect_uri: request.redirectUri },
    body: {},
  });
  const { response } = await runOAuth(ctx, (_req, res) =>
    server.authorize(libraryRequest, res, { authenticateHandler: { handle: () => user } }),
  );
  const location = (response.headers as Record<string, string> | undefined)?.location;
  if (!location) throw new InternalServerError('The authorize handler gave no redirect');
  redirectToClient(ctx, location);
}

/** Sends the browser to the client with an error (state echoed). */
function redirectToClient(ctx: AppContext, location: string): void {
  ctx.redirect(location);
  ctx.status = ctx.method === 'POST' ? 303 : 302;
}

/**
 * GET: a Guest is sent to the sign-in page, which returns here; a signed-in user sees the consent page, or goes straight
 * back with a code when the client has `skip_authorization`. POST (the consent form, CSRF-checked by the middleware as
 * any session POST): `allowed=true` issues the code, anything else answers `access_denied`. Only a browser session
 * may consent: a request authenticated by a key or a bearer token is refused.
 */
export async function authorize(ctx: AppContext): Promise<undefined> {
  const { state } = ctx;
  const post = ctx.method === 'POST';
  const source: Record<string, unknown> = post ? (bodyObject(ctx) ?? {}) : { ...ctx.query };
  const checked = await checkAuthorizationRequest(state.site, source);
  if (!checked.ok) {
    redirectToClient(ctx, checked.redirect);
    return undefined;
  }
  const request = checked.request;
  if (state.auth === 'guest' && !post) {
    ctx.redirect(signInPath(ctx.originalUrl));
    return undefined;
  }
  if (state.auth !== 'session' || !state.session)
    throw new AuthenticationError('Authorization needs a signed-in browser session');
  if (post) {
    if (source.allowed !== 'true') {
      redirectToClient(
        ctx,
        errorRedirect(request.redirectUri, 'access_denied', 'The user denied access', request.params.state),
      );
      return undefined;
    }
    await issueCode(ctx, request);
    return undefined;
  }
  if (request.client.skipAuthorization) {
    await issueCode(ctx, request);
    return undefined;
  }
  sendConsentPage(ctx, request, state.session.csrfToken);
  return undefined;
}
