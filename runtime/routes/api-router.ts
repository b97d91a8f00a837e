// The API routes: a fixed set of paths that dispatch by DocType through the registry map (cost independent of DocType count).
import Router from '@koa/router';
import type { Middleware } from 'koa';
import { BadRequestError, DoesNotExistError, MethodNotAllowedError } from '../errors/errors';
import { queryParams } from '../http/params';
import type { AppContext } from '../http/state';
import { callDocumentMethod, callMethod } from './method-routes';
import {
  copyDocument,
  countDocuments,
  createDocument,
  deleteDocument,
  docTypeMeta,
  getDocument,
  listDocuments,
  updateDocument,
} from './resource-handlers';

type Params = Record<string, string>;

/** v1's `run_method` (query string, or a JSON/form body): the document method a resource request runs instead. */
function runMethodOf(ctx: AppContext): string | undefined {
  const fromQuery = queryParams(ctx).run_method;
  const body = (ctx.request as { body?: unknown }).body as Record<string, unknown> | undefined;
  const value = fromQuery ?? (body && typeof body === 'object' && !Array.isArray(body) ? body.run_method : undefined);
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') throw new BadRequestError('run_method must be one method name');
  return value;
}
const h =
  (fn: (ctx: AppContext, p: Params) => Promise<void>) =>
  (ctx: { params: unknown }) =>
    fn(ctx as unknown as AppContext, ctx.params as Params);

/** The v1 resource routes under `/api` and `/api/v1`. */
function resourceRouter(): Router {
  const router = new Router();
  for (const prefix of ['/api', '/api/v1']) {
    router.get(`${prefix}/resource/:doctype`, h((ctx, p) => listDocuments(ctx, p.doctype as string)));
    router.post(`${prefix}/resource/:doctype`, h((ctx, p) => createDocument(ctx, p.doctype as string)));
    router.get(
      `${prefix}/resource/:doctype/*name`,
      h((ctx, p) => {
        const method = runMethodOf(ctx);
        return method === undefined ? getDocument(ctx, p.doctype as string, p.name as string) : callDocumentMethod(ctx, p.doctype as string, p.name as string, method);
      }),
    );
    router.post(
      `${prefix}/resource/:doctype/*name`,
      h((ctx, p) => {
        const method = runMethodOf(ctx);
        if (method === undefined) throw new MethodNotAllowedError(`POST needs run_method on ${ctx.path.slice(0, 200)}`, { headers: { Allow: 'GET, PUT, DELETE' } });
        return callDocumentMethod(ctx, p.doctype as string, p.name as string, method);
      }),
    );
    router.put(`${prefix}/resource/:doctype/*name`, h((ctx, p) => updateDocument(ctx, p.doctype as string, p.name as string)));
    router.delete(`${prefix}/resource/:doctype/*name`, h((ctx, p) => deleteDocument(ctx, p.doctype as string, p.name as string)));
  }
  return router;
}

/** The v2 document and DocType routes under `/api/v2`. */
function documentRouter(): Router {
  const router = new Router();
  const v2 = '/api/v2';
  router.get(`${v2}/document/:doctype`, h((ctx, p) => listDocuments(ctx, p.doctype as string)));
  router.post(`${v2}/document/:doctype`, h((ctx, p) => createDocument(ctx, p.doctype as string)));
  for (const verb of ['get', 'post'] as const) {
    router[verb](`${v2}/document/:doctype/*name/method/:method`, h((ctx, p) => callDocumentMethod(ctx, p.doctype as string, p.name as string, p.method as string)));
  }
  router.get(`${v2}/document/:doctype/*name/copy`, h((ctx, p) => copyDocument(ctx, p.doctype as string, p.name as string)));
  router.get(`${v2}/document/:doctype/*name`, h((ctx, p) => getDocument(ctx, p.doctype as string, p.name as string)));
  router.put(`${v2}/document/:doctype/*name`, h((ctx, p) => updateDocument(ctx, p.doctype as string, p.name as string)));
  router.patch(`${v2}/document/:doctype/*name`, h((ctx, p) => updateDocument(ctx, p.doctype as string, p.name as string)));
  router.delete(`${v2}/document/:doctype/*name`, h((ctx, p) => deleteDocument(ctx, p.doctype as string, p.name as string)));
  router.get(`${v2}/doctype/:doctype/count`, h((ctx, p) => countDocuments(ctx, p.doctype as string)));
  router.get(`${v2}/doctype/:doctype/meta`, h((ctx, p) => docTypeMeta(ctx, p.doctype as string)));
  return router;
}

