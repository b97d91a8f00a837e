// The sign-in page (`/login?redirect-to=…`): a password form that starts a session and returns to a path of this site.
import { login } from '../auth/login';
import { AppError } from '../errors/errors';
import { bodyObject } from '../http/params';
import type { AppContext } from '../http/state';
import { escapeHtml, hiddenField, sendPage } from './html-page';

/** The sign-in page's path. */
export const SIGN_IN_PATH = '/login';

const ORIGIN = 'http://svc.invalid';

/**
 * The path to return to after signing in, when `raw` is a path of this site: `/` then not `/` or `\` (no
 * protocol-relative `//evil`), no backslash or control character anywhere (browsers read `\` as `/`), and the same
 * after normalising (`/.//evil`, `/%2e//evil`, `/a/..//evil` become `//evil`). Anything else, absolute URLs included,
 * is undefined: the page never sends anyone to another site (an open redirect).
 */
export function safeReturnPath(raw: unknown): string | undefined {
  if (typeof raw !== 'string' || raw.length > 4096 || !raw.startsWith('/')) return undefined;
  if (raw[1] === '/' || /[\\\x00-\x1f\x7f]/.test(raw)) return undefined;
  let url: URL;
  try {
    url = new URL(raw, ORIGIN);
  } catch {
    return undefined;
  }
  const path = url.pathname + url.search;
  // The Location header carries the normalised path: it must still be a path of this site.
  if (url.origin !== ORIGIN || path.startsWith('//') || /[\\\x00-\x1f\x7f]/.test(path)) return undefined;
  return path;
}

/** The sign-in page's URL that returns to `returnPath` afterwards. */
export function signInPath(returnPath: string): string {
  return `${SIGN_IN_PATH}?redirect-to=${encodeURIComponent(returnPath)}`;
}

function sendForm(ctx: AppContext, status: number, returnPath: string | undefined, error?: string): void {
  sendPage(
    ctx,
    status,
    'Sign in',
    `${error ? `<p class="error">${escapeHtml(error)}</p>` : ''}
<form method="post" action="${SIGN_IN_PATH}">
<label for="usr">User or email</label><input id="usr" name="usr" autocomplete="username" required>
<label for="pwd">Password</label><input id="pwd" name="pwd" type="password" autocomplete="current-password" required>
${returnPath ? hiddenField('redirect-to', returnPath) : ''}<button type="submit">Sign in</button></form>`,
  );
}

/** Sends a signed-in browser on to its return path (303), or says who it is signed in as. */
function signedIn(ctx: AppContext, returnPath: string | undefined, user: string): void {
  if (returnPath) {
    ctx.redirect(returnPath);
    ctx.status = ctx.method === 'POST' ? 303 : 302;
    return;
  }
  sendPage(ctx, 200, 'Signed in', `<p>You are signed in as <strong>${escapeHtml(user)}</strong>.</p>`);
}

/**
 * GET: the form (a browser already signed in goes straight on); POST (form `usr`, `pwd`, `redirect-to`): signs in as
 * the `login` method does (same lockout, same single failure answer) and returns to `redirect-to` when it is a path of
 * this site. A failure shows the form again with the error's status.
 */
export async function signInPage(ctx: AppContext): Promise<void> {
  const { state } = ctx;
  if (ctx.method === 'GET' || ctx.method === 'HEAD') {
    const returnPath = safeReturnPath(ctx.query['redirect-to']);
    if (state.auth === 'session') return signedIn(ctx, returnPath, state.user.name);
    return sendForm(ctx, 200, returnPath);
  }
  const returnPath = safeReturnPath(bodyObject(ctx)?.['redirect-to']);
  let answer: unknown;
  try {
    answer = await login(ctx);
  } catch (err) {
    if (!(err instanceof AppError) || err.status >= 500) throw err;
    for (const [name, value] of Object.entries(err.headers)) ctx.set(name, value);
    return sendForm(ctx, err.status, returnPath, err.message);
  }
  signedIn(ctx, returnPath, String((answer as { full_name?: unknown }).full_name ?? ''));
}
