// createResourceScopes: bearer tokens reach the resource endpoints only with the default `all` scope (as Frappe).
import type { Middleware } from 'koa';
import { assertScopes, DEFAULT_SCOPES } from '../auth/scopes';
import type { AppContext } from '../http/state';

const RESOURCE_PATH = /^\/api\/(?:v1\/)?resource(?:\/|$)|^\/api\/v2\/(?:document|doctype)(?:\/|$)/;

/** Refuses (403 insufficient_scope) bearer requests to resource endpoints whose token lacks `all`; methods check their own. */
export function createResourceScopes(): Middleware {
  return function resourceScopes(ctx, next) {
    const state = (ctx as AppContext).state;
    if (state.auth === 'bearer' && RESOURCE_PATH.test(state.path)) assertScopes(state, DEFAULT_SCOPES);
    return next();
  };
}
