// History's methods under Frappe's names: get_docinfo (a document's versions), restore and bulk_restore (Deleted
// Documents) as built-in methods, and `restore` as a document method of Deleted Document.
import type { Caller } from '../document/caller';
import type { Document } from '../document/document';
import type { DocData } from '../db/row-store';
import { DataError } from '../errors/errors';
import { callerOf } from '../http/caller-of';
import { jsonParam, requestParams } from '../http/params';
import type { AppContext } from '../http/state';
import type { Right } from '../meta/types';
import { getDocinfo } from './docinfo';
import { DELETED_DOCUMENT } from './history-rows';
import { bulkRestore, restoreDeleted } from './restore';

/** A built-in method of the history feature: its verbs and handler (the result goes in the envelope). */
export interface HistoryMethod {
  methods: readonly string[];
  handler: (ctx: AppContext) => Promise<unknown>;
}

/** A document method a feature gives a DocType: the right it needs on the document, and what it does. */
export interface FeatureDocumentMethod {
  /** The right on the document the caller needs (checked by `operation` itself). */
  right: Right;
  /** Runs the method on the stored document `name`: the document after it, and the messages for the user. */
  operation(caller: Caller, doctype: string, name: string): Promise<{ doc: DocData; messages: string[] }>;
  /** Runs it on a document sent to run_doc_method (its name decides). */
  run(doc: Document, caller: Caller, messages: string[]): Promise<unknown>;
}

function text(params: Record<string, unknown>, key: string): string {
  const value = params[key];
  if (value === undefined || value === null || value === '') throw new DataError(`Missing argument: ${key}`);
  if (typeof value !== 'string') throw new DataError(`Argument ${key}: must be a string`);
  return value;
}

/** `docnames`: a list of names, or its JSON text. */
function names(params: Record<string, unknown>): string[] {
  const value = jsonParam(params, 'docnames');
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string' && v !== ''))
    throw new DataError('Argument docnames: must be a list of names');
  return [...new Set(value as string[])];
}

async function docinfo(ctx: AppContext): Promise<unknown> {
  const params = requestParams(ctx);
  return getDocinfo(callerOf(ctx), text(params, 'doctype'), text(params, 'name'));
}

async function restore(ctx: AppContext): Promise<unknown> {
  const outcome = await restoreDeleted(callerOf(ctx), text(requestParams(ctx), 'name'));
  ctx.state.messages.push(...outcome.messages);
  return undefined;
}

async function restoreMany(ctx: AppContext): Promise<unknown> {
  return bulkRestore(callerOf(ctx), names(requestParams(ctx)));
}

const DELETED_DOCUMENT_MODULE = 'frappe.core.doctype.deleted_document.deleted_document';

/** The built-in methods by name. */
export const HISTORY_METHODS: ReadonlyMap<string, HistoryMethod> = new Map<string, HistoryMethod>([
  ['frappe.desk.form.load.get_docinfo', { methods: ['GET', 'POST'], handler: docinfo }],
  [`${DELETED_DOCUMENT_MODULE}.restore`, { methods: ['POST'], handler: restore }],
  [`${DELETED_DOCUMENT_MODULE}.bulk_restore`, { methods: ['POST'], handler: restoreMany }],
]);

/** Document methods by DocType, then by method name. */
export const HISTORY_DOCUMENT_METHODS: ReadonlyMap<
  string,
  ReadonlyMap<string, FeatureDocumentMethod>
> = new Map([
  [
    DELETED_DOCUMENT,
    new Map<string, FeatureDocumentMethod>([
      [
        'restore',
        {
          right: 'read',
          operation: async (caller, _doctype, name) => restoreDeleted(caller, name),
          run: async (doc, caller, messages) => {
            messages.push(...(await restoreDeleted(caller, String(doc.name))).messages);
            return undefined;
          },
        },
      ],
    ]),
  ],
]);
