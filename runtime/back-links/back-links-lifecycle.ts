// What back links add to the document lifecycle: a document that another document links to cannot be deleted (Frappe's
// check_if_doc_is_linked and check_if_doc_is_dynamically_linked, run after on_trash). A beforeDelete handler, so every
// delete (v1, v2, bulk, frappe.client.delete, jobs, methods) is checked inside its own transaction; registered only
// for the DocTypes some field may link to.
import type { DeleteOperation } from '../document/extension-points';
import { lifecycleOf } from '../document/extension-points';
import { LinkExistsError } from '../errors/errors';
import type { Site } from '../site';
import { linkSourcesByTarget, type LinkSource, type SettledLink } from './link-sources';
import { findLinkingDocument, type LinkingDocument } from './linking-document';

/** Frappe's message: the linking document named (a Single once), or a hint to disable a DocType that can be. */
function linkedMessage(op: DeleteOperation, found: LinkingDocument): string {
  const { fieldMap, meta } = op.binding;
  if (fieldMap.has('enabled') || fieldMap.has('disabled'))
    return `You can disable this ${meta.name} instead of deleting it.`;
  const linker = found.doctype === found.name ? found.name : `${found.doctype} ${found.name}`;
  const row = found.row === undefined ? '' : ` at Row: ${found.row}`;
  return `Cannot delete or cancel because ${meta.name} ${op.doc.name} is linked with ${linker}${row}`;
}

/** 400 LinkExistsError when a document other than this one links to it. */
async function refuseIfLinked(op: DeleteOperation, sources: readonly LinkSource[]): Promise<void> {
  const found = await findLinkingDocument(op.trx, sources, op.binding.meta.name, op.doc.name);
  if (found) throw new LinkExistsError(linkedMessage(op, found));
}

/**
 * Registers the check for each DocType of the site that a field may link to. `settled`: Link fields whose rows the
 * delete of their target takes care of itself (another feature's afterDelete handler), which do not stop it.
 */
export function registerBackLinks(site: Site, settled: readonly SettledLink[] = []): void {
  const extensions = lifecycleOf(site);
  for (const [doctype, sources] of linkSourcesByTarget(site.registry, settled))
    extensions.on('beforeDelete', (op) => refuseIfLinked(op, sources), doctype);
}
