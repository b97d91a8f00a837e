// Operations on one document: get, create, update, delete, copy and the DocType's meta. Each checks permissions,
// runs the lifecycle and returns the serialized document with the messages the hooks added for the user. A child
// table's row by name is read through its parent here and written by child-row-writes.ts.
import type { Knex } from 'knex';
import { checkBody } from '../document/checks';
import { checkClientBody } from './client-body';
import { readDoc } from '../query/read-doc';
import { serializeDoc } from '../document/serialize';
import type { DocData } from '../db/row-store';
import { DataError, DoesNotExistError, InvalidNameError, PermissionError } from '../errors/errors';
import { clip } from '../query/tokenize';
import { frappeMeta } from '../meta/frappe-meta';
import { assertDocumentPermission } from '../permissions/document-permission';
import { assertDocTypePermission, hasDocTypePermission, refusal } from '../permissions/doctype-permission';
import { readableDoc } from '../permissions/field-levels';
import { readAccessTo } from '../permissions/query-access';
import { expandLinks } from '../query/expand-links';
import type { DocTypeBinding, V2Operation } from '../registry/registry';
import type { Caller } from '../document/caller';
import { bindingFor } from './doctype-binding';
import { fieldLists } from '../registry/field-lists';
import type { Document } from '../document/document';
import { assertSomeParentRight, placeOf, rowNamed, rowsAt } from './child-rows';
import { addRow, changeRow, removeRow } from './child-row-writes';
import {
  answer,
  transactionFor,
  type DocumentResult,
  type InTransaction,
  type Written,
} from './write-answer';

export type { DocumentResult, InTransaction } from './write-answer';

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

/**
 * The child table `doctype` names, when it is one: its rows by name are read and written through their parent document
 * (child-rows.ts), where bindingFor refuses them. A `name` no row can have is 400, as for documents.
 */
function childTable(caller: Caller, doctype: string, name?: string): DocTypeBinding | undefined {
  const binding = caller.site.registry.get(doctype);
  if (!binding?.meta.istable) return undefined;
  if (name !== undefined && name.length > MAX_NAME_LENGTH)
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
  const child = childTable(caller, doctype, name);
  if (child) return getChildRow(caller, child, name, options);
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

/** Inserts a document from a request body (createDocument and insertDocument). */
async function insertNew(
  caller: Caller,
  doctype: string,
  body: Record<string, unknown>,
  inTransaction?: InTransaction,
): Promise<Written & { result?: DocumentResult }> {
  const child = childTable(caller, doctype);
  if (child) return addRow(caller, child, body, inTransaction);
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
  const { doc, messages, row } = await insertNew(caller, doctype, body, inTransaction);
  return { name: row?.name ?? String(doc.name), messages };
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
  const child = childTable(caller, doctype, name);
  if (child) return changeRow(caller, child, name, body, inTransaction);
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
    Object.assign(loaded, tx.flags.inImport ? keepingStoredRowValues(binding, loaded, changes) : changes);
    await loaded.save();
    if (inTransaction) await inTransaction(tx.trx as Knex, String(loaded.name));
    return loaded;
  });
  return { binding, doc, messages: tx.messages };
}

/**
 * An import's changes with each table row that names a stored row of `loaded` completed by that row's stored values:
 * as Frappe's importer, a row matched by name keeps the fields the file leaves out or empty (a PUT's rows replace).
 */
function keepingStoredRowValues(binding: DocTypeBinding, loaded: Document, changes: DocData): DocData {
  const out = { ...changes };
  for (const field of fieldLists(binding.meta).tables) {
    const rows = out[field.fieldname];
    const stored = loaded[field.fieldname];
    if (!Array.isArray(rows) || !Array.isArray(stored)) continue;
    const byName = new Map((stored as DocData[]).map((row) => [row.name, row]));
    out[field.fieldname] = (rows as DocData[]).map((row) => {
      const kept = typeof row.name === 'string' ? byName.get(row.name) : undefined;
      return kept ? { ...kept, ...row } : row;
    });
  }
  return out;
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
  const child = childTable(caller, doctype, name);
  if (child) return (await removeRow(caller, child, name, inTransaction)).messages;
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

/** A child table's row by name: read through its parent document, with the parent's read permission. */
async function getChildRow(
  caller: Caller,
  child: DocTypeBinding,
  name: string,
  options: { expandLinks?: boolean },
): Promise<DocData> {
  assertSomeParentRight(caller, child, 'read');
  const place = await placeOf(caller, child, name, caller.tx?.trx ?? caller.site.db.knex);
  let parent: DocData;
  try {
    parent = await getDocument(caller, place.parent.meta.name, place.parentName, options);
  } catch (err) {
    // Refused without naming the parent document the caller may not read.
    if (err instanceof PermissionError)
      throw new PermissionError(`No permission to read ${child.meta.name} ${clip(name)}`);
    throw err;
  }
  return rowNamed(rowsAt(parent, place, child), name, child);
}

/**
 * frappe.client's writes of a child row (set_value, insert with `parenttype` and `parent`): the row is changed or added
 * by saving its parent, and the answer is the parent document, as Frappe's `parent.as_dict()`.
 */
export async function writeRowAnsweringParent(
  caller: Caller,
  doctype: string,
  write: { name: string; values: DocData } | { body: DocData },
): Promise<DocumentResult> {
  const child = childTable(caller, doctype, 'name' in write ? write.name : undefined);
  if (!child) throw new DataError(`${clip(doctype)} is not a child table`);
  const written =
    'name' in write
      ? await changeRow(caller, child, write.name, write.values)
      : await addRow(caller, child, write.body);
  return answer(caller, written, true);
}
