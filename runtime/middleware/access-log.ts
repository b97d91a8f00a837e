// createAccessLog: with site config `access_log` on, one JSON line per request once its answer is decided (request id,
// verb, path without the query string, status, milliseconds, user), through the request's logger. Off by default: the
// log is written synchronously, which costs every request a write.
import type { Middleware } from 'koa';
import { requestLogger } from '../http/request-logger';

/** Logs every request at `info`. */
export function createAccessLog(): Middleware {
  return async function accessLog(ctx, next) {
    const started = performance.now();
    try {
      await next();
    } finally {
      const state = ctx.state;
      requestLogger(ctx).info(
        {
          event: 'request',
          method: ctx.method,
          path: state.path.slice(0, 1000),
          status: ctx.status,
          ms: Math.round((performance.now() - started) * 1000) / 1000,
          user: state.user.name,
        },
        'request',
      );
    }
  };
}
