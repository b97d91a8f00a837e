// Builds the Koa application: it only composes the middleware factories, in order; and attaches the realtime
// (socket.io) to an HTTP server, its handshakes authenticated by the same middleware as requests.
import type { IncomingMessage, Server } from 'node:http';
import Koa from 'koa';
import { attachSocketServer, type RealtimeServer } from './events/socket-server';
import { trackRequest } from './jobs/pacing';
import { versionOf, type AppContext } from './http/state';
import { describeError } from './errors/log-error';
import { loadAuthHooks, type AuthHook } from './auth/auth-hooks';
import { createAuthenticate, createRequestAuthenticator } from './middleware/authenticate';
import { createBodyParser } from './middleware/body-parser';
import { UPLOAD_FORM_ROOM } from './files/upload-file';
import { createCsrf } from './middleware/csrf';
import { createAccessLog } from './middleware/access-log';
import { createErrorHandler } from './middleware/error-handler';
import { createRequestLog } from './middleware/request-log';
import { createRequestMetrics } from './middleware/request-metrics';
import { REQUEST_ID_HEADER, requestIdFor } from './log/request-id';
import { requestLogger } from './http/request-logger';
import { createResourceScopes } from './middleware/resource-scopes';
import { createWriteCoalescing } from './middleware/write-coalescing';
import { createRouteHandlers } from './routes/route-handlers';
import { createRouteMatcher } from './routes/route-matcher';
import { ROUTE_TABLE } from './routes/route-table';
import { takesClientCredentials, waivesCsrf } from './routes/route-waivers';
import { createRouteMatch, createRouter } from './routes/router';
import type { Site } from './site';
import { GUEST } from './site';

/** Options of the application. */
export interface AppOptions {
  /** Called with every 5xx error but 503 (default: an `error` line of the request's log: describeError, no SQL values). */
  onServerError?: (err: unknown, ctx: AppContext) => void;
  /** The generated folder whose openapi/ documents are served (default `generated`). */
  generatedDir?: string;
  /** Auth hooks (default: `authHooks` of `doctypes/hooks.ts`, or of `$SVC_DOCTYPES/hooks.ts`, when present). */
  authHooks?: readonly AuthHook[];
}

/** The default report of a server error: one `error` line of the request's log (no SQL values, no bodies). */
function logServerError(err: unknown, ctx: AppContext): void {
  requestLogger(ctx).error(
    {
      event: 'server_error',
      method: ctx.method,
      path: ctx.state.path.slice(0, 1000),
      err: describeError(err),
    },
    'server error',
  );
}

/** Creates the Koa app serving one site. Use `app.callback()` with supertest or `app.listen()`. */
export function createApp(site: Site, options: AppOptions = {}): Koa {
  const app = new Koa({ proxy: false });
  app.silent = true;
  const { site: conf } = site.config;
  const matcher = createRouteMatcher(ROUTE_TABLE);
  if (conf.coalesce_writes) app.use(createWriteCoalescing());
  // Background jobs in this process yield while requests are being handled (runtime/jobs/pacing.ts).
  app.use((_ctx, next) => trackRequest(next));
  app.use(function requestState(ctx, next) {
    const state = ctx.state;
    state.site = site;
    state.requestId = requestIdFor(ctx.req.headers['x-request-id']);
    // Set on Node's response itself: Koa's ctx.set builds two arrays and a pair per header (1-2 KB of garbage per
    // request for these three), and nothing is sent yet here.
    const res = ctx.res;
    res.setHeader(REQUEST_ID_HEADER, state.requestId);
    state.path = ctx.path;
    state.version = versionOf(state.path);
    state.user = GUEST;
    state.auth = 'guest';
    state.messages = [];
    res.setHeader('Cache-Control', 'no-store,no-cache,must-revalidate,max-age=0');
    // No answer of this service is meant to be sniffed into another type (HTML, script) by a browser.
    res.setHeader('X-Content-Type-Options', 'nosniff');
    return next();
  });
  if (conf.access_log) app.use(createAccessLog());
  app.use(createRequestMetrics(site));
  app.use(createRequestLog());
  app.use(
    createErrorHandler({
      developerMode: conf.developer_mode,
      onServerError: options.onServerError ?? logServerError,
    }),
  );
  app.use(
    createBodyParser({
      maxBodySize: conf.max_body_size,
      maxUploadSize: conf.max_file_size + UPLOAD_FORM_ROOM,
    }),
  );
  app.use(createRouteMatch(matcher));
  const authHooks = options.authHooks ?? loadAuthHooks();
  app.use(createAuthenticate({ authHooks, clientCredentials: takesClientCredentials }));
  app.use(
    createCsrf({
      ignoreCsrf: conf.ignore_csrf,
      allowedReferrers: conf.allowed_referrers,
      waived: waivesCsrf,
    }),
  );
  app.use(createResourceScopes());
  app.use(
    createRouter(
      matcher,
      createRouteHandlers({
        generatedDir: options.generatedDir ?? 'generated',
        authenticateAgain: createRequestAuthenticator({ authHooks, touchSessions: false }),
      }),
    ),
  );
  return app;
}

/**
 * Serves Frappe's realtime (socket.io) on `server` for `site`. A handshake authenticates as a request does (the
 * authenticate middleware itself, with the same auth hooks): sid cookie, Authorization header, else Guest.
 */
export function attachRealtime(
  server: Server,
  site: Site,
  options: Pick<AppOptions, 'authHooks'> = {},
): RealtimeServer {
  const authHooks = options.authHooks ?? loadAuthHooks();
  const authenticate = createRequestAuthenticator({ authHooks, sameSiteOnly: true });
  // An open socket's checks read its session without counting them as activity (it expires when idle).
  const again = createRequestAuthenticator({ authHooks, sameSiteOnly: true, touchSessions: false });
  return attachSocketServer(
    server,
    site,
    (req: IncomingMessage) => authenticate(site, req),
    (req: IncomingMessage) => again(site, req),
  );
}
