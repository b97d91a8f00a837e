// createErrorHandler: the outermost middleware; every thrown error is rendered here and nowhere else.
import type { Middleware } from 'koa';
import { BatchRolledBackError } from '../db/write-transaction';
import { deadlockVictimError, isBusyReason, isDeadlockError, unavailableReason } from '../db/unavailable';
import { AppError, InternalServerError, ServiceUnavailableError } from '../errors/errors';
import { renderError } from '../errors/render-error';
import { versionOf, type AppContext } from '../http/state';

/** Options of the error handler. */
export interface ErrorHandlerOptions {
  developerMode: boolean;
  /** Called with every 5xx error (logging). */
  onServerError?: (err: unknown, ctx: AppContext) => void;
}

/** Seconds a client is told to wait (Retry-After) while the database is unavailable. */
const DATABASE_RETRY_AFTER_S = 5;

/** A database error that means "unavailable" becomes 503 with Retry-After, reported to the database's health. */
function asUnavailable(err: unknown, ctx: AppContext): unknown {
  if (err instanceof AppError && !(err instanceof InternalServerError)) return err;
  // Another write of the same group commit ended the transaction (a deadlock, say): this request's own write was
  // sound and undone, so the client retries; the database is not down, so its health is not told.
  if (err instanceof BatchRolledBackError)
    return new ServiceUnavailableError('The write was rolled back with others of its transaction; retry', {
      cause: err,
      headers: { 'Retry-After': '1' },
    });
  const db = ctx.state.site?.db;
  // The victim of a deadlock (the server rolled its transaction back): sound too, and the database is not down.
  if (db && isDeadlockError(err, db.errors)) return deadlockVictimError(err);
  const reason = unavailableReason(err, db?.errors);
  if (!reason) return err;
  // A lock or statement wait that ran out: the server answers, so its health is not told (no outage line, svc_db_up).
  if (isBusyReason(reason))
    return new ServiceUnavailableError('The database is busy; retry shortly', {
      cause: err,
      headers: { 'Retry-After': '1' },
    });
  db?.health.reportUnavailable(reason);
  return new ServiceUnavailableError('The database is unavailable or busy; retry shortly', {
    cause: err,
    headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_S) },
  });
}

/** Renders thrown errors as Frappe-shaped JSON with the right status; never leaks stacks or SQL outside developer mode. */
export function createErrorHandler(options: ErrorHandlerOptions): Middleware {
  return async function errorHandler(ctx, next) {
    try {
      await next();
    } catch (thrown) {
      const err = asUnavailable(thrown, ctx);
      const rendered = renderError(err, {
        version: versionOf(ctx.path),
        developerMode: options.developerMode,
      });
      // An outage is logged once by the database's health (a line per state change), not a stack per request.
      if (rendered.status >= 500 && rendered.status !== 503) options.onServerError?.(err, ctx);
      ctx.status = rendered.status;
      for (const [name, value] of Object.entries(rendered.headers)) ctx.set(name, value);
      ctx.set('Cache-Control', 'no-store,no-cache,must-revalidate,max-age=0');
      ctx.body = rendered.body;
    }
  };
}
