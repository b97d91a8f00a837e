// GET /api/metrics: the Prometheus exposition of the site's and the process's metrics (runtime/metrics). Closed to the
// world by default: it reveals traffic, error rates and pool sizes, so only Administrator and users holding a role of
// site config `metrics_roles` (default System Manager) read it. A scraper signs in with a user's API key
// (`Authorization: token key:secret`); putting `Guest` in `metrics_roles` opens it to anyone who reaches the port.
import type { AppContext } from '../http/state';
import { METRICS_CONTENT_TYPE, metricsText } from '../metrics/site-metrics';
import { refusal } from '../permissions/doctype-permission';
import { ADMINISTRATOR } from '../site';

/** True when the request's user may read the metrics. */
function mayRead(ctx: AppContext): boolean {
  const { user, site } = ctx.state;
  return user.name === ADMINISTRATOR || site.config.site.metrics_roles.some((role) => user.roles.has(role));
}

/** GET /api/metrics: 200 with the exposition text; 401 for a Guest, 403 for a user without a metrics role. */
export async function metrics(ctx: AppContext): Promise<void> {
  if (!mayRead(ctx)) throw refusal(ctx.state.user, 'Not permitted to read the metrics');
  const text = await metricsText(ctx.state.site);
  ctx.status = 200;
  ctx.type = METRICS_CONTENT_TYPE;
  ctx.body = text;
}
