// The API routes: a fixed set of paths that dispatch by DocType through the registry map (cost independent of DocType count).
import Router from '@koa/router';
import type { Middleware } from 'koa';
import { BadRequestError, DoesNotExistError, MethodNotAllowedError } from '../errors/errors';
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
  const fromQuery = ctx.query.run_method;
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

/** Builds the router for v1 (`/api/...` and `/api/v1/...`) and v2 (`/api/v2/...`). */
export function createApiRouter(): Middleware {
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
    router.all(`${prefix}/method/*method`, h((ctx, p) => callMethod(ctx, p.method as string)));
  }
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
  router.all(`${v2}/method/*method`, h((ctx, p) => callMethod(ctx, p.method as string)));

  const routes = router.routes();
  const allowed = router.allowedMethods();
  return async function apiRouter(ctx, next) {
    // The router keeps undecodable segments as raw text; a malformed escape (`%`, `%C0%AF`) is a bad request instead.
    try {
      decodeURIComponent(ctx.path);
    } catch {
      throw new BadRequestError('Malformed percent-encoding in the URL path');
    }
    await routes(ctx as never, async () => {
      await allowed(ctx as never, next);
      if (ctx.status === 405) {
        throw new MethodNotAllowedError(`${ctx.method} is not allowed on ${ctx.path}`, { headers: { Allow: ctx.response.get('Allow') } });
      }
      if ((ctx.status === 404 && !ctx.body) || ctx.status === 501) throw new DoesNotExistError(`No route for ${ctx.method} ${ctx.path.slice(0, 200)}`);
    });
  };
}
