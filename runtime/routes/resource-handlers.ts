// Document operations behind /api/resource (v1) and /api/v2/document (v2): one handler each, envelopes per version.
import { checkBody } from '../document/checks';
import { DocumentTransaction } from '../document/lifecycle';
import { readDoc } from '../document/reader';
import { serializeDoc } from '../document/serialize';
import { decodeRow, type DocData } from '../document/store';
import { DoesNotExistError, MethodNotAllowedError } from '../errors/errors';
import { boolParam, intParam, jsonParam, requestParams } from '../http/params';
import type { AppContext } from '../http/state';
import { assertDocTypePermission } from '../permissions/doctype-permission';
import { buildCountQuery, buildListQuery, parseFields, parseFilters, parseOrderBy } from '../query/list-query';
import type { DocTypeBinding, V2Operation } from '../registry/registry';

/** Resolves the DocType of the path and checks it answers the operation in this API version. */
export function bindingFor(ctx: AppContext, doctype: string, op: V2Operation): DocTypeBinding {
  const binding = ctx.state.site.registry.get(doctype);
  const ops: ReadonlySet<string> | undefined = ctx.state.version === 1 ? binding?.v1Ops : binding?.v2Ops;
  if (!binding || !ops || ops.size === 0) throw new DoesNotExistError(`DocType ${doctype} not found`);
  if (!ops.has(op)) throw new MethodNotAllowedError(`${ctx.method} is not allowed on ${doctype}`);
  return binding;
}

/** Sends a success body with the request's user messages beside it. */
export function respond(ctx: AppContext, status: number, key: 'data' | 'message', value: unknown, messages: string[] = []): void {
  const body: Record<string, unknown> = { [key]: value };
  if (messages.length) {
    if (ctx.state.version === 2) body.messages = messages.map((message) => ({ message }));
    else body._server_messages = JSON.stringify(messages.map((message) => JSON.stringify({ message })));
  }
  ctx.status = status;
  ctx.body = body;
}

function jsonBody(ctx: AppContext): Record<string, unknown> {
  const body = (ctx.request as { body?: unknown }).body;
  return body && typeof body === 'object' && !Array.isArray(body) ? { ...(body as Record<string, unknown>) } : {};
}

/** GET one document. */
export async function getDocument(ctx: AppContext, doctype: string, name: string): Promise<void> {
  const binding = bindingFor(ctx, doctype, 'get');
  assertDocTypePermission(ctx.state.user, binding.meta, 'read');
  const data = await readDoc(ctx.state.site, binding, binding.meta.issingle ? binding.meta.name : name);
  if (!data) throw new DoesNotExistError(`${doctype} ${name} not found`);
  respond(ctx, 200, 'data', serializeDoc(binding, ctx.state.site.registry, data, ctx.state.version));
}

/** GET a list of documents. */
export async function listDocuments(ctx: AppContext, doctype: string): Promise<void> {
  const binding = bindingFor(ctx, doctype, 'list');
  assertDocTypePermission(ctx.state.user, binding.meta, 'read');
  const params = requestParams(ctx);
  const { site, version } = ctx.state;
  const max = site.config.site.max_page_length;
  const requested = version === 1 ? intParam(params, 'limit_page_length', intParam(params, 'limit', 20)) : intParam(params, 'limit', 20);
  const limit = version === 1 && requested === 0 ? max : Math.min(requested, max);
  const start = intParam(params, version === 1 ? 'limit_start' : 'start', 0);
  const list = {
    fields: parseFields(binding.meta, jsonParam(params, 'fields')),
    conditions: parseFilters(binding.meta, jsonParam(params, 'filters')),
    order: parseOrderBy(binding.meta, params.order_by),
    limit: version === 2 ? limit + 1 : limit,
    start,
  };
  if (version === 2 && limit === 0) {
    ctx.body = { data: [], has_next_page: false };
    return;
  }
  const rows = ((await buildListQuery(site.db.knex, binding, list)) as Record<string, unknown>[]).map((r) => decodeRow(binding.meta, r));
  if (version === 1) {
    const asDict = boolParam(params, 'as_dict', true);
    return respond(ctx, 200, 'data', asDict ? rows : rows.map((r) => list.fields.map((f) => r[f])));
  }
  ctx.status = 200;
  ctx.body = { data: rows.slice(0, limit), has_next_page: rows.length > limit };
}

/** GET the number of documents matching the filters (v2). */
export async function countDocuments(ctx: AppContext, doctype: string): Promise<void> {
  const binding = bindingFor(ctx, doctype, 'count');
  assertDocTypePermission(ctx.state.user, binding.meta, 'read');
  const conditions = parseFilters(binding.meta, jsonParam(requestParams(ctx), 'filters'));
  const [row] = (await buildCountQuery(ctx.state.site.db.knex, binding, conditions)) as { count: number | string }[];
  respond(ctx, 200, 'data', Number(row?.count ?? 0));
}

