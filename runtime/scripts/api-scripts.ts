// Server Scripts of type API: `/api/method/<api_method>` and `/api/v2/method/<api_method>`, any of Frappe's verbs,
// `allow_guest`, the script's own rate limit; the result is `frappe.response.message` (v1 `message`, v2 `data`).
import { PermissionError, ServerScriptNotEnabled } from '../errors/errors';
import { requestParams } from '../http/params';
import type { AppContext } from '../http/state';
import { admitCall } from '../methods/admit-call';
import { rawArguments } from '../methods/method-arguments';
import { DEFAULT_VERBS } from '../methods/whitelist';
import { callerOf } from '../operations/caller';
import { runScript, scriptsEnabled } from './run-script';
import { scriptIndex, type ServerScript } from './script-store';

/** The enabled API script answering `method`, if any. */
export async function apiScript(ctx: AppContext, method: string): Promise<ServerScript | undefined> {
  return (await scriptIndex(ctx.state.site)).api.get(method);
}

/** Runs an API script for the request and returns its `frappe.response.message`. */
export async function callApiScript(ctx: AppContext, script: ServerScript): Promise<unknown> {
  const caller = callerOf(ctx);
  if (!scriptsEnabled(caller))
    throw new ServerScriptNotEnabled(
      'Server Scripts are disabled. Please enable server scripts from bench configuration.',
    );
  // As Frappe: a Guest gets a bare PermissionError unless the script allows guests.
  if (caller.user.name === 'Guest' && !script.allowGuest) throw new PermissionError('Not permitted');
  await admitCall(ctx, `server-script:${script.apiMethod ?? script.name}`, {
    methods: DEFAULT_VERBS,
    allowGuest: true,
    scopes: ['all'],
    ...(script.rateLimit ? { rateLimit: script.rateLimit } : {}),
  });
  const formDict = rawArguments(requestParams(ctx), []);
  const result = await runScript(script, caller, { form_dict: formDict }, ctx.state.messages);
  return result.message;
}
