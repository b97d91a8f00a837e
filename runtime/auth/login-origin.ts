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
 * Throws 400 CSRFTokenError when the login request's Origin (else Referer) is another site: not the request's own host,
 * not site config `host_name`, and not one of `allowed_referrers`. A request with neither header (API clients, curl)
 * passes: browsers send Origin with every cross-site POST.
 */
export function assertSameSiteLogin(ctx: AppContext): void {
  const source = ctx.get('origin') || ctx.get('referer');
  if (!source) return;
  const conf = ctx.state.site.config.site;
  if (conf.allowed_referrers.some((r) => source === r || source.startsWith(r.endsWith('/') ? r : `${r}/`)))
    return;
  const host = hostOf(source);
  const own = [ctx.host, conf.host_name ? hostOf(conf.host_name) : undefined];
  if (host === undefined || !own.includes(host))
    throw new CSRFTokenError('Sign-in refused: the request came from another site');
}
