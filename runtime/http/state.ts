// The typed request state every middleware and handler shares.
import type { Context, DefaultState } from 'koa';
import type { Logger } from 'pino';
// koa-body's own augmentation types the parsed body (`ctx.request.body`); this brings it into every program that has the state.
import type {} from 'koa-body';
import type { QueryParams } from './params';
import type { RouteMatch } from './route-row';
import type { SessionUser, Site } from '../site';

/** What a session holds (runtime/auth/sessions.ts keeps them; `ctx.state.session` under session authentication). */
export interface SessionData {
  sid: string;
  user: string;
  csrfToken: string;
  ip: string;
  /** Last use, ms since epoch. */
  lastUpdated: number;
}

/** How the request authenticated. */
export type AuthMethod = 'guest' | 'session' | 'token' | 'bearer' | 'hook';

declare module 'koa' {
  /**
   * State set on `ctx.state` by the middleware chain. Declared here, once, as Koa's own state type, so every Koa
   * context (and every middleware's `ctx`) carries it without a cast.
   */
  interface DefaultState {
    site: Site;
    /** The request's id: its sane `X-Request-Id`, else one made for it (runtime/log/request-id.ts). */
    requestId: string;
    /** The request's logger, once made (`requestLogger`). */
    log?: Logger;
    /** The request path (`ctx.path`, which parses the URL again on every read), read once. */
    path: string;
    /** API version from the path: /api/v2 is 2, /api/ and /api/v1 are 1. */
    version: 1 | 2;
    user: SessionUser;
    auth: AuthMethod;
    /** The session, under session authentication. */
    session?: SessionData;
    /** The bearer token's scopes, under bearer authentication. */
    scopes?: readonly string[];
    /** Messages for the user, sent as `_server_messages` (v1) or `messages` (v2). */
    messages: string[];
    /** The parsed query string, once read (`queryParams`). */
    query?: QueryParams;
    /** The route table's row the path and verb select, with its captures; unset when none does (404/405). */
    route?: RouteMatch;
    /** The client IP, once worked out (`clientIp`). */
    clientIp?: string;
  }
}

/** State set on `ctx.state` by the middleware chain (Koa's state, as the augmentation above declares it). */
export type RequestState = DefaultState;

/** A Koa context with our state (Koa's own `Context`, whose state the augmentation above types). */
export type AppContext = Context;

/** The API version a path selects. */
export function versionOf(path: string): 1 | 2 {
  return path.startsWith('/api/v2/') || path === '/api/v2' ? 2 : 1;
}
