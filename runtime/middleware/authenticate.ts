// createAuthenticate: resolves the request's user from the Authorization header, the session cookie or auth hooks, failing closed.
import { ServerResponse, type IncomingMessage } from 'node:http';
import Koa, { type Middleware } from 'koa';
import { userForApiKey, verifiedApiKeyUser } from '../auth/api-keys';
import type { AuthHook } from '../auth/auth-hooks';
import { bearerGrant, cachedBearerGrant, type BearerGrant } from '../auth/bearer-tokens';
import { clientIp } from '../auth/client-ip';
import { ipAllowed } from '../auth/ip-restriction';
import { keySource } from '../auth/key-sources';
import { parseSessionExpiry, resumeSession } from '../auth/sessions';
import { loadSettings } from '../auth/settings';
import { cachedUser, loadUser } from '../auth/users';
import { fromSameSite } from '../auth/login-origin';
import { AuthenticationError, CSRFTokenError, InvalidAuthorizationToken } from '../errors/errors';
import type { AppContext, RequestState } from '../http/state';
import { GUEST, type SessionUser, type Site } from '../site';

/** Credentials parsed from an Authorization header. */
export type Credentials = { kind: 'key'; key: string; secret: string } | { kind: 'bearer'; token: string };

const KEY = /^[A-Za-z0-9_-]{1,140}$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

function keyPair(text: string): Credentials {
  const colon = text.indexOf(':');
  const key = text.slice(0, colon);
  const secret = text.slice(colon + 1);
  if (colon < 0 || !KEY.test(key) || !KEY.test(secret)) {
    throw new InvalidAuthorizationToken('Invalid authorization token: expected <api_key>:<api_secret>');
  }
  return { kind: 'key', key, secret };
}

/** Parses an Authorization header strictly: `token key:secret`, `Basic base64(key:secret)` or `Bearer token`. */
export function parseAuthorization(header: string): Credentials {
  const space = header.indexOf(' ');
  const scheme = space < 0 ? header : header.slice(0, space);
  const value = space < 0 ? '' : header.slice(space + 1);
  if (!value || /\s/.test(value)) throw new InvalidAuthorizationToken('Invalid authorization header');
  switch (scheme.toLowerCase()) {
    case 'token':
      return keyPair(value);
    case 'basic': {
      if (!BASE64.test(value) || value.length % 4 !== 0) {
        throw new InvalidAuthorizationToken(
          'Failed to decode token, please provide a valid base64-encoded token.',
        );
      }
      return keyPair(Buffer.from(value, 'base64').toString('utf8'));
    }
    case 'bearer':
      if (!/^[A-Za-z0-9._~+/=-]{1,512}$/.test(value))
        throw new InvalidAuthorizationToken('Invalid bearer token');
      return { kind: 'bearer', token: value };
    default:
      throw new InvalidAuthorizationToken(`Unsupported authorization scheme ${scheme.slice(0, 20)}`);
  }
}

/** Options of the authentication middleware. */
export interface AuthenticateOptions {
  /** App-provided hooks, run in order after the built-in methods. */
  authHooks: readonly AuthHook[];
  /**
   * True when the request's route reads OAuth client credentials from the Authorization header, not a user's
   * (app.ts: the built-in methods marked `clientAuth`, the OAuth token, revoke and introspect endpoints).
   */
  clientCredentials: (state: RequestState) => boolean;
  /**
   * False for a check of credentials already in use (an open socket's or stream's): a session is read without counting
   * as activity, so a held connection never keeps an idle session alive. Default true.
   */
  touchSessions?: boolean;
}

const INVALID_BEARER = { 'WWW-Authenticate': 'Bearer error="invalid_token"' };

/** Resolves the Authorization header to a user name, or throws 401; sets the auth method (and a bearer's scopes). */
async function headerUser(ctx: AppContext, header: string): Promise<string> {
  const state = ctx.state;
  const credentials = parseAuthorization(header);
  if (credentials.kind === 'bearer') {
    const grant = await bearerGrant(state.site, credentials.token);
    if (!grant) throw new AuthenticationError('Invalid or expired bearer token', { headers: INVALID_BEARER });
    state.auth = 'bearer';
    state.scopes = grant.scopes;
    return grant.user;
  }
  const source = keySource(
    state.site.registry,
    ctx.get('svc-authorization-source') || ctx.get('frappe-authorization-source'),
  );
  if (source === null) throw new AuthenticationError('Invalid authorization source');
  const user = await userForApiKey(state.site.db.knex, credentials.key, credentials.secret, source);
  if (!user) throw new AuthenticationError('Invalid API key or secret');
  state.auth = 'token';
  return user;
}

/** Runs the auth hooks; a hook naming a user other than the one already authenticated is a conflict (401). */
async function hookUser(
  ctx: AppContext,
  hooks: readonly AuthHook[],
  current: string | undefined,
): Promise<string | undefined> {
  const request = {
    headers: ctx.headers,
    method: ctx.method,
    path: ctx.path,
    ip: clientIp(ctx),
    user: current ?? GUEST.name,
  };
  for (const hook of hooks) {
    let named: unknown;
    try {
      named = await hook(request);
    } catch (err) {
      throw new AuthenticationError(
        err instanceof AuthenticationError ? err.message : 'Authentication refused by an auth hook',
        { cause: err },
      );
    }
    if (typeof named !== 'string' || named === '' || named === GUEST.name) continue;
    if (current && named !== current)
      throw new AuthenticationError('An auth hook and the request credentials name different users');
    if (!current) ctx.state.auth = 'hook';
    return named;
  }
  return current;
}

