// What back links add to the document lifecycle: a document that another document links to cannot be deleted, and a
// submitted one that a submitted document links to cannot be cancelled (Frappe's check_if_doc_is_linked and
// check_if_doc_is_dynamically_linked, run after on_trash, and after on_cancel by check_no_back_links_exist). A
// beforeDelete handler and a docEvent handler of on_cancel, so every delete and cancel (v1, v2, bulk,
// frappe.client, jobs, methods) is checked inside its own transaction; registered only for the DocTypes some field
// may link to.
import type { DeleteOperation, SaveOperation } from '../document/extension-points';
import { lifecycleOf } from '../document/extension-points';
import { LinkExistsError } from '../errors/errors';
import type { Site } from '../site';
import { linkSourcesByTarget, type LinkSource, type SettledLink } from './link-sources';
import { findLinkingDocument, type LinkingDocument } from './linking-document';

/**
 * Frappe's message: the linking document named (a Single once), or, for a delete, a hint to disable a DocType that can
 * be.
 */
function linkedMessage(op: DeleteOperation | SaveOperation, found: LinkingDocument): string {
  const { fieldMap, meta } = op.binding;
  if (op.kind === 'delete' && (fieldMap.has('enabled') || fieldMap.has('disabled')))
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
 * 400 LinkExistsError when a submitted document other than this one links to it, once its controller's on_cancel has
 * run (it may cancel them first, or name their DocTypes in `ignore_linked_doctypes`).
 */
async function refuseCancelIfLinked(op: SaveOperation, sources: readonly LinkSource[]): Promise<void> {
  const ignored: unknown = op.doc.ignore_linked_doctypes;
  const check = {
    kind: 'cancel' as const,
    ignored: new Set(Array.isArray(ignored) ? ignored.map(String) : []),
  };
  const found = await findLinkingDocument(op.trx, sources, op.binding.meta.name, op.doc.name, check);
  if (found) throw new LinkExistsError(linkedMessage(op, found));
}

/**
 * Registers the checks for each DocType of the site that a field may link to. `settled`: Link fields whose rows the
 * delete of their target takes care of itself (another feature's afterDelete handler), which do not stop it.
 */
export function registerBackLinks(site: Site, settled: readonly SettledLink[] = []): void {
  const extensions = lifecycleOf(site);
  for (const [doctype, sources] of linkSourcesByTarget(site.registry, settled)) {
    extensions.on('beforeDelete', (op) => refuseIfLinked(op, sources), doctype);
    if (site.registry.get(doctype)?.meta.isSubmittable)
      extensions.on(
        'docEvent',
        (op, hook) =>
          hook === 'on_cancel' && op.kind === 'save' ? refuseCancelIfLinked(op, sources) : undefined,
        doctype,
      );
  }
}
