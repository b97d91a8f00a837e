// HTTP handlers behind /api/resource (v1) and /api/v2/document (v2): read the request, call the operation, wrap the
// result in the version's envelope with the row's success status.
import { BadRequestError, MethodNotAllowedError } from '../errors/errors';
import { bodyObject, boolParam, queryParams, requestParams } from '../http/params';
import type { AppContext } from '../http/state';
import { callerOf } from '../http/caller-of';
import * as documents from '../operations/document-operations';
import * as lists from '../operations/list-operations';
import { createOnce } from '../idempotency/idempotent-create';
import { callDocumentMethod } from './method-routes';
import { allowedOnPath } from './doctype-routes';
import type { RouteParams, RouteRow } from '../http/route-row';

/** What Koa's `ctx.type = 'json'` sets (mime-types' contentType('json')). */
const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Sets the JSON Content-Type on Node's response, as `ctx.type = 'json'` would (and Koa's body setter, for an object
 * body without a JSON type): Koa looks the type up through mime-types on every answer (about 2 µs per GET one).
 */
function setJsonType(ctx: AppContext): void {
  ctx.res.setHeader('Content-Type', JSON_TYPE);
}

/** A success body: `value` under `data` or `message`, with the request's user messages beside it. */
export function successBody(
  ctx: AppContext,
  key: 'data' | 'message',
  value: unknown,
  messages: string[] = [],
): Record<string, unknown> {
  // Literals, not `{ [key]: value }`: a computed key builds the object through the runtime.
  const body: Record<string, unknown> = key === 'data' ? { data: value } : { message: value };
  if (messages.length) {
    if (ctx.state.version === 2) body.messages = messages.map((message) => ({ message }));
    else body._server_messages = JSON.stringify(messages.map((message) => JSON.stringify({ message })));
  }
  return body;
}

/** Sends a JSON body (or its JSON text) with `status`. */
function sendBody(ctx: AppContext, status: number, body: Record<string, unknown> | string): void {
  ctx.status = status;
  // Koa keeps a Content-Type already set with "json" in it and sets 'json' otherwise; one set before is kept here too.
  if (!ctx.res.hasHeader('Content-Type')) setJsonType(ctx);
  ctx.body = body;
}

/** Sends a success body with the request's user messages beside it; returns that body, for a caller to amend. */
export function respond(
  ctx: AppContext,
  status: number,
  key: 'data' | 'message',
  value: unknown,
  messages: string[] = [],
): Record<string, unknown> {
  const body = successBody(ctx, key, value, messages);
  sendBody(ctx, status, body);
  return body;
}

/** The body as a document's fields: an object, else none. */
function jsonBody(ctx: AppContext): Record<string, unknown> {
  return bodyObject(ctx) ?? {};
}

/** v1's `run_method` (query string, or a JSON/form body): the document method a resource request runs instead. */
function runMethodOf(ctx: AppContext): string | undefined {
  const fromQuery = queryParams(ctx).run_method;
  const value = fromQuery ?? bodyObject(ctx)?.run_method;
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '')
    throw new BadRequestError('run_method must be one method name');
  return value;
}

/** GET one document (v1: or run the document method `run_method` names). */
export async function getDocument(ctx: AppContext, p: RouteParams, row: RouteRow): Promise<void> {
  const method = ctx.state.version === 1 ? runMethodOf(ctx) : undefined;
  if (method !== undefined) return callDocumentMethod(ctx, p.doctype, p.name, method);
  const expandLinks = boolParam(requestParams(ctx), 'expand_links', false);
  respond(
    ctx,
    row.status,
    'data',
    await documents.getDocument(callerOf(ctx), p.doctype, p.name, { expandLinks }),
  );
}

/**
 * Runs a document method: v2 names it in the path, v1 in `run_method` (a v1 POST without one is 405 with the verbs the
 * DocType answers on the path).
 */
export function runDocumentMethod(ctx: AppContext, p: RouteParams): Promise<void> {
  const method = p.method || runMethodOf(ctx);
  if (method === undefined) {
    const allow = allowedOnPath(ctx.state.site.registry, ctx.state.version, 'documentMethod', p.doctype);
    throw new MethodNotAllowedError(`POST needs run_method on ${ctx.state.path.slice(0, 200)}`, {
      headers: { Allow: allow },
    });
  }
  return callDocumentMethod(ctx, p.doctype, p.name, method);
}

/** GET a list of documents. */
export async function listDocuments(ctx: AppContext, p: RouteParams, row: RouteRow): Promise<void> {
  // The rows arrive as JSON text (reused while the database is unchanged); the envelope is written around them, once
  // for a remembered answer: its body is kept with it as bytes, so a repeated page neither joins nor encodes text.
  const page = await lists.listDocumentsSerialized(callerOf(ctx), p.doctype, requestParams(ctx));
  ctx.status = row.status;
  setJsonType(ctx);
  if (page.body && page.count === undefined) {
    ctx.body = page.body;
    return;
  }
  const rest =
    ctx.state.version === 1
      ? ''
      : `,"has_next_page":${page.hasNextPage === true}${page.count === undefined ? '' : `,"count":${page.count}`}${page.nextCursor === undefined ? '' : `,"next_cursor":${JSON.stringify(page.nextCursor)}`}`;
  const body = `{"data":${page.json}${rest}}`;
  // An answer with a count is this request's own copy; any other may be remembered and answer the next request.
  ctx.body = page.count === undefined ? (page.body = Buffer.from(body)) : body;
}

/** GET the number of documents matching the filters (v2). */
export async function countDocuments(ctx: AppContext, p: RouteParams, row: RouteRow): Promise<void> {
  respond(ctx, row.status, 'data', await lists.countDocuments(callerOf(ctx), p.doctype, requestParams(ctx)));
}

/** POST a new document (201). */
export async function createDocument(ctx: AppContext, p: RouteParams, row: RouteRow): Promise<void> {
  const body = jsonBody(ctx);
  await createOnce(
    ctx,
    p.doctype,
    body,
    (inTransaction) => documents.createDocument(callerOf(ctx), p.doctype, body, inTransaction),
    {
      status: row.status,
      bodyOf: (doc, messages) => successBody(ctx, 'data', doc, messages),
      send: (sent) => sendBody(ctx, row.status, sent),
    },
  );
}

/** PUT/PATCH changes to a document. */
export async function updateDocument(ctx: AppContext, p: RouteParams, row: RouteRow): Promise<void> {
  const { doc, messages } = await documents.updateDocument(callerOf(ctx), p.doctype, p.name, jsonBody(ctx));
  respond(ctx, row.status, 'data', doc, messages);
}

/** DELETE a document (202, `"ok"`). */
export async function deleteDocument(ctx: AppContext, p: RouteParams, row: RouteRow): Promise<void> {
  respond(ctx, row.status, 'data', 'ok', await documents.deleteDocument(callerOf(ctx), p.doctype, p.name));
}

/** GET a clean copy that can be posted back as a new document (v2). */
export async function copyDocument(ctx: AppContext, p: RouteParams, row: RouteRow): Promise<void> {
  const keepNoCopy = boolParam(requestParams(ctx), 'ignore_no_copy', true);
  respond(
    ctx,
    row.status,
    'data',
    await documents.copyDocument(callerOf(ctx), p.doctype, p.name, keepNoCopy),
  );
}

/** GET a DocType's metadata (v2). */
export function docTypeMeta(ctx: AppContext, p: RouteParams, row: RouteRow): void {
  respond(ctx, row.status, 'data', documents.docTypeMeta(callerOf(ctx), p.doctype));
}
