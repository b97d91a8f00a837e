// What a matched route waives, answered for the middleware app.ts hands these to: the session CSRF token
// (middleware/csrf.ts) and a user's Authorization header (middleware/authenticate.ts: OAuth client credentials). The
// route table and the built-in methods say so; the middleware reads neither.
import type { RequestState } from '../http/state';
import { BUILTIN_METHODS, type BuiltinMethod } from '../methods/builtins';
import { methodName } from './method-routes';

/** The built-in method a method row's request calls, if it is one. */
function builtinMethodOf(state: RequestState): BuiltinMethod | undefined {
  const route = state.route;
  if (route?.row.operation !== 'method') return undefined;
  return BUILTIN_METHODS.get(methodName(route.params.method, state.version));
}

/** True when the request's route asks no CSRF token: its row says `csrf: false`, or it calls a built-in method that does. */
export function waivesCsrf(state: RequestState): boolean {
  const route = state.route;
  if (!route) return false;
  return route.row.csrf === false || builtinMethodOf(state)?.csrf === false;
}

/** True when the request calls an endpoint whose Authorization header holds OAuth client credentials, not a user's. */
export function takesClientCredentials(state: RequestState): boolean {
  return builtinMethodOf(state)?.clientAuth === true;
}
