// What document history adds to the lifecycle: a Version for each update of a DocType with track_changes (afterWrite)
// and a Deleted Document for each delete (afterDelete), both in the write's own transaction, so a write that fails
// later (an on_update, an after_delete) leaves neither.
import type { DeleteOperation, WritingSave } from '../document/extension-points';
import { lifecycleOf } from '../document/extension-points';
import { fieldLists, tableFields } from '../registry/field-lists';
import type { DocData } from '../db/row-store';
import type { Site } from '../site';
import { DELETED_DOCUMENT, VERSION, insertHistoryRow } from './history-rows';
import { versionDiff } from './version-diff';

/** Writes the Version of an update when it changed something a Version records. */
function recordVersion(op: WritingSave): Promise<void> | undefined {
  if (op.isNew || !op.stored) return undefined;
  const diff = versionDiff(op.binding, op.tx.site.registry, op.stored, op.data);
  if (!diff) return undefined;
  return insertHistoryRow(op.tx, op.trx, VERSION, {
    ref_doctype: op.binding.meta.name,
    docname: String(op.data.name),
    data: JSON.stringify(diff),
  });
}

/** The stored document as a Deleted Document keeps it: its DocType, values and child rows, no Password field. */
export function deletedData(op: DeleteOperation): DocData {
  const { binding, tx } = op;
  const data: DocData = Object.assign({ doctype: binding.meta.name }, op.stored);
  for (const field of fieldLists(binding.meta).passwords) delete data[field.fieldname];
  for (const { field, child } of tableFields(binding.meta, tx.site.registry)) {
    const rows = data[field.fieldname];
    if (!Array.isArray(rows)) continue;
    const passwords = fieldLists(child.meta).passwords;
    data[field.fieldname] = (rows as DocData[]).map((row) => {
      const copy: DocData = Object.assign({ doctype: child.meta.name }, row);
      for (const f of passwords) delete copy[f.fieldname];
      return copy;
    });
  }
  return data;
}

/** Keeps the deleted document, with its child rows, in a Deleted Document. */
function recordDeletion(op: DeleteOperation): Promise<void> {
  return insertHistoryRow(op.tx, op.trx, DELETED_DOCUMENT, {
    deleted_doctype: op.binding.meta.name,
    deleted_name: String(op.stored.name),
    data: JSON.stringify(deletedData(op)),
    restored: 0,
    // Every column given: the row store's one prepared statement per DocType (a missing column costs a statement text).
    new_name: null,
  });
}

/** Registers the history handlers for the site's DocTypes (those of a registry without the history DocTypes: none). */
export function registerHistory(site: Site): void {
  const { registry } = site;
  const extensions = lifecycleOf(site);
  if (registry.get(VERSION))
    for (const binding of registry.all())
      if (binding.meta.trackChanges) extensions.on('afterWrite', recordVersion, binding.meta.name);
  if (registry.get(DELETED_DOCUMENT))
    extensions.on('afterDelete', (op) =>
      op.binding.meta.name === DELETED_DOCUMENT ? undefined : recordDeletion(op),
    );
}
