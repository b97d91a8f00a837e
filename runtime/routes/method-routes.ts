// Method endpoints: /api/method/{name} (v1, `message`), /api/v2/method/{name} and /api/v2/method/{DocType}/{fn} (v2, `data`),
// and methods run on documents (v1 `?run_method=`, v2 `/api/v2/document/{dt}/{name}/method/{m}`, run_doc_method).
import { DoesNotExistError } from '../errors/errors';
import { callerOf } from '../http/caller-of';
import type { AppContext } from '../http/state';
import { admitCall } from '../methods/admit-call';
import { BUILTIN_METHODS } from '../methods/builtins';
import { runDocumentMethod, type DocumentMethodResult } from '../methods/document-methods';
import { methodArguments } from '../methods/method-arguments';
import { createMethodCall } from '../methods/method-call';
import { methodTable } from '../methods/method-table';
import { apiScript, callApiScript } from '../scripts/api-scripts';
import { respond } from './resource-handlers';

/**
 * The method name a path names: trailing slashes never matter; v1 keeps the part before the first `/` (as Frappe),
 * v2 also answers `DocType/fn`.
 */
export function methodName(raw: string, version: 1 | 2): string {
  const trimmed = raw.endsWith('/') ? raw.replace(/\/+$/, '') : raw;
  if (version === 2) return trimmed;
  const slash = trimmed.indexOf('/');
  return slash < 0 ? trimmed : trimmed.slice(0, slash);
}

/** Sends a method's result in the version's envelope with the user messages beside it; `undefined` sends no result key. */
export function sendResult(ctx: AppContext, result: unknown, messages: string[]): void {
  const key = ctx.state.version === 2 ? 'data' : 'message';
  const body = respond(ctx, 200, key, result, messages);
  if (result === undefined) delete body[key];
}

/** Calls a method by name: unknown → 404, wrong verb → 405 with Allow, guest without allowGuest → 401, over its limit → 429. */
export async function callMethod(ctx: AppContext, raw: string): Promise<void> {
  const { version, site } = ctx.state;
  const name = methodName(raw, version);
  const builtin = BUILTIN_METHODS.get(name);
  if (builtin) {
    await admitCall(ctx, builtin.path ?? name, builtin);
    const result = await builtin.handler(ctx);
    if (builtin.raw) {
      // A raw handler that returns nothing wrote its own answer (a page or a redirect).
      if (result !== undefined) {
        ctx.status = 200;
        ctx.body = result;
      }
      return;
    }
    return sendResult(ctx, result, ctx.state.messages);
  }
  // As Frappe: an enabled API Server Script answers its api_method before the whitelisted functions.
  const found = apiScript(ctx, name);
  const script = found instanceof Promise ? await found : found;
  if (script) return sendResult(ctx, await callApiScript(ctx, script), ctx.state.messages);
  const table = methodTable(site.registry);
  const method = table.byPath.get(name) ?? (version === 2 ? table.byShortPath.get(name) : undefined);
  if (!method) throw new DoesNotExistError(`Method ${name.slice(0, 140)} not found`);
  await admitCall(ctx, method.entry.path, method.options);
  const args = methodArguments(ctx, method.entry.validate, method.entry.jsonArgs);
  const messages = ctx.state.messages;
  const result = await method.fn(args, createMethodCall(callerOf(ctx), messages));
  sendResult(ctx, result, messages);
}

/** Sends a document method's outcome: v2 `{ data, docs: [doc] }` (as Frappe), v1 `{ data }`. */
export function sendDocumentMethodResult(ctx: AppContext, outcome: DocumentMethodResult): void {
  const messages = [...ctx.state.messages, ...outcome.messages];
  const body = respond(ctx, 200, 'data', outcome.result, messages);
  if (outcome.result === undefined) delete body.data;
  if (ctx.state.version === 2) body.docs = [outcome.doc];
}

/** Runs a whitelisted method on a stored document (v1 `?run_method=m`, v2 `/method/{m}`). */
export async function callDocumentMethod(
  ctx: AppContext,
  doctype: string,
  name: string,
  method: string,
): Promise<void> {
  sendDocumentMethodResult(ctx, await runDocumentMethod(ctx, callerOf(ctx), doctype, name, method));
}
