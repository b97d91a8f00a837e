// Frappe's built-in methods: ping, login, logout, get_logged_user, generate_keys, frappe.client.* and run_doc_method.
import { regenerateKeys } from '../auth/api-keys';
import { clientIp, isHttps } from '../auth/client-ip';
import { ipAllowed } from '../auth/ip-restriction';
import {
  assertNotLocked,
  attemptKeys,
  lockoutPolicy,
  recordFailure,
  recordSuccess,
} from '../auth/login-attempts';
import { createSession, endSession, parseSessionExpiry } from '../auth/sessions';
import { loadSettings } from '../auth/settings';
import { loadUser } from '../auth/users';
import { readAuth, verifyPassword } from '../auth/passwords';
import { AuthenticationError, DoesNotExistError, PermissionError, ValidationError } from '../errors/errors';
import { requestParams } from '../http/params';
import type { AppContext } from '../http/state';
import { OAUTH_METHODS } from '../oauth/oauth-methods';
import { ADMINISTRATOR } from '../site';
import * as client from './frappe-client';
import { runDocMethod } from './run-doc-method';
import { uploadFile } from '../files/upload-file';

/** A built-in method: its verbs, whether guests may call it, and the handler (returns the result). */
export interface BuiltinMethod {
  methods: readonly string[];
  allowGuest: boolean;
  handler: (ctx: AppContext) => Promise<unknown>;
  /** The result is the whole response body (login answers Frappe's top-level fields). */
  raw?: boolean;
  /** The canonical name (rate-limit bucket) when the method answers under several names. */
  path?: string;
  /** At most `limit` calls per `seconds` per caller. */
  rateLimit?: { limit: number; seconds: number };
  /** False: a session needs no CSRF token to call it (login, which starts the session). */
  csrf?: false;
  /** The Authorization header carries OAuth client credentials (the token endpoint's client_secret_basic), not a user's. */
  clientAuth?: true;
}

const SESSION_COOKIES = ['sid', 'system_user', 'full_name', 'user_id', 'user_image'];

function setLoginCookies(
  ctx: AppContext,
  sid: string,
  user: { name: string; fullName: string; userType: string },
  maxAge: number,
): void {
  const secure = isHttps(ctx);
  // Koa trusts only TLS sockets; behind a trusted proxy that terminated https, tell the cookie jar so.
  if (secure) ctx.cookies.secure = true;
  const base = { sameSite: 'lax' as const, secure, overwrite: true, maxAge, httpOnly: false };
  ctx.cookies.set('sid', sid, { ...base, httpOnly: true });
  ctx.cookies.set('system_user', user.userType === 'System User' ? 'yes' : 'no', base);
  ctx.cookies.set('full_name', encodeURIComponent(user.fullName), base);
  ctx.cookies.set('user_id', encodeURIComponent(user.name), base);
}

/** Every failure answers the same (unknown user, wrong password, disabled user), so accounts cannot be enumerated. */
const INVALID_LOGIN = 'Invalid login credentials';

async function login(ctx: AppContext): Promise<unknown> {
  const params = requestParams(ctx);
  const usr = typeof params.usr === 'string' ? params.usr.trim() : '';
  const pwd = typeof params.pwd === 'string' ? params.pwd : '';
  if (!usr || !pwd) throw new AuthenticationError('Incomplete login details');
  const { site } = ctx.state;
  const ip = clientIp(ctx);
  const keys = attemptKeys(usr, ip);
  await assertNotLocked(site, keys);
  const settings = await loadSettings(site);
  if (pwd.length > 512 || usr.length > 140) {
    await recordFailure(site, keys, lockoutPolicy(settings));
    throw new AuthenticationError(INVALID_LOGIN);
  }
  const q = site.db.knex;
  const user = await loadUser(q, usr);
  const hash = user ? await readAuth(q, 'User', usr, 'password') : undefined;
  // Unknown users are checked against a dummy hash, so both failures answer alike and take alike.
  const ok = await verifyPassword(pwd, hash);
  // An address the user may not log in from gets the same answer as a wrong password, so it learns nothing of it.
  if (!ok || !user || !user.enabled || !ipAllowed(user.restrictIp, ip)) {
    await recordFailure(site, keys, lockoutPolicy(settings));
    throw new AuthenticationError(INVALID_LOGIN);
  }
  await recordSuccess(site, keys[0] as string);
  const expiryMs = parseSessionExpiry(settings.session_expiry);
  const session = await createSession(
    site,
    user.name,
    ip,
    expiryMs,
    Number(settings.deny_multiple_sessions) === 1,
  );
  setLoginCookies(ctx, session.sid, user, Math.floor(expiryMs));
  return { message: 'Logged In', home_page: '/app', full_name: user.fullName, csrf_token: session.csrfToken };
}

async function logout(ctx: AppContext): Promise<unknown> {
  if (ctx.state.session) await endSession(ctx.state.site, ctx.state.session.sid);
  const secure = isHttps(ctx);
  if (secure) ctx.cookies.secure = true;
  for (const name of SESSION_COOKIES)
    ctx.cookies.set(name, null, { secure, sameSite: 'lax', overwrite: true });
  return undefined;
}

