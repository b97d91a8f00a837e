// createAuthenticate: resolves the request's user from the Authorization header or the session cookie, failing closed.
import type { Middleware } from 'koa';
import { userForApiKey } from '../auth/api-keys';
import { parseSessionExpiry, resumeSession } from '../auth/sessions';
import { loadUser } from '../auth/users';
import { loadSettings } from '../auth/settings';
import { AuthenticationError, InvalidAuthorizationToken } from '../errors/errors';
import type { AppContext } from '../http/state';
import { GUEST, type Site } from '../site';

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
        throw new InvalidAuthorizationToken('Failed to decode token, please provide a valid base64-encoded token.');
      }
      return keyPair(Buffer.from(value, 'base64').toString('utf8'));
    }
    case 'bearer':
      if (!/^[A-Za-z0-9._~+/=-]{1,512}$/.test(value)) throw new InvalidAuthorizationToken('Invalid bearer token');
      return { kind: 'bearer', token: value };
    default:
      throw new InvalidAuthorizationToken(`Unsupported authorization scheme ${scheme.slice(0, 20)}`);
  }
}

async function bearerUser(site: Site, token: string): Promise<string | undefined> {
  if (!site.registry.get('OAuth Bearer Token')) return undefined;
  const row = (await site.db.knex('tabOAuth Bearer Token').where('access_token', token).first('user', 'status', 'expiration_time')) as
    | { user: string; status: string; expiration_time: string | null }
    | undefined;
  if (!row || row.status === 'Revoked') return undefined;
  if (row.expiration_time && Date.parse(`${String(row.expiration_time).replace(' ', 'T')}Z`) <= Date.now()) return undefined;
  return row.user;
}

/** Sets `ctx.state.user` and `ctx.state.auth`. A header that does not authenticate is 401, never a silent Guest. */
export function createAuthenticate(): Middleware {
  return async function authenticate(ctx, next) {
    const state = (ctx as AppContext).state;
    const { site } = state;
    const q = site.db.knex;
    const sid = ctx.cookies.get('sid');
    const header = ctx.get('authorization');
    let userName: string | undefined;
    if (header) {
      const credentials = parseAuthorization(header);
      if (credentials.kind === 'key') {
        userName = await userForApiKey(q, credentials.key, credentials.secret);
        if (!userName) throw new AuthenticationError('Invalid API key or secret');
        state.auth = 'token';
      } else {
        userName = await bearerUser(site, credentials.token);
        if (!userName) throw new AuthenticationError('Invalid or expired bearer token', { headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' } });
        state.auth = 'bearer';
      }
      if (sid && sid !== 'Guest') {
        const session = await resumeSession(q, sid, parseSessionExpiry((await loadSettings(site)).session_expiry));
        if (session && session.user !== userName) throw new AuthenticationError('The session cookie and the Authorization header name different users');
      }
    } else if (sid && sid !== 'Guest') {
      const session = await resumeSession(q, sid, parseSessionExpiry((await loadSettings(site)).session_expiry));
      if (session) {
        userName = session.user;
        state.auth = 'session';
        state.session = session;
      } else {
        ctx.cookies.set('sid', null);
      }
    }
    if (userName) {
      const user = await loadUser(q, userName);
      if (!user || !user.enabled) throw new AuthenticationError('User disabled or missing');
      state.user = user;
    } else {
      state.user = GUEST;
      state.auth = 'guest';
    }
    await next();
  };
}
