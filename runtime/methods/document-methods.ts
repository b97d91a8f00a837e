// Methods run on a document: whitelisted controller methods, the built-ins submit and cancel, and the features' own
// (Deleted Document's restore). GET needs read permission, POST write (a feature's method names its right); whatever
// the method then does (save, insert) is permission-checked again as the caller.
import type { Caller } from '../document/caller';
import type { Document } from '../document/document';
import { DocumentTransaction } from '../document/lifecycle';
import { serializeDoc } from '../document/serialize';
import type { DocData } from '../db/row-store';
import { DoesNotExistError } from '../errors/errors';
import { HISTORY_DOCUMENT_METHODS } from '../history/history-methods';
import { requestParams } from '../http/params';
import type { AppContext } from '../http/state';
import type { Right } from '../meta/types';
import { bindingFor } from '../operations/doctype-binding';
import { cancelDocument, submitDocument } from '../operations/document-operations';
import { assertDocTypePermission } from '../permissions/doctype-permission';
import { assertDocumentPermission } from '../permissions/document-permission';
import { readableDoc } from '../permissions/field-levels';
import type { DocTypeBinding, Registry } from '../registry/registry';
import { admitCall, type Admission } from './admit-call';
import { checkArguments, rawArguments } from './method-arguments';
import { createMethodCall } from './method-call';
import { methodTable } from './method-table';

/** What a document method call produced. */
export interface DocumentMethodResult {
  result: unknown;
  /** The document after the method, as the caller may read it. */
  doc: DocData;
  messages: string[];
}

/** A resolved document method: how to admit it, check its arguments and run it. */
interface ResolvedDocumentMethod {
  path: string;
  admission: Admission;
  args(params: Record<string, unknown>): Record<string, unknown>;
  run(doc: Document, args: Record<string, unknown>, caller: Caller, messages: string[]): Promise<unknown>;
  /** The right checked before the call (default: read for GET, write for POST). */
  right?: Right;
  /** A built-in on a stored document: the shared operation, which checks the exact right itself. */
  operation?: (
    caller: Caller,
    doctype: string,
    name: string,
  ) => Promise<{ doc: DocData; messages: string[] }>;
}

interface BuiltinDocumentMethod {
  docstatus: 1 | 2;
  right: Right;
  operation: NonNullable<ResolvedDocumentMethod['operation']>;
}

/** Frappe's built-in whitelisted document methods (on submittable DocTypes); POST only. */
const BUILTIN: Readonly<Record<string, BuiltinDocumentMethod>> = {
  submit: { docstatus: 1, right: 'submit', operation: submitDocument },
  cancel: { docstatus: 2, right: 'cancel', operation: cancelDocument },
};

/** The method `name` of `binding`'s documents; 404 when it is missing or not whitelisted. */
export function resolveDocumentMethod(
  registry: Registry,
  binding: DocTypeBinding,
  name: string,
): ResolvedDocumentMethod {
  const doctype = binding.meta.name;
  const found = methodTable(registry).documentMethod(doctype, name);
  if (found) {
    const { entry, options } = found;
    return {
      path: entry.path,
      admission: options,
      args: (params) => checkArguments(entry.validate, rawArguments(params, entry.jsonArgs)),
      run: (doc, args, caller, messages) =>
        (doc[name] as (a: unknown, c: unknown) => Promise<unknown>).call(
          doc,
          args,
          createMethodCall(caller, messages),
        ),
    };
  }
  const feature = HISTORY_DOCUMENT_METHODS.get(doctype)?.get(name);
  if (feature)
    return {
      path: `${doctype}/${name}`,
      admission: { methods: ['POST'], allowGuest: false },
      args: () => ({}),
      run: (doc, _args, caller, messages) => feature.run(doc, caller, messages),
      right: feature.right,
      operation: feature.operation,
    };
  const builtin = Object.hasOwn(BUILTIN, name) && binding.meta.isSubmittable ? BUILTIN[name] : undefined;
  if (!builtin) throw new DoesNotExistError(`Method ${name.slice(0, 140)} of ${doctype} not found`);
  return {
    path: `${doctype}/${name}`,
    admission: { methods: ['POST'], allowGuest: false },
    args: () => ({}),
    // On a document sent to run_doc_method: the lifecycle moves its docstatus and checks the right the move needs.
    run: async (doc) => {
      doc.docstatus = builtin.docstatus;
      await doc.save();
      return undefined;
    },
    right: builtin.right,
    operation: builtin.operation,
  };
}

/** Loads the document, checks `right` on it, runs the method and returns its result with the document after it. */
export async function runOn(
  caller: Caller,
  binding: DocTypeBinding,
  name: string,
  method: ResolvedDocumentMethod,
  args: Record<string, unknown>,
  right: Right,
): Promise<DocumentMethodResult> {
  const tx = new DocumentTransaction(caller.site, caller.user);
  // No transaction is held across the method: each save inside it is its own unit, checked as the caller.
  const doc = await tx.getDoc(binding.meta.name, binding.meta.issingle ? binding.meta.name : name);
  await assertDocumentPermission(caller, binding, { ...doc }, right);
  const messages = tx.messages;
  const result = await method.run(doc, args, caller, messages);
  const data = readableDoc(
    caller,
    binding,
    serializeDoc(binding, caller.site.registry, { ...doc }, caller.version),
  );
  return { result, doc: data, messages };
}

/** Runs method `methodName` on the stored document `doctype`/`name` for the request (v1 `?run_method=`, v2 `/method/{m}`). */
export async function runDocumentMethod(
  ctx: AppContext,
  caller: Caller,
  doctype: string,
  name: string,
  methodName: string,
): Promise<DocumentMethodResult> {
  const binding = bindingFor(caller, doctype, 'get');
  const method = resolveDocumentMethod(caller.site.registry, binding, methodName);
  await admitCall(ctx, method.path, method.admission);
  if (method.operation) {
    const outcome = await method.operation(caller, doctype, name);
    return { result: undefined, doc: outcome.doc, messages: outcome.messages };
  }
  const right: Right = ctx.method === 'GET' ? 'read' : 'write';
  assertDocTypePermission(caller.user, binding.meta, right);
  return runOn(caller, binding, name, method, method.args(requestParams(ctx)), right);
}