async function generateKeys(ctx: AppContext): Promise<unknown> {
  const { user, site } = ctx.state;
  if (user.name !== ADMINISTRATOR && !user.roles.has('System Manager'))
    throw new PermissionError('Only System Manager may generate API keys');
  const target = requestParams(ctx).user;
  if (typeof target !== 'string' || !target) throw new ValidationError('user is required');
  // Administrator's keys would let anyone who holds them act as Administrator: only Administrator makes them.
  if (target === ADMINISTRATOR && user.name !== ADMINISTRATOR)
    throw new PermissionError("Only Administrator may generate Administrator's API keys");
  const keys = await site.db.knex.transaction((trx) => regenerateKeys(trx, target));
  if (!keys) throw new DoesNotExistError(`User ${target} not found`);
  return keys;
}

/** run_doc_method answers `docs: [doc]` beside the result, as Frappe does. */
async function runDocMethodBody(ctx: AppContext): Promise<unknown> {
  const { version, site, user, messages } = ctx.state;
  const outcome = await runDocMethod(ctx, { site, user, version });
  const all = [...messages, ...outcome.messages];
  const body: Record<string, unknown> = {};
  if (outcome.result !== undefined) body[version === 2 ? 'data' : 'message'] = outcome.result;
  body.docs = [outcome.doc];
  if (all.length) {
    if (version === 2) body.messages = all.map((message) => ({ message }));
    else body._server_messages = JSON.stringify(all.map((message) => JSON.stringify({ message })));
  }
  return body;
}

/** Built-in methods by every dotted or short name Frappe clients use. */
export const BUILTIN_METHODS: ReadonlyMap<string, BuiltinMethod> = new Map<string, BuiltinMethod>([
  ['ping', { methods: ['GET', 'POST', 'PUT', 'DELETE'], allowGuest: true, handler: async () => 'pong' }],
  [
    'frappe.ping',
    { methods: ['GET', 'POST', 'PUT', 'DELETE'], allowGuest: true, handler: async () => 'pong' },
  ],
  ['login', { methods: ['POST'], allowGuest: true, handler: login, raw: true, csrf: false }],
  ['logout', { methods: ['POST'], allowGuest: true, handler: logout }],
  // Reads its own (multipart) body, so it checks the session's CSRF token itself, form field `csrf_token` included.
  ['upload_file', { methods: ['POST'], allowGuest: true, handler: uploadFile, csrf: false }],
  [
    'frappe.handler.upload_file',
    { methods: ['POST'], allowGuest: true, handler: uploadFile, csrf: false, path: 'upload_file' },
  ],
  [
    'frappe.auth.get_logged_user',
    {
      methods: ['GET', 'POST', 'PUT', 'DELETE'],
      allowGuest: false,
      handler: async (ctx) => ctx.state.user.name,
    },
  ],
  [
    'frappe.core.doctype.user.user.generate_keys',
    { methods: ['POST'], allowGuest: false, handler: generateKeys },
  ],
  [
    'User/generate_keys',
    {
      methods: ['POST'],
      allowGuest: false,
      handler: generateKeys,
      path: 'frappe.core.doctype.user.user.generate_keys',
    },
  ],
  ['frappe.client.get_list', { methods: ['GET', 'POST'], allowGuest: false, handler: client.getList }],
  ['frappe.client.get_count', { methods: ['GET', 'POST'], allowGuest: false, handler: client.getCount }],
  ['frappe.client.get', { methods: ['GET', 'POST'], allowGuest: false, handler: client.getDoc }],
  ['frappe.client.get_value', { methods: ['GET', 'POST'], allowGuest: false, handler: client.getValue }],
  ['frappe.client.insert', { methods: ['POST', 'PUT'], allowGuest: false, handler: client.insertDoc }],
  ['frappe.client.insert_many', { methods: ['POST', 'PUT'], allowGuest: false, handler: client.insertMany }],
  ['frappe.client.bulk_update', { methods: ['POST', 'PUT'], allowGuest: false, handler: client.bulkUpdate }],
  ['frappe.client.save', { methods: ['POST', 'PUT'], allowGuest: false, handler: client.saveDoc }],
  ['frappe.client.set_value', { methods: ['POST', 'PUT'], allowGuest: false, handler: client.setValue }],
  ['frappe.client.delete', { methods: ['POST', 'DELETE'], allowGuest: false, handler: client.deleteDoc }],
  ['frappe.client.submit', { methods: ['POST', 'PUT'], allowGuest: false, handler: client.submitDoc }],
  ['frappe.client.cancel', { methods: ['POST', 'PUT'], allowGuest: false, handler: client.cancelDoc }],
  [
    'frappe.client.get_single_value',
    { methods: ['GET', 'POST'], allowGuest: false, handler: client.getSingleValue },
  ],
  // The document method run decides guests, verbs and limits itself (admitCall inside runDocMethod).
  ['run_doc_method', { methods: ['GET', 'POST'], allowGuest: true, handler: runDocMethodBody, raw: true }],
  // The OAuth provider (runtime/oauth): RFC bodies, no CSRF token (clients are not browsers holding a session).
  ...[...OAUTH_METHODS].map(([name, method]): [string, BuiltinMethod] => [
    name,
    {
      methods: method.methods,
      allowGuest: true,
      handler: method.handler,
      raw: true,
      csrf: false,
      ...(method.clientAuth ? { clientAuth: true as const } : {}),
    },
  ]),
]);
