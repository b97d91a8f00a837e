// Frappe's `frappe.client.*` methods over the shared operations: every call is permission-checked as the caller.
import type { DocData } from '../db/row-store';
import { DataError, DoesNotExistError, PermissionError, ValidationError } from '../errors/errors';
import { boolParam, jsonParam, requestParams, textArgument } from '../http/params';
import { STANDARD_FIELDS } from '../meta/types';
import type { AppContext } from '../http/state';
import type { Caller } from '../document/caller';
import { callerOf } from '../http/caller-of';
import { checkBulkSize, runBulk } from '../operations/bulk-operations';
import * as documents from '../operations/document-operations';
import * as lists from '../operations/list-operations';

/** frappe.client's list parameters are v1's (`limit_page_length`, `limit_start`, list or dict filters). */
const listCaller = (ctx: AppContext): Caller => ({ ...callerOf(ctx), version: 1 });
/** frappe.client answers documents as Frappe's `doc.as_dict()`: nulls kept (v1's resources drop them). */
const docCaller = (ctx: AppContext): Caller => ({ ...callerOf(ctx), documentShape: 2 });
/** True when `doctype` is a Single DocType of the site. */
const isSingle = (ctx: AppContext, doctype: string): boolean =>
  ctx.state.site.registry.get(doctype)?.meta.issingle === true;
/** True when `doctype` is a child table of the site: its rows are written through their parent document. */
const isChildTable = (ctx: AppContext, doctype: string): boolean =>
  ctx.state.site.registry.get(doctype)?.meta.istable === true;
/** A child table's rows are listed through the parent DocType a `parent` argument names (Frappe's get_list `parent`). */
const parentArgument = (params: Record<string, unknown>): { parent?: unknown } =>
  params.parent === undefined ? {} : { parent: params.parent };
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Fields `set_value` may not change: identity and docstatus move only through their own endpoints. */
const NOT_SETTABLE: ReadonlySet<string> = new Set([
  ...STANDARD_FIELDS,
  'doctype',
  'parent',
  'parentfield',
  'parenttype',
  'flags',
]);

function docArgument(params: Record<string, unknown>): { doctype: string; fields: Record<string, unknown> } {
  if (params.doc === undefined) throw new DataError('Missing argument: doc');
  const doc = jsonParam(params, 'doc');
  if (!isObject(doc) || typeof doc.doctype !== 'string' || doc.doctype === '')
    throw new DataError('Argument doc: must be an object with a doctype');
  const { doctype, ...fields } = doc;
  return { doctype, fields };
}

/** Filters given as a name (`"TODO-1"`) or as JSON filters. */
function filtersArgument(params: Record<string, unknown>): unknown {
  const filters = jsonParam(params, 'filters');
  return typeof filters === 'string' || typeof filters === 'number' ? { name: String(filters) } : filters;
}

/** frappe.client.get_list: a page of documents. */
export async function getList(ctx: AppContext): Promise<unknown> {
  const params = requestParams(ctx);
  return (await lists.listDocuments(listCaller(ctx), textArgument(params, 'doctype'), params)).data;
}

/** frappe.client.get_count: the number of documents matching `filters`. */
export async function getCount(ctx: AppContext): Promise<unknown> {
  const params = requestParams(ctx);
  return lists.countDocuments(listCaller(ctx), textArgument(params, 'doctype'), params);
}

/** frappe.client.get: one document by `name`, or the first matching `filters`; without either, a Single's. */
export async function getDoc(ctx: AppContext): Promise<unknown> {
  const params = requestParams(ctx);
  const doctype = textArgument(params, 'doctype');
  let name = params.name === undefined || params.name === '' ? undefined : textArgument(params, 'name');
  if (name === undefined && params.filters === undefined && isSingle(ctx, doctype)) name = doctype;
  if (name === undefined) {
    if (params.filters === undefined) throw new DataError('Missing argument: name');
    const [first] = (
      await lists.listDocuments(listCaller(ctx), doctype, {
        fields: ['name'],
        filters: filtersArgument(params),
        limit_page_length: 1,
        ...parentArgument(params),
      })
    ).data as DocData[];
    if (!first) throw new DoesNotExistError(`No ${doctype} matches the filters`);
    name = String(first.name);
  }
  return documents.getDocument(docCaller(ctx), doctype, name);
}

/**
 * frappe.client.get_value: the fields of the first document matching `filters` (a name or JSON filters), or of a
 * Single's document. As Frappe: with `as_dict` (the default) `{ <fieldname>: <value> }`, `{}` when nothing matches;
 * without it the value of one field, or the list of several, and no `message` when nothing matches.
 */