/**
 * Sets the user of a request whose only credentials are an Authorization header verified moments ago and cached: a
 * `token`/`Basic` key pair (no key source header) or a Bearer token, with no cookie and no auth hooks: the common
 * API-client case, answered without a database read, hash or await. False sends the request through the full path,
 * which also produces every error.
 */
function cachedHeaderUser(ctx: AppContext, header: string): boolean {
  if (ctx.headers.cookie) return false;
  let credentials: Credentials;
  try {
    credentials = parseAuthorization(header);
  } catch {
    return false;
  }
  const state = ctx.state;
  let name: string | undefined;
  let grant: BearerGrant | undefined;
  if (credentials.kind === 'key') {
    if (ctx.headers['svc-authorization-source'] || ctx.headers['frappe-authorization-source']) return false;
    name = verifiedApiKeyUser(credentials.key, credentials.secret);
  } else {
    grant = cachedBearerGrant(state.site, credentials.token);
    name = grant?.user;
  }
  const user = name === undefined ? undefined : cachedUser(name);
  if (!user || !user.enabled || user.restrictIp) return false;
  state.user = user;
  if (grant) {
    state.auth = 'bearer';
    state.scopes = grant.scopes;
  } else state.auth = 'token';
  return true;
}

/**
 * Sets `ctx.state.user` and `ctx.state.auth` from the Authorization header, the session cookie, then the auth hooks.
 * A header that does not authenticate is 401, never a silent Guest; so are a disabled user and a refused IP.
 */
export function createAuthenticate(options: AuthenticateOptions): Middleware {
  const hooks = options.authHooks.length > 0;
  return function authenticate(ctx, next) {
    const header = ctx.headers.authorization;
    if (header && options.clientCredentials(ctx.state)) return fullAuthenticate(ctx, next, options);
    if (header && !hooks && cachedHeaderUser(ctx, header)) return next();
    return fullAuthenticate(ctx, next, options);
  };
}

/** Every other request: header, session cookie and hooks, with their database reads and every refusal. */
async function fullAuthenticate(
  ctx: AppContext,
  next: () => Promise<unknown>,
  options: AuthenticateOptions,
): Promise<void> {
  const state = ctx.state;
  const { site } = state;
  const sid = ctx.headers.cookie ? ctx.cookies.get('sid') : undefined;
  // The OAuth endpoints read client credentials from the header themselves; the user comes from the cookie, if any.
  const header = options.clientCredentials(ctx.state) ? '' : ctx.get('authorization');
  let userName: string | undefined;
  if (header) userName = await headerUser(ctx, header);
  if (sid && sid !== GUEST.name) {
    const session = await resumeSession(
      site,
      sid,
      parseSessionExpiry((await loadSettings(site)).session_expiry),
      options.touchSessions !== false,
    );
    if (!session) {
      if (!header) ctx.cookies.set('sid', null);
    } else if (userName === undefined) {
      userName = session.user;
      state.auth = 'session';
      state.session = session;
    } else if (session.user !== userName) {
      throw new AuthenticationError('The session cookie and the Authorization header name different users');
    }
  }
  if (options.authHooks.length) userName = await hookUser(ctx, options.authHooks, userName);
  if (userName) {
    const user = await loadUser(site.db.knex, userName);
    if (!user || !user.enabled)
      throw new AuthenticationError(
        'User disabled or missing',
        state.auth === 'bearer' ? { headers: INVALID_BEARER } : undefined,
      );
    if (user.restrictIp && !ipAllowed(user.restrictIp, clientIp(ctx)))
      throw new AuthenticationError('Access not allowed from this IP Address');
    state.user = user;
  } else {
    state.user = GUEST;
    state.auth = 'guest';
  }
  await next();
}

/**
 * Authenticates a request outside the middleware chain, as the authenticate middleware would: the user (Guest without
 * credentials), or a 401 thrown. Socket handshakes use it, and open sockets and event streams to check again that
 * their credentials still hold (a session logged out, a token revoked, a key regenerated).
 */
export type RequestAuthenticator = (site: Site, req: IncomingMessage) => Promise<SessionUser>;

/**
 * The authenticator of bare requests, with the auth hooks of the application. `sameSiteOnly`: a page of another site
 * is refused (403) before the credentials are read (a socket handshake with the user's cookie: cross-site WebSocket
 * hijacking).
 */
export function createRequestAuthenticator(options: {
  authHooks: readonly AuthHook[];
  sameSiteOnly?: boolean;
  /** AuthenticateOptions.touchSessions: false for the checks of open connections. */
  touchSessions?: boolean;
}): RequestAuthenticator {
  const authenticate = createAuthenticate({
    authHooks: options.authHooks,
    clientCredentials: () => false,
    ...(options.touchSessions === false ? { touchSessions: false } : {}),
  });
  const koa = new Koa({ proxy: false });
  return async (site, req) => {
    const ctx = koa.createContext(req, new ServerResponse(req));
    const state = ctx.state;
    state.site = site;
    state.path = ctx.path;
    state.version = 2;
    state.user = GUEST;
    state.auth = 'guest';
    state.messages = [];
    if (options.sameSiteOnly && !fromSameSite(ctx))
      throw new CSRFTokenError('Connection refused: the page is on another site');
    await authenticate(ctx, () => Promise.resolve());
    return state.user;
  };
}
