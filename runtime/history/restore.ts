// Restoring a Deleted Document: its copy is inserted again through the normal insert path, as the caller (create
// permission, validation, hooks, Link checks), under its old name (409 when taken), and the Deleted Document is marked
// restored, in one transaction: a restore that fails anywhere leaves nothing behind. Frappe's deleted_document.restore.
import type { Caller } from '../document/caller';
import { DocumentTransaction } from '../document/lifecycle';
import type { DocData } from '../db/row-store';
import { now } from '../db/stored-values';
import { DataError, DocumentAlreadyRestored, DoesNotExistError } from '../errors/errors';
import { createDocument, getDocument } from '../operations/document-operations';
import { assertDocTypePermission } from '../permissions/doctype-permission';
import { DELETED_DOCUMENT, historyBinding, storedCopy } from './history-rows';

/** What a restore produced: the Deleted Document after it and the messages for the user. */
export interface RestoreResult {
  /** The restored document's name. */
  name: string;
  doc: DocData;
  messages: string[];
}

/** What bulk_restore answers (Frappe's shape). */
export interface BulkRestoreResult {
  restored: string[];
  /** Restored already. */
  invalid: string[];
  /** Refused or failed (permissions, name taken, a Link gone, not found). */
  failed: string[];
}

/** Keys of a stored copy that the insert sets itself (the restored document is new to the database). */
const SET_BY_INSERT = ['owner', 'creation', 'modified', 'modified_by', 'idx', 'doctype'];
const SET_BY_PARENT = [...SET_BY_INSERT, 'parent', 'parentfield', 'parenttype', 'docstatus'];

/** The insert body of a stored copy: its values and rows without what the insert sets; a cancelled one as a draft. */
function insertBody(copy: DocData, messages: string[]): DocData {
  const body: DocData = { ...copy };
  for (const key of SET_BY_INSERT) delete body[key];
  if (Number(body.docstatus) === 2) {
    body.docstatus = 0;
    messages.push('Cancelled Document restored as Draft');
  }
  for (const [key, value] of Object.entries(body)) {
    if (!Array.isArray(value)) continue;
    body[key] = (value as unknown[]).map((row) => {
      if (row === null || typeof row !== 'object') return row;
      const clean: DocData = { ...(row as DocData) };
      for (const k of SET_BY_PARENT) delete clean[k];
      return clean;
    });
  }
  return body;
}

/** Restores the Deleted Document `name` as `caller` (who must be able to read it, and create its document). */
export async function restoreDeleted(caller: Caller, name: string): Promise<RestoreResult> {
  await getDocument(caller, DELETED_DOCUMENT, name);
  const binding = historyBinding(caller, DELETED_DOCUMENT);
  const tx = caller.tx ?? new DocumentTransaction(caller.site, caller.user);
  const messages: string[] = [];
  const restoredName = await tx.run(async () => {
    const trx = tx.trx as NonNullable<typeof tx.trx>;
    const stored = await caller.site.rows.load(trx, binding, name, { forUpdate: true });
    if (!stored) throw new DoesNotExistError(`${DELETED_DOCUMENT} ${name.slice(0, 140)} not found`);
    if (Number(stored.restored)) throw new DocumentAlreadyRestored(`Document ${name} Already Restored`);
    const copy = storedCopy(stored.data);
    if (!copy) throw new DataError(`Deleted Document ${name} holds no document`);
    const body = insertBody(copy, messages);
    // v2's create keeps the client's name for every naming rule: the old name comes back (409 when taken).
    body.name = String(stored.deleted_name ?? copy.name);
    const created = await createDocument({ ...caller, version: 2, tx }, String(stored.deleted_doctype), body);
    const newName = String(created.doc.name);
    const stamp = now();
    await caller.site.rows.update(
      trx,
      binding,
      { ...stored, restored: 1, new_name: newName, modified: stamp, modified_by: caller.user.name },
      stored,
    );
    tx.markWritten(DELETED_DOCUMENT);
    return newName;
  });
  messages.push('Document Restored');
  return { name: restoredName, doc: await getDocument(caller, DELETED_DOCUMENT, name), messages };
}

/** Restores each Deleted Document of `names` on its own (Frappe's bulk_restore): one failing does not stop the rest. */
export async function bulkRestore(caller: Caller, names: readonly string[]): Promise<BulkRestoreResult> {
  assertDocTypePermission(caller.user, historyBinding(caller, DELETED_DOCUMENT).meta, 'read');
  const result: BulkRestoreResult = { restored: [], invalid: [], failed: [] };
  for (const name of names) {
    try {
      await restoreDeleted(caller, name);
      result.restored.push(name);
    } catch (err) {
      (err instanceof DocumentAlreadyRestored ? result.invalid : result.failed).push(name);
    }
  }
  return result;
}
