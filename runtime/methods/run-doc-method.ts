// run_doc_method: a whitelisted method run on a document the client sends (`document`, object or JSON text), not
// loaded from storage; when it names a stored document, that one's permissions decide and a stale `modified` is refused.
import { checkClientBody } from '../operations/client-body';
import { checkBody } from '../document/checks';
import type { Document } from '../document/document';
import { DocumentTransaction } from '../document/lifecycle';
import { serializeDoc } from '../document/serialize';
import { formatDatetime } from '../db/stored-values';
import { DataError, DoesNotExistError, TimestampMismatchError } from '../errors/errors';
import { jsonParam, requestParams } from '../http/params';
import type { AppContext } from '../http/state';
import type { Right } from '../meta/types';
import type { Caller } from '../document/caller';
import { bindingFor } from '../operations/doctype-binding';
import { assertDocTypePermission } from '../permissions/doctype-permission';
import { assertDocumentPermission } from '../permissions/document-permission';
import { readableDoc } from '../permissions/field-levels';
import { admitCall } from './admit-call';
import { resolveDocumentMethod, type DocumentMethodResult } from './document-methods';

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Reads `method`, `document` (v1: `docs`) and `kwargs` (v1: `args` or `arg`); 400 naming what is wrong. */
function runDocParams(params: Record<string, unknown>): {
  method: string;
  document: Record<string, unknown>;
  kwargs: Record<string, unknown>;
  mustExist: boolean;
} {
  const method = params.method;
  if (typeof method !== 'string' || method === '') throw new DataError('Missing argument: method');
  // v1 may name a stored document by `dt` and `dn` instead of sending it (`dn` defaults to `dt` for a Single).
  const named =
    params.document === undefined && params.docs === undefined && typeof params.dt === 'string'
      ? { doctype: params.dt, name: typeof params.dn === 'string' ? params.dn : params.dt }
      : undefined;
  const document = named ?? jsonParam(params, params.document !== undefined ? 'document' : 'docs');
  if (!isObject(document) || typeof document.doctype !== 'string')
    throw new DataError('Argument document: must be an object with a doctype');
  // v1's `arg` stands for `args` when these are not given (Frappe's run_doc_method).
  const key =
    params.kwargs !== undefined
      ? 'kwargs'
      : params.args === undefined && params.arg !== undefined
        ? 'arg'
        : 'args';
  const kwargs = jsonParam(params, key) ?? {};
  if (!isObject(kwargs)) throw new DataError('Argument kwargs: must be an object');
  return { method, document, kwargs, mustExist: named !== undefined };
}

/** Runs the request's run_doc_method call. */
export async function runDocMethod(ctx: AppContext, caller: Caller): Promise<DocumentMethodResult> {
  const { method: methodName, document, kwargs, mustExist } = runDocParams(requestParams(ctx));
  const doctype = document.doctype as string;
  const binding = bindingFor(caller, doctype, 'get');
  const method = resolveDocumentMethod(caller.site.registry, binding, methodName);
  await admitCall(ctx, method.path, method.admission);
  const right: Right = method.right ?? (ctx.method === 'GET' ? 'read' : 'write');
  assertDocTypePermission(caller.user, binding.meta, right);
  const args = method.args({ ...kwargs });
  const input = { ...document };
  delete input.doctype;
  const data = checkBody(binding.validateBody, input, doctype);
  checkClientBody(caller, binding, data);
  const tx = new DocumentTransaction(caller.site, caller.user);
  const name = binding.meta.issingle
    ? binding.meta.name
    : typeof data.name === 'string' && data.name
      ? data.name
      : undefined;
  const stored = name
    ? await tx
        .getDoc(doctype, name)
        .catch((err: unknown) => (err instanceof DoesNotExistError ? undefined : Promise.reject(err)))
    : undefined;
  if (!stored && mustExist)
    throw new DoesNotExistError(`${doctype} ${String(name ?? '').slice(0, 140)} not found`);
  let doc: Document;
  if (stored) {
    // A document naming a stored one is checked against what is stored: a forged owner or name gains nothing.
    await assertDocumentPermission(caller, binding, { ...stored }, right);
    if (
      data.modified &&
      formatDatetime(String(data.modified)) !== stored.modified &&
      !binding.meta.issingle
    ) {
      throw new TimestampMismatchError(
        `${doctype} ${stored.name} has been modified after you have opened it. Please refresh to get the latest document.`,
      );
    }
    doc = Object.assign(stored, data);
  } else {
    delete data.modified;
    const clientName = typeof data.name === 'string' ? data.name : undefined;
    delete data.name;
    doc = tx.newDoc(doctype, data, clientName);
    await assertDocumentPermission(caller, binding, { ...doc, owner: caller.user.name }, right);
  }
  const result = await method.run(doc, args, caller, tx.messages);
  return {
    result,
    doc: readableDoc(
      caller,
      binding,
      serializeDoc(binding, caller.site.registry, { ...doc }, caller.version),
    ),
    messages: tx.messages,
  };
}
