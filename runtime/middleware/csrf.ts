// createCsrf: under session authentication, every POST/PUT/PATCH/DELETE must carry the session's CSRF token.
import { timingSafeEqual } from 'node:crypto';
import type { Middleware } from 'koa';
import { CSRFTokenError } from '../errors/errors';
import { bodyObject } from '../http/params';
import type { AppContext, RequestState } from '../http/state';
import { BUILTIN_METHODS } from '../methods/builtins';
import { methodName } from '../routes/method-routes';

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Options of the CSRF check. */
export interface CsrfOptions {
  ignoreCsrf: boolean;
  allowedReferrers: string[];
}

/** True when the request's route asks no token: its row says `csrf: false`, or it calls a built-in method that does. */
function exempt(state: RequestState): boolean {
  const route = state.route;
  if (!route) return false;
  if (route.row.csrf === false) return true;
  return (
    route.row.operation === 'method' &&
    BUILTIN_METHODS.get(methodName(route.params.method, state.version))?.csrf === false
  );
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
export function carriesCsrfToken(ctx: AppContext, options: CsrfOptions, formToken: unknown): boolean {
  if (options.ignoreCsrf) return true;
  const referrer = ctx.get('origin') || ctx.get('referer');
  const allowed =
    referrer !== '' &&
    options.allowedReferrers.some(
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
 * Throws CSRFTokenError unless the session request carries its token (see carriesCsrfToken). Also called by handlers
 * that read their own body (upload_file).
 */
export function assertCsrfToken(ctx: AppContext, options: CsrfOptions, formToken: unknown): void {
  if (ctx.state.auth !== 'session' || !UNSAFE.has(ctx.method)) return;
  if (!carriesCsrfToken(ctx, options, formToken))
    throw new CSRFTokenError('Invalid Request: missing or wrong CSRF token');
}

/** Refuses unsafe requests under session auth whose token is missing or wrong (400 CSRFTokenError). */
export function createCsrf(options: CsrfOptions): Middleware {
  return function csrf(ctx, next) {
    const state = ctx.state;
    if (state.auth === 'session' && UNSAFE.has(ctx.method) && !options.ignoreCsrf && !exempt(state)) {
      assertCsrfToken(ctx, options, bodyObject(ctx)?.csrf_token);
    }
    return next();
  };
}
