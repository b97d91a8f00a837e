// The OpenID issuer: the site's base URL, from site config `host_name` or else the request's scheme and host.
import { isHttps } from '../auth/client-ip';
import type { AppContext } from '../http/state';

/**
 * The issuer (`iss`) and the base of every endpoint in the discovery document. Set `host_name` in production: without
 * it the issuer follows the request's Host header, which a client then has to pin itself.
 */
export function issuerOf(ctx: AppContext): string {
  const configured = ctx.state.site.config.site.host_name;
  if (typeof configured === 'string' && configured) return configured.replace(/\/+$/, '');
  return `${isHttps(ctx) ? 'https' : 'http'}://${ctx.host}`;
}
