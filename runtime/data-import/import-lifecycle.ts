// Data Import in the document lifecycle: its `reference_doctype` must be a DocType an import can write (Frappe's field
// is a Link to DocType, checked at save), so a record naming none is refused when saved, not at its preview or start.
import type { WritingSave } from '../document/extension-points';
import { lifecycleOf } from '../document/extension-points';
import { ValidationError } from '../errors/errors';
import type { Site } from '../site';
import { IMPORT_DOCTYPE } from './import-job';

/** 400 unless the record's reference_doctype is a DocType of the site with documents of its own (not a child, not a Single). */
function checkReferenceDocType(op: WritingSave): void {
  const doctype = op.data.reference_doctype;
  if (doctype === undefined || doctype === null || doctype === '') return;
  const target = op.tx.site.registry.get(String(doctype));
  if (!target || target.meta.istable || target.meta.issingle)
    throw new ValidationError(
      `Document Type ${String(doctype).slice(0, 140)} is not a DocType that can be imported`,
    );
}

/** Registers the Data Import's checks. */
export function registerDataImport(site: Site): void {
  if (site.registry.get(IMPORT_DOCTYPE))
    lifecycleOf(site).on('validateSave', checkReferenceDocType, IMPORT_DOCTYPE);
}
