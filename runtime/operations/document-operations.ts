// Operations on one document: get, create, update, delete, copy and the DocType's meta. Each checks permissions,
// runs the lifecycle and returns the serialized document with the messages the hooks added for the user.
import type { Knex } from 'knex';
import { checkBody } from '../document/checks';
import { checkClientBody } from './client-body';
import type { Document } from '../document/document';
import { DocumentTransaction } from '../document/lifecycle';
import { readDoc } from '../query/read-doc';
import { serializeDoc } from '../document/serialize';
import type { DocData } from '../db/row-store';
import { DoesNotExistError, InvalidNameError } from '../errors/errors';
import { frappeMeta } from '../meta/frappe-meta';
import { assertDocumentPermission } from '../permissions/document-permission';
import { assertDocTypePermission, hasDocTypePermission, refusal } from '../permissions/doctype-permission';
import { readableDoc } from '../permissions/field-levels';
import { readAccessTo } from '../permissions/query-access';
import { expandLinks } from '../query/expand-links';
import type { DocTypeBinding, V2Operation } from '../registry/registry';
import type { Caller } from '../document/caller';
import { bindingFor } from './doctype-binding';

/**
 * Work to run inside a write's own transaction, after the write and before the commit (a background job records the
 * item's outcome there, an Idempotency-Key its first answer, so the write and that record are durable together or not
 * at all). `result` (creates) is the operation's answer as it will be returned: the serialized document and messages.
 */
export type InTransaction = ((trx: Knex, name: string, result?: () => DocumentResult) => Promise<void>) & {
  /**
   * The work only inserts new rows and fails only by a duplicate key: the create may then share its transaction with
   * other creates (MariaDB's group commit), as one without the work does.
   */
  insertsOnly?: boolean;
};

/** A document with the messages for the user that producing it left. */
export interface DocumentResult {
  doc: DocData;
  messages: string[];
}

/** Reads a stored document: inside the caller's transaction when it joins one, else committed data. */
function readFor(
  caller: Caller,
  binding: DocTypeBinding,
  name: string,
  shared = false,
): Promise<DocData | undefined> {
  const trx = caller.tx?.trx;
  if (!trx) return readDoc(caller.site, binding, name, shared);
  return caller.site.rows.load(trx, binding, name);
}

/** The transaction an operation runs in: the caller's when it joins one, else a new one (in the caller's batch, if any). */
function transactionFor(caller: Caller): DocumentTransaction {
  if (caller.tx) return caller.tx;
  const tx = new DocumentTransaction(caller.site, caller.user);
  if (caller.batch) tx.batch = caller.batch;
  if (caller.flags) Object.assign(tx.flags, caller.flags);
  return tx;
}

/** The longest name a document can have (naming.ts checkName). */
const MAX_NAME_LENGTH = 140;

/**
 * The binding of `doctype` for an operation on the document `name`; a name no document can have (longer than 140
 * characters, as creates refuse) is 400 InvalidNameError, not a lookup.
 */
function bindingForName(caller: Caller, doctype: string, name: string, op: V2Operation): DocTypeBinding {
  const binding = bindingFor(caller, doctype, op);
  if (name.length > MAX_NAME_LENGTH && !binding.meta.issingle)
    throw new InvalidNameError('Name is longer than 140 characters');
  return binding;
}

/** Reads one document (the DocType's own name for a Single); `expandLinks` replaces Link values by the linked documents. */
export async function getDocument(
  caller: Caller,
  doctype: string,
  name: string,
  options: { expandLinks?: boolean } = {},
): Promise<DocData> {
  const binding = bindingForName(caller, doctype, name, 'get');
  assertDocTypePermission(caller.user, binding.meta, 'read');
  // The remembered document itself, not a copy (1.1 KB and a walk per GET): only read until serializeDoc copies it,
  // unless the controller's hasPermission hook would be handed it.
  const shared = typeof binding.controller?.hasPermission !== 'function';
  const data = await readFor(caller, binding, binding.meta.issingle ? binding.meta.name : name, shared);
  if (!data) throw new DoesNotExistError(`${doctype} ${name.slice(0, 140)} not found`);
  await assertDocumentPermission(caller, binding, data, 'read');
  const doc = readableDoc(
    caller,
    binding,
    serializeDoc(binding, caller.site.registry, data, caller.documentShape ?? caller.version),
  );
  if (options.expandLinks)
    await expandLinks(caller.site, readAccessTo(caller.site, caller.user), binding, [doc], {
      nested: true,
      version: caller.version,
    });
  return doc;
}

/** A create request checked before its transaction: the DocType, the validated fields and the client's name, if used. */
interface PreparedCreate {
  binding: DocTypeBinding;
  data: DocData;
  clientName?: string;
}

