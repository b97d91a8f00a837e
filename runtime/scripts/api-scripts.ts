// Server Scripts of type API: `/api/method/<api_method>` and `/api/v2/method/<api_method>`, any of Frappe's verbs,
// `allow_guest`, the script's own rate limit; the result is `frappe.response.message` (v1 `message`, v2 `data`). A cookie
// session's call without its CSRF token (a GET) runs read-only: a cross-site page cannot make a script write.
import { AuthenticationError, ServerScriptNotEnabled } from '../errors/errors';
import { requestParams } from '../http/params';
import type { AppContext } from '../http/state';
import { admitCall, type Admission } from '../methods/admit-call';
import { rawArguments } from '../methods/method-arguments';
import { DEFAULT_VERBS } from '../methods/whitelist';
import { carriesCsrfToken, type CsrfOptions } from '../middleware/csrf';
import { callerOf } from '../operations/caller';
import { readOnlyCaller } from './host-api';
import { runScript, runScriptInline, scriptsEnabled } from './run-script';
import { loadedScriptIndex, scriptIndex, type ServerScript } from './script-store';

/**
 * The enabled API script answering `method`, if any: at once when the site's scripts are loaded and current (a change
 * drops them, so the next call reads them again), else once they are read.
 */
export function apiScript(
  ctx: AppContext,
  method: string,
): ServerScript | undefined | Promise<ServerScript | undefined> {
  const loaded = loadedScriptIndex(ctx.state.site);
  if (loaded) return loaded.api.get(method);
  return scriptIndex(ctx.state.site).then((index) => index.api.get(method));
}

/** The admission of each script (the script objects are replaced when a Server Script changes). */
const admissions = new WeakMap<ServerScript, { path: string; admission: Admission }>();

function admissionOf(script: ServerScript): { path: string; admission: Admission } {
  let entry = admissions.get(script);
  if (!entry) {
    entry = {
      path: `server-script:${script.apiMethod ?? script.name}`,
      admission: {
        methods: DEFAULT_VERBS,
        allowGuest: true,
        scopes: ['all'],
        ...(script.rateLimit ? { rateLimit: script.rateLimit } : {}),
      },
    };
    admissions.set(script, entry);
  }
  return entry;
}

/** The site's CSRF settings, as app.ts gives them to the CSRF middleware. */
function csrfOptions(ctx: AppContext): CsrfOptions {
  const conf = ctx.state.site.config.site;
  return { ignoreCsrf: conf.ignore_csrf, allowedReferrers: conf.allowed_referrers };
}

/** Runs an API script for the request and returns its `frappe.response.message`. */
export async function callApiScript(ctx: AppContext, script: ServerScript): Promise<unknown> {
  let caller = callerOf(ctx);
  if (!scriptsEnabled(caller))
    throw new ServerScriptNotEnabled(
      'Server Scripts are disabled. Please enable server scripts from bench configuration.',
    );
  // A Guest is refused with 401, as everywhere (CONTRACT section 6), unless the script allows guests.
  if (caller.user.name === 'Guest' && !script.allowGuest) throw new AuthenticationError('Login required');
  const { path, admission } = admissionOf(script);
  await admitCall(ctx, path, admission);
  const input = { form_dict: rawArguments(requestParams(ctx), []) };
  // A cookie session's call without its CSRF token (a GET: unsafe verbs were checked already) may read, not write.
  if (ctx.state.auth === 'session' && !carriesCsrfToken(ctx, csrfOptions(ctx), undefined))
    caller = readOnlyCaller(caller);
  // A straight-line script runs here and now; any other (or one whose inline run was void) as runScript runs it.
  const result =
    runScriptInline(script, caller, input) ?? (await runScript(script, caller, input, ctx.state.messages));
  return result.message;
}
