// The router: finds the request's row of the route table early (so CSRF and scope checks read the row's rules), and
// runs it last. Requests that match no row are answered here: 404, or 405 with `Allow` for a path with other verbs (on
// a DocType's path, the verbs that DocType answers there).
import type { Middleware } from 'koa';
import { BadRequestError, DoesNotExistError, MethodNotAllowedError } from '../errors/errors';
import { refuseKeyOutsideCreate } from '../idempotency/idempotency-keys';
import { allowsRow, answersIn, serveDocTypeRoute } from './doctype-routes';
import type { RouteHandlers } from './route-handlers';
import type { RouteMatcher } from './route-matcher';

/** True when every percent escape of the path decodes. */
function decodable(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Sets `state.route` to the row (and decoded captures) the path and verb select, a DocType row as the DocType's
 * generated route module serves it (doctype-routes.ts); leaves it unset when none does.
 */
export function createRouteMatch(matcher: RouteMatcher): Middleware {
  return function routeMatch(ctx, next) {
    const state = ctx.state;
    // A malformed escape (`%`, `%C0%AF`) selects nothing; the dispatch answers it with 400.
    if (!state.path.includes('%') || decodable(state.path)) {
      const match = matcher.match(state.path, ctx.method);
      state.route = match?.row.kinds ? serveDocTypeRoute(state.site.registry, state.version, match) : match;
    }
    return next();
  };
}

/** Runs the matched row's operation, or answers 400 (malformed path), OPTIONS (200 with `Allow`), 405 with `Allow`, or 404. */
export function createRouter(matcher: RouteMatcher, handlers: RouteHandlers): Middleware {
  return function router(ctx) {
    const state = ctx.state;
    const route = state.route;
    if (route) {
      refuseKeyOutsideCreate(ctx, route.row.operation);
      return handlers[route.row.operation](ctx, route.params, route.row);
    }
    const path = state.path;
    if (path.includes('%') && !decodable(path))
      throw new BadRequestError('Malformed percent-encoding in the URL path');
    const { registry } = state.site;
    // On a DocType's path, the verbs that DocType answers there (allowsRow); none is a 405 with an empty `Allow`, as
    // a Single's list. A name no DocType answers to keeps the path's verbs, as Frappe's router.
    let known = false;
    const allowed = matcher.allowed(path, (match) => {
      if (!match.row.kinds) return true;
      known ||= answersIn(registry.get(match.params.doctype), state.version);
      return allowsRow(registry, state.version, match);
    });
    if (allowed !== '*' && (allowed.length || known)) {
      if (ctx.method === 'OPTIONS') {
        ctx.status = 200;
        ctx.set('Allow', allowed.join(', '));
        return;
      }
      throw new MethodNotAllowedError(`${ctx.method} is not allowed on ${path.slice(0, 200)}`, {
        headers: { Allow: allowed.join(', ') },
      });
    }
    throw new DoesNotExistError(`No route for ${ctx.method} ${path.slice(0, 200)}`);
  };
}