/** POST a new document. v2 uses a client `name` as given; v1 only for prompt and UUID naming (as Frappe). */
export async function createDocument(ctx: AppContext, doctype: string): Promise<void> {
  const binding = bindingFor(ctx, doctype, 'create');
  assertDocTypePermission(ctx.state.user, binding.meta, 'create');
  const body = jsonBody(ctx);
  delete body.doctype;
  const data = checkBody(binding.validateCreate, body, doctype);
  const rawName = data.name;
  delete data.name;
  delete data.modified;
  const kind = binding.meta.naming.kind;
  const clientName =
    typeof rawName === 'string' && (ctx.state.version === 2 || kind === 'prompt' || kind === 'uuid') ? rawName : undefined;
  const tx = new DocumentTransaction(ctx.state.site, ctx.state.user);
  const doc = await tx.run(async () => {
    const created = tx.newDoc(doctype, data, clientName);
    await created.insert();
    return created;
  });
  respond(ctx, 201, 'data', serializeDoc(binding, ctx.state.site.registry, { ...doc }, ctx.state.version), tx.messages);
}

/** PUT/PATCH changes to a document: only the fields sent change; a stale `modified` is refused. */
export async function updateDocument(ctx: AppContext, doctype: string, name: string): Promise<void> {
  const binding = bindingFor(ctx, doctype, 'update');
  assertDocTypePermission(ctx.state.user, binding.meta, 'write');
  const body = jsonBody(ctx);
  delete body.doctype;
  delete body.name;
  const changes = checkBody(binding.validateUpdate, body, doctype);
  const tx = new DocumentTransaction(ctx.state.site, ctx.state.user);
  const doc = await tx.run(async () => {
    const loaded = await tx.getDoc(doctype, binding.meta.issingle ? binding.meta.name : name, { forUpdate: true });
    Object.assign(loaded, changes);
    await loaded.save();
    return loaded;
  });
  respond(ctx, 200, 'data', serializeDoc(binding, ctx.state.site.registry, { ...doc }, ctx.state.version), tx.messages);
}

/** DELETE a document: 202 with `"ok"`. */
export async function deleteDocument(ctx: AppContext, doctype: string, name: string): Promise<void> {
  const binding = bindingFor(ctx, doctype, 'delete');
  assertDocTypePermission(ctx.state.user, binding.meta, 'delete');
  const tx = new DocumentTransaction(ctx.state.site, ctx.state.user);
  await tx.run(async () => (await tx.getDoc(doctype, name, { forUpdate: true })).delete());
  respond(ctx, 202, 'data', 'ok', tx.messages);
}

const IDENTITY = ['name', 'owner', 'creation', 'modified', 'modified_by', 'docstatus'];
const CHILD_IDENTITY = [...IDENTITY, 'parent', 'parentfield', 'parenttype', 'idx'];

/** GET a clean copy that can be posted back as a new document (v2). `ignore_no_copy=false` drops no_copy fields. */
export async function copyDocument(ctx: AppContext, doctype: string, name: string): Promise<void> {
  const binding = bindingFor(ctx, doctype, 'copy');
  assertDocTypePermission(ctx.state.user, binding.meta, 'read');
  const keepNoCopy = boolParam(requestParams(ctx), 'ignore_no_copy', true);
  const data = await readDoc(ctx.state.site, binding, name);
  if (!data) throw new DoesNotExistError(`${doctype} ${name} not found`);
  const { registry } = ctx.state.site;
  const clean = (meta: DocTypeBinding['meta'], row: DocData, identity: string[]): DocData => {
    const out: DocData = {};
    for (const [key, value] of Object.entries(row)) {
      const field = meta.fields.find((f) => f.fieldname === key);
      if (identity.includes(key) || value === null || (!keepNoCopy && field?.noCopy)) continue;
      if (field && (field.fieldtype === 'Table' || field.fieldtype === 'Table MultiSelect')) {
        const child = field.options ? registry.get(field.options) : undefined;
        out[key] = (value as DocData[]).map((r) => (child ? clean(child.meta, r, CHILD_IDENTITY) : r));
      } else out[key] = value;
    }
    return out;
  };
  respond(ctx, 200, 'data', serializeDoc(binding, registry, clean(binding.meta, data, IDENTITY), 2));
}

/** GET a DocType's metadata (v2); any signed-in user. */
export async function docTypeMeta(ctx: AppContext, doctype: string): Promise<void> {
  const binding = bindingFor(ctx, doctype, 'meta');
  if (ctx.state.user.name === 'Guest') assertDocTypePermission(ctx.state.user, binding.meta, 'read');
  respond(ctx, 200, 'data', binding.meta);
}
