// createResourceScopes: bearer tokens reach the resource endpoints only with the default `all` scope (as Frappe).
import type { Middleware } from 'koa';
import { assertScopes } from '../auth/scopes';

/** Refuses (403 insufficient_scope) bearer requests whose token lacks the scopes of the route's row; methods check their own. */
export function createResourceScopes(): Middleware {
  return function resourceScopes(ctx, next) {
    const state = ctx.state;
    const scopes = state.route?.row.scopes;
    if (state.auth === 'bearer' && scopes) assertScopes(state, scopes);
    return next();
  };
}