/** Checks a create body: the caller's right to create, the fields; v2 keeps a client `name`, v1 for prompt and UUID only. */
function prepareCreate(caller: Caller, doctype: string, body: Record<string, unknown>): PreparedCreate {
  const binding = bindingFor(caller, doctype, 'create');
  assertDocTypePermission(caller.user, binding.meta, 'create');
  const input = { ...body };
  delete input.doctype;
  const data = checkBody(binding.validateBody, input, doctype);
  checkClientBody(caller, binding, data);
  const rawName = data.name;
  delete data.name;
  delete data.modified;
  const kind = binding.meta.naming.kind;
  const clientName =
    typeof rawName === 'string' && (caller.version === 2 || kind === 'prompt' || kind === 'uuid')
      ? rawName
      : undefined;
  return { binding, data, clientName };
}

/** A written document with the messages for the user that writing it left (not yet serialized). */
interface Written {
  binding: DocTypeBinding;
  doc: Document;
  messages: string[];
}

/** The response document of a write: serialized for the caller's API version, fields it may not read left out. */
function answer(caller: Caller, { binding, doc, messages }: Written): DocumentResult {
  return {
    doc: readableDoc(
      caller,
      binding,
      serializeDoc(binding, caller.site.registry, doc, caller.documentShape ?? caller.version),
    ),
    messages,
  };
}

/** Inserts a document from a request body (createDocument and insertDocument). */
async function insertNew(
  caller: Caller,
  doctype: string,
  body: Record<string, unknown>,
  inTransaction?: InTransaction,
): Promise<Written & { result?: DocumentResult }> {
  const { binding, data, clientName } = prepareCreate(caller, doctype, body);
  const tx = transactionFor(caller);
  // The answer `inTransaction` asked for, built once: the commit changes neither the document nor the messages.
  let result: DocumentResult | undefined;
  // On MariaDB a create may share its transaction with other creates (group commit), with its in-transaction work when
  // that only inserts new rows (an Idempotency-Key): a work that locks existing rows or throws after its writes (an
  // import's preview rolls back) would make the batch wait or run again alone.
  const doc = await tx.run(
    async () => {
      result = undefined;
      const created = tx.newDoc(doctype, data, clientName);
      await created.insert();
      if (inTransaction)
        await inTransaction(tx.trx as Knex, String(created.name), () => {
          result ??= answer(caller, { binding, doc: created, messages: [...tx.messages] });
          return result;
        });
      return created;
    },
    !inTransaction || inTransaction.insertsOnly === true,
  );
  return { binding, doc, messages: tx.messages, ...(result ? { result } : {}) };
}

/** Inserts a document from a request body. v2 uses a client `name` as given; v1 only for prompt and UUID naming (as Frappe). */
export async function createDocument(
  caller: Caller,
  doctype: string,
  body: Record<string, unknown>,
  inTransaction?: InTransaction,
): Promise<DocumentResult> {
  const written = await insertNew(caller, doctype, body, inTransaction);
  return written.result ?? answer(caller, written);
}

/**
 * Inserts a document as createDocument does, without building a response document (a bulk job reports names only):
 * the new name and the messages.
 */
export async function insertDocument(
  caller: Caller,
  doctype: string,
  body: Record<string, unknown>,
  inTransaction?: InTransaction,
): Promise<{ name: string; messages: string[] }> {
  const { doc, messages } = await insertNew(caller, doctype, body, inTransaction);
  return { name: String(doc.name), messages };
}

/**
 * Inserts several documents (each `{doctype, body}`) in one transaction: all or nothing, as Frappe's
 * `frappe.client.insert_many`. Returns the new names in order and the messages the hooks left.
 */
export async function createDocuments(
  caller: Caller,
  items: readonly { doctype: string; body: Record<string, unknown> }[],
): Promise<{ names: string[]; messages: string[] }> {
  const prepared = items.map((item) => ({
    doctype: item.doctype,
    ...prepareCreate(caller, item.doctype, item.body),
  }));
  const tx = transactionFor(caller);
  const names = await tx.run(async () => {
    const out: string[] = [];
    for (const { doctype, data, clientName } of prepared) {
      const created = tx.newDoc(doctype, data, clientName);
      await created.insert();
      out.push(String(created.name));
    }
    return out;
  });
  return { names, messages: tx.messages };
}

/** Applies changes to a stored document (updateDocument and saveChanges). */
async function applyChanges(
  caller: Caller,
  doctype: string,
  name: string,
  body: Record<string, unknown>,
  inTransaction?: InTransaction,
): Promise<Written> {
  const binding = bindingForName(caller, doctype, name, 'update');
  // The lifecycle decides the exact right from the docstatus move (write, submit or cancel); here: any of them at all.
  if (
    !(['write', 'submit', 'cancel'] as const).some((right) =>
      hasDocTypePermission(caller.user, binding.meta, right),
    )
  ) {
    throw refusal(caller.user, `No permission to write ${binding.meta.name}`);
  }
  const input = { ...body };
  delete input.doctype;
  delete input.name;
  const changes = checkBody(binding.validateBody, input, doctype);
  checkClientBody(caller, binding, changes);
  const tx = transactionFor(caller);
  const doc = await tx.runRetryingDeadlock(async () => {
    const loaded = await tx.getDoc(doctype, binding.meta.issingle ? binding.meta.name : name, {
      forUpdate: true,
    });
    Object.assign(loaded, changes);
    await loaded.save();
    if (inTransaction) await inTransaction(tx.trx as Knex, String(loaded.name));
    return loaded;
  });
  return { binding, doc, messages: tx.messages };
}

