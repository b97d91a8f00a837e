// Who may read the API description (the OpenAPI documents and the /api/docs page): signed-in users, and Guests only
// when site config `openapi_public` is true; the page also refuses to be framed by another site.
import { AuthenticationError } from '../errors/errors';
import type { AppContext } from '../http/state';
import { signInPath } from '../oauth/sign-in-page';

/** True when the request may read the API description. */
function mayRead(ctx: AppContext): boolean {
  return ctx.state.user.name !== 'Guest' || ctx.state.site.config.site.openapi_public === true;
}

/** Throws 401 unless the request may read the OpenAPI documents. */
export function assertMayReadApiDescription(ctx: AppContext): void {
  if (!mayRead(ctx)) throw new AuthenticationError('Sign in to read the API description');
}

/**
 * Prepares an answer of the docs page: anti-framing headers (no clickjacking of its "Try it out" calls); a Guest who
 * may not read it is sent to the sign-in page (302) and false is returned.
 */
export function admitDocsPage(ctx: AppContext): boolean {
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Content-Security-Policy', "frame-ancestors 'none'");
  if (mayRead(ctx)) return true;
  ctx.redirect(signInPath(ctx.originalUrl));
  ctx.status = 302;
  return false;
}