export async function getValue(ctx: AppContext): Promise<unknown> {
  const params = requestParams(ctx);
  const doctype = textArgument(params, 'doctype');
  const raw = jsonParam(params, 'fieldname') ?? 'name';
  const fields = Array.isArray(raw) ? (raw.length ? raw : ['name']) : [raw];
  if (!fields.every((f): f is string => typeof f === 'string'))
    throw new DataError('Argument fieldname: must be a field name or a list of field names');
  const asDict = boolParam(params, 'as_dict', true);
  const row = isSingle(ctx, doctype)
    ? await singleValues(ctx, doctype, fields, filtersArgument(params))
    : ((
        await lists.listDocuments(listCaller(ctx), doctype, {
          fields,
          filters: filtersArgument(params),
          limit_page_length: 1,
          ...parentArgument(params),
        })
      ).data[0] as DocData | undefined);
  if (asDict) return row ? Object.fromEntries(fields.map((f) => [f, row[f] ?? null])) : {};
  if (!row) return undefined;
  return fields.length === 1 ? (row[fields[0] as string] ?? null) : fields.map((f) => row[f] ?? null);
}

/**
 * The `fields` of a Single's document as the caller may read them, or undefined when dict `filters` name a value it
 * does not hold (Frappe's get_values_from_single). An unknown field is 400; one above the caller's levels is 403.
 */
async function singleValues(
  ctx: AppContext,
  doctype: string,
  fields: string[],
  filters: unknown,
): Promise<DocData | undefined> {
  const doc = await documents.getDocument(docCaller(ctx), doctype, doctype);
  const binding = ctx.state.site.registry.get(doctype);
  for (const f of fields) {
    if (Object.hasOwn(doc, f)) continue;
    if (!binding?.fieldMap.has(f) || binding.fieldMap.get(f)?.fieldtype === 'Password')
      throw new DataError(`Argument fieldname: ${doctype} has no field ${f.slice(0, 140)}`);
    throw new PermissionError(`You do not have permission to access field ${doctype}.${f.slice(0, 140)}`);
  }
  if (isObject(filters))
    for (const [key, value] of Object.entries(filters))
      if (String(doc[key] ?? '') !== String(value ?? '')) return undefined;
  return doc;
}

/**
 * frappe.client.insert: inserts `doc` (with its `doctype`); answers 200 like every method. A child row (with `parenttype`
 * and `parent`) is added to that document, which is saved and answered, as Frappe.
 */
export async function insertDoc(ctx: AppContext): Promise<unknown> {
  const { doctype, fields } = docArgument(requestParams(ctx));
  const result = isChildTable(ctx, doctype)
    ? await documents.writeRowAnsweringParent(docCaller(ctx), doctype, { body: fields })
    : await documents.createDocument(docCaller(ctx), doctype, fields);
  ctx.state.messages.push(...result.messages);
  return result.doc;
}

/** frappe.client.save: saves `doc` (with `doctype` and `name`); a stale `modified` is refused. */
export async function saveDoc(ctx: AppContext): Promise<unknown> {
  const { doctype, fields } = docArgument(requestParams(ctx));
  const name = textArgument(fields, 'name');
  const result = await documents.updateDocument(docCaller(ctx), doctype, name, fields);
  ctx.state.messages.push(...result.messages);
  return result.doc;
}

/**
 * frappe.client.set_value: sets `fieldname` to `value`, or every field of a `fieldname` object. A child row is changed
 * by saving its parent, which is answered, as Frappe.
 */
export async function setValue(ctx: AppContext): Promise<unknown> {
  const params = requestParams(ctx);
  const doctype = textArgument(params, 'doctype');
  const name = textArgument(params, 'name');
  const fieldname = jsonParam(params, 'fieldname');
  let values: Record<string, unknown>;
  if (isObject(fieldname)) values = { ...fieldname };
  else if (typeof fieldname === 'string' && fieldname !== '')
    values = { [fieldname]: jsonValue(params.value) };
  else throw new DataError('Missing argument: fieldname');
  const refused = Object.keys(values).filter((key) => NOT_SETTABLE.has(key) || key === '__proto__');
  if (refused.length)
    throw new DataError(`Argument fieldname: ${refused.join(', ')} cannot be set with set_value`);
  const result = isChildTable(ctx, doctype)
    ? await documents.writeRowAnsweringParent(docCaller(ctx), doctype, { name, values })
    : await documents.updateDocument(docCaller(ctx), doctype, name, values);
  ctx.state.messages.push(...result.messages);
  return result.doc;
}

