// createRequestMetrics: counts every answered request by route family, verb and status, and times it, into the site's
// Prometheus metrics (runtime/metrics/site-metrics.ts). Outside the error handler, so errors count with their status.
import type { Middleware } from 'koa';
import { siteMetrics } from '../metrics/site-metrics';
import type { Site } from '../site';

/** Records each request of `site` once its answer is decided. */
export function createRequestMetrics(site: Site): Middleware {
  const { requests } = siteMetrics(site);
  return async function requestMetrics(ctx, next) {
    const started = performance.now();
    try {
      await next();
    } finally {
      const route = ctx.state.route?.row.operation ?? 'none';
      requests.record(route, ctx.method, ctx.status, (performance.now() - started) / 1000);
    }
  };
}
