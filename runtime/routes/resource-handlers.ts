// HTTP handlers behind /api/resource (v1) and /api/v2/document (v2): read the request, call the operation, wrap the
// result in the version's envelope.
import { boolParam, requestParams } from '../http/params';
import type { AppContext } from '../http/state';
import { callerOf } from '../operations/caller';
import * as documents from '../operations/document-operations';
import * as lists from '../operations/list-operations';

/** Sends a success body with the request's user messages beside it. */
export function respond(ctx: AppContext, status: number, key: 'data' | 'message', value: unknown, messages: string[] = []): void {
  // Literals, not `{ [key]: value }`: a computed key builds the object through the runtime.
  const body: Record<string, unknown> = key === 'data' ? { data: value } : { message: value };
  if (messages.length) {
    if (ctx.state.version === 2) body.messages = messages.map((message) => ({ message }));
    else body._server_messages = JSON.stringify(messages.map((message) => JSON.stringify({ message })));
  }
  ctx.status = status;
  ctx.body = body;
}

function jsonBody(ctx: AppContext): Record<string, unknown> {
  const body = (ctx.request as { body?: unknown }).body;
  return body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}

/** GET one document. */
export async function getDocument(ctx: AppContext, doctype: string, name: string): Promise<void> {
  const expandLinks = boolParam(requestParams(ctx), 'expand_links', false);
  respond(ctx, 200, 'data', await documents.getDocument(callerOf(ctx), doctype, name, { expandLinks }));
}

/** GET a list of documents. */
export async function listDocuments(ctx: AppContext, doctype: string): Promise<void> {
  // The rows arrive as JSON text (reused while the database is unchanged); the envelope is written around them.
  const page = await lists.listDocumentsSerialized(callerOf(ctx), doctype, requestParams(ctx));
  const rest = ctx.state.version === 1 ? '' : `,"has_next_page":${page.hasNextPage === true}${page.count === undefined ? '' : `,"count":${page.count}`}`;
  ctx.status = 200;
  ctx.type = 'json';
  ctx.body = `{"data":${page.json}${rest}}`;
}

/** GET the number of documents matching the filters (v2). */
export async function countDocuments(ctx: AppContext, doctype: string): Promise<void> {
  respond(ctx, 200, 'data', await lists.countDocuments(callerOf(ctx), doctype, requestParams(ctx)));
}

/** POST a new document: 201. */
export async function createDocument(ctx: AppContext, doctype: string): Promise<void> {
  const { doc, messages } = await documents.createDocument(callerOf(ctx), doctype, jsonBody(ctx));
  respond(ctx, 201, 'data', doc, messages);
}

/** PUT/PATCH changes to a document. */
export async function updateDocument(ctx: AppContext, doctype: string, name: string): Promise<void> {
  const { doc, messages } = await documents.updateDocument(callerOf(ctx), doctype, name, jsonBody(ctx));
  respond(ctx, 200, 'data', doc, messages);
}

/** DELETE a document: 202 with `"ok"`. */
export async function deleteDocument(ctx: AppContext, doctype: string, name: string): Promise<void> {
  respond(ctx, 202, 'data', 'ok', await documents.deleteDocument(callerOf(ctx), doctype, name));
}

/** GET a clean copy that can be posted back as a new document (v2). */
export async function copyDocument(ctx: AppContext, doctype: string, name: string): Promise<void> {
  const keepNoCopy = boolParam(requestParams(ctx), 'ignore_no_copy', true);
  respond(ctx, 200, 'data', await documents.copyDocument(callerOf(ctx), doctype, name, keepNoCopy));
}

/** GET a DocType's metadata (v2). */
export async function docTypeMeta(ctx: AppContext, doctype: string): Promise<void> {
  respond(ctx, 200, 'data', documents.docTypeMeta(callerOf(ctx), doctype));
}
