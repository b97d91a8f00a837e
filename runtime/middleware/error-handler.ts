// createErrorHandler: the outermost middleware; every thrown error is rendered here and nowhere else.
import type { Middleware } from 'koa';
import { asUnavailable } from '../db/unavailable';
import { renderError } from '../errors/render-error';
import { versionOf, type AppContext } from '../http/state';

/** Options of the error handler. */
export interface ErrorHandlerOptions {
  developerMode: boolean;
  /** Called with every 5xx error (logging). */
  onServerError?: (err: unknown, ctx: AppContext) => void;
}

/** Renders thrown errors as Frappe-shaped JSON with the right status; never leaks stacks or SQL outside developer mode. */
export function createErrorHandler(options: ErrorHandlerOptions): Middleware {
  return async function errorHandler(ctx, next) {
    try {
      await next();
    } catch (thrown) {
      const err = asUnavailable(thrown, ctx.state.site?.db);
      const rendered = renderError(err, {
        version: versionOf(ctx.path),
        developerMode: options.developerMode,
      });
      // An outage is logged once by the database's health (a line per state change), not a stack per request.
      if (rendered.status >= 500 && rendered.status !== 503) options.onServerError?.(err, ctx);
      ctx.status = rendered.status;
      for (const [name, value] of Object.entries(rendered.headers)) ctx.set(name, value);
      ctx.set('Cache-Control', 'no-store,no-cache,must-revalidate,max-age=0');
      ctx.body = rendered.body;
    }
  };
}
