// Password login (`login` method and the sign-in page): lockout, IP restriction, the session and its cookies.
import { AuthenticationError } from '../errors/errors';
import { requestParams } from '../http/params';
import type { AppContext } from '../http/state';
import { clientIp, isHttps } from './client-ip';
import { ipAllowed } from './ip-restriction';
import { assertNotLocked, attemptKeys, lockoutPolicy, recordFailure, recordSuccess } from './login-attempts';
import { readAuth, verifyPassword } from './passwords';
import { createSession, parseSessionExpiry } from './sessions';
import { assertSameSiteLogin } from './login-origin';
import { loadSettings } from './settings';
import { loadUser } from './users';

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

/** A failed login: 401 whose body also carries the reason as `message`, as Frappe's LoginManager.fail sets it. */
const loginFailed = (reason: string) => new AuthenticationError(reason, { response: { message: reason } });

/**
 * Signs in with `usr` and `pwd` from the request: starts a session and sets its cookies; answers Frappe's login body.
 * Every failure is the same 401 (and counts towards the lockout); a post from another site's page is 400 first.
 */
export async function login(ctx: AppContext): Promise<unknown> {
  assertSameSiteLogin(ctx);
  const params = requestParams(ctx);
  const usr = typeof params.usr === 'string' ? params.usr.trim() : '';
  const pwd = typeof params.pwd === 'string' ? params.pwd : '';
  if (!usr || !pwd) throw loginFailed('Incomplete login details');
  const { site } = ctx.state;
  const ip = clientIp(ctx);
  const keys = attemptKeys(usr, ip);
  await assertNotLocked(site, keys);
  const settings = await loadSettings(site);
  if (pwd.length > 512 || usr.length > 140) {
    await recordFailure(site, keys, lockoutPolicy(settings));
    throw loginFailed(INVALID_LOGIN);
  }
  const q = site.db.knex;
  // Users are named in lower case (Frappe's User.autoname): `Ada@Example.com` signs in as `ada@example.com`.
  const user =
    (await loadUser(q, usr)) ??
    (usr === usr.toLowerCase() ? undefined : await loadUser(q, usr.toLowerCase()));
  const hash = user ? await readAuth(q, 'User', user.name, 'password') : undefined;
  // Unknown users are checked against a dummy hash, so both failures answer alike and take alike.
  const ok = await verifyPassword(pwd, hash);
  // An address the user may not log in from gets the same answer as a wrong password, so it learns nothing of it.
  if (!ok || !user || !user.enabled || !ipAllowed(user.restrictIp, ip)) {
    await recordFailure(site, keys, lockoutPolicy(settings));
    throw loginFailed(INVALID_LOGIN);
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