/** A form or query value that is JSON text for a structured value (child rows, JSON fields) stays text otherwise. */
function jsonValue(value: unknown): unknown {
  if (typeof value !== 'string' || !/^\s*[[{]/.test(value)) return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

/** frappe.client.delete: deletes one document; no result. */
export async function deleteDoc(ctx: AppContext): Promise<unknown> {
  const params = requestParams(ctx);
  ctx.state.messages.push(
    ...(await documents.deleteDocument(
      callerOf(ctx),
      textArgument(params, 'doctype'),
      textArgument(params, 'name'),
    )),
  );
  return undefined;
}

/** frappe.client.submit: saves `doc` with docstatus 1 (the lifecycle checks the submit right); answers the document. */
export async function submitDoc(ctx: AppContext): Promise<unknown> {
  const { doctype, fields } = docArgument(requestParams(ctx));
  const result = await documents.updateDocument(docCaller(ctx), doctype, textArgument(fields, 'name'), {
    ...fields,
    docstatus: 1,
  });
  ctx.state.messages.push(...result.messages);
  return result.doc;
}

/** frappe.client.cancel: cancels the submitted document `doctype`/`name`; answers the cancelled document. */
export async function cancelDoc(ctx: AppContext): Promise<unknown> {
  const params = requestParams(ctx);
  const result = await documents.cancelDocument(
    docCaller(ctx),
    textArgument(params, 'doctype'),
    textArgument(params, 'name'),
  );
  ctx.state.messages.push(...result.messages);
  return result.doc;
}

/** frappe.client.get_single_value: one field of a Single DocType. */
export async function getSingleValue(ctx: AppContext): Promise<unknown> {
  const params = requestParams(ctx);
  const doctype = textArgument(params, 'doctype');
  const field = textArgument(params, 'field');
  const doc = await documents.getDocument(callerOf(ctx), doctype, doctype);
  if (!Object.hasOwn(doc, field))
    throw new DataError(`Argument field: ${doctype} has no field ${field.slice(0, 140)}`);
  return doc[field] ?? null;
}

/** The most documents `frappe.client.insert_many` takes in one call (Frappe's limit). */
const INSERT_MANY_LIMIT = 200;

/** A list argument given as a list or as JSON text. */
function listArgument(params: Record<string, unknown>, key: string): unknown[] {
  if (params[key] === undefined) throw new DataError(`Missing argument: ${key}`);
  const value = jsonParam(params, key);
  if (!Array.isArray(value)) throw new DataError(`Argument ${key}: must be a list`);
  return value;
}

/**
 * frappe.client.insert_many: inserts `docs` (each with its `doctype`, at most 200) in one transaction, all or nothing
 * as Frappe; returns the new names. For per-item outcomes use `POST /api/v2/document/{doctype}/bulk_insert`.
 */
export async function insertMany(ctx: AppContext): Promise<unknown> {
  const docs = listArgument(requestParams(ctx), 'docs');
  if (docs.length > INSERT_MANY_LIMIT)
    throw new ValidationError(`Only ${INSERT_MANY_LIMIT} inserts allowed in one request`);
  const items = docs.map((doc, i) => {
    if (!isObject(doc) || typeof doc.doctype !== 'string' || doc.doctype === '')
      throw new DataError(`Argument docs: item ${i} must be an object with a doctype`);
    const { doctype, ...body } = doc;
    return { doctype, body };
  });
  const result = await documents.createDocuments(callerOf(ctx), items);
  ctx.state.messages.push(...result.messages);
  return result.names;
}

/**
 * frappe.client.bulk_update: saves each of `docs` (`doctype`, `docname`, fields) in a savepoint of its own; returns
 * `{ failed_docs: [{ doc, exc }] }` as Frappe, where `exc` is the error's `exc_type: message` (never a traceback).
 */
export async function bulkUpdate(ctx: AppContext): Promise<unknown> {
  const docs = listArgument(requestParams(ctx), 'docs');
  checkBulkSize(docs.length, callerOf(ctx).site.config.site.max_bulk_items);
  const items = docs.map((doc) => {
    if (!isObject(doc)) return { doctype: undefined, entry: doc };
    const { docname, ...rest } = doc;
    return { doctype: doc.doctype, entry: { ...rest, name: docname } };
  });
  const outcome = await runBulk(callerOf(ctx), 'update', items, { across: true });
  if (!outcome) return { failed_docs: [] };
  const { result, failedAt } = outcome;
  return {
    failed_docs: result.failed.map((failure, k) => ({
      doc: docs[failedAt[k] as number],
      exc: `${failure.error}: ${failure.message}`,
    })),
  };
}