/** Applies changes to a document: only the fields sent change; a stale `modified` is refused. */
export async function updateDocument(
  caller: Caller,
  doctype: string,
  name: string,
  body: Record<string, unknown>,
  inTransaction?: InTransaction,
): Promise<DocumentResult> {
  return answer(caller, await applyChanges(caller, doctype, name, body, inTransaction));
}

/** Applies changes as updateDocument does, without building a response document (a bulk job reports names only). */
export async function saveChanges(
  caller: Caller,
  doctype: string,
  name: string,
  body: Record<string, unknown>,
  inTransaction?: InTransaction,
): Promise<{ messages: string[] }> {
  const { messages } = await applyChanges(caller, doctype, name, body, inTransaction);
  return { messages };
}

/** Moves a document's docstatus (1 submit, 2 cancel) through the lifecycle, which checks the right the move needs. */
async function moveDocstatus(
  caller: Caller,
  doctype: string,
  name: string,
  docstatus: 1 | 2,
): Promise<DocumentResult> {
  const binding = bindingForName(caller, doctype, name, 'update');
  const right = docstatus === 1 ? 'submit' : 'cancel';
  assertDocTypePermission(caller.user, binding.meta, right);
  const tx = transactionFor(caller);
  const doc = await tx.runRetryingDeadlock(async () => {
    const loaded = await tx.getDoc(doctype, name, { forUpdate: true });
    loaded.docstatus = docstatus;
    await loaded.save();
    return loaded;
  });
  return answer(caller, { binding, doc, messages: tx.messages });
}

/** Submits a draft (docstatus 0 → 1): needs `submit`; runs before_submit and on_submit. */
export function submitDocument(caller: Caller, doctype: string, name: string): Promise<DocumentResult> {
  return moveDocstatus(caller, doctype, name, 1);
}

/** Cancels a submitted document (docstatus 1 → 2): needs `cancel`; runs before_cancel and on_cancel. */
export function cancelDocument(caller: Caller, doctype: string, name: string): Promise<DocumentResult> {
  return moveDocstatus(caller, doctype, name, 2);
}

/** Deletes a document; returns the messages the hooks left. */
export async function deleteDocument(
  caller: Caller,
  doctype: string,
  name: string,
  inTransaction?: InTransaction,
): Promise<string[]> {
  const binding = bindingForName(caller, doctype, name, 'delete');
  assertDocTypePermission(caller.user, binding.meta, 'delete');
  const tx = transactionFor(caller);
  await tx.runRetryingDeadlock(async () => {
    await (await tx.getDoc(doctype, name, { forUpdate: true })).delete();
    if (inTransaction) await inTransaction(tx.trx as Knex, name);
  });
  return tx.messages;
}

const IDENTITY = ['name', 'owner', 'creation', 'modified', 'modified_by', 'docstatus'];
const CHILD_IDENTITY = [...IDENTITY, 'parent', 'parentfield', 'parenttype', 'idx'];

/** A clean copy that can be posted back as a new document. `keepNoCopy` false drops no_copy fields. */
export async function copyDocument(
  caller: Caller,
  doctype: string,
  name: string,
  keepNoCopy: boolean,
): Promise<DocData> {
  const binding = bindingForName(caller, doctype, name, 'copy');
  assertDocTypePermission(caller.user, binding.meta, 'read');
  const data = await readDoc(caller.site, binding, name);
  if (!data) throw new DoesNotExistError(`${doctype} ${name.slice(0, 140)} not found`);
  await assertDocumentPermission(caller, binding, data, 'read');
  const { registry } = caller.site;
  const clean = (b: DocTypeBinding, row: DocData, identity: string[]): DocData => {
    const out: DocData = {};
    for (const [key, value] of Object.entries(row)) {
      const field = b.fieldMap.get(key);
      if (identity.includes(key) || value === null || (!keepNoCopy && field?.noCopy)) continue;
      if (field && (field.fieldtype === 'Table' || field.fieldtype === 'Table MultiSelect')) {
        const child = field.options ? registry.get(field.options) : undefined;
        out[key] = (value as DocData[]).map((r) => (child ? clean(child, r, CHILD_IDENTITY) : r));
      } else out[key] = value;
    }
    return out;
  };
  // Serialized without nulls (as Frappe's copy), so unset fields stay unset when the copy is posted back.
  return readableDoc(caller, binding, serializeDoc(binding, registry, clean(binding, data, IDENTITY), 1));
}

/** A DocType's metadata in Frappe's shape; any signed-in user. */
export function docTypeMeta(caller: Caller, doctype: string): Record<string, unknown> {
  const binding = bindingFor(caller, doctype, 'meta');
  if (caller.user.name === 'Guest') assertDocTypePermission(caller.user, binding.meta, 'read');
  return frappeMeta(binding.meta);
}
