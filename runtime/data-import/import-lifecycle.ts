// Data Import in the document lifecycle: its `reference_doctype` must be a DocType an import can write (Frappe's field
// is a Link to DocType, checked at save) and the saver may import, so a record naming none is refused when saved, not
// at its preview or start.
import type { DeleteOperation, WritingSave } from '../document/extension-points';
import { lifecycleOf } from '../document/extension-points';
import { ValidationError } from '../errors/errors';
import { assertCanImport } from './import-rights';
import type { Site } from '../site';
import { IMPORT_DOCTYPE } from './import-job';
import { LOG_DOCTYPE } from './import-log';

/**
 * 400 unless the record's reference_doctype is a DocType of the site with documents of its own (not a child, not a
 * Single) that allows import; 403 when the saver may not import it.
 */
function checkReferenceDocType(op: WritingSave): void {
  const doctype = op.data.reference_doctype;
  if (doctype === undefined || doctype === null || doctype === '') return;
  const target = op.tx.site.registry.get(String(doctype));
  if (!target || target.meta.istable || target.meta.issingle)
    throw new ValidationError(
      `Document Type ${String(doctype).slice(0, 140)} is not a DocType that can be imported`,
    );
  assertCanImport(op.tx.user, target.meta, !op.tx.ignorePermissions);
}

/** The Link of a Data Import's log rows: its delete removes them (Frappe's Data Import.on_trash), so they do not stop it. */
export const IMPORT_LOG_LINKS = [{ doctype: LOG_DOCTYPE, fieldname: 'data_import' }] as const;

/** afterDelete of a Data Import: deletes its log rows. */
async function deleteImportLogs(op: DeleteOperation): Promise<void> {
  const log = op.tx.site.registry.get(LOG_DOCTYPE);
  if (!log) return;
  const name = String(op.stored.name ?? op.doc.name);
  if (Number(await op.trx(log.meta.tableName).where('data_import', name).delete()) > 0)
    op.tx.markWritten(LOG_DOCTYPE);
}

/** Registers the Data Import's checks, and the removal of its logs with it. */
export function registerDataImport(site: Site): void {
  if (!site.registry.get(IMPORT_DOCTYPE)) return;
  const extensions = lifecycleOf(site);
  extensions.on('validateSave', checkReferenceDocType, IMPORT_DOCTYPE);
  extensions.on('afterDelete', deleteImportLogs, IMPORT_DOCTYPE);
}
