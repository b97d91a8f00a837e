// createCsrf: under session authentication, every POST/PUT/PATCH/DELETE must carry the session's CSRF token.
import { timingSafeEqual } from 'node:crypto';
import type { Middleware } from 'koa';
import { CSRFTokenError } from '../errors/errors';
import type { AppContext } from '../http/state';

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Options of the CSRF check. */
export interface CsrfOptions {
  ignoreCsrf: boolean;
  allowedReferrers: string[];
  /** Paths that need no token (login starts a session; it has none yet). */
  exempt: ReadonlySet<string>;
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Refuses unsafe requests under session auth whose token is missing or wrong (400 CSRFTokenError). */
export function createCsrf(options: CsrfOptions): Middleware {
  return function csrf(ctx, next) {
    const state = (ctx as AppContext).state;
    if (state.auth === 'session' && UNSAFE.has(ctx.method) && !options.ignoreCsrf && !options.exempt.has(state.path.replace(/\/+$/, ''))) {
      const referrer = ctx.get('origin') || ctx.get('referer');
      const allowed = referrer !== '' && options.allowedReferrers.some((r) => referrer === r || referrer.startsWith(r.endsWith('/') ? r : `${r}/`));
      if (!allowed) {
        const body = (ctx.request as { body?: Record<string, unknown> }).body;
        const sent = ctx.get('x-svc-csrf-token') || ctx.get('x-frappe-csrf-token') || (typeof body?.csrf_token === 'string' ? body.csrf_token : '');
        if (!sent || !state.session || !same(sent, state.session.csrfToken)) throw new CSRFTokenError('Invalid Request: missing or wrong CSRF token');
      }
    }
    return next();
  };
}
