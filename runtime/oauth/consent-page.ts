// The consent page: names the client and the scopes it asks for, approved or denied by a CSRF-protected POST.
import type { AppContext } from '../http/state';
import { AUTHORIZE_PARAMS, type AuthorizationRequest } from './authorize-request';
import { escapeHtml, hiddenField, sendPage } from './html-page';

/** What each known scope lets the client do, in the user's words. */
const SCOPE_TEXT: Readonly<Record<string, string>> = {
  all: 'Read and change everything you can, as you',
  openid: 'Know who you are (your user name, email, full name and roles)',
};

/** Where the user is sent back to: the origin of an http(s) URI, the scheme of an app's private-use URI. */
function destination(uri: string): string {
  const url = new URL(uri);
  return url.origin !== 'null' ? url.origin : url.protocol;
}

/** Renders the consent form for a signed-in user; it posts the request back to the same path with the CSRF token. */
export function sendConsentPage(ctx: AppContext, request: AuthorizationRequest, csrfToken: string): void {
  const scopes = request.scopes
    .map(
      (scope) =>
        `<li><code>${escapeHtml(scope)}</code>${SCOPE_TEXT[scope] ? `: ${escapeHtml(SCOPE_TEXT[scope])}` : ''}</li>`,
    )
    .join('');
  const fields = AUTHORIZE_PARAMS.map((key) => {
    const value = key === 'redirect_uri' ? request.redirectUri : request.params[key];
    return value === undefined ? '' : hiddenField(key, value);
  }).join('');
  sendPage(
    ctx,
    200,
    'Allow access?',
    `<p><strong>${escapeHtml(request.client.appName)}</strong> asks to act on your behalf, signed in as
<strong>${escapeHtml(ctx.state.user.name)}</strong>. It will be able to:</p>
<ul>${scopes}</ul>
<p>You will be sent back to <code>${escapeHtml(destination(request.redirectUri))}</code>.</p>
<form method="post" action="${escapeHtml(ctx.path)}">${fields}${hiddenField('csrf_token', csrfToken)}
<div class="row"><button type="submit" name="allowed" value="false">Deny</button>
<button type="submit" name="allowed" value="true">Allow</button></div></form>`,
  );
}
