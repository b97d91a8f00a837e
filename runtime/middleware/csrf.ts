// createCsrf: under session authentication, every POST/PUT/PATCH/DELETE must carry the session's CSRF token, unless
// the route waives it. Which routes waive it is app.ts's to say (`waived`): the middleware knows no route or method.
import type { Middleware } from 'koa';
import { assertCsrfToken, UNSAFE_VERBS, type CsrfSettings } from '../auth/csrf-token';
import { bodyObject } from '../http/params';
import type { RequestState } from '../http/state';

/** Options of the CSRF check. */
export interface CsrfOptions extends CsrfSettings {
  /** True when the request's route asks no token (app.ts: a row's `csrf: false`, a built-in method's). */
  waived: (state: RequestState) => boolean;
}

/** Refuses unsafe requests under session auth whose token is missing or wrong (400 CSRFTokenError). */
export function createCsrf(options: CsrfOptions): Middleware {
  return function csrf(ctx, next) {
    const state = ctx.state;
    if (
      state.auth === 'session' &&
      UNSAFE_VERBS.has(ctx.method) &&
      !options.ignoreCsrf &&
      !options.waived(state)
    ) {
      assertCsrfToken(ctx, options, bodyObject(ctx)?.csrf_token);
    }
    return next();
  };
}
