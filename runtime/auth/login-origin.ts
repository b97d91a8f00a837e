// Login CSRF: a password login posted from another site's page (its Origin or Referer names another host) is refused,
// so a cross-site form cannot sign a victim's browser into the attacker's account.
import { CSRFTokenError } from '../errors/errors';
import type { AppContext } from '../http/state';

/** The host (`name[:port]`) of a URL, or undefined when `value` is not an absolute URL (`Origin: null` included). */
function hostOf(value: string): string | undefined {
  try {
    return new URL(value).host || undefined;
  } catch {
    return undefined;
  }
}

/**
 * True unless the request's Origin (else Referer) is another site: not the request's own host, not site config
 * `host_name`, and not one of `allowed_referrers`. A request with neither header (API clients, curl) is same-site:
 * browsers send Origin with every cross-site POST and every WebSocket handshake.
 */
export function fromSameSite(ctx: AppContext): boolean {
  const source = ctx.get('origin') || ctx.get('referer');
  if (!source) return true;
  const conf = ctx.state.site.config.site;
  if (conf.allowed_referrers.some((r) => source === r || source.startsWith(r.endsWith('/') ? r : `${r}/`)))
    return true;
  const host = hostOf(source);
  const own = [ctx.host, conf.host_name ? hostOf(conf.host_name) : undefined];
  return host !== undefined && own.includes(host);
}

/** Throws 400 CSRFTokenError when the login request comes from another site (`fromSameSite`). */
export function assertSameSiteLogin(ctx: AppContext): void {
  if (!fromSameSite(ctx)) throw new CSRFTokenError('Sign-in refused: the request came from another site');
}
