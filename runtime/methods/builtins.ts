// Frappe's built-in methods: ping, login, logout, upload_file, create_new_folder, get_logged_user, generate_keys,
// frappe.client.* and run_doc_method.
import { regenerateUserKeys } from '../auth/key-regeneration';
import { isHttps } from '../auth/client-ip';
import { endSession } from '../auth/sessions';
import { DoesNotExistError, PermissionError, ValidationError } from '../errors/errors';
import { requestParams } from '../http/params';
import type { AppContext } from '../http/state';
import { HISTORY_METHODS } from '../history/history-methods';
import { OAUTH_METHODS } from '../oauth/oauth-methods';
import { ADMINISTRATOR } from '../site';
import * as client from './frappe-client';
import { searchLink } from './link-search';
import { login } from '../auth/login';
import { runDocMethod } from './run-doc-method';
import { uploadFile } from '../files/upload-file';
import { createNewFolder } from '../files/folders';
import { downloadTemplate } from '../data-import/download-template';
import * as dataImport from '../data-import/import-methods';

/** A built-in method: its verbs, whether guests may call it, and the handler (returns the result). */
export interface BuiltinMethod {
  methods: readonly string[];
  allowGuest: boolean;
  handler: (ctx: AppContext) => Promise<unknown>;
  /** The result is the whole response body (login answers Frappe's top-level fields); undefined: the handler answered. */
  raw?: boolean;
  /** The canonical name (rate-limit bucket) when the method answers under several names. */
  path?: string;
  /** At most `limit` calls per `seconds` per caller. */
  rateLimit?: { limit: number; seconds: number };
  /** False: a session needs no CSRF token to call it (login, which starts the session). */
  csrf?: false;
  /** The Authorization header carries OAuth client credentials (the token endpoint's client_secret_basic), not a user's. */
  clientAuth?: true;
  /** OAuth scopes a bearer token needs (default `all`). */
  scopes?: readonly string[];
}

const SESSION_COOKIES = ['sid', 'system_user', 'full_name', 'user_id', 'user_image'];

/** The verbs of Frappe's `@frappe.whitelist()` without `methods`. */
const ANY_VERB = ['GET', 'POST', 'PUT', 'DELETE'] as const;

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
  const keys = await regenerateUserKeys(site, target);
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
    'frappe.core.api.file.create_new_folder',
    { methods: ['POST'], allowGuest: false, handler: createNewFolder },
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
  // Reads take every verb, as Frappe's plain @frappe.whitelist(); writes the verbs Frappe lists for them.
  ['frappe.client.get_list', { methods: ANY_VERB, allowGuest: false, handler: client.getList }],
  ['frappe.client.get_count', { methods: ANY_VERB, allowGuest: false, handler: client.getCount }],
  ['frappe.client.get', { methods: ANY_VERB, allowGuest: false, handler: client.getDoc }],
  ['frappe.client.get_value', { methods: ANY_VERB, allowGuest: false, handler: client.getValue }],
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
    { methods: ANY_VERB, allowGuest: false, handler: client.getSingleValue },
  ],
  // A Link field's autocomplete (frappe-react-sdk's useSearch).
  ['frappe.desk.search.search_link', { methods: ANY_VERB, allowGuest: false, handler: searchLink }],
  // Data Import (runtime/data-import): the template and the failed lines are files (raw answers the handler writes).
  ...(
    [
      ['download_template', ['GET', 'POST'], downloadTemplate, true],
      ['get_preview_from_template', ['GET', 'POST'], dataImport.getPreviewFromTemplate, false],
      ['form_start_import', ['POST'], dataImport.formStartImport, false],
      ['get_import_status', ['GET', 'POST'], dataImport.getImportStatus, false],
      ['download_errored_template', ['GET', 'POST'], dataImport.downloadErroredTemplate, true],
    ] as const
  ).map(([short, methods, handler, raw]): [string, BuiltinMethod] => [
    `frappe.core.doctype.data_import.data_import.${short}`,
    { methods, allowGuest: false, handler, ...(raw ? { raw: true } : {}) },
  ]),
  // The document method run decides guests, verbs and limits itself (admitCall inside runDocMethod).
  ['run_doc_method', { methods: ['GET', 'POST'], allowGuest: true, handler: runDocMethodBody, raw: true }],
  // Document history (runtime/history): a document's versions, restoring Deleted Documents.
  ...[...HISTORY_METHODS].map(([name, method]): [string, BuiltinMethod] => [
    name,
    { methods: method.methods, allowGuest: false, handler: method.handler },
  ]),
  // The OAuth provider (runtime/oauth): RFC bodies; no CSRF token but for the consent POST (clients are not browsers).
  ...[...OAUTH_METHODS].map(([name, method]): [string, BuiltinMethod] => [
    name,
    {
      methods: method.methods,
      allowGuest: true,
      handler: method.handler,
      raw: true,
      ...(method.csrf ? {} : { csrf: false as const }),
      ...(method.clientAuth ? { clientAuth: true as const } : {}),
      ...(method.scopes ? { scopes: method.scopes } : {}),
    },
  ]),
]);
