// The session CSRF token check: under session authentication, an unsafe request carries the session's token (header
// or form field) or comes from an allowed referrer. The csrf middleware runs it for every route that does not waive it;
// a handler that reads its own body (upload_file's multipart form) runs it itself.
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
 * Throws CSRFTokenError unless the session request carries its token (header, or `formToken`: the body's
 * `csrf_token`) or comes from an allowed referrer. Other requests (no session, a safe verb) pass.
 */
export function assertCsrfToken(ctx: AppContext, settings: CsrfSettings, formToken: unknown): void {
  const state = ctx.state;
  if (state.auth !== 'session' || !UNSAFE_VERBS.has(ctx.method) || settings.ignoreCsrf) return;
  const referrer = ctx.get('origin') || ctx.get('referer');
  const allowed =
    referrer !== '' &&
    settings.allowedReferrers.some(
      (r) => referrer === r || referrer.startsWith(r.endsWith('/') ? r : `${r}/`),
    );
  if (allowed) return;
  const sent =
    ctx.get('x-svc-csrf-token') ||
    ctx.get('x-frappe-csrf-token') ||
    (typeof formToken === 'string' ? formToken : '');
  if (!sent || !state.session || !same(sent, state.session.csrfToken))
    throw new CSRFTokenError('Invalid Request: missing or wrong CSRF token');
}