/** A router's routes with its 405 (Allow), 501 and 404 answers as errors. */
function fullDispatch(router: Router): Middleware {
  const routes = router.routes();
  const allowed = router.allowedMethods();
  return (ctx, next) =>
    routes(ctx as never, async () => {
      await allowed(ctx as never, next);
      if (ctx.status === 405) {
        throw new MethodNotAllowedError(`${ctx.method} is not allowed on ${ctx.path}`, { headers: { Allow: ctx.response.get('Allow') } });
      }
      if ((ctx.status === 404 && !ctx.body) || ctx.status === 501) throw new DoesNotExistError(`No route for ${ctx.method} ${ctx.path.slice(0, 200)}`);
    });
}

/**
 * Runs the first route that matches path and verb, as `router.routes()` would, without what it builds per request
 * (a composed chain, closures, the matched-route bookkeeping): about a third of a trivial request's own cost. Every
 * other request (no route, wrong verb, OPTIONS) goes through `fullDispatch` for @koa/router's answers.
 */
function dispatcher(router: Router): Middleware {
  const full = fullDispatch(router);
  return (ctx, next) => {
    const path = (ctx as AppContext).state.path;
    const { pathAndMethod, route } = router.match(path, ctx.method);
    // These routers hold routes only (no router.use), so the first layer matched by path and verb is the route.
    const layer = route ? pathAndMethod[0] : undefined;
    if (!layer) return full(ctx, next);
    (ctx as { params?: Params }).params = layer.params(path, layer.captures(path));
    return (layer.stack[0] as Middleware)(ctx, next);
  };
}

/** Path prefixes and the family of routes that serves them. */
const FAMILIES: ReadonlyArray<readonly [string, 'resource' | 'document' | 'method']> = [
  ['/api/resource/', 'resource'],
  ['/api/method/', 'method'],
  ['/api/v1/resource/', 'resource'],
  ['/api/v1/method/', 'method'],
  ['/api/v2/document/', 'document'],
  ['/api/v2/doctype/', 'document'],
  ['/api/v2/method/', 'method'],
];

/**
 * The method routes under one prefix, every verb: the method is the rest of the path, decoded (no router to match it
 * through: that was a trivial method's most expensive step); `{prefix}` alone names no method and is 404.
 */
function methodRoute(prefix: string): Middleware {
  return (ctx) => {
    const path = (ctx as AppContext).state.path;
    if (path.length === prefix.length) throw new DoesNotExistError(`No route for ${ctx.method} ${path.slice(0, 200)}`);
    const name = path.slice(prefix.length);
    return callMethod(ctx as AppContext, name.includes('%') ? decodeURIComponent(name) : name);
  };
}

/**
 * Builds the routes of v1 (`/api/...` and `/api/v1/...`) and v2 (`/api/v2/...`): one router per family of paths, picked
 * by prefix, so a request is matched against its family's few patterns rather than every route.
 */
export function createApiRouter(): Middleware {
  const resource = dispatcher(resourceRouter());
  const document = dispatcher(documentRouter());
  const routes = FAMILIES.map(([prefix, family]) => {
    const route = family === 'resource' ? resource : family === 'document' ? document : methodRoute(prefix);
    return [prefix, route] as const;
  });
  return function apiRouter(ctx, next) {
    const path = (ctx as AppContext).state.path;
    // The router keeps undecodable segments as raw text; a malformed escape (`%`, `%C0%AF`) is a bad request instead.
    if (path.includes('%')) {
      try {
        decodeURIComponent(path);
      } catch {
        throw new BadRequestError('Malformed percent-encoding in the URL path');
      }
    }
    for (const [prefix, route] of routes) if (path.startsWith(prefix)) return route(ctx, next);
    throw new DoesNotExistError(`No route for ${ctx.method} ${path.slice(0, 200)}`);
  };
}
