// The session CSRF token check: under session authentication, an unsafe request carries the session's token (header
// or form field) or comes from an allowed referrer. The csrf middleware runs it for every route that does not waive it;
// a handler that reads its own body (upload_file's multipart form) runs it itself, and an API script called without
// the token runs read-only.
import { timingSafeEqual } from 'node:crypto';
import { CSRFTokenError } from '../errors/errors';
import type { AppContext } from '../http/state';

/** The verbs that change something, and so need the token. */
export const UNSAFE_VERBS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The site's CSRF settings (site config `ignore_csrf`, `allowed_referrers`). */
export interface CsrfSettings {
  ignoreCsrf: boolean;
  allowedReferrers: string[];
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * True when the request carries its session's CSRF token (header, or `formToken`: the body's `csrf_token`), comes from
 * an allowed referrer, or the site turns the check off.
 */
export function carriesCsrfToken(ctx: AppContext, settings: CsrfSettings, formToken: unknown): boolean {
  if (settings.ignoreCsrf) return true;
  const referrer = ctx.get('origin') || ctx.get('referer');
  const allowed =
    referrer !== '' &&
    settings.allowedReferrers.some(
      (r) => referrer === r || referrer.startsWith(r.endsWith('/') ? r : `${r}/`),
    );
  if (allowed) return true;
  const sent =
    ctx.get('x-svc-csrf-token') ||
    ctx.get('x-frappe-csrf-token') ||
    (typeof formToken === 'string' ? formToken : '');
  const session = ctx.state.session;
  return sent !== '' && session !== undefined && same(sent, session.csrfToken);
}

/**
 * Throws CSRFTokenError unless the session request carries its token (see carriesCsrfToken). Other requests (no
 * session, a safe verb) pass.
 */
export function assertCsrfToken(ctx: AppContext, settings: CsrfSettings, formToken: unknown): void {
  if (ctx.state.auth !== 'session' || !UNSAFE_VERBS.has(ctx.method)) return;
  if (!carriesCsrfToken(ctx, settings, formToken))
    throw new CSRFTokenError('Invalid Request: missing or wrong CSRF token');
}
